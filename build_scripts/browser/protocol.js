/* The one definition of the messages between the page (sandbox.js) and the Pyodide worker (worker.js).
 *
 *   page → worker   {id, op, args}             op: "boot" (args: the resolved manifest),
 *                                                  "render" (args: {sandbox, params}),
 *                                                  "cancel" (args: {target: id})
 *   worker → page   {id, progress: {stage, state, fraction}}   zero or more times, then exactly one of
 *                   {id, ok: true, value}
 *                   {id, ok: false, error: {kind, message, parameter, detail}}
 *
 * Loaded by the page (a classic <script>) and by the worker (importScripts); exposes the global ExplainerProtocol.
 */
(function (root) {
  "use strict";

  const OPS = Object.freeze({BOOT: "boot", RENDER: "render", CANCEL: "cancel"});

  // Boot stages in order, with how the page names them to the reader.
  const STAGES = Object.freeze(["runtime", "numpy", "explainer"]);
  const STAGE_LABELS = Object.freeze({
    runtime: "the Python runtime",
    numpy: "numpy",
    explainer: "the explainer package",
  });

  // "parameter" and "exception" come from explainer.sandbox.render_json; the worker adds "runtime" (boot failed or
  // the runtime is not booted) and "cancelled" (a cancel arrived before the request ran).
  const ERROR_KINDS = Object.freeze(["parameter", "exception", "runtime", "cancelled"]);

  function request(id, op, args) {
    return {id, op, args};
  }

  function progress(id, stage, state, fraction) {
    return {id, progress: {stage, state, fraction}};
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

  root.ExplainerProtocol = Object.freeze({
    OPS, STAGES, STAGE_LABELS, ERROR_KINDS, request, progress, success, failure, isProgress,
  });
})(globalThis);
