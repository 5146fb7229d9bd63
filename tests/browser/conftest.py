"""Serve the built site on 127.0.0.1 and drive it with Debian's Chromium through Playwright.

Every test gets a fresh browser profile. Requests to any other origin are aborted (the tests never touch the network)
and recorded, so a test can assert that a page asked for nothing outside the site.
"""

import shutil
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import sync_playwright

from support import CHROMIUM_FLAGS



@pytest.fixture(scope="session")
def site_url(built_site, site_server):
    """Base URL of the built site."""
    return site_server.url


@pytest.fixture(scope="session")
def playwright_instance():
    with sync_playwright() as playwright:
        yield playwright


@dataclass
class BrowserSession:
    """A page plus everything it reported: console errors, uncaught exceptions, requests to other origins."""

    page: object
    console_errors: list = field(default_factory=list)
    off_origin_requests: list = field(default_factory=list)

    def assert_clean(self):
        assert not self.console_errors, f"console errors: {self.console_errors}"
        assert not self.off_origin_requests, f"requests to other origins: {self.off_origin_requests}"


@pytest.fixture
def browser(playwright_instance, site_url, tmp_path):
    """A fresh Chromium profile with one open page, guarded against network access outside the site."""
    executable = shutil.which("chromium")
    assert executable, "Debian chromium is not installed: run `make test`, which installs it"
    context = playwright_instance.chromium.launch_persistent_context(
        str(tmp_path / "profile"),
        executable_path=executable,
        headless=True,
        args=CHROMIUM_FLAGS,
        viewport={"width": 1280, "height": 900},
    )
    page = context.pages[0] if context.pages else context.new_page()
    session = BrowserSession(page)
    site_origin = urlsplit(site_url).netloc

    def guard(route):
        url = urlsplit(route.request.url)
        if url.scheme in ("http", "https") and url.netloc != site_origin:
            session.off_origin_requests.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    context.route("**/*", guard)
    page.on("console", lambda message: message.type == "error" and session.console_errors.append(message.text))
    page.on("pageerror", lambda error: session.console_errors.append(str(error)))
    yield session
    context.close()


@pytest.fixture(scope="module")
def test_page(built_site):
    """Put a page of a test's own into the built site for one module: `test_page(name, html)` returns its path from
    the site root; the page is removed afterwards, so the site tests that read every page see only the site's."""
    written = []

    def place(name: str, html: str) -> str:
        (built_site / name).write_text(html, encoding="utf-8")
        written.append(built_site / name)
        return name

    yield place
    for path in written:
        path.unlink(missing_ok=True)
