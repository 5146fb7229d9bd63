/* The Pyodide worker: one per visit, started by sandbox.js, speaking the messages defined in protocol.js.
 *
 * boot   loads the runtime (pyodide.js from manifest.pyodide.indexURL), the packages of manifest.packages (Pyodide
 *        checks each file's sha256 against its lock file) and the explainer wheel (fetched with Subresource Integrity,
 *        unpacked into site-packages), then keeps a reference to explainer.sandbox.render_json.
 * render calls render_json(sandbox, JSON of params) and forwards its {ok, value | error} reply.
 * cancel drops a queued render that has not started (a running one cannot be interrupted: the page terminates the
 *        worker if it takes longer than the manifest's timeout).
 */
"use strict";

importScripts("protocol.js");

const Protocol = self.ExplainerProtocol;

// The fraction of the whole boot done at the start and end of each stage (roughly by download size).
const STAGE_SPAN = Object.freeze({runtime: [0, 0.6], numpy: [0.6, 0.85], explainer: [0.85, 1]});

let booting = null;  // the boot promise: the runtime is booted at most once per worker
let renderJson = null;  // explainer.sandbox.render_json once booted
const queue = [];  // render requests not yet run, oldest first
let pumpScheduled = false;

function post(message) {
  self.postMessage(message);
}

function firstLine(error) {
  return String((error && error.message) || error).split("\n")[0].replace(/[\s.]+$/, "");
}

class StageError extends Error {
  constructor(stage, cause) {
    super(`loading ${Protocol.STAGE_LABELS[stage]} failed (${firstLine(cause)})`);
    this.stage = stage;
    this.detail = String((cause && cause.stack) || cause);
  }
}

async function stage(id, name, work) {
  const [start, end] = STAGE_SPAN[name];
  post(Protocol.progress(id, name, "start", start));
  let result;
  try {
    result = await work();
  } catch (error) {
    throw new StageError(name, error);
  }
  post(Protocol.progress(id, name, "done", end));
  return result;
}

async function loadRuntime(id, manifest) {
  const indexURL = manifest.pyodide.indexURL;
  // Our wheel is small and independent of the runtime: download it while Pyodide loads, install it after numpy.
  const {url, integrity} = manifest.wheel;
  const wheel = fetch(url, {integrity}).then((response) => {
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
    return response.arrayBuffer();
  });
  wheel.catch(() => {});  // a failure is reported by the explainer stage, not as an unhandled rejection
  const pyodide = await stage(id, "runtime", () => {
    try {
      importScripts(indexURL + "pyodide.js");
    } catch (error) {  // the browser's own message is long and names the API, not the problem
      throw new Error(`${indexURL}pyodide.js could not be loaded`);
    }
    return self.loadPyodide({indexURL});
  });
  await stage(id, "numpy", async () => {
    // loadPackage reports a failed download through errorCallback and resolves anyway: collect and throw.
    const problems = [];
    await pyodide.loadPackage(manifest.packages, {messageCallback: () => {}, errorCallback: (m) => problems.push(m)});
    if (problems.length) throw new Error(problems.join("; "));
  });
  return stage(id, "explainer", async () => {
    const buffer = await wheel;
    // Without extractDir, unpackArchive unpacks into the working directory, not site-packages.
    const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
    pyodide.unpackArchive(buffer, "wheel", {extractDir: sitePackages});
    pyodide.runPython("import importlib; importlib.invalidate_caches()");
    return pyodide.pyimport("explainer.sandbox").render_json;
  });
}

async function boot(id, manifest) {
  if (!booting) {
    booting = loadRuntime(id, manifest).then((render) => {
      renderJson = render;
    });
  }
  try {
    await booting;
    post(Protocol.success(id, {booted: true}));
  } catch (error) {
    post(Protocol.failure(id, {kind: "runtime", stage: error.stage || null, message: firstLine(error),
      detail: error.detail || String(error.stack || error)}));
  }
}

function render({id, args}) {
  if (!renderJson) {
    post(Protocol.failure(id, {kind: "runtime", message: "the Python runtime is not booted"}));
    return;
  }
  try {
    const reply = JSON.parse(renderJson(args.sandbox, JSON.stringify(args.params || {})));
    post({id, ...reply});
  } catch (error) {  // render_json never raises; this is the runtime itself failing
    post(Protocol.failure(id, {kind: "exception", message: firstLine(error), detail: String(error.stack || error)}));
  }
}

// Renders run one per task, so a cancel that arrives meanwhile is seen before the queued request it names.
function schedulePump() {
  if (pumpScheduled) return;
  pumpScheduled = true;
  setTimeout(pump, 0);
}

function pump() {
  pumpScheduled = false;
  if (!queue.length) return;
  if (booting && !renderJson) {
    booting.then(schedulePump, schedulePump);  // renders wait for a boot in progress
    return;
  }
  render(queue.shift());
  if (queue.length) schedulePump();
}

function cancel(id, target) {
  const index = queue.findIndex((request) => request.id === target);
  if (index >= 0) {
    queue.splice(index, 1);
    post(Protocol.failure(target, {kind: "cancelled", message: "cancelled before it ran"}));
  }
  post(Protocol.success(id, {cancelled: index >= 0}));
}

self.onmessage = (event) => {
  const {id, op, args} = event.data || {};
  if (op === Protocol.OPS.BOOT) {
    boot(id, args);
  } else if (op === Protocol.OPS.RENDER) {
    queue.push({id, args});
    schedulePump();
  } else if (op === Protocol.OPS.CANCEL) {
    cancel(id, args && args.target);
  } else {
    post(Protocol.failure(id, {kind: "exception", message: `unknown op ${JSON.stringify(op)}`}));
  }
};
