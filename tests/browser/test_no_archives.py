"""The site as a build without the precompiled archives makes it (its Python cannot write Pyodide's bytecode: any but a
3.12, see build_scripts/precompiled.py): the worker boots from Pyodide's own standard library and lock at indexURL,
checked against runtime.json's pyodide.files, numpy's wheel from there too, and our wheel from its hash folder.

The same tests as on the archives' build, called on this one: the standard library and the lock, tampered with, are
refused by name, and Retry recovers with every sandbox live (test_integrity.py); a second visit works with the server
gone (test_offline.py: the service worker keeps these files instead). The site is the session's build with its runtime
published again the way such a build publishes it (a few seconds, not a build).
"""

import json
import posixpath

import pytest

from build_scripts import precompiled, site_runtime
from build_scripts.pipeline import offline
from build_scripts.pipeline.pages import read_page, site_pages
from build_scripts.site_runtime import ASSET_DIR
from support import StaticSiteServer, serve_copy
import test_integrity  # their tests are called here (imported by name, pytest would run them again as they are)
import test_offline
from test_integrity import worker_messages  # noqa: F401  (a fixture the tampered-file test needs)
from test_offline import site_url_of, worker_lists

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def no_archives(built_site, tmp_path_factory) -> StaticSiteServer:
    """A copy of the session's site whose runtime is published without archives, served."""
    server = serve_copy(built_site, tmp_path_factory.mktemp("no-archives") / "site")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(precompiled, "can_precompile", lambda: False)
        published = site_runtime.write_site_runtime(server.root, self_host=True)
    pages = [read_page(server.root, path) for path in site_pages(server.root)]
    offline.write_service_worker(server.root, pages, published, site_url_of(built_site))
    yield server
    server.close()


@pytest.fixture(scope="module")
def site_url(no_archives):
    """The `browser` fixture (conftest.py) lets requests reach this address only."""
    return no_archives.url


def manifest(server) -> dict:
    return json.loads((server.root / ASSET_DIR / "runtime.json").read_text())


def test_the_runtime_comes_from_pyodides_folder_and_the_worker_keeps_it(no_archives):
    runtime = manifest(no_archives)
    assert runtime["stdlib"] is None and runtime["lock"] is None
    index = runtime["pyodide"]["indexURL"]
    assert runtime["numpy"]["url"].startswith(index)
    assert {"python_stdlib.zip", "pyodide-lock.json"} <= set(runtime["pyodide"]["files"]), "their integrity"
    kept = {entry["url"] for entry in worker_lists(no_archives.root)["runtime"]}
    for name in ("python_stdlib.zip", "pyodide-lock.json", runtime["numpy"]["url"].rsplit("/", 1)[1]):
        assert posixpath.normpath(f"{ASSET_DIR}/{index}{name}") in kept, f"the service worker keeps {name}"
    assert not [url for url in kept if "/runtime/" in url], "nothing of the archives' folder"


# numpy's wheel and ours are checked by their own runtime.json entries in either build (test_integrity.py); what this
# build changes is where the standard library and the lock come from, and what checks them.
@pytest.mark.parametrize("which", ["stdlib", "lock"])
def test_pyodides_own_archives_are_checked(browser, worker_messages, no_archives, which):  # noqa: F811
    test_integrity.test_a_tampered_file_is_refused_in_one_sentence_and_retry_asks_once_per_press(
        browser, worker_messages, no_archives.url, no_archives.root, no_archives, which)


def test_a_second_visit_works_with_the_server_gone_too(reader, no_archives, tmp_path):
    server = serve_copy(no_archives.root, tmp_path / "site")  # the test stops it
    try:
        test_offline.test_a_second_visit_works_with_the_server_gone(reader, server)
    finally:
        server.close()
