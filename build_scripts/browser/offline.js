/* Offline reading, the page's side: registers the site's service worker (sw.js, written by the build when mkdocs.yml's
 * explainer plugin has `offline: true`) a few seconds after the page is live, and shows the footer's "available
 * offline" note once the worker holds everything a second visit needs.
 *
 * The build marks every page of such a site with <meta name="explainer-offline" content="<address of sw.js>">. Without
 * it (offline reading turned off, or `serve`), a service worker an earlier build left at this address is
 * unregistered, so turning the option off heals readers too.
 *
 * The runtime (Pyodide, numpy, our wheel: about 20 MB) is kept only once this reader's runtime has booted
 * (ExplainerRuntime reports `ready`): a reader who never uses a live figure never downloads it for offline use.
 * A page loaded before the service worker controlled it sends its own address (and the files it loaded) to be kept.
 *
 * A new build reaches a reader who has the site open like this: the browser looks for a new sw.js at each page load,
 * and this file asks at each instant navigation too (Material's, which loads no page); the new worker keeps the
 * changed files and takes over the open page at once. That page still runs the previous build's scripts, so its next
 * navigation is a full page load, answered by the new worker with the new files.
 *
 * Needs runtime.js (ExplainerRuntime) and page.js (ExplainerPage.whenLive), loaded before this file. The service
 * worker's side: offline/entry.js.
 */
(function () {
  "use strict";

  const NOTE = "[data-explainer-offline]";
  const marker = document.querySelector('meta[name="explainer-offline"]');
  const container = navigator.serviceWorker;
  if (!container) return;  // no service workers here (an old browser, or a page that is not a secure context)

  if (!marker) {
    container.getRegistration().then((registration) => {
      const active = registration && registration.active;
      if (active && new URL(active.scriptURL).pathname.endsWith("/sw.js")) registration.unregister();
    }, () => {});
    return;
  }

  let offline = false;  // the worker holds the shell and the runtime
  const sent = new Set();  // addresses already handed to the worker to keep
  // Registered once the page is live (page.js) and has stayed open SETTLE_MS longer. The worker's install fetches and
  // checks the whole shell, and it then keeps the runtime (20 MB read, checked and written): on a page that boots
  // Python that work would take CPU from the boot, and right after it, from the next page's boot when the reader
  // reloads or opens another page at once (README.md, "Once the page is live"). The moment of the registration is
  // marked: performance.mark("explainer:offline-register").
  const SETTLE_MS = 5000;
  const whenLive = window.ExplainerPage ? window.ExplainerPage.whenLive : (callback) => callback();
  const registered = new Promise((resolve) => whenLive(() => setTimeout(resolve, SETTLE_MS)))
    .then(() => {
      performance.mark("explainer:offline-register");
      return container.register(new URL(marker.content, document.baseURI).href);
    })
    .catch((error) => {
      console.warn("offline reading is not available:", error.message);
      return null;
    });

  /** Ask the active service worker something; resolves with its answer (null when there is no worker). A page the
   * worker already controls asks at once; any other waits for the registration. */
  async function ask(message) {
    if (!container.controller && !(await registered)) return null;
    const {active} = await container.ready;
    return new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = (event) => resolve(event.data);
      active.postMessage(message, [channel.port2]);
    });
  }

  function showNote() {
    for (const note of document.querySelectorAll(NOTE)) note.hidden = !offline;
  }

  function learn(status) {
    if (!status) return;
    offline = Boolean(status.offline);
    showNote();
  }

  /** The page and the files it loaded before the worker could see them (the first page of a first visit). */
  function keepThisPage() {
    const scope = new URL(marker.content, document.baseURI).href.replace(/sw\.js$/, "");
    const urls = [location.href.split("#")[0], ...performance.getEntriesByType("resource").map((entry) => entry.name)]
      .filter((url) => url.startsWith(scope) && !sent.has(url));
    for (const url of urls) sent.add(url);
    if (urls.length) ask({type: "CACHE_URLS", payload: {urlsToCache: urls}});
  }

  const runtime = window.ExplainerRuntime;
  let askedForRuntime = false;
  if (runtime) {
    runtime.subscribe({
      runtimeChanged() {
        if (runtime.state !== "ready" || askedForRuntime) return;
        askedForRuntime = true;
        ask({type: "explainer:keep-runtime"}).then(learn);
      },
    });
  }

  // ---- a new build --------------------------------------------------------------------------------------------------

  let controlled = Boolean(container.controller);
  let stale = false;  // a new build's worker took over this page, which runs the previous build's scripts
  container.addEventListener("controllerchange", () => {
    stale = controlled;  // the first worker of a first visit is this build's
    controlled = true;
  });
  let shownPath = location.pathname;  // the page on screen (instant navigation changes the address first)
  if (window.location$ && typeof window.location$.subscribe === "function") {
    window.location$.subscribe((url) => {
      if (stale && url.pathname !== shownPath) location.reload();  // the new address, loaded whole
    });
  }

  // A new build's worker asks to take over as it installs (skipWaiting), and Chromium then stops this build's worker to
  // let it in. If this build's worker is started again at that very moment (seen in 2 of 12 runs of test_offline.py's
  // new-build test), the new one stays waiting until the old one goes idle, which in the tests (a driver attached to
  // it) it had not done 80 s later. Asking the waiting worker to skip waiting again makes Chromium stop the old one
  // again (offline/entry.js: "explainer:skip-waiting"); a worker that took over meanwhile is not asked.
  const NUDGE_EVERY_MS = 1000;
  const NUDGES = 10;
  registered.then((registration) => registration && registration.addEventListener("updatefound", () => {
    const worker = registration.installing;
    let nudges = 0;
    const nudge = () => {
      if (registration.waiting !== worker || nudges++ >= NUDGES) return;
      worker.postMessage({type: "explainer:skip-waiting"});
      setTimeout(nudge, NUDGE_EVERY_MS);
    };
    if (worker) {
      worker.addEventListener("statechange", () => worker.state === "installed" && setTimeout(nudge, NUDGE_EVERY_MS));
    }
  }));

  let pagesShown = 0;
  function onPage() {
    shownPath = location.pathname;
    showNote();
    if (!container.controller) keepThisPage();
    if (pagesShown++ > 0) registered.then((registration) => registration && registration.update()).catch(() => {});
  }

  ask({type: "explainer:status"}).then(learn);
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(() => onPage());  // Material: the footer is swapped with each instant navigation
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", onPage, {once: true});
  } else {
    onPage();
  }
})();
