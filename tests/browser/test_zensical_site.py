"""The site as Zensical builds it (`make build ENGINE=zensical`) works in Chromium: every sandbox on every page goes
live on the offline Pyodide, the static figures load, pages with something live hold the theme's search worker
(build_scripts/browser/search.js), and the pages link the lean copies of the theme's palette and main stylesheets
(build_scripts/pipeline/theme_assets.py); a lesson goes live without moving, axe finds nothing on any page,
code blocks are mounted as they come into view (mkdocs.yml's content.lazy), and Markdown tables stay in the wrapper
the build gave them.
(The rest of the browser suite runs on the MkDocs build.)"""

import os

import pytest

from support import (StaticSiteServer, assert_pages_link_the_lean_theme_assets, build_in_process,
                     copy_project_site_sources, search_finds)
from test_accessibility import site_pages, violations_as_readers_see_them
from test_layout_shift import LESSON, layout_shift, read_every_sandbox
from test_sandboxes_live import pages_with_sandboxes, wait_live
from test_site_shell import check_code_blocks_mount_as_they_come_into_view, check_tables_stay_where_the_build_put_them
from test_theme_search import LIVE_PAGE, STARTED_TIMEOUT_MS, check_search_workers

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def zensical_site(tmp_path_factory):
    """A copy of the project built by Zensical through the pipeline, served on 127.0.0.1 at the address it was
    built for (instant navigation and the sitemap use it)."""
    root = tmp_path_factory.mktemp("zensical-project")
    config = copy_project_site_sources(root)
    server = StaticSiteServer(root / "site")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(os.environ, "SITE_URL", server.url)
        site = build_in_process("zensical", config)
    assert site == root / "site"
    yield site, server.url
    server.close()


@pytest.fixture(scope="module")
def site_url(zensical_site):
    """The Zensical build's address: the `browser` fixture (conftest.py) guards every other origin."""
    return zensical_site[1]


def test_every_sandbox_of_the_zensical_build_goes_live(browser, zensical_site):
    site, url = zensical_site
    pages = pages_with_sandboxes(site)
    assert len(pages) >= 3, pages
    page = browser.page
    for path, ids in pages.items():
        page.goto(url + path)
        for figure_id in ids:
            wait_live(page, figure_id)
    browser.assert_clean()


def test_a_lesson_of_the_zensical_build_goes_live_without_moving(browser, zensical_site):
    """The header holds Zensical's own search partial, whose box its script draws (overrides/partials/search.html):
    Material's form in its place showed unstyled once the script ran, the header grew from 48 to 108 px and the page
    moved down (a shift of 0.043 on every page)."""
    page = browser.page
    count = read_every_sandbox(page, zensical_site[1] + LESSON, "f.dataset.state === 'live'")
    assert count >= 3
    total, detail = layout_shift(page)
    assert total == 0, f"layout shift {total:.5f} on the Zensical build of {LESSON}: {detail}"
    assert page.locator("header .md-search__button").is_visible()
    browser.assert_clean()


def test_axe_finds_no_violation_on_the_zensical_build_in_light_or_dark(browser, zensical_site):
    """Zensical's theme differs from Material's in places (its search box, the current page in the navigation drawn
    in the accent colour, the code lines' anchors shown): every page of its build as readers use it, audited as
    tests/browser/test_accessibility.py audits every page of the MkDocs build."""
    pages = site_pages(zensical_site[0])
    assert len(pages) >= 4, pages
    failures = violations_as_readers_see_them(browser.page, zensical_site[1], pages)
    assert not failures, "axe, on the Zensical build:\n" + "\n".join(failures)
    browser.assert_clean()


def test_pages_of_the_zensical_build_link_the_lean_theme_assets(zensical_site):
    """The pipeline's theme_assets step finds Zensical's stylesheets (in a folder of its variant) and bundle too."""
    assert_pages_link_the_lean_theme_assets(zensical_site[0])


@pytest.mark.parametrize("arrival", ["load", "instant"])
def test_code_blocks_of_the_zensical_build_mount_as_they_come_into_view(browser, zensical_site, arrival):
    check_code_blocks_mount_as_they_come_into_view(browser.page, zensical_site[1], arrival)
    browser.assert_clean()


@pytest.mark.parametrize("arrival", ["load", "instant"])
def test_tables_of_the_zensical_build_stay_where_the_build_put_them(browser, zensical_site, arrival):
    check_tables_stay_where_the_build_put_them(browser.page, zensical_site[1], arrival)
    browser.assert_clean()


def test_a_static_figure_of_the_zensical_build_loads(browser, zensical_site):
    site, url = zensical_site
    page = browser.page
    page.emulate_media(color_scheme="light")
    page.goto(url + "lessons/rmsnorm-geometry/")
    image = page.locator("figure.illustration img[src*='-light.svg']").first
    image.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle(), timeout=15_000)
    assert image.is_visible()
    browser.assert_clean()


def test_pages_of_the_zensical_build_with_something_live_hold_the_theme_search_worker(zensical_site):
    check_search_workers(zensical_site[0])


def test_the_zensical_search_answers_at_once_on_a_page_still_booting(browser, zensical_site):
    """Zensical's search box lives in a shadow root, where the focus event's target is the root's host: page.js finds
    the box in the event's composed path and starts the held search, well before search.js's 20 s fallback."""
    page = browser.page
    page.route("**/assets/pyodide/**", lambda route: None)  # never answered: the runtime stays booting
    page.goto(zensical_site[1] + LIVE_PAGE)
    page.wait_for_load_state("load")
    # Zensical's results are links with the option role (Playwright's locators pierce shadow roots).
    search_finds(page, "residual", LIVE_PAGE, timeout_ms=STARTED_TIMEOUT_MS, results_selector='a[role="option"]')
    assert page.evaluate("ExplainerRuntime.state") == "booting"
    browser.assert_clean()
