"""The explainer wheel that Pyodide installs: pure Python, the package alone, numpy its only dependency."""

import email.parser
import importlib.metadata
import zipfile

import explainer
from build_scripts.mkdocs_plugin import ExplainerPlugin
from build_scripts.wheel import build_wheel, source_digest


def test_the_wheel_is_pure_python_and_holds_only_the_package(tmp_path):
    wheel = build_wheel(tmp_path / "wheel")
    assert wheel.name == f"explainer-{explainer.__version__}-py3-none-any.whl"

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        dist_info = f"explainer-{explainer.__version__}.dist-info/"
        assert "explainer/__init__.py" in names
        assert all(name.startswith(("explainer/", dist_info)) for name in names), names
        assert not any("__pycache__" in name or name.startswith("explainer/tests") for name in names), names
        metadata = email.parser.Parser().parsestr(archive.read(dist_info + "METADATA").decode())

    runtime_requirements = [r for r in metadata.get_all("Requires-Dist") if "extra ==" not in r]
    assert runtime_requirements == ["numpy>=2.0"]
    assert metadata["Requires-Python"] == ">=3.12"


def test_the_wheel_is_reproducible_and_rebuilt_only_when_its_sources_change(tmp_path, project_root):
    # Same sources, same bytes: the browser's integrity check and HTTP caches rely on it.
    first = build_wheel(tmp_path / "a").read_bytes()
    assert build_wheel(tmp_path / "b").read_bytes() == first
    wheel = build_wheel(tmp_path / "a")
    stamp = wheel.stat().st_mtime_ns
    assert build_wheel(tmp_path / "a").stat().st_mtime_ns == stamp, "an unchanged source tree rebuilt the wheel"
    (tmp_path / "a" / "SOURCE_DIGEST").write_text("stale\n")
    assert build_wheel(tmp_path / "a").read_bytes() == first
    assert (tmp_path / "a" / "SOURCE_DIGEST").read_text().splitlines()[0] == source_digest(project_root)


def test_a_browser_file_edited_in_place_in_a_built_site_does_not_reach_the_next_build(tmp_path):
    """A site holds hard links into the build cache: an edit written in place there (a script's write_text, a
    shell's `>`; `sed -i` writes a new file) must not become what the next build serves."""
    from build_scripts import browser_files, site_runtime

    cache, first, second = tmp_path / "cache", tmp_path / "first", tmp_path / "second"
    site_runtime.copy_browser_files(first, cache)
    served = first / site_runtime.ASSET_DIR / "worker.js"
    expected = served.read_bytes()
    with served.open("r+b") as file:  # in place, through the link
        file.write(b"/* edited */")
    site_runtime.copy_browser_files(second, cache)
    assert (second / site_runtime.ASSET_DIR / "worker.js").read_bytes() == expected
    assert (cache / "worker.js").read_bytes() == expected
    assert browser_files.site_files()["worker.js"].encode() == expected
    unchanged = (cache / "worker.js").stat().st_mtime_ns
    site_runtime.copy_browser_files(tmp_path / "third", cache)
    assert (cache / "worker.js").stat().st_mtime_ns == unchanged, "an untouched cache was made again"


def test_the_wheel_names_no_build_code_and_mkdocs_finds_the_plugin_in_its_own_distribution(tmp_path):
    with zipfile.ZipFile(build_wheel(tmp_path / "wheel")) as archive:
        names = archive.namelist()
        record = archive.read(next(name for name in names if name.endswith(".dist-info/RECORD"))).decode()
    # Readers' browsers install this wheel: it may not register anything, least of all code they do not have.
    assert not [name for name in names if name.endswith("entry_points.txt")], names
    assert "build_scripts" not in record
    [plugin] = importlib.metadata.entry_points(group="mkdocs.plugins", name="explainer")
    assert plugin.dist.name == "explainer-mkdocs-plugin"
    assert plugin.load() is ExplainerPlugin
