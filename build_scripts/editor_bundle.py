"""The code editor of live cells as one browser file: CodeMirror 6 (npm, pinned in package-lock.json) bundled by the
pinned esbuild from build_scripts/browser/editor/entry.js into a minified classic script.

Built at site build, cached under build/cache/editor/ by a hash of everything the output depends on (the entry file,
the exact versions installed in node_modules, esbuild's arguments), so an unchanged editor is bundled once.
`python -m build_scripts.editor_bundle` prints the path of the bundle (building it if needed).
"""

import hashlib
import subprocess
import sys
from pathlib import Path

from build_scripts._files import write_atomic
from build_scripts.pyodide_runtime import RuntimeSetupError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
ENTRY = PROJECT_ROOT / "build_scripts" / "browser" / "editor" / "entry.js"
DEFAULT_CACHE_DIR = PROJECT_ROOT / "build" / "cache" / "editor"
BUNDLE_NAME = "editor.js"  # the file's name in the site, beside cells.js
# One classic script (no modules: it is loaded by a plain <script>), browsers of 2020 on, licences kept at the end.
ESBUILD_ARGS = ("--bundle", "--minify", "--format=iife", "--target=es2020", "--legal-comments=eof", "--charset=utf8")


class EditorBundleError(RuntimeSetupError):
    """The editor could not be bundled; the message says what to run."""


def bundle_digest(root: Path = PROJECT_ROOT) -> str:
    """sha256 over what the bundle depends on: the entry file, what npm installed (every package's exact version and
    integrity, from node_modules/.package-lock.json, which `npm ci` writes from package-lock.json), esbuild's args."""
    installed = root / "node_modules" / ".package-lock.json"
    if not installed.is_file():
        raise EditorBundleError(f"{installed} not found: run `make setup` (npm ci installs CodeMirror and esbuild)")
    digest = hashlib.sha256()
    for part in ((root / ENTRY.relative_to(PROJECT_ROOT)).read_bytes(), installed.read_bytes(),
                 " ".join(ESBUILD_ARGS).encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def build_editor_bundle(cache_dir: Path = DEFAULT_CACHE_DIR, root: Path = PROJECT_ROOT) -> Path:
    """The bundled editor for the current inputs: reused from `cache_dir` when there, else built with esbuild."""
    bundle = cache_dir / f"editor-{bundle_digest(root)[:16]}.js"
    if bundle.is_file():
        return bundle
    esbuild = root / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists():
        raise EditorBundleError(f"{esbuild} not found: run `make setup` (npm ci installs the pinned esbuild)")
    result = subprocess.run([str(esbuild), str(root / ENTRY.relative_to(PROJECT_ROOT)), *ESBUILD_ARGS],
                            capture_output=True, cwd=root)
    if result.returncode != 0 or not result.stdout:
        raise EditorBundleError(f"esbuild could not bundle the code editor:\n{result.stderr.decode().strip()}")
    cache_dir.mkdir(parents=True, exist_ok=True)
    for stale in cache_dir.glob("editor-*.js"):
        stale.unlink(missing_ok=True)
    write_atomic(bundle, result.stdout)
    return bundle


if __name__ == "__main__":
    try:
        print(build_editor_bundle())
    except EditorBundleError as error:
        sys.exit(f"error: {error}")
