"""Serve the built site on 127.0.0.1 and drive it with Debian's Chromium through Playwright.

Every test gets a fresh browser profile. Chromium sends every request outside the loopback address to a proxy that is
not there (support.launch_chromium), so the tests never touch the network; `browser` records requests to other
origins, so a test can assert that a page asked for nothing outside the site.

`browser` is a test harness: service workers are blocked (a request is then always the page's own, which
`page.route` sees) and the pages' Content-Security-Policy is bypassed (Playwright's wait_for_function evaluates its
predicate as a string, which the policy forbids). It routes nothing by itself, so the HTTP cache works as a reader's
does until a test routes a request (Playwright then turns the cache off). `reader` is a browser as a reader has it:
service workers on, the policy enforced; tests using it wait with `expect` and plain evaluations
(tests/browser/test_offline.py, test_security.py, test_addresses.py).
"""

import contextlib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import sync_playwright

from support import launch_chromium


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
    with guarded_session(playwright_instance, site_url, tmp_path / "profile") as session:
        yield session


@pytest.fixture(scope="module")
def module_browser(playwright_instance, site_url, tmp_path_factory):
    """`browser`, shared by the tests of one module: for checks that read pages and change nothing."""
    with guarded_session(playwright_instance, site_url, tmp_path_factory.mktemp("module-browser")) as session:
        yield session


@contextlib.contextmanager
def guarded_session(playwright_instance, site_url, profile):
    """A BrowserSession on a fresh profile in `profile`: service workers blocked, the policy bypassed, requests to
    other origins recorded (the proxy of launch_chromium refuses them), console errors collected; closed on exit.

    It watches requests instead of routing them: a route on every request turned the HTTP cache off and sent each
    request through this process, so every page a test opened downloaded and compiled Pyodide again (the axe test,
    the every-sandbox test and test_site_shell took 207 s routed, 159 s watched)."""
    context = launch_chromium(playwright_instance, profile, service_workers="block", bypass_csp=True)
    page = context.pages[0] if context.pages else context.new_page()
    session = BrowserSession(page)
    site_origin = urlsplit(site_url).netloc

    def record(request):
        url = urlsplit(request.url)
        if url.scheme in ("http", "https") and url.netloc != site_origin:
            session.off_origin_requests.append(request.url)

    context.on("request", record)
    page.on("console", lambda message: message.type == "error" and session.console_errors.append(message.text))
    page.on("pageerror", lambda error: session.console_errors.append(str(error)))
    try:
        yield session
    finally:
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


# Collects the page's Content-Security-Policy violations (injected by Playwright, so the policy does not apply to it).
CSP_LISTENER = """window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => window.__violations.push(
  `${event.violatedDirective}: ${event.blockedURI || "inline"} ${event.sample || ""}`.trim()));"""


@dataclass
class Reader:
    """A browser as a reader has it; `requests` holds every request the context saw (pages, workers, service
    worker), `violations()` the current page's Content-Security-Policy violations."""

    context: object
    page: object
    requests: list = field(default_factory=list)
    console_errors: list = field(default_factory=list)

    def violations(self) -> list[str]:
        return self.page.evaluate("window.__violations")

    def other_origins(self, site: str) -> list[str]:
        return [url for url in self.requests if urlsplit(url).scheme in ("http", "https")
                and urlsplit(url).netloc != urlsplit(site).netloc]


@pytest.fixture
def reader(playwright_instance, tmp_path):
    """A fresh Chromium profile as a reader's: service workers allowed, the pages' policy enforced, nothing routed."""
    context = launch_chromium(playwright_instance, tmp_path / "reader-profile", service_workers="allow")
    context.add_init_script(CSP_LISTENER)
    page = context.pages[0] if context.pages else context.new_page()
    session = Reader(context, page)
    context.on("request", lambda request: session.requests.append(request.url))
    page.on("console", lambda message: message.type == "error" and session.console_errors.append(message.text))
    page.on("pageerror", lambda error: session.console_errors.append(str(error)))
    yield session
    context.close()
