"""build_scripts/find_python.sh: how the Makefile picks the interpreter for the project venv."""

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from support import PROJECT_ROOT

FIND_PYTHON = PROJECT_ROOT / "build_scripts" / "find_python.sh"
BASE_PYTHON = Path(sys._base_executable).resolve()


def write_script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def find_python(bin_dir: Path, **env) -> subprocess.CompletedProcess:
    """Run the finder with only `bin_dir` on PATH, so no interpreter of this machine can answer by accident."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "cat").symlink_to(shutil.which("cat"))
    environment = {"PATH": str(bin_dir), "HOME": os.environ.get("HOME", "/"), **env}
    return subprocess.run([shutil.which("sh"), str(FIND_PYTHON)], capture_output=True, text=True, env=environment)


def test_an_explicit_python_wins(tmp_path):
    result = find_python(tmp_path, PYTHON=str(BASE_PYTHON))
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()).resolve() == BASE_PYTHON


def test_a_pyenv_shim_that_cannot_run_is_skipped_for_pyenvs_own_folders(tmp_path):
    bin_dir = tmp_path / "bin"
    write_script(bin_dir / "python3.12", 'echo "pyenv: python3.12: command not found" >&2; exit 127\n')
    pyenv_root = tmp_path / "pyenv"
    installed = pyenv_root / "versions" / "3.12.9" / "bin" / "python3.12"
    installed.parent.mkdir(parents=True)
    installed.symlink_to(BASE_PYTHON)
    write_script(bin_dir / "pyenv", f'[ "$1" = root ] && echo "{pyenv_root}"\n')

    result = find_python(bin_dir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(installed)


def test_no_new_enough_python_fails_with_the_fix(tmp_path):
    old_python = write_script(tmp_path / "bin" / "python3", "exit 1\n")  # runs, but fails the version check
    result = find_python(tmp_path / "bin", PYTHON=str(old_python))
    assert result.returncode == 1
    assert result.stdout == ""
    assert "no Python >= 3.12 found" in result.stderr
    assert "make PYTHON=" in result.stderr
