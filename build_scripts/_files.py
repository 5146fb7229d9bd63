"""Where every build cache lives, and the file chores they share: hashing the sources an output depends on, writing
an output so that a reader never sees it half written, and keeping a folder of outputs stamped with its sources."""

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

# Every build cache (figures, training runs, the wheel, Pyodide's wheels) lives under build/cache/, never in .cache/:
# Zensical owns that folder and `zensical build --clean` empties it.
CACHE_DIR = Path(__file__).resolve().parent.parent / "build" / "cache"


def files_digest(paths: Iterable[Path], root: Path) -> str:
    """sha256 over files (each path relative to `root`, then its bytes), in a stable order."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write `data` to a temporary file beside `path`, then rename it into place."""
    mode, encoding = ("wb", None) if isinstance(data, bytes) else ("w", "utf-8")
    with tempfile.NamedTemporaryFile(mode, dir=path.parent, prefix=f".{path.name}.", delete=False,
                                     encoding=encoding) as file:
        file.write(data)
    os.replace(file.name, path)


STAMP = "SOURCE_DIGEST"


def is_current(folder: Path, digest: str) -> bool:
    """Whether `folder` holds what was made from sources hashing to `digest`."""
    stamp = folder / STAMP
    return stamp.is_file() and stamp.read_text().strip() == digest


def refresh(folder: Path, digest: str, make: Callable[[Path], None]) -> Path:
    """`folder` as `make(folder)` fills it from sources hashing to `digest`: kept while that is what it holds, else
    made again in a temporary sibling and swapped in whole."""
    if is_current(folder, digest):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as scratch:
        make(Path(scratch))
        (Path(scratch) / STAMP).write_text(digest + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        Path(scratch).rename(folder)
        folder.chmod(0o755)
    return folder
