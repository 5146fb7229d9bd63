"""Control change → new figure description, timed inside real Pyodide 0.27.7 (in Node) and in CPython, per sandbox.

In the browser most of an update's time is Python inside Pyodide (numpy has no BLAS there, and every numpy call on a
tiny array costs microseconds). This benchmark measures that part without a browser: benchmarks/pyodide_node.mjs
boots the offline runtime of build/pyodide/ in Node, installs numpy from it and our wheel (built from the current
sources by build_scripts.wheel) the way the site's worker does, and times `explainer.sandbox.render_json(sandbox,
params)` over the changes a reader makes: every control of every sandbox, sliders to both extremes and one step in
from each (End, ArrowLeft, Home, ArrowRight, 15 changes per control, as bench_sandboxes presses them), toggles
flipped, choices cycled, each change on top of the previous ones, GAP_MS apart (idle time, in which the ablation lab
prepares what the next change may need: explainer.idle). The ablation lab is swept three times: its toggles at the
starting depth 12, its depth slider, and its toggles at depth 24 (the most work per change). Each sweep runs REPEATS
times, every time from a fresh lab (its cache of computed layers cleared), as a new visit starts. CPython runs the
same sweeps in this process, for comparison. A few CALLS time work the lab does not draw yet.

Ours is the p95 of the CPU time the Node process spent per change (process.cpuUsage): on a machine shared with other
work, wall time (printed too) mostly measures the neighbours. The baseline is what a 16 ms frame leaves for Python:
16 ms minus the median time of the rest of an update, measured in the same run in headless Chromium on a page that
does what the site does around Python (post the parameters to a Pyodide worker, which renders on its next task; JSON
of the reply; the structured clone back; the site's own render.js building the SVG into the page, and the readouts'
HTML set). Not in it: the input event's handling and sandbox.js's bookkeeping, and style, layout and paint, which
the site's own update measure (bench_sandboxes item 2) leaves out as well. The rest's p95 is printed; on a busy
machine it is mostly scheduling noise.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import Ratio

PROJECT_ROOT = Path(__file__).resolve().parent.parent
HARNESS = Path(__file__).resolve().parent / "pyodide_node.mjs"
FRAME_BUDGET_SECONDS = 0.016
CHANGES_PER_CONTROL = 15
SLIDER_MOVES = ("max", "max - step", "min", "min + step")  # End, ArrowLeft, Home, ArrowRight
REPEATS = 2  # of every sweep, in Node and in CPython (Chromium: once)
CALL_REPEATS = 20
GAP_MS = 50  # between two changes (Node, Chromium): a reader's changes come apart, and idle work runs between
RESET_LAB = "import explainer.ablation as _lab; _lab.clear_cache()"

# Work the ablation lab does not draw yet (issue 17's gradient view), and the cold forward pass its spare time hides.
LAB_CALL = """
from explainer import ablation
from explainer.ablation import AblationConfig, gradient_norms, run_ablation
from explainer.sandboxes.ablation_lab import SENTENCE_IDS, SWAPPED_IDS
config = AblationConfig(depth={depth})
run_ablation(config, SENTENCE_IDS, SWAPPED_IDS)
def case():
    {body}
