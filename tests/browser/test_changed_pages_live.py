"""`make check`'s browser smoke test: each page changed since CHECK_BASE (default main; see tests/changed_pages.py)
loads from the strict build with zero console errors, and every sandbox on it goes live. With no changed page only
the strict build runs (in `make test` on main, for instance)."""

import os

import pytest

from changed_pages import since
from test_sandboxes_live import wait_live

pytestmark = pytest.mark.browser

SAID, PAGES = since(os.environ.get("CHECK_BASE", "main"))


def test_the_site_builds_with_strict_checks(built_site):
    assert (built_site / "index.html").is_file()  # the fixture's `mkdocs build --strict` succeeded


# With no changed page, one skipped case whose reason says so (pytest prints it).
@pytest.mark.parametrize("path", PAGES or [pytest.param(None, marks=pytest.mark.skip(reason=SAID))])
def test_a_changed_page_loads_clean_and_its_sandboxes_go_live(browser, site_url, path):
    page = browser.page
    page.goto(site_url + path)
    page.wait_for_load_state("networkidle")
    assert page.locator("h1").count() == 1, f"/{path}: the page has no single title"
    figures = page.locator("figure.sandbox")
    for index in range(figures.count()):
        wait_live(page, figures.nth(index).get_attribute("id"))
    browser.assert_clean()
