"""Every byte of the runtime is checked, and every way the boot can fail is named, in Chromium on the built site.

- A tampered file (our wheel, numpy, the standard library, the lock) served by the site is refused with one sentence
  naming it; the static figure stays; Retry asks once per press and recovers once the file is right again.
- Each boot step failing in turn (pyodide.js, pyodide.asm.js, the wasm, the stdlib, the lock, numpy, our wheel,
  worker.js) and a render that crashes the worker: the static figure stays, the message names the file, Retry
  recovers once the fault is gone, and the other sandboxes of the page follow by themselves.

Every request here is routed (so Playwright keeps the HTTP cache off, see `uncached`) and the `browser` fixture
blocks service workers: each attempt reaches the server, whose request log counts them.
"""

import json

import pytest
from playwright.sync_api import expect

from build_scripts.site_runtime import ASSET_DIR
from support import BOOT_TIMEOUT_MS, elements_by_page, wait_until

pytestmark = pytest.mark.browser

NUMPY = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"


def page_with_most_sandboxes(built_site) -> tuple[str, list[str]]:
    pages = elements_by_page(built_site, "figure", "sandbox", "id")
    return max(pages.items(), key=lambda item: len(item[1]))


def want_all(page, ids: list[str]) -> None:
    """Bring every sandbox near the viewport once (each starts wanting the runtime)."""
    for figure_id in ids:
        page.locator(f"#{figure_id}").scroll_into_view_if_needed()


def state(page, figure_id: str, wanted: str, timeout: int = BOOT_TIMEOUT_MS) -> None:
    expect(page.locator(f"#{figure_id}")).to_have_attribute("data-state", wanted, timeout=timeout)


def status(page, figure_id: str) -> str:
    return page.locator(f"#{figure_id} .sandbox__status").inner_text()


def assert_failed_with(page, ids: list[str], sentence: str) -> None:
    """Every sandbox of the page is in error with the same sentence, its static figure on show, Retry offered."""
    for figure_id in ids:
        state(page, figure_id, "error")
        assert status(page, figure_id) == sentence, figure_id
        assert page.locator(f"#{figure_id} .sandbox__static").is_visible()
        assert page.locator(f"#{figure_id} .sandbox__retry").is_visible()


def retry_and_all_go_live(page, ids: list[str]) -> None:
    page.locator(f"#{ids[0]} .sandbox__retry").click()
    for figure_id in ids:  # the one pressed, and the others by themselves
        state(page, figure_id, "live")


@pytest.fixture(autouse=True)
def uncached(browser):
    """Route every request through unchanged: Playwright turns the HTTP cache off while a route is set, so a retry
    downloads again and the server's log counts each attempt."""
    browser.page.context.route("**/*", lambda route: route.continue_())


@pytest.fixture
def worker_messages(browser) -> list[str]:
    """What the workers printed: Pyodide tells its own story of a failed boot there, which is not the page's error."""
    printed = []
    browser.page.on("console", lambda message: message.worker and printed.append(message.text))
    return printed


def assert_clean_but(browser, worker_messages: list[str], *expected: str) -> None:
    """No console error but the browser's own report of the failures the test caused (a refused download) and what
    the worker printed about them."""
    browser.console_errors[:] = [error for error in browser.console_errors if error not in worker_messages and not any(
        word in error for word in (*expected, "Failed to load resource", "Failed to fetch", "integrity"))]
    browser.assert_clean()


def manifest_path(built_site, entry: str, default: str) -> str:
    """The URL path of a file runtime.json names (`entry`: stdlib, lock, numpy, wheel); `default`, a file name under
    Pyodide's folder, where the build made no file of its own for it."""
    manifest = json.loads((built_site / ASSET_DIR / "runtime.json").read_text())
    url = manifest[entry]["url"] if manifest[entry] else manifest["pyodide"]["indexURL"] + default
    return "/" + (built_site / ASSET_DIR / url).resolve().relative_to(built_site.resolve()).as_posix()


# ---- tampered files -------------------------------------------------------------------------------------------------


def tampered(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x55]) + data[middle + 1:]


TAMPERED = {
    "explainer": ("the explainer package did not match its checksum (explainer-0.1.0-py3-none-any.whl), so it was "
                  "not used"),
    "numpy": f"numpy did not match its checksum ({NUMPY}), so it was not used",
    "stdlib": "the Python runtime did not match its checksum (python_stdlib.zip), so it was not used",
    "lock": "the Python runtime did not match its checksum (pyodide-lock.json), so it was not used",
}
MANIFEST_ENTRIES = {"explainer": ("wheel", None), "numpy": ("numpy", NUMPY), "stdlib": ("stdlib", "python_stdlib.zip"),
                    "lock": ("lock", "pyodide-lock.json")}


@pytest.mark.parametrize("which", sorted(TAMPERED))
def test_a_tampered_file_is_refused_in_one_sentence_and_retry_asks_once_per_press(
        browser, worker_messages, site_url, built_site, site_server, which):
    path = manifest_path(built_site, *MANIFEST_ENTRIES[which])
    page = browser.page
    lesson, ids = page_with_most_sandboxes(built_site)
    site_server.replaced[path] = tampered((built_site / path.lstrip("/")).read_bytes())
    try:
        page.goto(site_url + lesson)
        want_all(page, ids)
        sentence = f"The live version could not start: {TAMPERED[which]}. The static figure stays."
        assert_failed_with(page, ids, sentence)
        settled = site_server.served(path)
        assert settled >= 1
        for _ in range(2):  # each press asks again; nothing asks by itself in between
            page.locator(f"#{ids[0]} .sandbox__retry").click()
            wait_until(lambda: site_server.served(path) > settled, page, "no new request", BOOT_TIMEOUT_MS)
            assert_failed_with(page, ids, sentence)
            attempts, settled = site_server.served(path) - settled, site_server.served(path)
            assert 1 <= attempts <= 2, f"one download per press (and one to learn why it failed), not {attempts}"
    finally:
        del site_server.replaced[path]
    retry_and_all_go_live(page, ids)
    assert page.evaluate("ExplainerRuntime.state") == "ready"
    assert_clean_but(browser, worker_messages, path.rsplit("/", 1)[-1])