"""
CALLS = {
    "gradient_norms @12, forward cached": LAB_CALL.format(depth=12, body=(
        "[stack.gradient_norms.clear() for stack in ablation._LAYERS_CACHE.values()]  # computed anew each call\n"
        "    gradient_norms(config, SENTENCE_IDS, SWAPPED_IDS)")),
    "gradient_norms @24, forward cached": LAB_CALL.format(depth=24, body=(
        "[stack.gradient_norms.clear() for stack in ablation._LAYERS_CACHE.values()]\n"
        "    gradient_norms(config, SENTENCE_IDS, SWAPPED_IDS)")),
    "run_ablation @24, nothing cached": LAB_CALL.format(depth=24, body=(
        "ablation.clear_cache()\n    run_ablation(config, SENTENCE_IDS, SWAPPED_IDS)")),
}


# ---- the changes a reader makes ---------------------------------------------------------------------------------


def _slider_value(param, move: str):
    value = {"max": param.max, "max - step": param.max - param.step, "min": param.min,
             "min + step": param.min + param.step}[move]
    return int(value) if param.kind == "int" else round(value, 10)


def control_changes(param, start: dict, count: int = CHANGES_PER_CONTROL) -> list[dict]:
    """`count` successive parameter sets, each one change of `param` on top of the previous set."""
    values, current = [], dict(start)
    for index in range(count):
        if param.kind == "toggle":
            current[param.name] = not current[param.name]
        elif param.kind == "choice":
            options = param.values
            current[param.name] = options[(options.index(current[param.name]) + 1) % len(options)]
        else:
            current[param.name] = _slider_value(param, SLIDER_MOVES[index % len(SLIDER_MOVES)])
        values.append(dict(current))
    return values


def sweep(sandbox, names, start: dict | None = None) -> dict:
    """{sandbox, start, changes}: the parameters first shown, then every change of the controls `names` in order,
    each control starting where the previous one left off."""
    changes, current = [], {**sandbox.defaults(), **(start or {})}
    first = current
    for name in names:
        moved = control_changes(sandbox.param(name), current)
        changes.extend(moved)
        current = moved[-1]
    return {"sandbox": sandbox.name, "start": first, "changes": changes}


def sweeps() -> dict[str, dict]:
    """The benchmark's sweeps by label (see `sweep`), in the order a reader makes the changes."""
    from explainer.sandbox import registry

    plans = {}
    for name, sandbox in registry().items():
        names = [p.name for p in sandbox.params]
        if name == "ablation_lab":
            toggles = [p.name for p in sandbox.params if p.kind == "toggle"]
            plans["ablation_lab toggles @12"] = sweep(sandbox, toggles)
            plans["ablation_lab depth"] = sweep(sandbox, ["depth"])
            plans["ablation_lab toggles @24"] = sweep(sandbox, toggles, {"depth": 24})
        else:
            plans[name] = sweep(sandbox, names)
    return plans


# ---- the two runtimes -------------------------------------------------------------------------------------------


def cpython_milliseconds(plans: dict, repeats: int = REPEATS) -> dict[str, list[float]]:
    """Every change of every sweep rendered with render_json in this process, in milliseconds."""
    from explainer import ablation
    from explainer.sandbox import render_json

    timings = {}
    for label, plan in plans.items():
        name, times = plan["sandbox"], []
        for _ in range(repeats):
            ablation.clear_cache()
            render_json(name, json.dumps(plan["start"]))
            for params in plan["changes"]:
                text = json.dumps(params)
                start = time.perf_counter()
                reply = render_json(name, text)
                times.append(1e3 * (time.perf_counter() - start))
                if not json.loads(reply)["ok"]:
                    raise RuntimeError(f"bench_pyodide: {name} {params}: {json.loads(reply)['error']['message']}")
        timings[label] = times
    return timings


def pyodide_milliseconds(plans: dict, wheel: Path, repeats: int = REPEATS) -> tuple[float, dict, dict]:
    """(boot ms, wall ms and CPU ms by label: every change of every sweep rendered in Pyodide under Node, then every
    call of CALLS)."""
    from build_scripts.pyodide_runtime import DEFAULT_RUNTIME_DIR

    node = shutil.which("node")
    if not node or not (DEFAULT_RUNTIME_DIR / "pyodide.asm.wasm").is_file():
        raise RuntimeError("bench_pyodide: needs node and the offline Pyodide runtime: run `make setup`")
    plan = {"indexURL": f"{DEFAULT_RUNTIME_DIR}/", "wheel": str(wheel), "repeats": repeats, "gap_ms": GAP_MS,
            "setup": RESET_LAB,
            "sweeps": list(plans.values()),
            "calls": [{"label": label, "setup": setup, "repeats": CALL_REPEATS} for label, setup in CALLS.items()]}
    done = subprocess.run([node, str(HARNESS)], input=json.dumps(plan), capture_output=True, text=True,
                          cwd=PROJECT_ROOT, env={**os.environ, "NODE_NO_WARNINGS": "1"}, timeout=600)
    if done.returncode:  # Node prints the minified source line of a wasm error first: keep the short lines
        message = "\n".join(line for line in done.stderr.splitlines() if len(line) < 400)
        raise RuntimeError(f"bench_pyodide: the Node harness failed:\n{message[-4000:]}")
    reply = json.loads(done.stdout)
    wall, cpu = ({**{label: [ms for repetition in result["repetitions"] for ms in repetition[kind]]
                     for label, result in zip(plans, reply["sweeps"])},
                  **{call["label"]: call[kind] for call in reply["calls"]}} for kind in ("ms", "cpu_ms"))
    return reply["boot_ms"], wall, cpu


