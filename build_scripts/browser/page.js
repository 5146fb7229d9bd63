/* What the page scripts share (sandbox.js, cells.js, trainer.js): building elements, when a view counts as near the
 * viewport, running their mount step on the first page and after every instant navigation, and the moment a page with
 * something live counts as live (whenLive: the theme's search and offline.js wait for it), the theme's palette
 * switching without transitions, and keyboard access to the code blocks the theme has not mounted yet.
 *
 * Exposes the global ExplainerPage = {NEAR_VIEWPORT, element, onEveryPage, mountViews, whenLive}. Loaded after
 * runtime.js, before the others.
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

  // ---- once the page is live ----------------------------------------------------------------------------------------
  // A page with something live (overrides/main.html loads boot.js on exactly those) boots Python as it loads. Start-up
  // work that can wait, waits until that boot is over, so as not to take CPU from it on a two-core machine (README.md,
  // "Once the page is live"): the theme's search worker building its index (search.js) and the install of the service
  // worker of offline reading (offline.js). On any other page, the page is live at once.
  const BOOTS_HERE = Boolean(document.querySelector('script[src$="explainer/boot.js"]'));
  // A runtime that booted while all the page's figures are out of view draws nothing: the page counts as live this long
  // after the boot (the runtime's, or the early worker's that no view took over yet).
  const LIVE_AFTER_BOOT_MS = 1000;
  const LIVE_AT_LATEST_MS = 20000;  // whatever happens (a boot that hangs until its own timeout, say)
  const waiting = [];  // callbacks of whenLive, until the page is live
  let live = false;
  if (!BOOTS_HERE) becomeLive();  // a page without boot.js is live at once

  /** Call `callback` once the page is live: at once on a page without boot.js; else when the worker has computed the
   * page's first figure (which comes after the first live figure, the build's view of the starting values),
   * when its runtime fails, LIVE_AFTER_BOOT_MS after a boot ended, at `load` if nothing is booting then, or at the
   * latest LIVE_AT_LATEST_MS after this script ran, whichever is first. Each callback runs in a task of its own. The
   * moment is marked: performance.mark("explainer:page-live"). */
  function whenLive(callback) {
    if (live) setTimeout(callback);
    else waiting.push(callback);
  }

  function becomeLive() {
    if (live) return;
    live = true;
    performance.mark("explainer:page-live");
    for (const callback of waiting.splice(0)) setTimeout(callback);
  }

  if (BOOTS_HERE) {
    new PerformanceObserver((list, observer) => {
      if (list.getEntriesByName("explainer:first-computed").length) {  // sandbox.js: the worker's first figure
        observer.disconnect();
        becomeLive();
      } else if (list.getEntriesByName("explainer:early-boot-end").length) {  // boot.js, when no view took its worker
        setTimeout(becomeLive, LIVE_AFTER_BOOT_MS);
      }
    }).observe({type: "mark", buffered: true});
    const runtime = window.ExplainerRuntime;
    runtime.subscribe({
      runtimeChanged() {
        if (runtime.state === "failed") becomeLive();
        else if (runtime.state === "ready") setTimeout(becomeLive, LIVE_AFTER_BOOT_MS);
        if (runtime.state === "failed" || runtime.state === "ready") runtime.unsubscribe(this);
      },
    });
    const nothingBooting = () => !performance.getEntriesByName("explainer:worker-start").length
      && runtime.state === "idle";  // boot.js did not run (or could not start its worker) and no view started one
    if (document.readyState === "complete") {
      if (nothingBooting()) becomeLive();
    } else {
      window.addEventListener("load", () => nothingBooting() && becomeLive(), {once: true});
    }
    setTimeout(becomeLive, LIVE_AT_LATEST_MS);
  }

  // ---- the theme's search -------------------------------------------------------------------------------------------
  // On a page with boot.js, the theme's config names search.js, which keeps the theme's worker from starting until it
  // hears "start" on this channel (search.js names the same one): once the page is live, or as soon as the reader opens
  // the search.
  const SEARCH_CHANNEL = "explainer:search";
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

  // The theme's search box: Material's, or Zensical's (a combobox in its search dialog, inside a shadow root, where a
  // focus event's target is the root's host: hence the composed path).
  const SEARCH_BOX = '[data-md-component="search-query"], dialog input[role="combobox"]';

  if (BOOTS_HERE) {
    whenLive(startSearch);
    document.addEventListener("focusin", (event) => {
      const focused = event.composedPath()[0];
      if (focused instanceof Element && focused.matches(SEARCH_BOX)) startSearch();
    });
  }

  // The theme's palette toggle (light, dark, automatic). The theme stops transitions while its palette switches with
  // a rule the build takes out of its stylesheet: it applies the palette on every load too, and that rule then cost a
  // restyle of the whole page (build_scripts/pipeline/theme_assets.py). site.css has the rule again under SWITCHING,
  // set here only when the reader switches: for the frame the new colours are drawn in, and the next.
  const SWITCHING = "data-explainer-switching";
  document.addEventListener("change", (event) => {
    const input = event.composedPath()[0];
    if (!(input instanceof Element) || !input.matches('[data-md-component="palette"] input')) return;
    document.body.setAttribute(SWITCHING, "");
    requestAnimationFrame(() => requestAnimationFrame(() => document.body.removeAttribute(SWITCHING)));
  }, true);

  // ---- code blocks the theme has not mounted yet --------------------------------------------------------------------
  // mkdocs.yml's `content.lazy` has the theme mount a code block only when it first comes into view: its copy button,
  // and tabindex="0" when the block scrolls sideways on a device with hover, so that a keyboard can scroll it. Until
  // then, this gives a block the same tabindex by the same rule, so no block that scrolls is out of the keyboard's
  // reach. A ResizeObserver reads the blocks' widths after a layout the page does anyway (no forced layout, which is
  // what mounting every block at load cost), and again whenever a block's size changes. Once mounted, the theme keeps
  // the attribute by that rule too, so the two agree.
  const CODE_BLOCKS = ".md-content pre > code";
  const HOVER = window.matchMedia("(hover)");
  let codeBlocks = null;  // this page's observer

  function keyboardScrollable(entries) {
    const scrolls = entries.map(({target}) => HOVER.matches && target.scrollWidth > target.clientWidth);
    entries.forEach(({target}, index) => {  // all read, then all written
      if (scrolls[index]) target.setAttribute("tabindex", "0");
      else target.removeAttribute("tabindex");
    });
  }

  if (typeof ResizeObserver === "function") {
    onEveryPage(() => {
      if (codeBlocks) codeBlocks.disconnect();  // the last page's blocks, gone with an instant navigation
      codeBlocks = new ResizeObserver(keyboardScrollable);
      for (const code of document.querySelectorAll(CODE_BLOCKS)) codeBlocks.observe(code);
    });
  }

  window.ExplainerPage = Object.freeze({NEAR_VIEWPORT, element, onEveryPage, mountViews, whenLive});
})();
