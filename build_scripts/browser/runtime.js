/* The one Pyodide worker of a visit, shared by everything on the page that asks Python for work: sandboxes, code
 * cells, training runs.
 *
 * It is created lazily, on the first start(), and lives across Material's instant navigation (this script runs once
 * per visit). README.md in this folder is the written contract; protocol.js defines the messages.
 *
 * Faults it survives: a worker that dies (crash, out of memory, closed) is noticed at once through the Web Lock the
 * worker holds for its life; a request past its time limit gets the worker terminated (or, with cross-origin
 * isolation, a cell interrupted). Either way the requests in flight are rejected with a RuntimeStopped error that
 * says whether that request was the cause, the runtime goes back to idle, and the next start() boots a fresh worker:
 * views re-send their work by themselves, except the one whose request caused the stop, which waits for the reader.
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
  const OPS = Protocol.OPS;

  const DEFAULT_TIMEOUT_MS = Protocol.DEFAULT_TIMEOUT_MS;
  // How long an interrupted cell may take to stop before its worker is terminated. Python sees the interrupt within
  // milliseconds unless it is inside one long call into C, or its thread gets no CPU (a loaded machine): generous, so
  // that a busy machine still keeps the reader's variables.
  const INTERRUPT_GRACE_MS = 5000;

  function firstLine(text, limit = 200) {
    const line = String(text ?? "").split("\n")[0].trim();
    return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
  }

  /** Why a worker failed, from its error event's message: a script that failed to load has none (a 404 of
   * worker.js, say); an error in a running one has. */
  function workerError(message) {
    return message ? `the worker crashed: ${firstLine(message)}` : "the worker script (worker.js) could not be loaded";
  }

  function seconds(ms) {
    return `${Math.round(ms / 100) / 10} s`.replace(".0 s", " s");
  }

  // ---- the manifest ----------------------------------------------------------------------------------------------

  /** The runtime cannot start; the message is one sentence for the reader. */
  class RuntimeFailure extends Error {}

  /** The worker went away while a request was in flight; `culprit` says whether that request caused it. */
  class RuntimeStopped extends Error {
    constructor(reason, culprit) {
      super(reason);
      this.reason = reason;
      this.culprit = culprit;
    }
  }

  /** runtime.json as it was written ({raw, base}): from boot.js when the page has it (the build writes the manifest
   * into that script), else fetched; on a retry (`revalidate`) from the server, not from a cached copy of a bad one. */
  async function loadManifest(revalidate) {
    const boot = window.ExplainerBoot;
    if (boot && boot.manifest) return {raw: boot.manifest, base: boot.base};
    let response;
    try {
      response = await fetch(MANIFEST_URL, {cache: revalidate ? "no-cache" : "default",
        signal: AbortSignal.timeout(DEFAULT_TIMEOUT_MS)});
    } catch (error) {
      throw new RuntimeFailure("the runtime manifest could not be fetched");
    }
    if (!response.ok) throw new RuntimeFailure(`the runtime manifest could not be fetched (HTTP ${response.status})`);
    try {
      return {raw: JSON.parse(await response.text()), base: MANIFEST_URL};
    } catch (error) {
      throw new RuntimeFailure("the runtime manifest is not valid JSON (the file may be cut short)");
    }
  }

  function resolveManifest({raw, base}) {
    try {
      return Protocol.resolveManifest(raw, base);
    } catch (error) {
      throw new RuntimeFailure(error.message);
    }
  }

  // ---- the runtime: one worker for the whole visit ---------------------------------------------------------------

  class Runtime {
    constructor() {
      this.state = "idle";  // idle | booting | ready | failed
      this.progress = null;  // the latest boot progress {stage, state, fraction}
      this.failure = null;  // {reason, detail} once failed
      this.stopped = null;  // {reason, blames(id)} of the last time the worker went away unasked, until the next boot
      this.source = null;  // runtime.json as written, {raw, base}: what a boot request carries
      this.manifest = null;  // the same, resolved (absolute URLs)
      this.worker = null;
      this.replies = null;  // the BroadcastChannel the current worker answers renders on (README.md, "The reply channel")
      this.interruptBuffer = null;  // with cross-origin isolation: writing SIGINT stops the running cell
      this.interruptGraceMs = INTERRUPT_GRACE_MS;  // how long an interrupted cell may take to stop (tests lengthen it)
      this.calls = new Map();  // request id → {resolve, reject, onProgress, timer, options, op}
      this.nextId = 1;
      this.generation = 0;  // bumped whenever a worker is dropped: late events of an old worker are ignored
      this.views = new Set();
      this.revalidate = false;  // set by retry(): see the boot's `revalidate` in README.md
      // Handed to the next worker, so that a respawn is cheaper than the first boot (README.md, "Handed on"):
      this.compiledWasm = null;  // pyodide.asm.wasm as a worker of this visit compiled it from checked bytes
      this.installed = null;  // the files numpy's and our wheel put in site-packages, as a worker sent them
      this.checked = null;  // {URL: Blob}: the checked bytes of Pyodide's scripts and standard library
      this.reused = {wasm: false, installed: false, checked: false};  // what the current worker was booted from
      this.unpacked = {numpy: null, explainer: null};  // who unpacked its wheels: "browser", "pyodide" or null
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

    /** Throw away the current worker, if any, and boot a fresh one (the manifest is fetched again only if missing). */
    retry() {
      this.dropWorker("the worker was stopped for a retry");
      this.state = "idle";
      this.revalidate = true;  // the boot asks the server again rather than trust a cached copy of a bad file
      this.compiledWasm = this.installed = this.checked = null;  // nor anything an earlier worker made
      this.start();
    }

    /** True when a running cell can be stopped without losing the worker (the page is cross-origin isolated). */
    get canInterrupt() {
      return this.interruptBuffer !== null;
    }

    async boot() {
      const generation = this.generation;
      this.state = "booting";
      this.failure = null;
      this.progress = {stage: Protocol.STAGES[0], state: "start", fraction: 0};
      this.notify();
      // The worker boot.js started while the page was parsing, the first time only; else a worker of our own.
      const early = window.ExplainerBoot && typeof window.ExplainerBoot.take === "function"
        ? window.ExplainerBoot.take() : null;
      try {
        // A manifest is kept only once it resolves, so a retry after a broken one fetches it again.
        const source = early ? {raw: early.manifest, base: early.base}
          : this.source || (await loadManifest(this.revalidate));
        this.manifest = resolveManifest(source);
        this.source = source;
        if (generation !== this.generation) throw new RuntimeStopped("the boot was abandoned", false);
        const options = {
          onProgress: (progress) => {
            this.progress = progress;
            this.notify();
          },
          onTimeout: () => this.fail(`loading took longer than ${seconds(this.manifest.timeout_ms)}`),
        };
        const {reply} = early ? this.adopt(early, options) : this.spawn(options);
        const message = await reply;
        if (!message.ok) {
          throw Object.assign(new RuntimeFailure(firstLine(message.error.message)), {detail: message.error.detail});
        }
        this.interruptBuffer = message.value.interruptBuffer || null;
        this.compiledWasm = message.value.wasm || this.compiledWasm;
        this.checked = message.value.checked || this.checked;
        this.reused = {wasm: false, installed: false, checked: false, ...message.value.reused};
        this.unpacked = {numpy: null, explainer: null, ...message.value.unpacked};
        this.stopped = null;
        this.state = "ready";
        this.notify();
      } catch (error) {
        if (early && early.worker !== this.worker) early.worker.terminate();
        if (generation === this.generation && this.state === "booting") {
          this.fail(error instanceof RuntimeFailure || error instanceof RuntimeStopped ? error.message
            : firstLine(error && error.message), error.detail);
        }
      }
    }

    /** Start a worker of our own and send it the boot request. */
    spawn(options) {
      const name = `explainer-worker-${Math.random().toString(36).slice(2)}-${Date.now()}`;
      this.attach(new Worker(WORKER_URL, {name}));
      return this.call(OPS.BOOT, {manifest: this.source.raw, base: this.source.base, revalidate: this.revalidate,
        wasm: this.compiledWasm, installed: this.installed, checked: this.checked}, options);
    }

    /** Take over the worker boot.js started: its boot request becomes ours, and what it said meanwhile is replayed. */
    adopt(early, options) {
      const reply = this.track(early.bootId, options);
      this.attach(early.worker);
      for (const message of early.messages) this.receive(message);
      if (early.error !== null) this.lose(workerError(early.error));
      return {id: early.bootId, reply};
    }

    attach(worker) {
      worker.onmessage = (event) => worker === this.worker && this.receive(event.data);
      if (typeof BroadcastChannel === "function") {
        this.replies = new BroadcastChannel(`explainer-replies-${Math.random().toString(36).slice(2)}-${Date.now()}`);
        this.replies.onmessage = (event) => worker === this.worker && this.receive(event.data);
      }
      worker.onerror = (event) => {
        event.preventDefault();
        if (worker === this.worker) this.lose(workerError(event.message));
      };
      worker.onmessageerror = () => worker === this.worker && this.lose("a message from the worker could not be read");
      this.worker = worker;
    }

    /** The worker is up and holds its liveness lock: wait for that lock, which we get only once the worker is gone. */
    watch(lock) {
      if (!lock || !navigator.locks) return;
      const worker = this.worker;
      navigator.locks.request(lock, () => {
        if (worker === this.worker) this.lose("the Python worker stopped unexpectedly");
      });
    }

    /**
     * Send one request. `reply` resolves with the final {id, ok, ...} message, or rejects with RuntimeStopped if the
     * worker goes away first. Options: onProgress(payload); timeoutMs (default: the manifest's; 0 for none);
     * idleTimeoutMs (a limit on the time between two messages, for streams); fromStart (timeoutMs counts from the
     * worker's {started} progress, which a run sends as it begins, instead of from now: the time the request waits
     * behind others is not its own, and each of those has a timer); onTimeout (default: stop the worker, naming this
     * request the cause).
     */
    call(op, args, options = {}) {
      const id = this.nextId++;
      const reply = this.track(id, options);
      if (op === OPS.RENDER && this.replies) args = {...args, channel: this.replies.name};
      this.worker.postMessage(Protocol.request(id, op, args));
      return {id, reply};
    }

    /** Wait for the reply to request `id` (sent by us, or by boot.js before we took its worker). */
    track(id, options) {
      const reply = new Promise((resolve, reject) => {
        this.calls.set(id, {resolve, reject, options, timer: null});
      });
      if (!options.fromStart) this.arm(id, this.limitOf(options));
      return reply;
    }

    limitOf(options) {
      return options.idleTimeoutMs || (options.timeoutMs ?? this.manifest.timeout_ms);
    }

    /** (Re)start a request's timer: past `wait` ms its onTimeout runs, or the worker is stopped for it. */
    arm(id, wait) {
      const call = this.calls.get(id);
      clearTimeout(call.timer);
      if (!wait) return;
      call.timer = setTimeout(() => {
        if (!this.calls.has(id)) return;
        if (call.options.onTimeout) call.options.onTimeout(id);
        else this.stopFor(id, `a computation took longer than ${seconds(wait)} and was stopped`);
      }, wait);
    }

    receive(message) {
      if (Protocol.isEvent(message)) {
        if (message.event === "ready") this.watch(message.lock);
        if (message.event === "installed") this.installed = message.files;
        return;
      }
      const call = message && this.calls.get(message.id);
      if (!call) return;
      if (Protocol.isProgress(message)) {
        if (message.progress.started) {
          if (call.options.fromStart) this.arm(message.id, this.limitOf(call.options));
          return;
        }
        if (call.options.idleTimeoutMs) this.arm(message.id, call.options.idleTimeoutMs);
        if (call.options.onProgress) call.options.onProgress(message.progress);
        return;
      }
      if (message.ok === false && message.error && message.error.fatal) {
        // Python died under this request: the worker is closing. This request is the cause (a sandbox waits for
        // its reader instead of sending the same values to the next worker); the others go on on a fresh one.
        this.stopFor(message.id, `Python crashed (${firstLine(message.error.message).split(". ")[0]})`);
        return;
      }
      clearTimeout(call.timer);
      this.calls.delete(message.id);
      call.resolve(message);
    }

    /** Forget a request (it resolves as cancelled now) and ask the worker to drop it, or stop it if it streams.
     * Returns a promise of the worker's answer, {cancelled}, which comes once the worker has stopped the request
     * (after the chunk it may be running), or of null if there was nothing to cancel or the worker went away. */
    cancel(id) {
      const call = this.calls.get(id);
      if (!call || !this.worker) return Promise.resolve(null);
      clearTimeout(call.timer);
      this.calls.delete(id);
      call.resolve(Protocol.failure(id, {kind: "cancelled", message: "cancelled"}));
      const {reply} = this.call(OPS.CANCEL, {target: id}, {timeoutMs: 0});
      return reply.then((message) => (message.ok ? message.value : null), () => null);
    }

    /** Stop the running cell: through the interrupt buffer when there is one (the worker survives, unless it does
     * not answer within a grace period), else by terminating the worker. */
    interrupt(id, reason) {
      if (!this.calls.has(id)) return;
      if (!this.interruptBuffer) {
        this.stopFor(id, reason);
        return;
      }
      this.interruptBuffer[0] = Protocol.SIGINT;
      const call = this.calls.get(id);
      clearTimeout(call.timer);
      call.timer = setTimeout(() => this.calls.has(id) && this.stopFor(id, reason), this.interruptGraceMs);
    }

    /** A request ran past its limit: terminate the worker; that request is the cause, the others are not. */
    stopFor(id, reason) {
      this.lose(reason, new Set([id]));
    }

    /**
     * The worker is gone, or must go: drop it and go back to idle, so the next start() boots a fresh one. Requests in
     * flight are rejected with RuntimeStopped; `culprits` names those that caused it (default: all of them, when the
     * worker died by itself and nobody knows which request did it).
     */
    lose(reason, culprits = null) {
      if (this.state === "booting") {
        this.fail(reason);
        return;
      }
      this.dropWorker(reason, culprits);
      this.state = "idle";
      // Views read this in runtimeChanged(), before their rejected requests settle: was my request the cause?
      this.stopped = {reason, blames: (id) => culprits === null || culprits.has(id)};
      this.notify();
    }

    fail(reason, detail = "") {
      this.dropWorker(reason);
      this.state = "failed";
      this.failure = {reason, detail: detail ? String(detail) : ""};
      this.notify();
    }

    dropWorker(reason, culprits = null) {
      this.generation += 1;
      if (this.worker) this.worker.terminate();
      if (this.replies) this.replies.close();
      this.worker = this.replies = null;
      this.interruptBuffer = null;
      const calls = [...this.calls.entries()];
      this.calls.clear();
      for (const [id, call] of calls) {
        clearTimeout(call.timer);
        call.reject(new RuntimeStopped(reason, culprits === null || culprits.has(id)));
      }
    }
  }

  window.ExplainerRuntime = new Runtime();
  window.ExplainerRuntime.RuntimeStopped = RuntimeStopped;
})();