# ---- the allowance, measured in Chromium --------------------------------------------------------------------------

ALLOWANCE_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>update allowance</title>
<script src="render.js"></script></head>
<body><div id="figure"></div><div id="readouts"></div>
<script>
  // Like the site: the page posts the parameters, the worker renders on its next task and replies with the view
  // ({figure, label, readouts_html}); the page draws the figure with the site's own renderer and puts the readouts'
  // HTML in. Each change waits `gapMs` after the previous one.
  const worker = new Worker("worker.js");
  let resolveReply = null;
  worker.onmessage = (event) => resolveReply(event.data);
  const ask = (message) => new Promise((resolve) => { resolveReply = resolve; worker.postMessage(message); });
  window.booted = ask({boot: true});
  window.sweep = async (sandbox, start, changes, gapMs) => {
    await ask({sandbox, params: start, setup: true});
    const timings = [];
    for (const params of changes) {
      await new Promise((resolve) => setTimeout(resolve, gapMs));
      const start = performance.now();
      const reply = await ask({sandbox, params});
      if (!reply.ok) throw new Error(JSON.stringify(reply.error));
      const {figure, label, readouts_html: readouts} = reply.value;
      document.getElementById("figure").replaceChildren(ExplainerRender.renderFigure(figure, {label}));
      document.getElementById("readouts").innerHTML = readouts;
      timings.push([performance.now() - start, reply.python_ms]);
    }
    return timings;
  };
