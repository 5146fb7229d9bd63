"""Export the trained model the ablation lab offers: the experiment's full configuration at depth 8, seed 0.

The training grid's runs keep their numbers, not their weights, so this trains that one run again with
explainer.training (the same config and code give the same run, number for number) and writes its final weights into
the cache, build/cache/trained/, under a name holding the run's key (its config and the training code: the grid's
own key, build_scripts.training_grid.run_key). The file then goes into the package, explainer/data/ (ignored by git;
pyproject.toml lists it among the wheel's artifacts), so the wheel the reader's browser installs carries it and the
lab finds it with importlib.resources, in CPython as in Pyodide. A run already in the grid's cache must agree with
the export's own evaluation, or the export stops: the model in the lab is the run the experiment page reports.

    python -m build_scripts.trained_weights
"""

import argparse
import dataclasses
import json
import math
from collections.abc import Callable
from pathlib import Path

from build_scripts._files import CACHE_DIR, PROJECT_ROOT, write_atomic
from build_scripts.progress import Progress
from build_scripts.training_grid import DEFAULT_CACHE_DIR as GRID_CACHE_DIR
from build_scripts.training_grid import _locked, grid, keep_freed_memory, result_path, run_key

EXPORTED_RUN = ("full", 8, 0)  # (ablation, depth, seed) of the grid: the deepest full model, its first seed
DEFAULT_CACHE_DIR = CACHE_DIR / "trained"
PACKAGE_DIR = PROJECT_ROOT / "explainer" / "data"
AGREEMENT = ("val_loss", "generated_accuracy")  # what the export's run and the grid's must share exactly


class ExportMismatch(RuntimeError):
    """The exported run does not reproduce the grid's run of the same config."""


def exported_config():
    """The TrainingConfig of the exported run (the grid's, so both are one run)."""
    return grid(seeds=(EXPORTED_RUN[2],))[EXPORTED_RUN]


def cache_path(cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """Where the export of the current config and training code is cached."""
    ablation, depth, seed = EXPORTED_RUN
    return cache_dir / f"{ablation}-depth{depth}-seed{seed}-{run_key(exported_config())[:16]}.npz"


def train(config, progress: Callable[..., Progress] = Progress) -> tuple[bytes, dict]:
    """Train `config` to the end: the file's bytes (explainer.trained.encode) and the run's evaluation."""
    from explainer.trained import encode
    from explainer.training import Training, evaluate

    # As in the grid's workers: about a third of the run's time went to page faults. From here on the build process
    # keeps freed memory for reuse as well, which changes nothing but that.
    keep_freed_memory()
    run = Training(config)
    what = f"training the lab's model ({config.depth} blocks, {config.steps} steps)"
    with progress(what, total=config.steps) as task:
        while not run.done:
            run.chunk()
            task.advance(run.step - task.done)
    if run.diverged:
        raise ExportMismatch(f"the exported run diverged at step {run.step}")
    return encode(dataclasses.asdict(config), run.parameters), evaluate(run)


def check_against_grid(evaluation: dict, grid_dir: Path = GRID_CACHE_DIR) -> None:
    """Stop when the grid has trained the same run and got other numbers."""
    path = result_path(grid_dir, EXPORTED_RUN, exported_config())
    if not path.is_file():
        return
    reported = json.loads(path.read_text())
    for measure in AGREEMENT:
        if not math.isclose(evaluation[measure], reported[measure], rel_tol=0, abs_tol=1e-12):
            raise ExportMismatch(f"the exported run's {measure} is {evaluation[measure]!r}, the grid's run of the same "
                                 f"config {reported[measure]!r} ({path.name})")


def export(cache_dir: Path = DEFAULT_CACHE_DIR, package_dir: Path = PACKAGE_DIR,
           progress: Callable[..., Progress] = Progress) -> Path:
    """The trained weights in the package: trained and cached when the cache lacks them, copied in when the
    package's file differs from the cached one. Returns the package's file.

    Every build calls it before it reads a page or makes the wheel (build_scripts.pipeline); with the cache filled
    it only hashes the training code and compares the two files."""
    from explainer.trained import TRAINED_FILE

    cached = cache_path(cache_dir)
    if not cached.is_file():
        cache_dir.mkdir(parents=True, exist_ok=True)
        with _locked(cache_dir):
            if not cached.is_file():  # another build may have made it while we waited
                data, evaluation = train(exported_config(), progress)
                check_against_grid(evaluation)
                write_atomic(cached, data)
    target = package_dir / TRAINED_FILE
    data = cached.read_bytes()
    if not target.is_file() or target.read_bytes() != data:
        package_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(target, data)
        _forget_loaded()
    return target


def _forget_loaded() -> None:
    from explainer import trained

    trained.trained_model.cache_clear()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m build_scripts.trained_weights", description=__doc__.split("\n")[0])
    parser.parse_args(argv)
    target = export()
    print(f"{target.relative_to(PROJECT_ROOT)}: {target.stat().st_size / 1024:.0f} KiB, the run of {cache_path().name}")


if __name__ == "__main__":
    main()
