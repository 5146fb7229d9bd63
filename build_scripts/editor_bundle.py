"""Browser files bundled from npm packages by the pinned esbuild into one minified classic script each:

- the code editor of live cells, `editor.js`: CodeMirror 6, from build_scripts/browser/editor/entry.js;
- the service worker of offline reading, `sw.js`: Workbox's precaching, routing and strategies, from
  build_scripts/browser/offline/entry.js (the build writes its file lists in front: build_scripts/pipeline/offline.py).

Built at site build, cached under build/cache/bundles/ by a hash of everything the output depends on (the entry's
folder, the exact versions installed in node_modules, esbuild's arguments), so an unchanged bundle is built once.
`python -m build_scripts.editor_bundle` prints the path of the editor's bundle (building it if needed).
"""

import hashlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from build_scripts._files import write_atomic
from build_scripts.pyodide_runtime import RuntimeSetupError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
ENTRY = PROJECT_ROOT / "build_scripts" / "browser" / "editor" / "entry.js"
DEFAULT_CACHE_DIR = PROJECT_ROOT / "build" / "cache" / "bundles"
BUNDLE_NAME = "editor.js"  # the file's name in the site, beside cells.js
# One classic script (no modules: it is loaded by a plain <script>), browsers of 2020 on, licences kept at the end.
ESBUILD_ARGS = ("--bundle", "--minify", "--format=iife", "--target=es2020", "--legal-comments=eof", "--charset=utf8")


@dataclass(frozen=True)
class Bundle:
    """One bundled browser file."""

    name: str  # the file's name in the site
    entry: Path  # its source, relative to the project
    args: tuple[str, ...] = ESBUILD_ARGS

    @property
    def stem(self) -> str:
        return Path(self.name).stem


EDITOR = Bundle(BUNDLE_NAME, ENTRY.relative_to(PROJECT_ROOT))
# Workbox checks its arguments and logs every step unless it is built for production.
SERVICE_WORKER = Bundle("sw.js", Path("build_scripts/browser/offline/entry.js"),
                        ESBUILD_ARGS + ('--define:process.env.NODE_ENV="production"',))


class EditorBundleError(RuntimeSetupError):
    """A browser file could not be bundled; the message says what to run."""


def bundle_digest(root: Path = PROJECT_ROOT, bundle: Bundle = EDITOR) -> str:
    """sha256 over what the bundle depends on: the .js files of the entry's folder (the entry and the modules of ours it
    imports), what npm installed (every package's exact version and integrity, from node_modules/.package-lock.json,
    which `npm ci` writes from package-lock.json), esbuild's args."""
    installed = root / "node_modules" / ".package-lock.json"
    if not installed.is_file():
        raise EditorBundleError(f"{installed} not found: run `make setup` (npm ci installs the bundled packages and "
                                f"esbuild)")
    folder = (root / bundle.entry).parent
    sources = (path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes()
               for path in sorted(folder.rglob("*.js")))
    digest = hashlib.sha256()
    for part in (*sources, installed.read_bytes(), " ".join(bundle.args).encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def bundle_path(cache_dir: Path = DEFAULT_CACHE_DIR, root: Path = PROJECT_ROOT, bundle: Bundle = EDITOR) -> Path:
    """Where the bundle of the current inputs is kept (it may not be built yet)."""
    return cache_dir / f"{bundle.stem}-{bundle_digest(root, bundle)[:16]}.js"


def build_bundle(bundle: Bundle, cache_dir: Path = DEFAULT_CACHE_DIR, root: Path = PROJECT_ROOT) -> Path:
    """The bundle for the current inputs: reused from `cache_dir` when there, else built with esbuild."""
    path = bundle_path(cache_dir, root, bundle)
    if path.is_file():
        return path
    esbuild = root / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists():
        raise EditorBundleError(f"{esbuild} not found: run `make setup` (npm ci installs the pinned esbuild)")
    result = subprocess.run([str(esbuild), str(root / bundle.entry), *bundle.args], capture_output=True, cwd=root)
    if result.returncode != 0 or not result.stdout:
        raise EditorBundleError(f"esbuild could not bundle {bundle.name} ({bundle.entry}):\n"
                                f"{result.stderr.decode().strip()}")
    cache_dir.mkdir(parents=True, exist_ok=True)
    for stale in cache_dir.glob(f"{bundle.stem}-*.js"):
        stale.unlink(missing_ok=True)
    write_atomic(path, result.stdout)
    return path


def build_editor_bundle(cache_dir: Path = DEFAULT_CACHE_DIR, root: Path = PROJECT_ROOT) -> Path:
    """The code editor's bundle for the current inputs."""
    return build_bundle(EDITOR, cache_dir, root)


if __name__ == "__main__":
    try:
        print(build_editor_bundle())
    except EditorBundleError as error:
        sys.exit(f"error: {error}")
