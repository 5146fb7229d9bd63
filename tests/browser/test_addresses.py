"""The built site deployed elsewhere than its default address, in a reader's browser (the `reader` fixture: the HTTP
cache and service workers as a reader has them, the policy enforced):

- built for a sub-path (SITE_URL=<server>/explainers/) and served there: instant navigation keeps one page, so one
  worker and one download of the runtime for the whole visit;
- a preview on another port than the one it was built for: Material reloads each page (instant navigation needs the
  SITE_URL address), and the runtime starts again from the HTTP cache: Pyodide's wasm is downloaded once.
"""

import re

import pytest
from playwright.sync_api import expect

from support import BOOT_TIMEOUT_MS, PROJECT_ROOT, StaticSiteServer, run_mkdocs_build, serve_copy

pytestmark = pytest.mark.browser

FIRST, SECOND = "lessons/rmsnorm-geometry/", "lessons/try-it-yourself/"
WASM = "/pyodide.asm.wasm"


def downloads(server: StaticSiteServer, suffix: str) -> int:
    """How many times the server sent a file whole (a 304 sends nothing)."""
    return sum(1 for path, status in server.requests if path.endswith(suffix) and status == 200)


def goes_live(page) -> None:
    figure = page.locator("figure.sandbox").first
    figure.scroll_into_view_if_needed()
    expect(figure).to_have_attribute("data-state", "live", timeout=BOOT_TIMEOUT_MS)


def follow_link_to(page, path: str) -> None:
    """Click the navigation's link to `path` and wait until that page's title shows."""
    title = page.locator(".md-content h1").first
    before = title.inner_text()
    page.locator(f'.md-nav__link[href$="{path}"]').first.click()
    expect(page).to_have_url(re.compile(re.escape(path) + "$"))
    expect(title).not_to_have_text(before)


@pytest.fixture(scope="module")
def sub_path_server(tmp_path_factory):
    server = StaticSiteServer(tmp_path_factory.mktemp("sub-path"))
    url = server.url + "explainers/"
    result = run_mkdocs_build(PROJECT_ROOT / "mkdocs.yml", server.root / "explainers", site_url=url)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr}"
    yield server
    server.close()


def test_under_a_sub_path_one_python_serves_the_whole_visit(reader, sub_path_server):
    page = reader.page
    base = sub_path_server.url + "explainers/"
    page.goto(base + FIRST)
    goes_live(page)
    page.evaluate("window.__firstWorker = ExplainerRuntime.worker")
    follow_link_to(page, SECOND)
    goes_live(page)
    assert page.evaluate("window.__firstWorker === ExplainerRuntime.worker"), "instant navigation kept the worker"
    assert downloads(sub_path_server, WASM) == 1
    assert not [path for path, _ in sub_path_server.requests if not path.startswith("/explainers/")]
    assert reader.violations() == [] and reader.console_errors == []
    assert reader.other_origins(sub_path_server.url) == []


@pytest.fixture
def preview(built_site, tmp_path):
    """The project's site (built for the session's server) served by another server, on another port."""
    server = serve_copy(built_site, tmp_path / "site")
    yield server
    server.close()


def test_a_preview_on_another_port_reloads_pages_but_downloads_the_runtime_once(reader, preview):
    page = reader.page
    page.goto(preview.url + FIRST)
    goes_live(page)
    page.evaluate("window.__samePage = true")
    follow_link_to(page, SECOND)
    goes_live(page)
    assert page.evaluate("window.__samePage === undefined"), "Material reloads pages away from its site_url"
    assert downloads(preview, WASM) == 1, "the second start read the runtime from the HTTP cache"
    assert reader.violations() == []
