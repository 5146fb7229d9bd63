"""The Zensical build (`make build ENGINE=zensical`) for a sub-path (SITE_URL=<server>/explainers/) and served there:
the same test as the MkDocs build's (test_addresses.py), imported, on this module's server: instant navigation keeps
one page, so one worker and one download of the runtime for the whole visit, and nothing is asked outside the sub-path.
(Zensical's instant navigation moves the sitemap's addresses to the page's own, so unlike Material's it does not need
SITE_URL to match: a build for another address passes this test too.)"""

import os

import pytest

from support import StaticSiteServer, build_in_process, copy_project_site_sources
from test_addresses import test_under_a_sub_path_one_python_serves_the_whole_visit  # noqa: F401

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def sub_path_server(tmp_path_factory):
    """A copy of the project built by Zensical for <server>/explainers/, which serves its site folder there."""
    root = tmp_path_factory.mktemp("zensical-sub-path")
    (root / "project").mkdir()
    config = copy_project_site_sources(root / "project")
    (root / "served").mkdir()
    (root / "served" / "explainers").symlink_to(root / "project" / "site", target_is_directory=True)
    server = StaticSiteServer(root / "served")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(os.environ, "SITE_URL", server.url + "explainers/")
        site = build_in_process("zensical", config)
    assert site == root / "project" / "site"
    yield server
    server.close()
