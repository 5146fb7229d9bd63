"""The explainer wheel the reader's browser installs, built at site build and cached by the hash of its sources."""

import shutil
import tempfile
from pathlib import Path

from build_scripts._files import files_digest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WHEEL_DIR = PROJECT_ROOT / "build" / "wheel"


def source_digest(root: Path = PROJECT_ROOT) -> str:
    """sha256 over the files that make up the wheel (explainer's sources and data, and pyproject.toml)."""
    package = root / "explainer"
    return files_digest([*package.rglob("*.py"), *package.rglob("*.json"), root / "pyproject.toml"], root)


def build_wheel(out_dir: Path = DEFAULT_WHEEL_DIR, root: Path = PROJECT_ROOT) -> Path:
    """The wheel for the current sources: reused when `out_dir` already holds it, else built (reproducibly)."""
    from hatchling.builders.wheel import WheelBuilder

    stamp = out_dir / "SOURCE_DIGEST"
    digest = source_digest(root)
    wheels = sorted(out_dir.glob("explainer-*.whl"))
    if len(wheels) == 1 and stamp.is_file() and stamp.read_text().strip() == digest:
        return wheels[0]
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir.parent) as scratch:
        built = Path(next(WheelBuilder(str(root)).build(directory=scratch, versions=["standard"])))
        (Path(scratch) / "SOURCE_DIGEST").write_text(digest + "\n")
        shutil.rmtree(out_dir, ignore_errors=True)
        Path(scratch).rename(out_dir)
        out_dir.chmod(0o755)
    return out_dir / built.name
