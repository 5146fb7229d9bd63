/* The theme's search worker, started once the page is live.
 *
 * On a page with a live figure, a code cell or the training lab, overrides/main.html points the theme's config at
 * this file instead of the theme's search worker, whose address it gives in the query:
 *
 *   assets/explainer/search.js?worker=../javascripts/workers/search.<hash>.min.js
 *
 * The theme starts its search worker as the page loads, and the worker builds the whole search index at once: CPU
 * that, on a two-core machine, the Python boot of the same page needs (README.md in this folder, "Once the page is
 * live"). This worker takes the theme's messages and keeps them until the page says "start" on the BroadcastChannel
 * below (page.js: once the page is live, or when the reader focuses the search box), or until FALLBACK_MS have
 * passed. Then it starts the theme's worker as a worker of its own, at its own address (so its relative imports
 * resolve as they always did), hands it the kept messages and from then on passes every message both ways.
 */
"use strict";

const CHANNEL = "explainer:search";  // page.js posts on the same channel
const FALLBACK_MS = 20000;  // if the page never says (its scripts failed), the search starts anyway

const themeWorker = (() => {
  const named = new URL(self.location.href).searchParams.get("worker");
  const address = new URL(named || "", self.location.href);
  if (!named || address.origin !== self.location.origin) {
    throw new Error(`search.js: its query must name the theme's search worker, not '${self.location.search}'`);
  }
  return address.href;
})();

const kept = [];  // the theme's messages that arrived before the start
let theme = null;
const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(CHANNEL) : null;
const fallback = setTimeout(start, FALLBACK_MS);

function start() {
  if (theme) return;
  clearTimeout(fallback);
  if (channel) channel.close();
  theme = new Worker(themeWorker);
  theme.onmessage = (event) => self.postMessage(event.data);
  for (const data of kept.splice(0)) theme.postMessage(data);
}

self.onmessage = (event) => {
  if (theme) theme.postMessage(event.data);
  else kept.push(event.data);
};

if (channel) {
  channel.onmessage = (event) => {
    if (event.data === "start") start();
  };
} else {
  start();  // nothing could ever say "start" here
}
