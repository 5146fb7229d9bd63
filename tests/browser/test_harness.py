"""The tests' own browser: nothing a page asks for leaves the loopback address, and `browser` records the asking."""

import pytest

pytestmark = pytest.mark.browser

# A host name and an IP address: the proxy stops both (a host-resolver rule would let the address through).
ELSEWHERE = ["https://fonts.googleapis.com/css?family=Roboto", "http://192.0.2.1/pixel.png"]


def test_a_request_to_another_origin_is_refused_by_the_proxy_and_recorded(browser, site_url):
    page = browser.page
    failures = {}
    page.on("requestfailed", lambda request: failures.setdefault(request.url, request.failure))
    page.goto(site_url)
    outcomes = page.evaluate("""(urls) => Promise.all(urls.map((url) => fetch(url, {mode: "no-cors"})
        .then(() => "answered", (error) => error.name)))""", ELSEWHERE)
    assert outcomes == ["TypeError", "TypeError"], "neither request may get an answer"
    assert failures == {url: "net::ERR_PROXY_CONNECTION_FAILED" for url in ELSEWHERE}, \
        "the proxy of NO_NETWORK_FLAGS refused them, not the machine's network"
    assert browser.off_origin_requests == ELSEWHERE
    browser.off_origin_requests.clear()
    browser.console_errors.clear()  # the browser reports each refused request
    browser.assert_clean()
