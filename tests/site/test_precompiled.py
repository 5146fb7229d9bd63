"""The bytecode the build adds to the runtime's archives (build_scripts/precompiled.py), and the site that uses it."""

import importlib.util
import io
import json
import marshal
import sys
import zipfile

import pytest

from build_scripts import precompiled
from build_scripts.pyodide_runtime import sri_for_file

needs_312 = pytest.mark.skipif(not precompiled.can_precompile(), reason="bytecode for Pyodide needs Python 3.12")


def test_a_member_s_bytecode_goes_beside_it_in_the_stdlib_and_into_pycache_in_a_wheel():
    assert precompiled.pyc_member("json/decoder.py", "zipimport") == "json/decoder.pyc"
    assert precompiled.pyc_member("explainer/figure.py", "wheel") == "explainer/__pycache__/figure.cpython-312.pyc"
    assert precompiled.pyc_member("six.py", "wheel") == "__pycache__/six.cpython-312.pyc"


@needs_312
def test_bytecode_is_unchecked_hash_based_names_the_run_time_path_and_runs():
    source = b"def double(x):\n    return 2 * x\nANSWER = double(21)\n"
    data = precompiled.bytecode(source, "/lib/python3.12/site-packages/toy.py")
    assert data[:4] == importlib.util.MAGIC_NUMBER == precompiled.PYODIDE_MAGIC
    assert int.from_bytes(data[4:8], "little") == 0b01  # hash-based, source not checked: no stat, no hashing at import
    assert data[8:16] == importlib.util.source_hash(source)
    code = marshal.loads(data[16:])
    namespace = {}
    exec(code, namespace)
    assert namespace["ANSWER"] == 42 and code.co_filename == "/lib/python3.12/site-packages/toy.py"


@needs_312
def test_an_archive_keeps_every_member_and_gains_bytecode_for_the_wanted_modules_only(tmp_path):
    source = tmp_path / "toy-1.0-py3-none-any.whl"
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("toy/__init__.py", "from toy.core import VALUE\n")
        archive.writestr("toy/core.py", "VALUE = 3\n")
        archive.writestr("toy/unused.py", "raise RuntimeError('never imported')\n")
        archive.writestr("toy-1.0.dist-info/METADATA", "Name: toy\n")
    target = tmp_path / "out" / source.name
    target.parent.mkdir()
    prefix = "/lib/python3.12/site-packages/"
    wanted = {prefix + "toy/__init__.py", prefix + "toy/core.py"}
    assert precompiled.precompile_archive(source, target, prefix, "wheel", wanted) == 2
    with zipfile.ZipFile(source) as before, zipfile.ZipFile(target) as after:
        names = set(after.namelist())
        assert set(before.namelist()) <= names
        assert names - set(before.namelist()) == {"toy/__pycache__/__init__.cpython-312.pyc",
                                                  "toy/__pycache__/core.cpython-312.pyc"}
        for name in before.namelist():
            assert after.read(name) == before.read(name)
    # CPython 3.12 imports the unpacked copy from the bytecode: the .py files are emptied, the modules still load.
    unpacked = tmp_path / "site"
    zipfile.ZipFile(target).extractall(unpacked)
    (unpacked / "toy/core.py").write_text("")
    (unpacked / "toy/__init__.py").write_text("")
    sys.path.insert(0, str(unpacked))
    try:
        import toy
        assert toy.VALUE == 3
    finally:
        sys.path.remove(str(unpacked))
        for name in [name for name in sys.modules if name == "toy" or name.startswith("toy.")]:
            del sys.modules[name]


@needs_312
def test_the_built_site_boots_from_precompiled_archives_that_the_manifest_checks(built_site):
    assets = built_site / "assets/explainer"
    manifest = json.loads((assets / "runtime.json").read_text())
    for key in ("stdlib", "lock", "numpy", "wheel"):
        path = assets / manifest[key]["url"]
        assert path.is_file() and manifest[key]["integrity"] == sri_for_file(path), key
    with zipfile.ZipFile(assets / manifest["wheel"]["url"]) as wheel:
        assert "explainer/__pycache__/sandbox.cpython-312.pyc" in wheel.namelist()
    with zipfile.ZipFile(assets / manifest["stdlib"]["url"]) as stdlib:
        assert "json/__init__.pyc" in stdlib.namelist()
    assert json.loads((assets / manifest["lock"]["url"]).read_text())["packages"] == {}
    boot = (assets / "boot.js").read_text()
    assert json.dumps(manifest, separators=(",", ":")) in boot


def test_the_cache_keeps_only_the_most_recent_folders_of_archives(tmp_path):
    import os

    for age, name in enumerate(["newest", "middle", "older", "oldest"]):
        folder = tmp_path / name
        folder.mkdir()
        (folder / precompiled.ENTRIES).write_text("{}")
        os.utime(folder, (1_000_000 - age * 100, 1_000_000 - age * 100))
    (tmp_path / "not-ours").mkdir()
    deleted = precompiled.prune(tmp_path, keep=2)
    assert sorted(path.name for path in deleted) == ["older", "oldest"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["middle", "newest", "not-ours"]


def test_the_archives_key_is_what_they_are_made_of_not_where_the_inputs_lie(tmp_path):
    """A copy of the project (the tests build many) finds the archives the project made; a changed input does not."""
    runtimes = []
    for place in ("one", "two/deeper"):
        runtime = tmp_path / place / "runtime"
        runtime.mkdir(parents=True)
        (runtime / "python_stdlib.zip").write_bytes(b"stdlib")
        (runtime / "pyodide-lock.json").write_text("{}")
        (runtime / "explainer-0.1.0-py3-none-any.whl").write_bytes(b"wheel")
        runtimes.append(runtime)
    first, second = (precompiled._digest(runtime, runtime / "explainer-0.1.0-py3-none-any.whl")
                     for runtime in runtimes)
    assert first == second
    (runtimes[1] / "explainer-0.1.0-py3-none-any.whl").write_bytes(b"another wheel")
    assert precompiled._digest(runtimes[1], runtimes[1] / "explainer-0.1.0-py3-none-any.whl") != first
