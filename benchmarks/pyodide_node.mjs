// Time explainer inside real Pyodide 0.27.7, in Node, without a browser.
//
//   node benchmarks/pyodide_node.mjs < plan.json > timings.json
//
// The plan (written by benchmarks/bench_pyodide.py) is
//   {indexURL, wheel, repeats, gap_ms, setup, sweeps: [{sandbox, start, changes: [params, ...]}, ...],
//    calls: [{label, setup, repeats}, ...]}
// Pyodide boots from indexURL (the offline runtime in build/pyodide/<version>/), loads numpy from it (its sha256 is
// checked against the lock file, as in the browser) and unpacks the explainer wheel into site-packages the way the
// site's worker does.
//
// Sweeps: `setup` (Python) runs first, e.g. to forget the ablation lab's cached layers as a fresh visit would; the
// sandbox renders `start` untimed (what a reader sees before touching a control); then every change is one
// `render_json(sandbox, JSON of params)` call, as the worker makes it, timed twice: wall time (performance.now) and
// the process's CPU time (process.cpuUsage), since on a machine shared with other work wall time also measures the
// neighbours. Between two changes the event loop runs for `gap_ms`, as between a reader's changes, so work a sandbox
// leaves for idle time (explainer.idle) runs there, untimed. Each sweep runs `repeats` times.
// Calls: for work no sandbox does yet, `setup` defines a Python function `case()`, called and timed `repeats` times.
//
// The reply is {boot_ms, sweeps: [{sandbox, repetitions: [{ms, cpu_ms}]}], calls: [{label, ms, cpu_ms}]} (lists of
// milliseconds); a failed render or call stops the run with its message.

import {readFileSync} from "node:fs";
import {performance} from "node:perf_hooks";

import {loadPyodide} from "pyodide";

const plan = JSON.parse(readFileSync(0, "utf8"));

const bootStart = performance.now();
const pyodide = await loadPyodide({indexURL: plan.indexURL, stdout: () => {}, stderr: (line) => console.error(line)});
const problems = [];
await pyodide.loadPackage("numpy", {messageCallback: () => {}, errorCallback: (m) => problems.push(m)});
if (problems.length) throw new Error(problems.join("; "));
const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
pyodide.unpackArchive(new Uint8Array(readFileSync(plan.wheel)), "wheel", {extractDir: sitePackages});
pyodide.runPython("import importlib; importlib.invalidate_caches()");
const renderJson = pyodide.pyimport("explainer.sandbox").render_json;
const bootMs = performance.now() - bootStart;

function timed(action) {
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const value = action();
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  return {value, ms, cpuMs: (cpu.user + cpu.system) / 1000};
}

function render(sandbox, params) {
  const reply = JSON.parse(renderJson(sandbox, JSON.stringify(params)));
  if (!reply.ok) throw new Error(`${sandbox} ${JSON.stringify(params)}: ${reply.error.message}\n${reply.error.detail}`);
}

const pause = () => new Promise((resolve) => setTimeout(resolve, plan.gap_ms));

const sweeps = [];
for (const {sandbox, start, changes} of plan.sweeps) {
  const repetitions = [];
  for (let repeat = 0; repeat < plan.repeats; repeat += 1) {
    pyodide.runPython(plan.setup);
    render(sandbox, start);
    const ms = [];
    const cpuMs = [];
    for (const params of changes) {
      await pause();
      const call = timed(() => renderJson(sandbox, JSON.stringify(params)));
      ms.push(call.ms);
      cpuMs.push(call.cpuMs);
      if (!JSON.parse(call.value).ok) render(sandbox, params);  // throws with the message
    }
    repetitions.push({ms, cpu_ms: cpuMs});
  }
  sweeps.push({sandbox, repetitions});
}

const calls = [];
for (const {label, setup, repeats} of plan.calls || []) {
  pyodide.runPython(setup);
  const run = pyodide.globals.get("case");
  const ms = [];
  const cpuMs = [];
  for (let repeat = 0; repeat < repeats; repeat += 1) {
    const call = timed(() => run());
    ms.push(call.ms);
    cpuMs.push(call.cpuMs);
  }
  run.destroy();
  calls.push({label, ms, cpu_ms: cpuMs});
}
process.stdout.write(JSON.stringify({boot_ms: bootMs, sweeps, calls}));