# ---- each boot step failing in turn ---------------------------------------------------------------------------------

RUNTIME = "the Python runtime could not be downloaded"
STEPS = {
    # name: (URL glob, how it fails, the reason the page gives)
    "pyodide.js": ("**/assets/pyodide/0.27.7/pyodide.js", 503, f"{RUNTIME}: pyodide.js answered HTTP 503"),
    "pyodide.asm.js": ("**/pyodide.asm.js", 404, f"{RUNTIME}: pyodide.asm.js answered HTTP 404"),
    "pyodide.asm.wasm": ("**/pyodide.asm.wasm", "abort", f"{RUNTIME}: pyodide.asm.wasm got no answer"),
    "python_stdlib.zip": ("**/python_stdlib.zip", 500, f"{RUNTIME}: python_stdlib.zip answered HTTP 500"),
    "pyodide-lock.json": ("**/pyodide-lock.json", 404, f"{RUNTIME}: pyodide-lock.json answered HTTP 404"),
    "numpy": (f"**/{NUMPY}", 503, f"numpy could not be downloaded: {NUMPY} answered HTTP 503"),
    "explainer wheel": ("**/explainer-*.whl", 404,
                        "the explainer package could not be downloaded: explainer-0.1.0-py3-none-any.whl answered "
                        "HTTP 404"),
    "worker.js": (f"**/{ASSET_DIR}/worker.js", 404, "the worker script (worker.js) could not be loaded"),
}


@pytest.mark.parametrize("step", list(STEPS))
def test_a_failing_boot_step_is_named_and_retry_recovers_once_it_is_fixed(browser, worker_messages, site_url,
                                                                          built_site, step):
    pattern, failure, reason = STEPS[step]
    page = browser.page
    lesson, ids = page_with_most_sandboxes(built_site)
    assert len(ids) >= 2, "the other sandboxes of the page must follow"

    def fail(route):
        if failure == "abort":
            route.abort("connectionreset")
        else:
            route.fulfill(status=failure, body="not here")

    page.route(pattern, fail)
    page.goto(site_url + lesson)
    want_all(page, ids)
    assert_failed_with(page, ids, f"The live version could not start: {reason}. The static figure stays.")
    page.unroute(pattern, fail)
    retry_and_all_go_live(page, ids)
    assert_clean_but(browser, worker_messages, pattern.rsplit("/", 1)[-1].replace("*", ""))


def test_a_render_that_crashes_the_worker_leaves_its_figure_and_the_others_redraw(browser, worker_messages, site_url,
                                                                                 built_site):
    page = browser.page
    lesson, ids = page_with_most_sandboxes(built_site)
    culprit, other = ids[0], ids[1]
    page.goto(site_url + lesson)
    slider = page.locator(f"#{culprit} input[type=range]:not([disabled])").first
    name, maximum = slider.get_attribute("name"), slider.get_attribute("max")
    # The fault: the first worker's Python dies (as Pyodide does after a fatal error) on a render at that value.
    worker_source = (built_site / ASSET_DIR / "worker.js").read_text()
    crash = (f"\nconst realRender = HANDLERS[OPS.RENDER];\nHANDLERS[OPS.RENDER] = (id, args) => {{\n"
             f"  if (Number(args.params[{name!r}]) === {float(maximum)}) throw new Error('Pyodide has suffered a "
             f"fatal error. Please report this to the Pyodide maintainers.');\n  return realRender(id, args);\n}};\n")
    served = []

    def crashing_once(route):
        served.append(route.request.url)
        if len(served) == 1:
            route.fulfill(status=200, content_type="text/javascript", body=worker_source + crash)
        else:
            route.continue_()  # the fault is gone: later workers are the real one

    page.route(f"**/{ASSET_DIR}/worker.js", crashing_once)
    page.reload()
    for figure_id in ids:
        page.locator(f"#{figure_id}").scroll_into_view_if_needed()
        state(page, figure_id, "live")
    renders_before = int(page.locator(f"#{other}").get_attribute("data-renders"))
    slider.focus()
    slider.press("End")
    state(page, culprit, "error")
    assert status(page, culprit) == ("The live version stopped: Python crashed (Pyodide has suffered a fatal error). "
                                     "Change a control or press Retry to start it again; the last figure stays.")
    assert page.locator(f"#{culprit} svg").count() >= 1, "the last live figure stays"
    expect(page.locator(f"#{other}")).to_have_attribute("data-renders", str(renders_before + 1),
                                                        timeout=BOOT_TIMEOUT_MS)
    state(page, other, "live")  # the other sandbox drew again on a fresh worker, by itself
    page.locator(f"#{culprit} .sandbox__retry").click()
    state(page, culprit, "live")
    assert len(served) == 2, "one fresh worker, the real one"
    assert_clean_but(browser, worker_messages, "fatal error")
