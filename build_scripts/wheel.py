"""The explainer wheel the reader's browser installs, built at site build and cached by the hash of its sources."""

import shutil
import tempfile
from pathlib import Path

from build_scripts._files import CACHE_DIR, files_digest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WHEEL_DIR = CACHE_DIR / "wheel"


def source_digest(root: Path = PROJECT_ROOT) -> str:
    """sha256 over the files that make up the wheel (explainer's sources and data, and pyproject.toml)."""
    package = root / "explainer"
    return files_digest([*package.rglob("*.py"), *package.rglob("*.json"), root / "pyproject.toml"], root)


def _current_wheel(out_dir: Path, root: Path) -> Path | None:
    stamp = out_dir / "SOURCE_DIGEST"
    wheels = sorted(out_dir.glob("explainer-*.whl"))
    if len(wheels) == 1 and stamp.is_file() and stamp.read_text().strip() == source_digest(root):
        return wheels[0]
    return None


def wheel_is_current(out_dir: Path = DEFAULT_WHEEL_DIR, root: Path = PROJECT_ROOT) -> bool:
    """Whether `out_dir` holds the wheel of the current sources (build_wheel then builds nothing)."""
    return _current_wheel(out_dir, root) is not None


def build_wheel(out_dir: Path = DEFAULT_WHEEL_DIR, root: Path = PROJECT_ROOT) -> Path:
    """The wheel for the current sources: reused when `out_dir` already holds it, else built (reproducibly)."""
    if current := _current_wheel(out_dir, root):
        return current
    from hatchling.builders.wheel import WheelBuilder  # slow to import: only when there is something to build

    digest = source_digest(root)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir.parent) as scratch:
        built = Path(next(WheelBuilder(str(root)).build(directory=scratch, versions=["standard"])))
        (Path(scratch) / "SOURCE_DIGEST").write_text(digest + "\n")
        shutil.rmtree(out_dir, ignore_errors=True)
        Path(scratch).rename(out_dir)
        out_dir.chmod(0o755)
    return out_dir / built.name
