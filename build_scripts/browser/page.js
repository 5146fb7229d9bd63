/* What the page scripts share (sandbox.js, cells.js, trainer.js): building elements, when a view counts as near the
 * viewport, and running their mount step on the first page and after every instant navigation. And, on a page with
 * something live, letting the theme's search start once the page is live (search.js).
 *
 * Exposes the global ExplainerPage = {NEAR_VIEWPORT, element, onEveryPage, mountViews}. Loaded after runtime.js, before
 * the others.
 */
"use strict";

(function () {
  // A view starts the runtime a little before it scrolls into view (an IntersectionObserver's rootMargin).
  const NEAR_VIEWPORT = "300px 0px 300px 0px";

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /** Run `mount` as soon as the page's containers exist (these scripts run at the end of <body>), without waiting for
   * Material to emit document$ (every millisecond here is one before the first live figure), and again after each
   * instant navigation, when Material's document$ emits. */
  function onEveryPage(mount) {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", mount, {once: true});
    } else {
      mount();
    }
    if (window.document$ && typeof window.document$.subscribe === "function") {
      window.document$.subscribe(() => mount());  // Material: emits on load and after each instant navigation
    }
  }

  /** Keep one view mounted on every container matching `selector`, on every page: views whose container left the
   * document are unmounted, new containers get `create(root, pagePass)` (a view with root, mount() and unmount(), or
   * null), where pagePass is an object shared by the views mounted in one pass. A view that fails to mount is
   * unmounted and named in a warning (`kind` and its container's id): it must not keep the others from working. */
  function mountViews(selector, kind, create) {
    const mounted = new WeakSet();
    let views = [];
    onEveryPage(() => {
      views = views.filter((view) => {
        if (view.root.isConnected) return true;
        view.unmount();
        return false;
      });
      const pagePass = {};
      for (const root of document.querySelectorAll(selector)) {
        if (mounted.has(root)) continue;
        mounted.add(root);
        const view = create(root, pagePass);
        if (!view) continue;
        try {
          view.mount();
          views.push(view);
        } catch (error) {
          view.unmount();
          console.warn(`${kind} ${root.id}: could not be mounted`, error);
        }
      }
    });
  }

  // ---- the theme's search, once the page is live --------------------------------------------------------------------
  // A page with something live (overrides/main.html loads boot.js on exactly those) boots Python as it loads, and the
  // theme's search worker, building its index at the same time, would take CPU from that boot (README.md, "The theme's
  // search, once the page is live"). On such a page the theme's config names search.js, which keeps the theme's worker
  // from starting until it hears "start" on this channel (search.js names the same one).
  const SEARCH_CHANNEL = "explainer:search";
  // A page whose runtime booted but whose figures are all out of view draws nothing: the search starts this long after.
  const SEARCH_AFTER_BOOT_MS = 1000;
  let searchStarted = false;

  /** Let the theme's search start, once. */
  function startSearch() {
    if (searchStarted || typeof BroadcastChannel !== "function") return;
    searchStarted = true;
    const channel = new BroadcastChannel(SEARCH_CHANNEL);
    channel.postMessage("start");
    // Said before the theme's script ran (a runtime that failed at once), it is said again at `load`, by which time
    // the theme has created its worker.
    if (document.readyState !== "complete") {
      window.addEventListener("load", () => channel.postMessage("start"), {once: true});
    }
  }

  // The search starts with the page's first live figure, when its runtime fails or SEARCH_AFTER_BOOT_MS after it
  // booted, or as soon as the reader opens the search, whichever is first.
  if (document.querySelector('script[src$="explainer/boot.js"]')) {
    new PerformanceObserver((list, observer) => {
      if (!list.getEntriesByName("explainer:first-live").length) return;  // sandbox.js marks its first live figure
      observer.disconnect();
      startSearch();
    }).observe({type: "mark"});
    const runtime = window.ExplainerRuntime;
    runtime.subscribe({
      runtimeChanged() {
        if (runtime.state === "failed") startSearch();
        else if (runtime.state === "ready") setTimeout(startSearch, SEARCH_AFTER_BOOT_MS);
        if (runtime.state === "failed" || runtime.state === "ready") runtime.unsubscribe(this);
      },
    });
    document.addEventListener("focusin", (event) => {
      if (event.target instanceof Element && event.target.matches('[data-md-component="search-query"]')) startSearch();
    });
  }

  window.ExplainerPage = Object.freeze({NEAR_VIEWPORT, element, onEveryPage, mountViews});
})();
