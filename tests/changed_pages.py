"""Which pages of the site changed since a base branch (main): what `make check` loads in the browser.

    python tests/changed_pages.py [BASE]      prints the pages, or says that none changed

A page changed when its Markdown file under docs/ differs from the merge-base of HEAD and BASE (committed on the
branch or not, or new and not yet added to git), or when it places a sandbox whose module changed
(explainer/sandboxes/<name>.py declares sandbox <name>, see README.md). Other changes (the browser code, mkdocs.yml,
the kernels) reach every page: `make test` covers them.
"""

import subprocess
import sys
from pathlib import Path

from support import PROJECT_ROOT, page_path

DOCS = "docs/"
SANDBOX_MODULES = "explainer/sandboxes/"


def _git(root: Path, *arguments: str) -> str:
    return subprocess.run(["git", *arguments], cwd=root, capture_output=True, text=True, check=True).stdout


def changed_files(root: Path, base: str) -> tuple[str, list[str]]:
    """The merge-base of HEAD and `base` (abbreviated), and the files that differ from it in the work tree,
    untracked ones included. Raises ValueError when `base` is not a branch or commit of the repository."""
    try:
        merge_base = _git(root, "merge-base", "HEAD", base).strip()
    except subprocess.CalledProcessError:
        raise ValueError(f"no branch or commit '{base}' to compare with") from None
    files = _git(root, "diff", "--name-only", merge_base).split("\n")
    files += _git(root, "ls-files", "--others", "--exclude-standard").split("\n")
    return merge_base[:10], sorted({name for name in files if name})


def placed_sandboxes(page: Path) -> set[str]:
    """The sandboxes a page places, as the build finds its blocks."""
    from build_scripts.markdown._blocks import find_blocks
    from build_scripts.pipeline.config import BLOCK_EXTENSIONS

    lines = page.read_text(encoding="utf-8").split("\n")
    return {block.argument for block in find_blocks(lines, set(BLOCK_EXTENSIONS.values())) if block.name == "sandbox"}


def pages_for(files: list[str], root: Path) -> list[str]:
    """The pages (paths from the site root: "" for the home page, else ending in "/") that `files` change, in the
    order of their Markdown files."""
    docs = root / DOCS
    pages = {name.removeprefix(DOCS) for name in files
             if name.startswith(DOCS) and name.endswith(".md") and (root / name).is_file()}
    sandboxes = {Path(name).stem for name in files if name.startswith(SANDBOX_MODULES) and name.endswith(".py")}
    if sandboxes:
        pages |= {path.relative_to(docs).as_posix() for path in docs.rglob("*.md") if placed_sandboxes(path) & sandboxes}
    return [page_path(page) for page in sorted(pages)]


def since(base: str, root: Path = PROJECT_ROOT) -> tuple[str, list[str]]:
    """The pages changed since `base`, and a sentence saying which (or that none did, or why none can be known)."""
    try:
        merge_base, files = changed_files(root, base)
    except ValueError as error:
        return f"{error}: no page to load", []
    pages = pages_for(files, root)
    if not pages:
        return f"no page changed since {base} (merge-base {merge_base}): the browser has nothing to load", pages
    shown = ", ".join(f"/{page}" for page in pages)
    return f"{len(pages)} page(s) changed since {base} (merge-base {merge_base}): {shown}", pages


if __name__ == "__main__":
    print(since(sys.argv[1] if len(sys.argv) > 1 else "main")[0])
