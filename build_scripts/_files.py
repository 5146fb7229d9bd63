"""Where every build cache lives, and the file chores they share: finding and hashing the sources an output depends
on, writing an output so that a reader never sees it half written, and keeping a folder of outputs stamped with its
sources."""

import ast
import functools
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# Every build cache (figures, training runs, the wheel, Pyodide's wheels) lives under build/cache/, never in .cache/:
# Zensical owns that folder and `zensical build --clean` empties it.
CACHE_DIR = PROJECT_ROOT / "build" / "cache"
CODE_DIRS = ("explainer", "build_scripts")  # the project's code: what the build runs and what it ships


def files_digest(paths: Iterable[Path], root: Path) -> str:
    """sha256 over files (each path relative to `root`, then its bytes), in a stable order."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def code_digest(root: Path = PROJECT_ROOT) -> str:
    """files_digest of every file of the code (CODE_DIRS, compiled Python aside), hashed once per state of those
    files (their paths, sizes and modification times): a build asks for it more than once."""
    files = sorted(path for folder in CODE_DIRS for path in (root / folder).rglob("*")
                   if path.is_file() and "__pycache__" not in path.parts)
    return _digest_of(root, tuple((path, *_size_and_time(path)) for path in files))


def _size_and_time(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_size, status.st_mtime_ns


@functools.lru_cache(maxsize=8)
def _digest_of(root: Path, signature: tuple) -> str:
    return files_digest([path for path, *_ in signature], root)


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


def _file_mode() -> int:
    """The mode a plain new file gets here (0644 under the usual umask); os.umask can only be read by setting it."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


FILE_MODE = _file_mode()


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write `data` to a temporary file beside `path`, then rename it into place, readable as any new file would be
    (a temporary file is private: served from a site, a web server running as another user could not read it)."""
    mode, encoding = ("wb", None) if isinstance(data, bytes) else ("w", "utf-8")
    with tempfile.NamedTemporaryFile(mode, dir=path.parent, prefix=f".{path.name}.", delete=False,
                                     encoding=encoding) as file:
        file.write(data)
    os.chmod(file.name, FILE_MODE)
    os.replace(file.name, path)


STAMP = "SOURCE_DIGEST"


def _file_states(folder: Path) -> list[str]:
    """One line per file `refresh` made in `folder`: its size, modification time and name."""
    return sorted(_file_state(path, folder) for path in folder.rglob("*") if path.is_file() and path.name != STAMP)


def _file_state(path: Path, folder: Path) -> str:
    size, mtime_ns = _size_and_time(path)
    return f"{size} {mtime_ns} {path.relative_to(folder).as_posix()}"


def is_current(folder: Path, digest: str) -> bool:
    """Whether `folder` holds what was made from sources hashing to `digest`, every file it made as it was written
    (files added beside them later are not its concern). A site holds hard links to these files, so a file written
    in place there (a script's write_text, a shell's `>`) is written here too: its new modification time makes the
    folder stale, and the next build makes it again."""
    stamp = folder / STAMP
    if not stamp.is_file():
        return False
    digest_line, *made = stamp.read_text().splitlines() or [""]
    if digest_line.strip() != digest or not made:  # a stamp without its files' states predates them: make it again
        return False
    for line in made:
        path = folder / line.split(" ", 2)[-1]
        if not path.is_file() or _file_state(path, folder) != line:
            return False
    return True


def refresh(folder: Path, digest: str, make: Callable[[Path], None]) -> Path:
    """`folder` as `make(folder)` fills it from sources hashing to `digest`: kept while that is what it holds, file
    for file, else made again in a temporary sibling and swapped in whole."""
    if is_current(folder, digest):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as scratch:
        make(Path(scratch))
        (Path(scratch) / STAMP).write_text("\n".join([digest, *_file_states(Path(scratch))]) + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        Path(scratch).rename(folder)
        folder.chmod(0o755)
    return folder
