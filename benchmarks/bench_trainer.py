"""The training lab: Adam steps per second in Pyodide against CPython, and a reader's run in a real browser.

1. **A training step, Pyodide ÷ CPython.** The default configuration of the lab (explainer.streams.train: depth 2,
   the grid's model), one Adam step on a batch of 32, after a first untimed step. Pyodide: benchmarks/pyodide_node.mjs
   runs the offline Pyodide 0.27.7 in Node with our wheel (built from the current sources) and times STEPS steps
   per call by the process's CPU time (process.cpuUsage: on a shared machine wall time measures the neighbours too),
   median of CALL_REPEATS calls. CPython: the same steps in a fresh process with one BLAS thread, CPU time
   (time.process_time). Informational: numpy in Pyodide has no BLAS, so the ratio says how much of CPython's speed the
   browser keeps; the steps per second of both are in the row's name.
2. **A 300-step run in Chromium ÷ 15 s.** The project's own `mkdocs build --strict` served on 127.0.0.1 (as the
   browser tests do), headless Debian chromium, the lesson page's lab at its starting settings (the default depth-2
   configuration, 300 steps): once the runtime is live, Train is clicked and the page's own measure
   `explainer:trainer:run:<id>` (click to the final view drawn: training, the validation passes, the evaluation, the
   generations) is read. Wall time, so a busy machine makes it longer; the median of RUNS runs.
3. **First curve point after Train ÷ 1 s.** The page's measure `explainer:trainer:first-point:<id>` of the same runs:
   click to the first chunk's figure in the DOM (opening the stream, the task's data, the weights, the validation
   loss before training, one chunk, the round trip, drawing).
4. **Stop → the worker free ÷ 250 ms.** During a further run, Stop is clicked after 3 chunks; the lab's
   `data-halted` is the time from the click to the worker's answer to the cancel, sent once it has closed the stream.

Runtime: a site build (figures cached), one Node Pyodide boot, one Chromium boot and three runs: about 1-2 minutes.
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

import support
from benchmarks import Ratio
from explainer.streams.train import training_config
from explainer.training import Training
from support import CHROMIUM_FLAGS

PROJECT_ROOT = Path(__file__).resolve().parent.parent
HARNESS = Path(__file__).resolve().parent / "pyodide_node.mjs"
STEPS = 10  # per timed call
CALL_REPEATS = 5
RUNS = 2  # of the lesson's lab, in Chromium
RUN_BUDGET_SECONDS, FIRST_POINT_BUDGET_SECONDS, STOP_BUDGET_SECONDS = 15.0, 1.0, 0.25
LESSON = "lessons/ablation-experiment/"
BOOT_TIMEOUT_MS, RUN_TIMEOUT_MS = 120_000, 180_000
STEP_CASE = """
from explainer.streams.train import training_config
from explainer.training import Training
run = Training(training_config({}))
run.train_step()
def case():
    for _ in range(%d):
        run.train_step()
