"""Fixtures shared by every test folder: the project's paths and one real build of the site, served on 127.0.0.1."""

import os
from pathlib import Path

import pytest

from cpu_load import CpuLoad
from support import PROJECT_ROOT, StaticSiteServer, run_mkdocs_build


def pytest_configure(config):
    """Test files in different folders must not share a name: the folders are not packages, so pytest imports each
    file as a top-level module of its name, and a second file of that name fails to collect (as it did on CI)."""
    names: dict[str, list[str]] = {}
    for path in sorted(Path(__file__).parent.rglob("test_*.py")):
        names.setdefault(path.name, []).append(str(path.relative_to(PROJECT_ROOT)))
    clashes = [paths for paths in names.values() if len(paths) > 1]
    if clashes:
        raise pytest.UsageError("test files share a name; rename one of each: "
                                + "; ".join(" and ".join(paths) for paths in clashes))


def pytest_addoption(parser):
    parser.addoption("--cpu-load", type=int, default=0, metavar="N",
                     help="keep N busy processes running for the whole session (make test-stress: one per core)")


@pytest.fixture(scope="session", autouse=True)
def cpu_load(request):
    """With --cpu-load N, N processes spin until the session ends: the tests must pass on a busy machine too."""
    processes = request.config.getoption("--cpu-load")
    if processes <= 0:
        yield None
        return
    load = CpuLoad(min(processes, 4 * (os.cpu_count() or 1)))
    yield load
    load.stop()


@pytest.fixture(scope="session")
def project_root() -> Path:
    return PROJECT_ROOT


@pytest.fixture(scope="session")
def site_server(tmp_path_factory):
    """A static server for the built site; it exists before the build so the build knows its own address."""
    server = StaticSiteServer(tmp_path_factory.mktemp("site"))
    yield server
    server.close()


@pytest.fixture(scope="session")
def built_site(site_server) -> Path:
    """The project's own site, built once per test session with `mkdocs build --strict`."""
    result = run_mkdocs_build(PROJECT_ROOT / "mkdocs.yml", site_server.root, site_url=site_server.url)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr}"
    return site_server.root
