"""The theme's search on a page with something live: its worker (and the search index it builds) starts only once the
page is live, its Python failed, or the reader opens the search (build_scripts/browser/search.js), and then the search
works as on any other page."""

import json
import re
from urllib.parse import urljoin, urlsplit

import pytest

from build_scripts.pipeline import offline
from build_scripts.pipeline.pages import read_page, site_pages
from support import BOOT_TIMEOUT_MS, search_finds

pytestmark = pytest.mark.browser

# How long the page's "start" may take to show; well under search.js's FALLBACK_MS (20 s), which would start the
# theme's worker even if the page never said so.
STARTED_TIMEOUT_MS = 10_000
THEME_WORKER = re.compile(r"/assets/javascripts/workers/search\.[0-9a-f]+\.min\.js$")
LIVE_PAGE = "lessons/break-the-model/"


# Material's search box says "Initializing search" (search.result.initializer) until its worker has built the index.
SEARCH_READY = "() => !document.querySelector('.md-search-result__meta').textContent.includes('Initializing search')"


def check_search_workers(built_site) -> None:
    """Every page of a built site: one that loads boot.js (overrides/main.html's condition) names search.js with the
    theme's worker in its query; the others name the theme's worker. Both addresses are files of the site."""
    held = 0
    for html_file in sorted(built_site.rglob("*.html")):
        html = html_file.read_text()
        config = json.loads(re.search(r'<script id="__config" type="application/json">(.*?)</script>', html, re.S)[1])
        page_address = "http://site/" + html_file.relative_to(built_site).as_posix()  # "/" in an address is the site's
        worker = urljoin(page_address, config["search"])  # the theme runs new Worker(config.search)
        address, _, theme = worker.partition("?worker=")
        if "assets/explainer/boot.js" in html:
            held += 1
            assert address == "http://site/assets/explainer/search.js", (html_file, config["search"])
            address = urljoin(address, theme)
        else:
            assert not theme, (html_file, config["search"])
        assert THEME_WORKER.search(address), (html_file, config["search"])
        assert (built_site / urlsplit(address).path.lstrip("/")).is_file(), (html_file, config["search"])
    assert held >= 4


def test_a_page_with_something_live_names_search_js_with_the_theme_worker_in_its_query(built_site):
    check_search_workers(built_site)


def test_the_service_worker_keeps_search_js_and_the_theme_worker_it_names(built_site, site_url):
    pages = [read_page(built_site, path) for path in site_pages(built_site)]
    shell = offline.shell_paths(built_site, pages, site_url)
    assert "assets/explainer/search.js" in shell
    assert [path for path in shell if THEME_WORKER.search("/" + path)], shell


def test_the_theme_worker_starts_by_itself_once_the_worker_has_computed_the_first_figure(browser, site_url):
    page = browser.page
    page.goto(site_url + LIVE_PAGE, wait_until="commit")
    page.wait_for_function('() => performance.getEntriesByName("explainer:first-computed").length > 0',
                           timeout=BOOT_TIMEOUT_MS)
    page.wait_for_function(SEARCH_READY, timeout=STARTED_TIMEOUT_MS)  # nobody has touched the search
    search_finds(page, "residual", LIVE_PAGE)
    browser.assert_clean()


def test_while_the_page_is_not_live_the_theme_worker_waits_until_the_reader_opens_the_search(browser, site_url):
    page = browser.page
    page.route("**/assets/pyodide/**", lambda route: None)  # never answered: the runtime stays booting
    page.goto(site_url + LIVE_PAGE)
    page.wait_for_load_state("load")
    page.wait_for_timeout(2000)  # long enough for the theme's worker to build its index, had it started
    assert page.evaluate("ExplainerRuntime.state") == "booting"
    assert not page.evaluate(SEARCH_READY), "the theme's search worker started while the page was still booting"
    search_finds(page, "residual", LIVE_PAGE, timeout_ms=STARTED_TIMEOUT_MS)  # not search.js's 20 s fallback
    browser.assert_clean()


def test_a_runtime_that_fails_lets_the_search_start(browser, site_url):
    page = browser.page
    page.route("**/assets/pyodide/**", lambda route: route.abort())
    page.goto(site_url + LIVE_PAGE)
    page.wait_for_function("() => ExplainerRuntime.state === 'failed'", timeout=BOOT_TIMEOUT_MS)
    page.wait_for_function(SEARCH_READY, timeout=STARTED_TIMEOUT_MS)  # nobody has touched the search
