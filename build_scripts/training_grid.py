"""Train the ablation experiment's grid at build time, every configuration once per seed, cached as JSON.

The grid is explainer.training.ablation_grid (every ablation at every depth) repeated for each of SEEDS: a seed sets
the weights, the train/validation split and the batches, so the spread over seeds says how much of a result is luck.
Each run's result is a file in build/cache/training/ whose name holds a hash of its config and of the training code
(explainer's layers, model, tasks and checks): a file that exists is up to date, so a rebuild with nothing changed
trains nothing. Missing runs train in parallel, one process per core, and report as each finishes; files are written
to a temporary name and renamed. A lock file keeps two builds (or two figure workers) from training the grid at once.

    python -m build_scripts.training_grid [-v]
"""

import argparse
import contextlib
import ctypes
import dataclasses
import functools
import hashlib
import json
import math
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

from build_scripts._files import files_digest, module_files, write_atomic
from build_scripts.progress import Progress as BuildProgress

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE_DIR = PROJECT_ROOT / "build" / "cache" / "training"
# What a run's numbers depend on besides its config; any change to these retrains the grid.
TRAINING_MODULE = "explainer.training"  # the training code: this module and what it imports from explainer

SEEDS = (0, 1, 2)  # every configuration trains once per seed: three draws give a range, not a single anecdote

# A training step frees and allocates arrays of up to a few megabytes thousands of times. By default glibc's malloc
# serves blocks over 128 KiB from fresh mappings and hands freed memory at the top of its heap back to the system, so
# the process keeps faulting in pages that the kernel zeroes first: 2.3 million page faults in a depth-8 run. With
# these thresholds freed memory stays in the heap for the next step (mallopt's limit for the mmap threshold on 64-bit
# systems is 32 MiB): 22 thousand faults, and the run took 10.0-10.6 s instead of 15.4 (the same numbers, bit for bit).
# The whole grid, trained from nothing on two workers, took 105 s instead of 166, every run's numbers unchanged.
MALLOC_TRIM_THRESHOLD = 256 << 20
MALLOC_MMAP_THRESHOLD = 32 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (glibc's malloc.h)

RunName = tuple[str, int, int]  # (ablation, depth, seed)
RunReport = Callable[[str], None]  # receives one line of text per finished run (the CLI's -v)


@functools.cache
def code_digest() -> str:
    """A hash of the training code: explainer.training and every explainer module it imports."""
    return files_digest(module_files(PROJECT_ROOT, ("explainer",), TRAINING_MODULE), PROJECT_ROOT)


def run_key(config) -> str:
    """The cache key of one run: its config and the training code."""
    text = json.dumps(dataclasses.asdict(config), sort_keys=True) + code_digest()
    return hashlib.sha256(text.encode()).hexdigest()


def grid(seeds: tuple[int, ...] = SEEDS, **overrides) -> dict[RunName, object]:
    """Every run by (ablation, depth, seed): explainer's ablation grid once per seed, with `overrides` on each."""
    from explainer.training import ablation_grid

    return {(ablation, depth, seed): config for seed in seeds
            for (ablation, depth), config in ablation_grid(seed=seed, **overrides).items()}


def result_path(cache_dir: Path, name: RunName, config) -> Path:
    """Where the run `name` = (ablation, depth, seed) with `config` is cached."""
    ablation, depth, seed = name
    return cache_dir / f"{ablation.replace(' ', '-')}-depth{depth}-seed{seed}-{run_key(config)[:16]}.json"


def keep_freed_memory() -> bool:
    """Make this process's malloc keep freed memory for reuse (MALLOC_TRIM_THRESHOLD, MALLOC_MMAP_THRESHOLD) instead
    of returning it to the system; True when it did. Only glibc has mallopt: elsewhere nothing changes."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return (mallopt(_M_TRIM_THRESHOLD, MALLOC_TRIM_THRESHOLD) == 1
            and mallopt(_M_MMAP_THRESHOLD, MALLOC_MMAP_THRESHOLD) == 1)


def _train_one(name: RunName, config) -> dict:
    """Train and evaluate one run (in a worker process); its JSON-ready result, with its wall and CPU seconds."""
    from explainer.training import run_experiment

    start, cpu_start = time.perf_counter(), time.process_time()
    result = run_experiment(config)
    return {"ablation": name[0], "depth": name[1], "seed": name[2], "config": dataclasses.asdict(config),
            "seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu_start, **result}


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


def progress_line(name: RunName, result: dict, done: int, total: int, elapsed: float) -> str:
    """What finished, how far the grid is, and the run's headline numbers, as one line."""
    ablation, depth, seed = name
    return (f"[{done}/{total}, {elapsed:.0f} s] {ablation}, depth {depth}, seed {seed}: {result['seconds']:.1f} s, "
            f"val loss {result['val_loss']:.3f}, generated {100 * result['generated_accuracy']:.0f}%")


def _finished_runs(order: list[RunName], missing: dict, workers: int):
    """(name, result) for every run in `order`, as each finishes: in this process, or in a pool of `workers`."""
    if workers == 1 or len(order) == 1:
        keep_freed_memory()  # as a worker of the pool does
        for name in order:
            yield name, _train_one(name, missing[name])
        return
    # One BLAS thread per worker: the matrices are tiny, and two workers each spinning two threads on two cores
    # only contend. spawn, not fork (the build may run threads) and not the figures' forkserver either: that
    # server is shared by the whole process and may already run with another BLAS setting; a spawned worker is
    # a fresh interpreter that reads the variable when it imports numpy, at the cost of that import (~0.1 s).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with ProcessPoolExecutor(max_workers=min(workers, len(order)), mp_context=get_context("spawn"),
                             initializer=keep_freed_memory) as pool:
        futures = {pool.submit(_train_one, name, missing[name]): name for name in order}
        try:
            for future in as_completed(futures):
                yield futures[future], future.result()
        finally:
            pool.shutdown(cancel_futures=True)  # on an error, or an abandoned generator: start nothing more


