/* The one definition of the messages between the page (runtime.js) and the Pyodide worker (worker.js).
 *
 *   page → worker   {id, op, args}
 *       op "boot"    args: {manifest, base, revalidate,               value: {booted: true, interrupts: bool,
 *                           wasm, installed, checked}                        interruptBuffer, wasm, checked, reused}
 *                    (runtime.json's JSON, its URL, true on a retry's boot: ask the server again past caches; then
 *                    what an earlier worker of the visit handed on, or null: the WebAssembly.Module of
 *                    pyodide.asm.wasm and the {URL: Blob} of checked bytes its reply carried, and the files of its
 *                    "installed" event. The reply's `wasm` is the module this worker runs, null unless its bytes
 *                    were checked; `checked` the Blobs of Pyodide's scripts and standard library, checked; `reused`
 *                    is {wasm, installed, checked}, booleans: which of the three this worker was booted from)
 *       op "render"  args: {sandbox, params, channel}                 value: the figure description
 *                    (channel: the name of a BroadcastChannel the page listens on, or absent; the worker then sends
 *                    this request's reply there instead of by postMessage: see README.md, "The reply channel")
 *       op "run"     args: {code, session, setup, check}              value: {result, check}
 *       op "reset"   args: {session}                                  value: {reset: bool}
 *       op "stream"  args: {name, args}                               value: what the stream returned
 *       op "cancel"  args: {target: id}                               value: {cancelled: bool}
 *   worker → page   {event: "ready"}                   once, when the worker runs (and holds its liveness lock)
 *                   {event: "installed", files}        at most once, before the first "run" if the boot had no
 *                                                      `installed`: [[path in site-packages, Uint8Array], ...]
 *                   {id, progress: {...}}              zero or more times per request, then exactly one of
 *                   {id, ok: true, value}
 *                   {id, ok: false, error: {kind, message, parameter, detail, ...}}
 *
 * Progress payloads: boot {stage, state, fraction}; run {started: true} first, as the worker begins it (the page
 * counts a cell's time limit from there; runtime.js keeps it from onProgress), then {stream: "stdout"|"stderr", text}
 * or {figure}; stream: what the Python stream yields. README.md in this folder is the written contract.
 *
 * Loaded by the page (a classic <script>) and by the worker (importScripts); exposes the global ExplainerProtocol.
 */
(function (root) {
  "use strict";

  const OPS = Object.freeze({BOOT: "boot", RENDER: "render", RUN: "run", RESET: "reset", STREAM: "stream",
    CANCEL: "cancel"});

  // Boot stages in order, with how the page names them to the reader.
  const STAGES = Object.freeze(["runtime", "numpy", "explainer"]);
  const STAGE_LABELS = Object.freeze({
    runtime: "the Python runtime",
    numpy: "numpy",
    explainer: "the explainer package",
  });

  // From the worker: "parameter" and "exception" (from Python), "runtime" (a boot stage failed, or the runtime is not
  // booted), "cancelled" (a cancel arrived first), "interrupted" (a run stopped by the interrupt buffer).
  // Made by the page: "stopped" (the worker went away, or was stopped, while the request was in flight).
  const ERROR_KINDS = Object.freeze(["parameter", "exception", "runtime", "cancelled", "interrupted", "stopped"]);

  // The SIGINT value Pyodide's interrupt buffer takes: Python raises KeyboardInterrupt at its next check.
  const SIGINT = 2;

  function request(id, op, args) {
    return {id, op, args};
  }

  function progress(id, payload) {
    return {id, progress: payload};
  }

  function stageProgress(id, stage, state, fraction) {
    return progress(id, {stage, state, fraction});
  }

  function success(id, value) {
    return {id, ok: true, value};
  }

  function failure(id, {kind = "exception", message = "", parameter = null, detail = "", ...extra} = {}) {
    return {id, ok: false, error: {kind, message, parameter, detail, ...extra}};
  }

  function isProgress(message) {
    return Boolean(message) && typeof message === "object" && "progress" in message;
  }

  function isEvent(message) {
    return Boolean(message) && typeof message === "object" && "event" in message;
  }

  // ---- the manifest (runtime.json), resolved the same way by the page and the worker ------------------------------

  const DEFAULT_TIMEOUT_MS = 60000;

  /** A manifest that cannot be used; the message is one clause for the reader ("the runtime manifest has no …"). */
  class ManifestError extends Error {}

  function requireText(value, name) {
    if (typeof value !== "string" || !value) throw new ManifestError(`the runtime manifest has no ${name}`);
    return value;
  }

  /** A downloadable file of the manifest ({url, integrity}), its URL made absolute against `base`. */
  function resolveFile(file, name, base, {optional = false} = {}) {
    if (file === null || file === undefined) {
      if (optional) return null;
      throw new ManifestError(`the runtime manifest has no ${name}`);
    }
    return {...file, url: new URL(requireText(file.url, `${name}.url`), base).href};
  }

  /** runtime.json's JSON with every URL absolute (relative ones are relative to runtime.json, `base`) and the
   * timeout a number; ManifestError when something the boot needs is missing. */
  function resolveManifest(manifest, base) {
    if (!manifest || typeof manifest !== "object" || Array.isArray(manifest)) {
      throw new ManifestError("the runtime manifest is not a JSON object");
    }
    let indexURL = new URL(requireText(manifest.pyodide && manifest.pyodide.indexURL, "pyodide.indexURL"), base).href;
    if (!indexURL.endsWith("/")) indexURL += "/";
    const wheel = resolveFile(manifest.wheel, "wheel", base);
    requireText(wheel.integrity, "wheel.integrity");
    const timeout = Number(manifest.timeout_ms);
    return {
      ...manifest,
      pyodide: {...manifest.pyodide, indexURL},
      wheel,
      numpy: resolveFile(manifest.numpy, "numpy", base),
      stdlib: resolveFile(manifest.stdlib, "stdlib", base, {optional: true}),
      lock: resolveFile(manifest.lock, "lock", base, {optional: true}),
      timeout_ms: timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS,
    };
  }

  root.ExplainerProtocol = Object.freeze({
    OPS, STAGES, STAGE_LABELS, ERROR_KINDS, SIGINT, DEFAULT_TIMEOUT_MS, request, progress, stageProgress, success,
    failure, isProgress, isEvent, ManifestError, resolveManifest,
  });
})(globalThis);
