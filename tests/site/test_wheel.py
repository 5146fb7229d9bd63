"""The explainer wheel that Pyodide installs: pure Python, the package alone, numpy its only dependency."""

import email.parser
import subprocess
import sys
import zipfile

import explainer


def test_the_wheel_is_pure_python_and_holds_only_the_package(project_root, tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path), str(project_root)],
        check=True,
        capture_output=True,
    )
    [wheel] = tmp_path.glob("*.whl")
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