</script></body></html>
"""

ALLOWANCE_WORKER = """\
"use strict";
importScripts("pyodide/pyodide.js");
let renderJson = null;
async function boot() {
  const pyodide = await loadPyodide({indexURL: new URL("pyodide/", location.href).href});
  await pyodide.loadPackage("numpy", {messageCallback: () => {}});
  const wheel = await (await fetch("explainer.whl")).arrayBuffer();
  const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
  pyodide.unpackArchive(wheel, "wheel", {extractDir: sitePackages});
  pyodide.runPython("import importlib; importlib.invalidate_caches()");
  renderJson = pyodide.pyimport("explainer.sandbox").render_json;
  self.reset = () => pyodide.runPython(%(setup)s);
}
let pending = null;
const wake = new MessageChannel();  // as the site's worker: the render runs on its next task, without setTimeout
wake.port1.onmessage = () => {
  const message = pending;
  if (message.setup) self.reset();
  const start = performance.now();
  const text = renderJson(message.sandbox, JSON.stringify(message.params));
  const python_ms = performance.now() - start;
  self.postMessage({...JSON.parse(text), python_ms});
};
self.onmessage = (event) => {
  if (event.data.boot) {
    boot().then(() => self.postMessage({ok: true}), (error) => self.postMessage({ok: false, error: String(error)}));
    return;
  }
  pending = event.data;
  wake.port2.postMessage(null);
};
"""


def chromium_milliseconds(plans: dict, wheel: Path) -> dict[str, list[tuple[float, float]]]:
    """Every change of every sweep in headless Chromium: (page round trip incl. drawing, Python alone), in ms."""
    from playwright.sync_api import sync_playwright

    import support
    from build_scripts.browser_files import site_files
    from build_scripts.pyodide_runtime import DEFAULT_RUNTIME_DIR

    executable = shutil.which("chromium")
    if not executable:
        raise RuntimeError("bench_pyodide: Debian chromium is not installed: run `make chromium`")
    with tempfile.TemporaryDirectory(prefix="bench-pyodide-page-") as scratch:
        root = Path(scratch)
        (root / "pyodide").symlink_to(DEFAULT_RUNTIME_DIR)
        shutil.copy2(wheel, root / "explainer.whl")
        (root / "render.js").write_text(site_files()["render.js"], encoding="utf-8")  # as the site serves it
        (root / "index.html").write_text(ALLOWANCE_PAGE, encoding="utf-8")
        (root / "worker.js").write_text(ALLOWANCE_WORKER % {"setup": json.dumps(RESET_LAB)}, encoding="utf-8")
        server = support.StaticSiteServer(root)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=executable, headless=True,
                                                     args=support.CHROMIUM_FLAGS)
                try:
                    page = browser.new_page()
                    page.goto(server.url)
                    booted = page.evaluate("window.booted")
                    if not booted["ok"]:
                        raise RuntimeError(f"bench_pyodide: Pyodide did not boot in Chromium: {booted['error']}")
                    return {label: [tuple(t) for t in page.evaluate(
                        "([plan, gap]) => window.sweep(plan.sandbox, plan.start, plan.changes, gap)", [plan, GAP_MS])]
                        for label, plan in plans.items()}
                finally:
                    browser.close()
        finally:
            server.close()


def _percentile(values, q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q))


def run() -> list[Ratio]:
    from build_scripts.wheel import build_wheel

    plans = sweeps()
    with tempfile.TemporaryDirectory(prefix="bench-pyodide-") as scratch:
        wheel = build_wheel(Path(scratch) / "wheel")
        boot_ms, wall, cpu = pyodide_milliseconds(plans, wheel)
        in_chromium = chromium_milliseconds(plans, wheel)
    in_cpython = cpython_milliseconds(plans)
    rest = [total - python for timings in in_chromium.values() for total, python in timings]
    allowance = statistics.median(rest) / 1e3
    budget = FRAME_BUDGET_SECONDS - allowance
    print(f"bench_pyodide: Pyodide booted in Node in {boot_ms / 1e3:.1f} s. In Chromium an update outside Python "
          f"(message hops, JSON, drawing) took p50 {allowance * 1e3:.2f} ms, p95 {_percentile(rest, 95):.2f} ms: "
          f"Python's budget is 16 − {allowance * 1e3:.2f} = {budget * 1e3:.2f} ms.", file=sys.stderr)
    print(f"  {'ms':<34} {'Pyodide CPU p50/p95/max':>23} | {'wall p50/p95':>13} | {'CPython p50/p95':>15} | "
          "Chromium: Python p95, round trip p50/p95", file=sys.stderr)
    rows = []
    for label, times in cpu.items():
        p50, p95 = statistics.median(times), _percentile(times, 95)
        line = (f"  {label:<34} {p50:6.2f} / {p95:6.2f} / {max(times):6.2f} | "
                f"{statistics.median(wall[label]):5.2f} / {_percentile(wall[label], 95):5.2f}")
        if label in plans:
            total, python = zip(*in_chromium[label])
            line += (f" | {statistics.median(in_cpython[label]):5.2f} / {_percentile(in_cpython[label], 95):5.2f} | "
                     f"{_percentile(python, 95):6.2f}, {statistics.median(total):5.2f} / {_percentile(total, 95):5.2f}")
        print(line, file=sys.stderr)
        rows.append(Ratio(f"Pyodide p95 {label}", p95 / 1e3, budget,
                          f"16 ms − {allowance * 1e3:.1f} ms: Chromium outside Python",
                          1.0 if label in plans else None))
    return rows


if __name__ == "__main__":
    for row in run():
        print(f"{row.name:<60} {row.ours * 1e3:7.2f} ms  {row.baseline * 1e3:5.1f} ms  {row.ratio:5.2f}")
