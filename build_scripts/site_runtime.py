"""The files a built site needs for live sandboxes: the browser code, our wheel, the runtime manifest, and (when the
site hosts it) the Pyodide runtime itself. Plain functions: the build pipeline (build_scripts.pipeline) calls them,
under either engine.

    <site>/assets/explainer/   the page scripts and styles (PAGE_SCRIPTS, PAGE_STYLES), boot.js (with runtime.json
                               written into it), worker.js, theme.json, runtime.json (render.js, sandbox.css and
                               boot.js with their generated parts), editor.js (the bundled code editor)
    <site>/assets/explainer/runtime/<digest>/   the precompiled standard library, lock and wheels (precompiled.py),
                               or, when this Python cannot make them, wheels/<sha256[:16]>/explainer-<version>-….whl
    <site>/assets/pyodide/0.27.7/   the runtime, only with self_host

The folders of the wheels carry their hash, so a browser cache can never pair a new integrity string with an old file.
"""

import dataclasses
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from build_scripts import pyodide_runtime
from build_scripts._files import CACHE_DIR, STAMP, code_digest, refresh, write_atomic
from build_scripts.editor_bundle import BUNDLE_NAME, build_editor_bundle, bundle_path
from build_scripts.progress import Progress
from build_scripts.wheel import DEFAULT_WHEEL_DIR, build_wheel, wheel_is_current

BROWSER_CACHE_DIR = CACHE_DIR / "browser"  # the browser files as the site serves them
ASSET_DIR = "assets/explainer"  # site-relative
PYODIDE_SITE_DIR = f"assets/pyodide/{pyodide_runtime.PYODIDE_VERSION}"
# Scripts every page loads, in order (small; they fetch nothing until a page has a sandbox).
# cells.js loads the code editor (editor.js, bundled by build_scripts/editor_bundle.py) only on pages with a cell.
# offline.js registers the service worker of offline reading (only where the build marked the pages for it).
PAGE_SCRIPTS = ("render.js", "protocol.js", "runtime.js", "page.js", "sandbox.js", "cells.js", "quiz.js", "trainer.js",
                "offline.js")
PAGE_STYLES = ("sandbox.css", "cells.css", "quiz.css", "trainer.css")
BOOT_TIMEOUT_MS = 60_000
BROWSER_DIR = Path(__file__).resolve().parent / "browser"
BOOT_MARKER = "/* runtime.json */ null"  # in browser/boot.js: the build writes the manifest there


def link_or_copy(source, target) -> None:
    """Put a file into the site: a hard link (costs nothing on every rebuild), or a copy where links fail."""
    target = Path(target)
    if target.exists():
        if target.samefile(source):
            return
        target.unlink()
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def pyodide_index_url(self_host: bool) -> str:
    """Where Pyodide's core is, relative to runtime.json: the site's copy, or the official CDN."""
    return f"../pyodide/{pyodide_runtime.PYODIDE_VERSION}/" if self_host else pyodide_runtime.PYODIDE_CDN_URL


def runtime_manifest(wheel_file: dict, numpy_file: dict, self_host: bool, boot_files: dict[str, str],
                     precompiled: dict | None = None) -> dict:
    """runtime.json: where the worker finds Pyodide, numpy's wheel and ours (each {url, integrity}) and, when the build
    made them, the standard library with bytecode and the small lock (build_scripts/precompiled.py); `boot_files`
    is the integrity of each of Pyodide's own files the worker may fetch from indexURL. Relative URLs are relative to
    runtime.json."""
    index_url = pyodide_index_url(self_host)
    return {
        "pyodide": {"version": pyodide_runtime.PYODIDE_VERSION, "indexURL": index_url, "files": boot_files},
        "stdlib": precompiled["stdlib"] if precompiled else None,
        "lock": precompiled["lock"] if precompiled else None,
        "numpy": numpy_file,
        "wheel": wheel_file,
        "timeout_ms": BOOT_TIMEOUT_MS,
    }


def site_file(path: Path, site_dir: Path) -> dict:
    """A file of the site as the manifest names it: its URL relative to runtime.json and its Subresource Integrity."""
    return {"url": os.path.relpath(path, site_dir / ASSET_DIR).replace(os.sep, "/"),
            "integrity": pyodide_runtime.sri_for_file(path)}


def publish_precompiled(site_dir: Path, runtime_dir: Path, wheel_path: Path,
                        progress: Callable[..., Progress]) -> dict | None:
    """Put the archives with bytecode into the site (assets/explainer/runtime/<digest>/); their manifest entries, or
    None when this Python cannot make them (the site then boots from the plain archives, only slower)."""
    from build_scripts import precompiled

    if not precompiled.can_precompile():
        note = progress("compiling for Pyodide").emit
        note(f"explainer: Python {sys.version.split()[0]} cannot compile for Pyodide's Python 3.12: the site boots "
             "without bytecode, a few seconds slower (build with a Python 3.12 to have it)")
        return None
    folder, _ = precompiled.precompiled_runtime(runtime_dir, wheel_path, progress=progress)
    target = site_dir / ASSET_DIR / "runtime" / folder.name
    target.mkdir(parents=True, exist_ok=True)
    names = ("python_stdlib.zip", "pyodide-lock.json", pyodide_runtime.numpy_file_name(), wheel_path.name)
    for name in names:
        link_or_copy(folder / name, target / name)
    return {"stdlib": site_file(target / "python_stdlib.zip", site_dir),
            "lock": site_file(target / "pyodide-lock.json", site_dir),
            "numpy": site_file(target / names[2], site_dir), "wheel": site_file(target / wheel_path.name, site_dir)}


