"""The site as a reader's browser runs it (the `reader` fixture: the pages' Content-Security-Policy enforced, service
workers on, no request routing): every page loads with no policy violation, sandboxes and code cells go live under the
policy, and what a reader types never leaves the browser (the home page says so).

Under the enforced policy Playwright cannot evaluate a predicate string in the page (wait_for_function is an `eval`),
so these tests wait with `expect` on attributes and text.
"""

import json
import re
from urllib.parse import unquote

import pytest
from playwright.sync_api import expect

from build_scripts.pipeline.csp import worker_policy
from build_scripts.pipeline.pages import site_pages
from build_scripts.site_runtime import ASSET_DIR
from support import BOOT_TIMEOUT_MS, serve_copy

pytestmark = pytest.mark.browser

MARKER = "reader-typed-7f3a91"  # typed into a cell: no request may carry it


def page_urls(built_site, site_url) -> list[str]:
    return [site_url + path.relative_to(built_site).as_posix().removesuffix("index.html")
            for path in site_pages(built_site)]


def test_every_page_loads_under_the_policy_with_no_violation(reader, built_site, site_url):
    urls = page_urls(built_site, site_url)
    assert len(urls) >= 8
    for url in urls:
        reader.page.goto(url, wait_until="load")
        expect(reader.page.locator("body")).to_be_visible()
        assert reader.violations() == [], url
    assert reader.console_errors == []
    assert reader.other_origins(site_url) == []


def test_sandboxes_and_cells_go_live_under_the_policy(reader, site_url):
    page = reader.page
    page.goto(site_url + "lessons/try-it-yourself/")
    figures = page.locator("figure.sandbox")
    assert figures.count() >= 1
    for index in range(figures.count()):
        figures.nth(index).scroll_into_view_if_needed()
        expect(figures.nth(index)).to_have_attribute("data-state", "live", timeout=BOOT_TIMEOUT_MS)
    cell = page.locator(".cell").first
    cell.scroll_into_view_if_needed()
    expect(cell).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
    assert reader.violations() == []
    assert reader.console_errors == []


def test_a_heat_map_drawn_as_one_picture_shows_under_the_policy(reader, site_url):
    # render.js draws an evenly spaced heat map as an image from a data: URL (img-src allows data:). The sandboxes
    # page's second ablation lab starts on its similarity view, one such map.
    page = reader.page
    page.goto(site_url + "sandboxes/")
    lab = page.locator("figure.sandbox[data-sandbox=ablation_lab]").nth(1)
    lab.scroll_into_view_if_needed()
    expect(lab).to_have_attribute("data-state", "live", timeout=BOOT_TIMEOUT_MS)
    expect(lab.locator(".sandbox__live g[data-mark=heatmap] mask image")).to_have_count(1)
    assert reader.violations() == []
    assert reader.console_errors == []


def test_the_worker_boots_under_the_policy_a_host_sends_it(reader, built_site, tmp_path):
    """README's header for the Pyodide worker (`python -m build_scripts.pipeline csp`) is enough for the whole boot:
    the checked scripts run from blob: URLs, the checked standard library is read from one, the wasm compiles."""
    policy = worker_policy(json.loads((built_site / ASSET_DIR / "runtime.json").read_text()))
    server = serve_copy(built_site, tmp_path / "site",
                        path_headers={f"/{ASSET_DIR}/worker.js": {"Content-Security-Policy": policy}})
    try:
        page = reader.page
        page.goto(server.url + "lessons/try-it-yourself/")
        figure = page.locator("figure.sandbox").first
        figure.scroll_into_view_if_needed()
        expect(figure).to_have_attribute("data-state", "live", timeout=BOOT_TIMEOUT_MS)
        assert server.served(f"/{ASSET_DIR}/worker.js") >= 1
        assert reader.violations() == [] and reader.console_errors == []
    finally:
        server.close()


def test_nothing_a_reader_types_leaves_the_browser(reader, site_url):
    sent = []
    reader.context.on("request", lambda request: sent.append((request.method, request.url, request.post_data or "")))
    page = reader.page
    page.goto(site_url)
    expect(page.get_by_text("Nothing you type or change here leaves your browser")).to_be_visible()
    page.goto(site_url + "lessons/try-it-yourself/")
    cell = page.locator(".cell").first
    cell.scroll_into_view_if_needed()
    expect(cell).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
    cell.locator(".cm-content").click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(f"print({MARKER!r})")
    cell.locator(".cell__run").click()
    expect(cell).to_have_attribute("data-state", "done", timeout=BOOT_TIMEOUT_MS)
    expect(cell.locator(".cell__output")).to_contain_text(MARKER)
    slider = page.locator("figure.sandbox input[type=range]:not([disabled])").first
    slider.scroll_into_view_if_needed()
    expect(page.locator("figure.sandbox").first).to_have_attribute("data-state", "live", timeout=BOOT_TIMEOUT_MS)
    slider.focus()
    slider.press("End")
    page.locator(".md-search__input").click()
    page.keyboard.type(MARKER)  # the theme's search runs in its own worker, on the site's index
    expect(page.locator(".md-search-result__meta")).to_have_text(re.compile("no matching", re.I), timeout=30_000)
    assert sent, "the requests were recorded"
    assert {method for method, _, _ in sent} == {"GET"}, "a reader's browser only ever reads from the site"
    assert not [url for _, url, body in sent if MARKER in unquote(url) or MARKER in body]
    assert reader.other_origins(site_url) == []
    assert reader.violations() == []
