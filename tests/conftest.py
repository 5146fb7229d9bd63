"""Fixtures shared by every test folder: the project's paths and one real build of the site, served on 127.0.0.1."""

from pathlib import Path

import pytest

from support import PROJECT_ROOT, StaticSiteServer, run_mkdocs_build


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
