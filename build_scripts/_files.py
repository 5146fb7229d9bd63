"""Where every build cache lives, and two file chores they share: hashing the sources an output depends on, and
writing an output so that a reader never sees it half written."""

import hashlib
import os
import tempfile
from collections.abc import Iterable
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
