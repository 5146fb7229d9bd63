/* What the page scripts share (sandbox.js, cells.js, trainer.js): building elements, when a view counts as near the
 * viewport, and running their mount step on the first page and after every instant navigation.
 *
 * Exposes the global ExplainerPage = {NEAR_VIEWPORT, element, onEveryPage, mountViews}. Loaded before them.
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

  window.ExplainerPage = Object.freeze({NEAR_VIEWPORT, element, onEveryPage, mountViews});
})();
