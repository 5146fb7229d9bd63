"""File chores every build cache here shares: finding and hashing the sources an output depends on, and writing an
output so that a reader never sees it half written."""

import ast
import functools
import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def files_digest(paths: Iterable[Path], root: Path) -> str:
    """sha256 over files (each path relative to `root`, then its bytes), in a stable order."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def _imported_modules(path: Path, mtime_ns: int) -> tuple[str, ...]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return tuple(names)


def module_files(root: Path, packages: tuple[str, ...], *modules: str) -> set[Path]:
    """The source files of `modules` and of every module of `packages` they import, directly or not (read with ast,
    nothing is imported): what a cached output made by those modules depends on."""
    found: set[Path] = set()
    queue = list(modules)
    while queue:
        name = queue.pop()
        if name.split(".")[0] not in packages:
            continue
        parts = name.split(".")
        candidates = [root.joinpath(*parts).with_suffix(".py"), root.joinpath(*parts, "__init__.py")]
        path = next((c for c in candidates if c.is_file()), None)
        if path is None or path in found:
            continue
        found.add(path)
        queue += _imported_modules(path, path.stat().st_mtime_ns)
        queue += [".".join(parts[:end]) for end in range(1, len(parts))]  # importing a.b runs a/__init__.py too
    return found


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write `data` to a temporary file beside `path`, then rename it into place."""
    mode, encoding = ("wb", None) if isinstance(data, bytes) else ("w", "utf-8")
    with tempfile.NamedTemporaryFile(mode, dir=path.parent, prefix=f".{path.name}.", delete=False,
                                     encoding=encoding) as file:
        file.write(data)
    os.replace(file.name, path)