def write_boot_script(site_dir: Path, manifest: dict) -> None:
    """boot.js as the site serves it: runtime.json's JSON written in place of its marker."""
    source = (BROWSER_DIR / "boot.js").read_text(encoding="utf-8")
    if BOOT_MARKER not in source:
        raise RuntimeError(f"build_scripts/browser/boot.js has lost its marker {BOOT_MARKER!r}")
    script = source.replace(BOOT_MARKER, json.dumps(manifest, separators=(",", ":")), 1)
    write_atomic(site_dir / ASSET_DIR / "boot.js", script)  # a new file: the cached, linked copy stays as it was


def wheel_entry(wheel_path: Path, progress: Callable[..., Progress] = Progress) -> pyodide_runtime.WheelEntry:
    """The wheel's lock entry, computed once per wheel (pyodide-lock is slow to import) and kept beside it."""
    saved = wheel_path.with_name(wheel_path.name + ".lock-entry.json")
    sha256 = pyodide_runtime.file_sha256(wheel_path)
    if saved.is_file():
        fields = json.loads(saved.read_text())
        if fields["sha256"] == sha256:
            return pyodide_runtime.WheelEntry(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})
    with progress("checking the explainer wheel against the Pyodide lock"):
        entry = pyodide_runtime.describe_wheel(wheel_path)
    write_atomic(saved, json.dumps(dataclasses.asdict(entry), indent=1) + "\n")
    return entry


def copy_browser_files(site_dir: Path, cache_dir: Path = BROWSER_CACHE_DIR) -> None:
    """Write the browser code (build_scripts/browser but its README) into the site, generated parts filled in.

    The generated files are a pure function of build_scripts/ and explainer/ (browser_files.py): made once per change
    there and kept in the cache, then linked, so a warm build neither makes them again nor imports what makes them."""

    def make(folder: Path) -> None:
        from build_scripts import browser_files  # imports explainer (numpy): only when the files change

        browser_files.write_site_files(folder)

    refresh(cache_dir, code_digest(), make)
    target = site_dir / ASSET_DIR
    target.mkdir(parents=True, exist_ok=True)
    for source in sorted(cache_dir.iterdir()):
        if source.name != STAMP:
            link_or_copy(source, target / source.name)


def copy_runtime(site_dir: Path, runtime_dir: Path, progress: Callable[..., Progress] = Progress) -> None:
    """Copy the prepared Pyodide runtime into the site (self-host mode), preparing it first if it is missing."""
    if not (runtime_dir / "pyodide.asm.wasm").is_file():
        with progress(f"preparing the Pyodide {pyodide_runtime.PYODIDE_VERSION} runtime"):
            pyodide_runtime.prepare_runtime(runtime_dir)
    target = site_dir / PYODIDE_SITE_DIR
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(runtime_dir, target, copy_function=link_or_copy)


def write_site_runtime(site_dir: Path, *, self_host: bool, runtime_dir: Path = pyodide_runtime.DEFAULT_RUNTIME_DIR,
                       wheel_dir: Path = DEFAULT_WHEEL_DIR, progress: Callable[..., Progress] = Progress) -> dict:
    """Put everything live sandboxes need into a built site (the browser code aside: copy_browser_files); returns
    the manifest it wrote. `progress` makes the reporter of a slow step (see build_scripts.progress)."""
    if wheel_is_current(wheel_dir):
        wheel_path = build_wheel(wheel_dir)
    else:
        with progress("building the explainer wheel"):
            wheel_path = build_wheel(wheel_dir)
    wheel = wheel_entry(wheel_path, progress)
    editor = bundle_path()
    if not editor.is_file():
        with progress("bundling the code editor"):
            editor = build_editor_bundle()
    link_or_copy(editor, site_dir / ASSET_DIR / BUNDLE_NAME)
    if self_host:
        copy_runtime(site_dir, runtime_dir, progress)
    precompiled = publish_precompiled(site_dir, runtime_dir, wheel_path, progress)
    if precompiled:
        numpy_file, wheel_file = precompiled["numpy"], precompiled["wheel"]
    else:  # the plain wheels: ours under a folder named by its hash, numpy's where the runtime keeps it
        wheel_url = f"wheels/{wheel.sha256[:16]}/{wheel.file_name}"
        (site_dir / ASSET_DIR / wheel_url).parent.mkdir(parents=True, exist_ok=True)
        link_or_copy(wheel_path, site_dir / ASSET_DIR / wheel_url)
        wheel_file = {"url": wheel_url, "integrity": wheel.integrity}
        numpy_file = pyodide_runtime.numpy_entry()
        index_url = pyodide_index_url(self_host)
        numpy_file["url"] = index_url + numpy_file["url"]
    boot_files = pyodide_runtime.boot_file_integrity(runtime_dir if self_host else pyodide_runtime.NPM_PYODIDE_DIR)
    manifest = runtime_manifest(wheel_file, numpy_file, self_host, boot_files, precompiled)
    write_boot_script(site_dir, manifest)
    write_atomic(site_dir / ASSET_DIR / "runtime.json", json.dumps(manifest, indent=2) + "\n")
    return manifest