""" % STEPS


def pyodide_seconds_per_step(wheel: Path) -> float:
    """Median CPU seconds of a training step in Pyodide (Node)."""
    from build_scripts.pyodide_runtime import DEFAULT_RUNTIME_DIR

    plan = {"indexURL": f"{DEFAULT_RUNTIME_DIR}/", "wheel": str(wheel), "repeats": 1, "gap_ms": 0, "setup": "",
            "sweeps": [], "calls": [{"label": "steps", "setup": STEP_CASE, "repeats": CALL_REPEATS}]}
    done = subprocess.run([shutil.which("node") or "node", str(HARNESS)], input=json.dumps(plan), capture_output=True,
                          text=True, cwd=PROJECT_ROOT, env={**os.environ, "NODE_NO_WARNINGS": "1"}, timeout=900)
    if done.returncode:  # Node prints the minified source line of a wasm error first: keep the short lines
        message = "\n".join(line for line in done.stderr.splitlines() if len(line) < 400)
        raise RuntimeError(f"bench_trainer: the Node harness failed:\n{message[-4000:]}")
    [call] = json.loads(done.stdout)["calls"]
    return statistics.median(call["cpu_ms"]) / 1e3 / STEPS


def cpython_seconds_per_step() -> float:
    """Median CPU seconds of a training step in CPython, in a fresh process with one BLAS thread (as the grid's
    workers run; more threads only spin on matrices this small, and CPU time would count the spinning)."""
    code = "from benchmarks.bench_trainer import _cpython_seconds_per_step as s; print(s())"
    output = subprocess.run([sys.executable, "-c", code], env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
                            capture_output=True, text=True, check=True, cwd=PROJECT_ROOT)
    return float(output.stdout)


def _cpython_seconds_per_step() -> float:
    run = Training(training_config({}))
    run.train_step()
    samples = []
    for _ in range(CALL_REPEATS):
        start = time.process_time()
        for _ in range(STEPS):
            run.train_step()
        samples.append((time.process_time() - start) / STEPS)
    return statistics.median(samples)


def _measure(page, name: str) -> float:
    return page.evaluate("name => performance.getEntriesByType('measure').filter(m => m.name.startsWith(name))"
                         ".at(-1).duration", name) / 1e3


def browser_runs(site_url: str, executable: str) -> tuple[list[float], list[float], float]:
    """(run seconds, first-point seconds) of RUNS runs of the lesson's lab, and the seconds from Stop to the worker
    free in one more run."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright, tempfile.TemporaryDirectory(prefix="bench-trainer-profile-") as profile:
        context = playwright.chromium.launch_persistent_context(profile, executable_path=executable, headless=True,
                                                                args=CHROMIUM_FLAGS,
                                                                viewport={"width": 1280, "height": 900})
        try:
            page = context.pages[0] if context.pages else context.new_page()
            errors = []
            page.on("console", lambda message: message.type == "error" and errors.append(message.text))
            page.goto(site_url + LESSON)
            lab = page.locator("figure.trainer")
            lab.scroll_into_view_if_needed()
            page.wait_for_function("ExplainerRuntime.state === 'ready'", timeout=BOOT_TIMEOUT_MS)
            runs, first_points = [], []
            for _ in range(RUNS):
                lab.get_by_role("button", name="Train").click()
                page.wait_for_function("document.querySelector('figure.trainer').dataset.state === 'done'",
                                       timeout=RUN_TIMEOUT_MS)
                runs.append(_measure(page, "explainer:trainer:run:"))
                first_points.append(_measure(page, "explainer:trainer:first-point:"))
            chunks = int(lab.get_attribute("data-chunks"))
            lab.get_by_role("button", name="Train").click()
            page.wait_for_function("n => Number(document.querySelector('figure.trainer').dataset.chunks) >= n",
                                   arg=chunks + 3, timeout=RUN_TIMEOUT_MS)
            lab.get_by_role("button", name="Stop").click()
            page.wait_for_function("document.querySelector('figure.trainer').dataset.halted !== undefined")
            halted = int(lab.get_attribute("data-halted")) / 1e3
            if errors:
                raise RuntimeError(f"bench_trainer: the page logged errors: {errors[:5]}")
        finally:
            context.close()
    return runs, first_points, halted


def run() -> list[Ratio]:
    from build_scripts.wheel import build_wheel

    executable = shutil.which("chromium")
    if not executable or not shutil.which("node"):
        raise RuntimeError("bench_trainer: needs Debian chromium and node: run `make setup` and `make chromium`")
    with tempfile.TemporaryDirectory(prefix="bench-trainer-") as temp:
        pyodide = pyodide_seconds_per_step(build_wheel(Path(temp) / "wheel"))
        cpython = cpython_seconds_per_step()
        site_dir = Path(temp) / "site"
        server = support.StaticSiteServer(site_dir)  # first: the build needs its address (instant navigation)
        try:
            build = support.run_mkdocs_build(PROJECT_ROOT / "mkdocs.yml", site_dir, site_url=server.url)
            if build.returncode:
                raise RuntimeError(f"bench_trainer: `mkdocs build --strict` failed:\n{build.stderr[-3000:]}")
            runs, first_points, halted = browser_runs(server.url, executable)
        finally:
            server.close()
    print(f"bench_trainer: 300-step runs in Chromium (s): {[round(r, 2) for r in runs]}; first points (ms): "
          f"{[round(1e3 * f) for f in first_points]}; Stop to the worker free: {1e3 * halted:.0f} ms")
    return [
        Ratio(f"training step, depth 2: Pyodide {1 / pyodide:.0f}/s, CPython {1 / cpython:.0f}/s", pyodide, cpython,
              "CPython, same step (CPU time)", None),
        Ratio("300-step run in Chromium, depth 2", statistics.median(runs), RUN_BUDGET_SECONDS,
              "15 s budget (a constant)", 1.0),
        Ratio("first curve point after Train", statistics.median(first_points), FIRST_POINT_BUDGET_SECONDS,
              "1 s budget (a constant)", 1.0),
        Ratio("Stop to the worker free", halted, STOP_BUDGET_SECONDS, "250 ms budget (a constant)", 1.0),
    ]