def _train_missing(missing: dict, cache_dir: Path, workers: int, progress: RunReport | None) -> None:
    order = sorted(missing, key=lambda name: -missing[name].depth)  # the deep runs first: they take longest
    start = time.perf_counter()
    # Builds report like every slow build step (quiet when fast); `progress` adds a line per run for the CLI.
    with BuildProgress(f"training {len(order)} runs of the ablation grid", total=len(order)) as task:
        for done, (name, result) in enumerate(_finished_runs(order, missing, workers), start=1):
            write_atomic(result_path(cache_dir, name, missing[name]), json.dumps(result, indent=1) + "\n")
            task.advance()
            if progress:
                progress(progress_line(name, result, done, len(order), time.perf_counter() - start))


def load_or_train(cache_dir: Path = DEFAULT_CACHE_DIR, workers: int | None = None, progress: RunReport | None = None,
                  seeds: tuple[int, ...] = SEEDS, **overrides) -> dict[RunName, dict]:
    """Every run of the grid by (ablation, depth, seed): read from the cache, training the missing runs first.

    `progress`, if given, is called with one line per run trained (progress_line): what ran, n of N, elapsed.
    """
    runs = grid(seeds, **overrides)
    cache_dir.mkdir(parents=True, exist_ok=True)

    def missing():
        return {name: config for name, config in runs.items() if not result_path(cache_dir, name, config).is_file()}

    if missing():
        with _locked(cache_dir):
            if todo := missing():  # another process may have trained them while we waited for the lock
                _train_missing(todo, cache_dir, workers or os.cpu_count() or 1, progress)
    return {name: json.loads(result_path(cache_dir, name, config).read_text()) for name, config in runs.items()}


def prune(cache_dir: Path = DEFAULT_CACHE_DIR) -> list[Path]:
    """Delete cached runs that the current grid and code no longer produce; returns what was deleted."""
    current = {result_path(cache_dir, name, config) for name, config in grid().items()}
    stale = [path for path in cache_dir.glob("*.json") if path not in current]
    for path in stale:
        path.unlink()
    return stale


# ---- over the seeds -------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Spread:
    """One measure of one configuration over its seeds: the mean and the range."""

    mean: float
    low: float
    high: float

    @classmethod
    def of(cls, values) -> "Spread":
        """The spread of some values (NaN stays NaN: a diverged run is not averaged away)."""
        values = [float(v) for v in values]
        if any(math.isnan(v) for v in values):
            return cls(math.nan, math.nan, math.nan)
        return cls(sum(values) / len(values), min(values), max(values))


def over_seeds(results: dict[RunName, dict], measure: str) -> dict[tuple[str, int], Spread]:
    """`measure` (a key of a run's result) of every configuration, by (ablation, depth), over its seeds."""
    by_configuration: dict[tuple[str, int], list[float]] = {}
    for (ablation, depth, _), result in results.items():
        by_configuration.setdefault((ablation, depth), []).append(result[measure])
    return {configuration: Spread.of(values) for configuration, values in by_configuration.items()}


def main(argv: list[str] | None = None) -> None:
    """The CLI: train what is missing (-v: a line per run as it finishes), then a summary per configuration."""
    parser = argparse.ArgumentParser(prog="python -m build_scripts.training_grid", description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="a line per run as it finishes: n of N, elapsed")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    arguments = parser.parse_args(argv)
    start = time.perf_counter()
    report = functools.partial(print, flush=True) if arguments.verbose else None
    results = load_or_train(arguments.cache_dir, progress=report)
    prune(arguments.cache_dir)
    validation, generated = over_seeds(results, "val_loss"), over_seeds(results, "generated_accuracy")
    for (ablation, depth), loss in validation.items():
        print(f"{ablation:>15} depth {depth}: val loss {loss.mean:.3f} ({loss.low:.3f}-{loss.high:.3f})  generated "
              f"{100 * generated[ablation, depth].mean:.0f}% ({100 * generated[ablation, depth].low:.0f}-"
              f"{100 * generated[ablation, depth].high:.0f}%)")
    cpu = sum(result.get("cpu_seconds", math.nan) for result in results.values())
    print(f"grid of {len(results)} runs ({len(SEEDS)} seeds) ready in {time.perf_counter() - start:.1f} s; "
          f"training them took {cpu:.0f} CPU seconds")


if __name__ == "__main__":
    main()
