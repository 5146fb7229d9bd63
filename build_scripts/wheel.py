"""The explainer wheel the reader's browser installs, built at site build and cached by the hash of its sources."""

from pathlib import Path

from build_scripts._files import CACHE_DIR, files_digest, is_current, refresh

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WHEEL_DIR = CACHE_DIR / "wheel"


def source_digest(root: Path = PROJECT_ROOT) -> str:
    """sha256 over the files that make up the wheel (explainer's sources and data, and pyproject.toml)."""
    package = root / "explainer"
    data = [*package.rglob("*.py"), *package.rglob("*.json"), *package.rglob("*.npz"), root / "pyproject.toml"]
    return files_digest(data, root)


def _current_wheel(out_dir: Path, root: Path) -> Path | None:
    wheels = sorted(out_dir.glob("explainer-*.whl"))
    return wheels[0] if len(wheels) == 1 and is_current(out_dir, source_digest(root)) else None


def wheel_is_current(out_dir: Path = DEFAULT_WHEEL_DIR, root: Path = PROJECT_ROOT) -> bool:
    """Whether `out_dir` holds the wheel of the current sources (build_wheel then builds nothing)."""
    return _current_wheel(out_dir, root) is not None


def build_wheel(out_dir: Path = DEFAULT_WHEEL_DIR, root: Path = PROJECT_ROOT) -> Path:
    """The wheel for the current sources: reused when `out_dir` already holds it, else built (reproducibly)."""
    if current := _current_wheel(out_dir, root):
        return current
    from hatchling.builders.wheel import WheelBuilder  # slow to import: only when there is something to build

    def build(scratch: Path) -> None:
        next(WheelBuilder(str(root)).build(directory=str(scratch), versions=["standard"]))

    refresh(out_dir, source_digest(root), build)
    return next(out_dir.glob("explainer-*.whl"))
