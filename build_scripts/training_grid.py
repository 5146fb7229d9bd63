"""Train the ablation experiment's grid (explainer.training.ablation_grid) at build time, cached as JSON.

Each run's result is a file in .cache/training/ whose name holds a hash of its config and of the training code
(explainer's layers, model, tasks and checks): a file that exists is up to date, so a rebuild with nothing changed
trains nothing. Missing runs train in parallel, one process per core; files are written to a temporary name and
renamed. A lock file keeps two builds (or two figure workers) from training the same grid at once.

    python -m build_scripts.training_grid [-v]
"""

import argparse
import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from build_scripts._files import files_digest, write_atomic

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE_DIR = PROJECT_ROOT / "build" / "cache" / "training"
# What a run's numbers depend on besides its config; any change to these retrains the grid.
CODE_FILES = ("explainer/layers.py", "explainer/training.py", "explainer/tasks.py", "explainer/ablation.py",
              "explainer/_checks.py")


@functools.cache
def code_digest() -> str:
    """A hash of the training code (CODE_FILES)."""
    return files_digest((PROJECT_ROOT / name for name in CODE_FILES), PROJECT_ROOT)


def run_key(config) -> str:
    """The cache key of one run: its config and the training code."""
    text = json.dumps(dataclasses.asdict(config), sort_keys=True) + code_digest()
    return hashlib.sha256(text.encode()).hexdigest()


def result_path(cache_dir: Path, name: tuple[str, int], config) -> Path:
    """Where the run `name` = (ablation, depth) with `config` is cached."""
    return cache_dir / f"{name[0].replace(' ', '-')}-depth{name[1]}-{run_key(config)[:16]}.json"


def _train_one(name: tuple[str, int], config) -> dict:
    """Train and evaluate one run (in a worker process); its JSON-ready result."""
    from explainer.training import run_experiment

    start = time.perf_counter()
    result = run_experiment(config)
    return {"ablation": name[0], "depth": name[1], "config": dataclasses.asdict(config),
            "seconds": time.perf_counter() - start, **result}


@contextlib.contextmanager
def _locked(cache_dir: Path):
    """Hold an exclusive lock on the cache while training (no-op where fcntl is missing)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(cache_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _train_missing(missing: dict, cache_dir: Path, workers: int, progress: Callable[[str], None] | None) -> None:
    order = sorted(missing, key=lambda name: -missing[name].depth)  # the deep runs first: they take longest
    if workers == 1 or len(order) == 1:
        results = (_train_one(name, missing[name]) for name in order)
        pool = contextlib.nullcontext()
    else:
        # One BLAS thread per worker: the matrices are tiny, and two workers each spinning two threads on two cores
        # only contend. spawn, not fork (the build may run threads) and not the figures' forkserver either: that
        # server is shared by the whole process and may already run with another BLAS setting; a spawned worker is
        # a fresh interpreter that reads the variable when it imports numpy, at the cost of that import (~0.1 s).
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        context = get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=min(workers, len(order)), mp_context=context)
        results = pool.map(_train_one, order, [missing[name] for name in order])
    with pool:
        for name, result in zip(order, results):
            write_atomic(result_path(cache_dir, name, missing[name]), json.dumps(result, indent=1) + "\n")
            if progress:
                progress(f"trained {name[0]}, depth {name[1]} in {result['seconds']:.1f} s: "
                         f"val loss {result['val_loss']:.3f}, generated accuracy {result['generated_accuracy']:.2f}")


def load_or_train(cache_dir: Path = DEFAULT_CACHE_DIR, workers: int | None = None,
                  progress: Callable[[str], None] | None = None, **overrides) -> dict[tuple[str, int], dict]:
    """Every run of the grid by (ablation, depth): read from the cache, training the runs that are missing first."""
    from explainer.training import ablation_grid

    grid = ablation_grid(**overrides)
    cache_dir.mkdir(parents=True, exist_ok=True)

    def missing():
        return {name: config for name, config in grid.items() if not result_path(cache_dir, name, config).is_file()}

    if missing():
        with _locked(cache_dir):
            if todo := missing():  # another process may have trained them while we waited for the lock
                _train_missing(todo, cache_dir, workers or os.cpu_count() or 1, progress)
    return {name: json.loads(result_path(cache_dir, name, config).read_text()) for name, config in grid.items()}


def prune(cache_dir: Path = DEFAULT_CACHE_DIR) -> list[Path]:
    """Delete cached runs that the current grid and code no longer produce; returns what was deleted."""
    from explainer.training import ablation_grid

    current = {result_path(cache_dir, name, config) for name, config in ablation_grid().items()}
    stale = [path for path in cache_dir.glob("*.json") if path not in current]
    for path in stale:
        path.unlink()
    return stale


def main(argv: list[str] | None = None) -> None:
    """The CLI: train what is missing and print a summary line per run."""
    parser = argparse.ArgumentParser(prog="python -m build_scripts.training_grid", description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="say what is trained as it finishes")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    arguments = parser.parse_args(argv)
    start = time.perf_counter()
    results = load_or_train(arguments.cache_dir, progress=print if arguments.verbose else None)
    prune(arguments.cache_dir)
    for (ablation, depth), result in results.items():
        print(f"{ablation:>15} depth {depth}: train {result['train_loss']:.3f}  val {result['val_loss']:.3f}  "
              f"teacher-forced {result['teacher_forced_accuracy']:.2f}  generated {result['generated_accuracy']:.2f}")
    print(f"grid ready in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
