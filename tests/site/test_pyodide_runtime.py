"""The prepared offline Pyodide runtime: the right files, wheels equal to the official lock, tampering caught."""

import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import explainer
from build_scripts.wheel import build_wheel
from build_scripts.pyodide_runtime import (
    CORE_FILES,
    DEFAULT_RUNTIME_DIR,
    NPM_PYODIDE_DIR,
    PYODIDE_VERSION,
    WANTED_WHEELS,
    RuntimeSetupError,
    WheelHashMismatch,
    describe_wheel,
    sri_for_file,
    verify_wheel,
    verify_wheels,
)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def official_lock() -> dict:
    return json.loads((NPM_PYODIDE_DIR / "pyodide-lock.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def official_hashes(official_lock) -> dict[str, str]:
    return {package["file_name"]: package["sha256"] for package in official_lock["packages"].values()}


@pytest.fixture(scope="module")
def runtime_dir() -> Path:
    assert (DEFAULT_RUNTIME_DIR / "pyodide-lock.json").is_file(), "runtime missing: run `make build/pyodide/.stamp`"
    return DEFAULT_RUNTIME_DIR


def run_prepare(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "build_scripts.pyodide_runtime", "prepare", *args],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])


def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_the_official_lock_is_the_pinned_version(official_lock):
    assert official_lock["info"]["version"] == PYODIDE_VERSION == "0.27.7"


def test_the_runtime_holds_exactly_the_core_files_and_the_three_wheels(runtime_dir):
    assert sorted(p.name for p in runtime_dir.iterdir()) == sorted(CORE_FILES + WANTED_WHEELS)
    for name in CORE_FILES:
        assert sha256_of(runtime_dir / name) == sha256_of(NPM_PYODIDE_DIR / name), f"{name} differs from npm's"


def test_every_wheel_in_the_runtime_has_the_sha256_of_the_official_lock(runtime_dir, official_hashes):
    assert {"numpy", "micropip", "packaging"} == {name.split("-")[0] for name in WANTED_WHEELS}
    for name in WANTED_WHEELS:
        assert sha256_of(runtime_dir / name) == official_hashes[name], name


def test_a_tampered_wheel_fails_verification_naming_the_file_and_both_hashes(runtime_dir, official_hashes, tmp_path):
    name = WANTED_WHEELS[0]
    tampered = tmp_path / name
    tampered.write_bytes((runtime_dir / name).read_bytes())
    flip_a_byte(tampered)
    with pytest.raises(WheelHashMismatch) as caught:
        verify_wheel(tampered, official_hashes[name])
    message = str(caught.value)
    assert str(tampered) in message
    assert official_hashes[name] in message
    assert sha256_of(tampered) in message


def test_a_missing_wheel_fails_verification_naming_the_file(tmp_path, official_hashes):
    expected = {name: official_hashes[name] for name in WANTED_WHEELS}
    with pytest.raises(RuntimeSetupError, match=WANTED_WHEELS[0].replace(".", r"\.") + ": wheel missing"):
        verify_wheels(tmp_path, expected)


def test_the_cli_refuses_a_tampered_cache_and_leaves_no_runtime_behind(runtime_dir, official_hashes, tmp_path):
    cache, dest = tmp_path / "cache", tmp_path / "runtime"
    cache.mkdir()
    for name in WANTED_WHEELS:
        (cache / name).write_bytes((runtime_dir / name).read_bytes())
    flip_a_byte(cache / WANTED_WHEELS[1])

    result = run_prepare("--dest", str(dest), "--cache-dir", str(cache))
    assert result.returncode == 1
    assert str(cache / WANTED_WHEELS[1]) in result.stderr
    assert official_hashes[WANTED_WHEELS[1]] in result.stderr
    assert sha256_of(cache / WANTED_WHEELS[1]) in result.stderr
    assert not dest.exists()
    assert list(tmp_path.iterdir()) == [cache]


def test_the_cli_assembles_a_runtime_from_the_cache_and_replaces_it_whole(runtime_dir, tmp_path):
    cache, dest = tmp_path / "cache", tmp_path / "out" / "runtime"
    cache.mkdir()
    for name in WANTED_WHEELS:
        (cache / name).write_bytes((runtime_dir / name).read_bytes())
    for _ in range(2):  # the second run swaps a complete new directory in
        result = run_prepare("--dest", str(dest), "--cache-dir", str(cache))
        assert result.returncode == 0, result.stderr
        assert len(result.stdout.strip().splitlines()) == 1
        assert "from the cache" in result.stdout
    assert sorted(p.name for p in dest.iterdir()) == sorted(CORE_FILES + WANTED_WHEELS)
    assert [p.name for p in dest.parent.iterdir()] == ["runtime"], "a staging directory was left behind"


def test_the_sri_helper_gives_the_base64_sha256_of_a_known_file(tmp_path):
    known = tmp_path / "abc.txt"
    known.write_bytes(b"abc")
    assert sri_for_file(known) == "sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="


def test_the_explainer_wheel_entry_has_its_hash_integrity_imports_and_depends():
    wheels = [build_wheel()]
    entry = describe_wheel(wheels[0])
    digest = hashlib.sha256(wheels[0].read_bytes()).digest()
    assert entry.sha256 == digest.hex()
    assert entry.integrity == "sha256-" + base64.b64encode(digest).decode()
    assert (entry.name, entry.version, entry.file_name) == ("explainer", explainer.__version__, wheels[0].name)
    assert entry.imports == ("explainer",)
    assert entry.depends == ("numpy",)
    assert entry.lock_entry()["sha256"] == entry.sha256
