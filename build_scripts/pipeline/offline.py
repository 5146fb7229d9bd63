"""Offline reading (the `offline` option): the service worker `sw.js` at the site's root, and the mark on every page
that tells offline.js to register it.

sw.js is Workbox, bundled from build_scripts/browser/offline/entry.js (editor_bundle.SERVICE_WORKER), with the file
lists of this build written in front of it:

    self.__EXPLAINER_OFFLINE = {"version": …, "shell": [entry, …], "runtime": [entry, …]};
    entry = {"url": site-relative, "revision": hash or null, "integrity": "sha256-…"}

- shell: what the pages load (every script and stylesheet they name, the fonts those stylesheets use, the search
  worker and index, and search.js where a page names it, the sitemap that instant navigation reads), kept when the
  worker installs;
- runtime: the files the Pyodide worker boots from (runtime.json, worker.js, Pyodide's core files, the standard
  library and lock, numpy's wheel and ours: runtime_paths) and the code editor, kept once the reader's runtime has
  booted.

Workbox's own build tools (workbox-build) could list the files, but by globs over the folder: here the pages and
runtime.json say what is needed, in the pipeline both engines run, so no Node step lists files. A file whose address
carries its version (Pyodide's folder, the digest folder of the precompiled archives) has no revision: the worker then
reads it through the HTTP cache the boot just filled. Every entry carries its integrity, so the worker never keeps a
byte the build did not make. The version (a hash of the lists) changes whenever a file does, which makes every build a
new service worker.
"""

import hashlib
import json
import re
from pathlib import Path, PurePosixPath
from urllib.parse import urljoin

from build_scripts._files import write_atomic
from build_scripts.editor_bundle import BUNDLE_NAME, SERVICE_WORKER, build_bundle
from build_scripts.pipeline.pages import Page, file_for, site_path
from build_scripts.pyodide_runtime import LOADER_FILES, sri_for_file
from build_scripts.site_runtime import ASSET_DIR

WORKER_NAME = SERVICE_WORKER.name  # at the site's root: its scope is the whole site
SEARCH_INDEXES = ("search/search_index.json", "search.json")  # MkDocs' and Zensical's
LINKED_RELS = {"stylesheet", "icon", "preload", "modulepreload", "manifest"}
RE_CSS_FONT = re.compile(r"""url\(\s*['"]?([^'")]+\.woff2)['"]?\s*\)""")


def _entry(site_dir: Path, path: str, versioned: bool = False) -> dict:
    file = site_dir / path
    integrity = sri_for_file(file)
    revision = None if versioned else hashlib.sha256(integrity.encode()).hexdigest()[:16]
    return {"url": path, "revision": revision, "integrity": integrity}


def _theme_workers(page: Page, site_url: str) -> list[str]:
    """The search worker the theme's config names (the theme starts it with `new Worker(config.search)`, so relative
    to the page), as a site path. On a page with something live that is our search.js, which names the theme's own
    worker in its query, `?worker=` (overrides/main.html): both, then."""
    try:
        held, _, theme = json.loads(page.data_scripts.get("__config", ""))["search"].partition("?worker=")
    except (ValueError, KeyError, TypeError, AttributeError):
        return []
    worker = site_path(page, held, site_url)
    if worker is None:
        return []
    return [worker] + ([urljoin(f"/{worker}", theme).lstrip("/")] if theme else [])


def shell_paths(site_dir: Path, pages: list[Page], site_url: str) -> list[str]:
    """What the pages load, site-relative and sorted: scripts, stylesheets, icons, their woff2 fonts, the search
    worker and index, the sitemap."""
    found = set()
    for page in pages:
        for reference in page.references:
            linked = reference.tag == "link" and LINKED_RELS & set(reference.rel.split())
            if reference.tag == "script" or linked:
                found.add(site_path(page, reference.value, site_url))
        found.update(_theme_workers(page, site_url))
    found.discard(None)
    for stylesheet in [path for path in found if path.endswith(".css")]:
        folder = PurePosixPath(stylesheet).parent
        found.update(str(folder / font) for font in RE_CSS_FONT.findall((site_dir / stylesheet).read_text()))
    found.update(name for name in (*SEARCH_INDEXES, "sitemap.xml") if (site_dir / name).is_file())
    return sorted(path for path in found if file_for(site_dir, path).is_file())


def runtime_paths(manifest: dict) -> tuple[list[str], list[str]]:
    """The files a boot (and a code cell) loads, site-relative: (those whose address carries their version, the
    others). Pyodide's three core files from indexURL; the standard library and the lock from the manifest when the
    build precompiled them, else Pyodide's own from indexURL; numpy's wheel and ours from the manifest."""
    assets = PurePosixPath(ASSET_DIR)
    index = PurePosixPath(_normalise(assets / manifest["pyodide"]["indexURL"]))
    versioned = [str(index / name) for name in LOADER_FILES]
    for entry, default in (("stdlib", "python_stdlib.zip"), ("lock", "pyodide-lock.json")):
        versioned.append(_normalise(assets / manifest[entry]["url"]) if manifest.get(entry) else str(index / default))
    versioned += [_normalise(assets / manifest[entry]["url"]) for entry in ("numpy", "wheel")]
    return versioned, [str(assets / name) for name in ("runtime.json", "worker.js", BUNDLE_NAME)]


def _normalise(path: PurePosixPath) -> str:
    parts = []
    for part in path.parts:
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def precache_lists(site_dir: Path, pages: list[Page], manifest: dict, site_url: str) -> dict:
    """The lists sw.js starts with (see the module docstring)."""
    versioned, revised = runtime_paths(manifest)
    runtime = [_entry(site_dir, path, versioned=True) for path in versioned]
    runtime += [_entry(site_dir, path) for path in revised]
    runtime_set = set(versioned) | set(revised)
    shell = [_entry(site_dir, path) for path in shell_paths(site_dir, pages, site_url) if path not in runtime_set]
    version = hashlib.sha256(json.dumps([shell, runtime], sort_keys=True).encode()).hexdigest()[:16]
    return {"version": version, "shell": shell, "runtime": runtime}


def write_service_worker(site_dir: Path, pages: list[Page], manifest: dict, site_url: str) -> dict:
    """Write sw.js into the site's root (a new file: a reader's browser asking for it meanwhile gets one whole sw.js
    or the other); returns its lists."""
    lists = precache_lists(site_dir, pages, manifest, site_url)
    bundle = build_bundle(SERVICE_WORKER).read_text(encoding="utf-8")
    lists_line = f"self.__EXPLAINER_OFFLINE = {json.dumps(lists, separators=(',', ':'))};"
    write_atomic(site_dir / WORKER_NAME, f"{lists_line}\n{bundle}")
    return lists


def page_mark(page: Page) -> str | None:
    """The tag that tells offline.js where sw.js is (relative to the page); none on the 404 page, which a host
    serves at any depth."""
    if page.path == "404.html":
        return None
    return f'<meta name="explainer-offline" content="{"../" * page.url.count("/")}{WORKER_NAME}">'
