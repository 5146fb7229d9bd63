"""`explainer` must import with only numpy and the standard library: the same wheel runs in Pyodide."""

import subprocess
import sys
import textwrap

import pytest

# Packages the browser does not have (or that belong to the build), which explainer must never import.
FORBIDDEN = ("matplotlib", "mkdocs", "material", "pymdownx", "markdown", "pyodide", "js", "playwright", "pytest")

BLOCKER = textwrap.dedent(
    """
    import importlib.abc, sys

    FORBIDDEN = {forbidden!r}

    class Forbid(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in FORBIDDEN:
                raise ImportError(f"explainer imported {{name!r}}, which the browser build cannot have")
            return None

    for name in list(sys.modules):
        if name.split(".")[0] in FORBIDDEN:
            del sys.modules[name]
    sys.meta_path.insert(0, Forbid())
    """
).format(forbidden=set(FORBIDDEN))


def run_with_forbidden_imports_blocked(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCKER + textwrap.dedent(code)], capture_output=True, text=True)


def test_explainer_and_every_submodule_import_without_build_or_browser_packages():
    result = run_with_forbidden_imports_blocked(
        """
        import importlib, pkgutil
        import explainer
        for module in pkgutil.walk_packages(explainer.__path__, prefix="explainer."):
            importlib.import_module(module.name)
        print(explainer.__version__)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "explainer.__version__ is empty"


@pytest.mark.parametrize("package", ["matplotlib", "mkdocs"])
def test_the_blocker_really_blocks(package):
    result = run_with_forbidden_imports_blocked(f"import {package}")
    assert result.returncode != 0
    assert "the browser build cannot have" in result.stderr
