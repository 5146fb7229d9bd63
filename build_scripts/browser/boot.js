/* Start the Pyodide worker while the page is still loading: a page with a sandbox loads this file in its <head>
 * (overrides/main.html), `async`, so it never blocks parsing. As soon as it runs, while the HTML is still being parsed,
 * it creates the worker and sends it the boot request, so the runtime downloads and starts while the theme's scripts
 * and the rest of the page are still on their way. runtime.js takes that worker over (ExplainerBoot.take()) when the
 * first sandbox wants it and replays what the worker said meanwhile.
 *
 * The build writes runtime.json's JSON in place of the marker below (build_scripts/site_runtime.py), which also saves
 * runtime.js fetching it. Unbuilt, or when anything here fails, this file does nothing and runtime.js boots a worker
 * of its own when a sandbox wants one, as on a page without this file. It depends on nothing else.
 */
(function () {
  "use strict";

  const MANIFEST = /* runtime.json */ null;
  const BOOT_ID = 0;  // runtime.js numbers its own requests from 1

  const script = document.currentScript;
  if (!MANIFEST || !script || typeof Worker !== "function") return;
  const base = new URL("runtime.json", script.src).href;
  let early = null;

  function start() {
    if (window.ExplainerRuntime && window.ExplainerRuntime.state !== "idle") return;  // runtime.js was quicker
    const name = `explainer-worker-${Math.random().toString(36).slice(2)}-${Date.now()}`;
    performance.mark("explainer:worker-start");
    const worker = new Worker(new URL("worker.js", script.src).href, {name});
    early = {worker, manifest: MANIFEST, base, bootId: BOOT_ID, messages: [], error: null};
    worker.onmessage = (event) => {
      early.messages.push(event.data);
      // The boot's reply, heard here only while no view took the worker over: page.js counts the page live soon after.
      if (event.data && event.data.id === BOOT_ID && typeof event.data.ok === "boolean") {
        performance.mark("explainer:early-boot-end");
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      early.error = event.message || "";
    };
    worker.postMessage({id: BOOT_ID, op: "boot", args: {manifest: MANIFEST, base}});
  }

  // At once, not after the first paint: measured faster to the first live figure, the first paint within its noise
  // (README.md, "The early boot").
  start();

  window.ExplainerBoot = Object.freeze({
    manifest: MANIFEST,
    base,
    /** The worker started early, once: {worker, manifest, base, bootId, messages, error}, or null. */
    take() {
      const taken = early;
      early = null;
      return taken;
    },
  });
})();
