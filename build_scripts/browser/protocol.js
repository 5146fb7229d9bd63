/* The one definition of the messages between the page (runtime.js) and the Pyodide worker (worker.js).
 *
 *   page → worker   {id, op, args}
 *       op "boot"    args: the resolved manifest                      value: {booted: true, interrupts: bool}
 *       op "render"  args: {sandbox, params}                          value: the figure description
 *       op "run"     args: {code, session, setup, check}              value: {result, check}
 *       op "reset"   args: {session}                                  value: {reset: bool}
 *       op "stream"  args: {name, args}                               value: what the stream returned
 *       op "cancel"  args: {target: id}                               value: {cancelled: bool}
 *   worker → page   {event: "ready"}                   once, when the worker runs (and holds its liveness lock)
 *                   {id, progress: {...}}              zero or more times per request, then exactly one of
 *                   {id, ok: true, value}
 *                   {id, ok: false, error: {kind, message, parameter, detail, ...}}
 *
 * Progress payloads: boot {stage, state, fraction}; run {stream: "stdout"|"stderr", text} or {figure}; stream: what
 * the Python stream yields. README.md in this folder is the written contract.
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

  root.ExplainerProtocol = Object.freeze({
    OPS, STAGES, STAGE_LABELS, ERROR_KINDS, SIGINT, request, progress, stageProgress, success, failure, isProgress,
    isEvent,
  });
})(globalThis);
