"""Offline reading in a reader's browser (the `reader` fixture: service workers on, the policy enforced): once a
visit has used a live figure, the footer says the site is available offline, and with the server gone the pages read
come back, their sandboxes go live and their code cells run.

The site is served from a copy (hard links) by a server of this test's own, which the test stops: no request can
reach anything then, whatever the browser's idea of being offline.
"""

import pytest
from playwright.sync_api import expect

from support import serve_copy

pytestmark = pytest.mark.browser

BOOT_TIMEOUT_MS = 90_000
LESSON = "lessons/try-it-yourself/"


@pytest.fixture
def own_site(built_site, tmp_path):
    server = serve_copy(built_site, tmp_path / "site")
    yield server
    server.close()


def goes_live(page) -> None:
    figure = page.locator("figure.sandbox").first
    figure.scroll_into_view_if_needed()
    expect(figure).to_have_attribute("data-state", "live", timeout=BOOT_TIMEOUT_MS)


def test_a_second_visit_works_with_the_server_gone(reader, own_site):
    page = reader.page
    note = page.locator("[data-explainer-offline]")
    page.goto(own_site.url + LESSON)
    expect(note).to_be_hidden()
    goes_live(page)
    expect(note).to_be_visible(timeout=BOOT_TIMEOUT_MS)  # the runtime is kept once it has booted
    page.goto(own_site.url)
    expect(note).to_be_visible()
    own_site.close()

    page.goto(own_site.url + LESSON)
    goes_live(page)
    cell = page.locator(".cell").first
    cell.scroll_into_view_if_needed()
    expect(cell).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
    cell.locator(".cell__run").click()
    expect(cell).to_have_attribute("data-state", "done", timeout=BOOT_TIMEOUT_MS)
    expect(note).to_be_visible()
    page.goto(own_site.url)
    expect(page.locator("h1").first).to_be_visible()
    assert reader.violations() == []
    assert reader.console_errors == []
