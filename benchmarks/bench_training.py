"""The training lab: Adam steps per second for the default config, and the ablation grid's time cold and cached.

Steps per second is reported (no target: the browser will run it between frames, a later issue sets its budget).
The whole grid, trained in a temporary cache, must take under 3 minutes on two cores (the site build pays it once);
read back from the cache, under 1 second (every rebuild pays it).
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Ratio
from build_scripts.training_grid import grid, load_or_train
from explainer.training import Training, TrainingConfig

STEPS = 100
COLD_BUDGET_SECONDS = 180.0
CACHED_BUDGET_SECONDS = 1.0


def _seconds_per_step(config: TrainingConfig) -> float:
    run = Training(config)
    run.train_step()  # the first step allocates Adam's moments; time the steady state
    start = time.perf_counter()
    for _ in range(STEPS):
        run.train_step()
    return (time.perf_counter() - start) / STEPS


def _seconds_per_step_one_blas_thread(depth: int) -> float:
    """As _seconds_per_step, in a fresh process with one BLAS thread: how the grid's workers (and Pyodide) run."""
    code = (f"from benchmarks.bench_training import _seconds_per_step as s; from explainer.training import "
            f"TrainingConfig; print(s(TrainingConfig(depth={depth})))")
    environment = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    output = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parent.parent)
    return float(output.stdout)


def run() -> list[Ratio]:
    rows = []
    for depth in (2, 8):
        for threads, seconds in (("default BLAS threads", _seconds_per_step(TrainingConfig(depth=depth))),
                                 ("1 BLAS thread", _seconds_per_step_one_blas_thread(depth))):
            rows.append(Ratio(f"training step, depth {depth}, {threads} ({1 / seconds:.0f}/s)", seconds, 1.0,
                              "1 s (informational: steps/s in the name)", None))
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        load_or_train(Path(cache))
        cold = time.perf_counter() - start
        start = time.perf_counter()
        load_or_train(Path(cache))
        cached = time.perf_counter() - start
    runs = len(grid())
    rows.append(Ratio(f"ablation grid, {runs} runs, cold", cold, COLD_BUDGET_SECONDS, "180 s budget (a constant)", 1.0))
    rows.append(Ratio(f"ablation grid, {runs} runs, cached", cached, CACHED_BUDGET_SECONDS, "1 s budget (a constant)",
                      1.0))
    return rows
