/* The one Pyodide worker of a visit, shared by everything on the page that asks Python for work (sandboxes today).
 *
 * It is created lazily, on the first start(), and lives across Material's instant navigation (this script runs once
 * per visit). README.md in this folder is the written contract; protocol.js defines the messages.
 *
 * Needs the global of protocol.js (ExplainerProtocol), loaded before this file. Exposes ExplainerRuntime: the one
 * Runtime instance of the page.
 */
(function () {
  "use strict";

  // Siblings are found from this script's own address, captured now (currentScript is null once loading is over).
  const script = document.currentScript || document.querySelector('script[src*="runtime.js"]');
  const MANIFEST_URL = new URL("runtime.json", script.src).href;
  const WORKER_URL = new URL("worker.js", script.src).href;
  const Protocol = window.ExplainerProtocol;

  const DEFAULT_TIMEOUT_MS = 60000;

  function firstLine(text, limit = 200) {
    const line = String(text ?? "").split("\n")[0].trim();
    return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
  }

  // ---- the manifest ----------------------------------------------------------------------------------------------

  class RuntimeFailure extends Error {}

  function resolveManifest(manifest) {
    let indexURL = new URL(manifest.pyodide.indexURL, MANIFEST_URL).href;
    if (!indexURL.endsWith("/")) indexURL += "/";
    const timeout = Number(manifest.timeout_ms);
    return {
      ...manifest,
      pyodide: {...manifest.pyodide, indexURL},
      wheel: {...manifest.wheel, url: new URL(manifest.wheel.url, MANIFEST_URL).href},
      timeout_ms: timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS,
    };
  }

  async function loadManifest() {
    let response;
    try {
      response = await fetch(MANIFEST_URL, {signal: AbortSignal.timeout(DEFAULT_TIMEOUT_MS)});
    } catch (error) {
      throw new RuntimeFailure("the runtime manifest could not be fetched");
    }
    if (!response.ok) throw new RuntimeFailure(`the runtime manifest could not be fetched (HTTP ${response.status})`);
    try {
      return resolveManifest(await response.json());
    } catch (error) {
      throw new RuntimeFailure("the runtime manifest is malformed");
    }
  }

  // ---- the runtime: one worker for the whole visit ---------------------------------------------------------------

  class Runtime {
    constructor() {
      this.state = "idle";  // idle | booting | ready | failed
      this.progress = null;  // the latest boot progress {stage, state, fraction}
      this.failure = null;  // {reason, detail} once failed
      this.manifest = null;
      this.worker = null;
      this.calls = new Map();  // request id → {resolve, reject, onProgress, timer}
      this.nextId = 1;
      this.generation = 0;  // bumped by stop(): late events of a stopped boot are ignored
      this.views = new Set();
    }

    subscribe(view) {
      this.views.add(view);
    }

    unsubscribe(view) {
      this.views.delete(view);
    }

    notify() {
      for (const view of [...this.views]) view.runtimeChanged();
    }

    /** Boot unless booting, ready or failed (a failed runtime restarts only through retry). */
    start() {
      if (this.state === "idle") this.boot();
    }

    /** Throw away the current worker, if any, and boot a fresh one. */
    retry() {
      this.stop();
      this.state = "idle";
      this.start();
    }

    async boot() {
      const generation = this.generation;
      this.state = "booting";
      this.failure = null;
      this.progress = {stage: Protocol.STAGES[0], state: "start", fraction: 0};
      this.notify();
      try {
        this.manifest = this.manifest || (await loadManifest());
        if (generation !== this.generation) return;
        this.spawn();
        const reply = await this.call(Protocol.OPS.BOOT, this.manifest, (progress) => {
          this.progress = progress;
          this.notify();
        }).reply;
        if (!reply.ok) {
          throw Object.assign(new RuntimeFailure(firstLine(reply.error.message)), {detail: reply.error.detail});
        }
        this.state = "ready";
        this.notify();
      } catch (error) {
        if (generation === this.generation && this.state === "booting") {
          this.fail(error instanceof RuntimeFailure ? error.message : firstLine(error && error.message), error.detail);
        }
      }
    }

    spawn() {
      const worker = new Worker(WORKER_URL);
      worker.onmessage = (event) => worker === this.worker && this.receive(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        if (worker !== this.worker) return;
        const detail = event.message ? `: ${firstLine(event.message)}` : "";
        this.fail(`the worker could not be started or crashed${detail}`);
      };
      this.worker = worker;
    }

    /** Send one request; `reply` resolves with the final {id, ok, ...} message, or rejects if the worker is stopped. */
    call(op, args, onProgress = null) {
      const id = this.nextId++;
      const seconds = Math.round(this.manifest.timeout_ms / 1000);
      const reply = new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          this.fail(op === Protocol.OPS.BOOT ? `loading took longer than ${seconds} s`
            : `a computation took longer than ${seconds} s and was stopped`);
        }, this.manifest.timeout_ms);
        this.calls.set(id, {resolve, reject, onProgress, timer});
      });
      this.worker.postMessage(Protocol.request(id, op, args));
      return {id, reply};
    }

    receive(message) {
      const call = message && this.calls.get(message.id);
      if (!call) return;
      if (Protocol.isProgress(message)) {
        if (call.onProgress) call.onProgress(message.progress);
        return;
      }
      clearTimeout(call.timer);
      this.calls.delete(message.id);
      call.resolve(message);
    }

    /** Forget a request (its reply will be ignored) and ask the worker to drop it if it has not started. */
    cancel(id) {
      const call = this.calls.get(id);
      if (!call || !this.worker) return;
      clearTimeout(call.timer);
      this.calls.delete(id);
      call.resolve(Protocol.failure(id, {kind: "cancelled", message: "cancelled"}));
      this.worker.postMessage(Protocol.request(this.nextId++, Protocol.OPS.CANCEL, {target: id}));
    }

    fail(reason, detail = "") {
      this.stop();
      this.state = "failed";
      this.failure = {reason, detail: detail ? String(detail) : ""};
      this.notify();
    }

    stop() {
      this.generation += 1;
      if (this.worker) this.worker.terminate();
      this.worker = null;
      const calls = [...this.calls.values()];
      this.calls.clear();
      for (const call of calls) {
        clearTimeout(call.timer);
        call.reject(new RuntimeFailure("the worker was stopped"));
      }
    }
  }

  window.ExplainerRuntime = new Runtime();
})();
