"""Bytecode for the reader's Python: the archives the worker boots from, with compiled modules beside their sources.

Pyodide 0.27.7 ships its standard library (python_stdlib.zip) and its numpy wheel as .py sources only, and runs with
sys.dont_write_bytecode, so every visit compiles every module it imports from source: about 160 modules of the
standard library and 90 of numpy's before a first figure, most of a bare boot's time. The build writes the same
archives with an unchecked hash-based .pyc (PEP 552: never compared with a timestamp, which matters because unpacking
a wheel dates every file to that moment) for each module a lesson imports, found by booting the runtime once in Node
(build_scripts/pyodide_imports.mjs). The sources stay, so tracebacks keep their lines; a module a reader's own code
imports later compiles from source as before.

Bytecode is specific to a Python minor version: the build's Python must be a 3.12, like Pyodide 0.27.7's (checked by
magic number). With another Python the site is built without bytecode and boots the slower way.

    build/cache/precompiled/<digest>/   python_stdlib.zip, numpy-….whl, explainer-….whl, lock.json, entries.json
"""

import hashlib
import importlib.util
import io
import json
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

from build_scripts import pyodide_runtime
from build_scripts._files import CACHE_DIR, files_digest, refresh
from build_scripts.progress import Progress

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PYODIDE_MAGIC = b"\xcb\r\r\n"  # importlib.util.MAGIC_NUMBER of Pyodide 0.27.7's Python (3.12.7; every 3.12.x)
STDLIB_PREFIX = "/lib/python312.zip/"  # where Pyodide mounts python_stdlib.zip
SITE_PACKAGES = "/lib/python3.12/site-packages/"
IMPORTS_SCRIPT = Path(__file__).with_name("pyodide_imports.mjs")
DEFAULT_CACHE_DIR = CACHE_DIR / "precompiled"
ENTRIES = "entries.json"
KEEP = 3  # folders of archives kept in the cache: the current wheel's and a couple of recent ones (branch switches)


class PrecompileError(RuntimeError):
    """The archives could not be made; the message says why."""


def can_precompile() -> bool:
    """Whether this Python writes bytecode that Pyodide 0.27.7 loads."""
    return sys.version_info[:2] == (3, 12) and importlib.util.MAGIC_NUMBER == PYODIDE_MAGIC


def bytecode(source: bytes, filename: str) -> bytes:
    """An unchecked hash-based .pyc of `source`, its code objects naming `filename` (the path at run time)."""
    code = compile(source, filename, "exec", dont_inherit=True)
    return bytes(importlib._bootstrap_external._code_to_hash_pyc(code, importlib.util.source_hash(source),
                                                                  checked=False))


def pyc_member(name: str, layout: str) -> str:
    """Where the .pyc of archive member `name` goes: beside it (zipimport), or in __pycache__ (an unpacked wheel)."""
    if layout == "zipimport":
        return name + "c"
    folder, _, stem = name.rpartition("/")
    cache = f"__pycache__/{stem[:-3]}.cpython-312.pyc"
    return f"{folder}/{cache}" if folder else cache


def precompile_archive(source: Path, target: Path, prefix: str, layout: str, wanted: set[str]) -> int:
    """Copy a zip (the standard library or a wheel), adding a .pyc for each .py member whose run-time path
    (prefix + name) is in `wanted`; returns how many were compiled."""
    compiled, buffer = 0, io.BytesIO()
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        for info in archive.infolist():
            data = archive.read(info)
            out.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
            if info.filename.endswith(".py") and prefix + info.filename in wanted:
                out.writestr(pyc_member(info.filename, layout), bytecode(data, prefix + info.filename))
                compiled += 1
    target.write_bytes(buffer.getvalue())
    return compiled


def imported_files(runtime_dir: Path, wheel: Path) -> set[str]:
    """The files (paths inside Pyodide) of every module a lesson's Python imports: Pyodide run once in Node."""
    command = ["node", str(IMPORTS_SCRIPT), f"{runtime_dir}/", str(wheel)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=PROJECT_ROOT)
    if result.returncode:
        raise PrecompileError(f"{IMPORTS_SCRIPT.name} failed: {result.stderr.strip()[-1500:]}")
    return set(json.loads(result.stdout))


def _digest(runtime_dir: Path, wheel: Path) -> str:
    """A hash of what the archives are made from: each input's name and bytes, never where it lies, so a copy of the
    project (the tests build many) finds the archives its identical inputs made."""
    inputs = [runtime_dir / "python_stdlib.zip", runtime_dir / "pyodide-lock.json", wheel, Path(__file__),
              IMPORTS_SCRIPT]
    return hashlib.sha256(b"".join(files_digest([path.resolve()], path.resolve().parent).encode()
                                   for path in inputs)).hexdigest()


def precompiled_runtime(runtime_dir: Path, wheel: Path, cache_dir: Path = DEFAULT_CACHE_DIR,
                        progress: Callable[[str], Progress] = Progress) -> tuple[Path, dict]:
    """The folder of precompiled archives for this runtime and wheel (made once, then kept in the cache) and how many
    modules each holds compiled: {"python_stdlib.zip": n, "numpy-….whl": n, "explainer-….whl": n}. Making them shows
    progress; finding them in the cache says nothing."""
    if not can_precompile():
        raise PrecompileError(f"bytecode for Pyodide needs Python 3.12 (this is {sys.version.split()[0]})")
    lock = pyodide_runtime.read_official_lock()
    numpy = runtime_dir / lock["packages"]["numpy"]["file_name"]

    def make(folder: Path) -> None:
        with progress("compiling the modules the lessons import for Pyodide"):
            _make(folder)

    def _make(folder: Path) -> None:
        wanted = imported_files(runtime_dir, wheel)
        counts = {
            "python_stdlib.zip": precompile_archive(runtime_dir / "python_stdlib.zip", folder / "python_stdlib.zip",
                                                    STDLIB_PREFIX, "zipimport", wanted),
            numpy.name: precompile_archive(numpy, folder / numpy.name, SITE_PACKAGES, "wheel", wanted),
            wheel.name: precompile_archive(wheel, folder / wheel.name, SITE_PACKAGES, "wheel", wanted),
        }
        # The loader of 0.27.7 fetches a lock whatever happens; the worker installs nothing from it, so it gets the
        # official lock's header and no packages (112 kB less to download and parse).
        (folder / "pyodide-lock.json").write_text(json.dumps({"info": lock["info"], "packages": {}}))
        (folder / ENTRIES).write_text(json.dumps(counts))

    folder = cache_dir / _digest(runtime_dir, wheel)[:16]
    if not folder.is_dir():
        prune(cache_dir)
    refresh(folder, _digest(runtime_dir, wheel), make)
    return folder, json.loads((folder / ENTRIES).read_text())


def prune(cache_dir: Path = DEFAULT_CACHE_DIR, keep: int = KEEP) -> list[Path]:
    """Delete all but the `keep` most recently made folders of archives (each is about 8 MB; a site links the files
    of its own folder, so a folder in use by a finished site can go). Returns the deleted folders."""
    folders = sorted((path for path in cache_dir.glob("*") if path.is_dir() and (path / ENTRIES).is_file()),
                     key=lambda path: path.stat().st_mtime, reverse=True)
    for folder in folders[keep:]:
        shutil.rmtree(folder, ignore_errors=True)
    return folders[keep:]
