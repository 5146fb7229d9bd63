"""Every sandbox of the built site goes live in Chromium on the offline Pyodide 0.27.7 and answers every control.

The site is the project's own `mkdocs build --strict`, with the runtime in self-host mode, served on 127.0.0.1;
nothing is faked: the worker boots Pyodide, loads numpy from the Pyodide lock and installs our wheel by its sha256.
"""

import re

import pytest

from support import BOOT_TIMEOUT_MS, elements_by_page, visit

pytestmark = pytest.mark.browser

UPDATE_TIMEOUT_MS = 15_000
PYODIDE_FILES = re.compile(r"/assets/pyodide/|/assets/explainer/(boot\.js|worker\.js|runtime\.json|wheels/|runtime/)")


def pages_with_sandboxes(built_site) -> dict[str, list[str]]:
    """Each page that has sandboxes (its path from the site root) with each sandbox's element id, in page order."""
    return elements_by_page(built_site, "figure", "sandbox", "id")


def record_requests(page) -> list[str]:
    urls = []
    page.on("request", lambda request: urls.append(request.url))
    return urls


def wait_live(page, figure_id: str, timeout: int = BOOT_TIMEOUT_MS) -> None:
    figure = page.locator(f"#{figure_id}")
    figure.scroll_into_view_if_needed()
    page.wait_for_function(
        "id => document.getElementById(id)?.dataset.state === 'live'", arg=figure_id, timeout=timeout
    )
    assert figure.locator("svg").count() >= 1


def renders(page, figure_id: str) -> int:
    return int(page.locator(f"#{figure_id}").get_attribute("data-renders") or 0)


def drawing(page, figure_id: str) -> str:
    """What the reader sees change: the live SVG and the readouts under it."""
    figure = page.locator(f"#{figure_id}")
    return figure.locator("svg").first.inner_html() + figure.locator(".sandbox__readouts").inner_text()


def change_control(page, control) -> str:
    """Move one control to another valid value, the way a reader would; returns what was done."""
    kind = control.get_attribute("data-kind")
    name = control.get_attribute("data-param")
    if kind == "toggle":
        control.locator("input").click()
        return f"toggled {name}"
    if kind == "choice":
        select = control.locator("select")
        values = select.locator("option").evaluate_all("options => options.map(o => o.value)")
        other = next(v for v in values if v != select.input_value())
        select.select_option(other)
        return f"chose {name}={other}"
    slider = control.locator("input")
    slider.focus()
    at_max = slider.evaluate("s => Number(s.value) >= Number(s.max)")
    slider.press("Home" if at_max else "End")  # keyboard: the control must be operable without a mouse
    return f"moved {name} to its {'minimum' if at_max else 'maximum'}"


def test_every_sandbox_on_every_page_goes_live_and_answers_every_control(browser, site_url, built_site):
    pages = pages_with_sandboxes(built_site)
    assert pages, "no page of the site has a sandbox"
    page = browser.page
    for path, ids in pages.items():
        visit(page, site_url, path)  # page to page, one boot for the visit (each page's own load: test_site_shell)
        for figure_id in ids:
            wait_live(page, figure_id)
            controls = page.locator(f"#{figure_id} .sandbox__control")
            for index in range(controls.count()):
                control = controls.nth(index)
                if control.locator("[disabled]").count():
                    continue
                before, count = drawing(page, figure_id), renders(page, figure_id)
                action = change_control(page, control)
                page.wait_for_function(
                    "([id, n]) => Number(document.getElementById(id).dataset.renders) > n",
                    arg=[figure_id, count], timeout=UPDATE_TIMEOUT_MS,
                )
                page.wait_for_function("id => document.getElementById(id).dataset.state === 'live'", arg=figure_id)
                assert drawing(page, figure_id) != before, f"{path} #{figure_id}: the figure did not change when it {action}"
    browser.assert_clean()


def test_the_builds_view_drawn_first_is_what_pyodide_computes_for_the_starting_values(browser, site_url, built_site):
    # Each sandbox goes live with the view the build computed in CPython (its config's `start`); Pyodide, asked for
    # the same values, must send the same figure, label and readouts, or the first live figure would be another's.
    page = browser.page
    for path, ids in pages_with_sandboxes(built_site).items():
        visit(page, site_url, path)
        for figure_id in ids:
            wait_live(page, figure_id)
            page.wait_for_function("id => document.getElementById(id).dataset.computed === 'browser'",
                                   arg=figure_id, timeout=UPDATE_TIMEOUT_MS)
            differences = page.evaluate("""async (id) => {
                const root = document.getElementById(id);
                const config = JSON.parse(root.dataset.config);
                const {reply} = window.ExplainerRuntime.call("render", {sandbox: config.sandbox, params: config.params});
                const message = await reply;
                if (!message.ok) return [`the worker failed: ${message.error.message}`];
                return ["figure", "label", "readouts_html"].filter(
                    (key) => JSON.stringify(message.value[key]) !== JSON.stringify(config.start[key]));
            }""", figure_id)
            assert differences == [], f"{path} #{figure_id}: the build's view and Pyodide's differ in {differences}"
    browser.assert_clean()


def test_instant_navigation_between_lessons_boots_pyodide_once(browser, site_url, built_site):
    page = browser.page
    requests = record_requests(page)
    pages = list(pages_with_sandboxes(built_site).items())
    assert len(pages) >= 2, "need two pages with sandboxes"
    (first_path, first_ids), (second_path, second_ids) = pages[0], pages[1]
    page.goto(site_url + first_path)
    wait_live(page, first_ids[0])
    page.evaluate("window.__sameDocument = true")
    page.locator(f"a[href$='{second_path.split('/')[-2]}/']").first.click()
    page.wait_for_url(f"**/{second_path}")
    wait_live(page, second_ids[0])
    assert page.evaluate("window.__sameDocument === true"), "navigation reloaded the page"
    boots = [url for url in requests if url.endswith("/pyodide.asm.wasm")]
    workers = [url for url in requests if url.endswith("/worker.js")]
    assert len(boots) == 1 and len(workers) == 1, f"wasm fetched {len(boots)}×, worker {len(workers)}×"
    browser.assert_clean()


def test_a_page_with_a_sandbox_starts_its_worker_before_load_and_the_page_adopts_it(browser, site_url, built_site):
    page = browser.page
    requests = record_requests(page)
    path, ids = next(iter(pages_with_sandboxes(built_site).items()))
    page.goto(site_url + path)
    wait_live(page, ids[0])
    timing = page.evaluate("""() => ({
        start: performance.getEntriesByName("explainer:worker-start").map((mark) => mark.startTime),
        load: performance.getEntriesByType("navigation")[0].loadEventStart,
    })""")
    assert len(timing["start"]) == 1 and 0 < timing["start"][0] < timing["load"], timing
    # boot.js knew the manifest from the build: runtime.json is not fetched, and the one worker is the early one.
    ours = [worker.url for worker in page.workers if worker.url.endswith("/assets/explainer/worker.js")]
    assert len(ours) == 1 and [url for url in requests if url.endswith("/worker.js")] == ours, (ours, requests)
    assert not [url for url in requests if url.endswith("/runtime.json")]
    browser.assert_clean()


def test_a_page_without_sandboxes_requests_no_pyodide_file(browser, site_url, built_site):
    page = browser.page
    requests = record_requests(page)
    page.goto(site_url)
    page.wait_for_load_state("networkidle")
    page.mouse.wheel(0, 4000)
    page.wait_for_timeout(500)
    assert not [url for url in requests if PYODIDE_FILES.search(url)]
    browser.assert_clean()


def test_a_blocked_runtime_keeps_the_static_figure_says_why_and_retry_recovers(browser, site_url, built_site):
    page = browser.page
    path, ids = next(iter(pages_with_sandboxes(built_site).items()))
    blocked = lambda route: route.abort()  # noqa: E731
    page.route("**/assets/pyodide/**", blocked)
    page.goto(site_url + path)
    figure = page.locator(f"#{ids[0]}")
    figure.scroll_into_view_if_needed()
    page.wait_for_function("id => document.getElementById(id).dataset.state === 'error'", arg=ids[0],
                           timeout=BOOT_TIMEOUT_MS)
    assert figure.locator(".sandbox__static").is_visible()
    status = figure.locator(".sandbox__status").inner_text()
    assert re.search(r"(runtime|Pyodide)", status, re.I), status
    retry = figure.get_by_role("button", name=re.compile("Retry", re.I))
    assert retry.is_visible()
    page.unroute("**/assets/pyodide/**", blocked)
    retry.click()
    wait_live(page, ids[0])
    # The failed fetches are the point of this test; what must not appear is any other error.
    browser.console_errors[:] = [e for e in browser.console_errors if "pyodide" not in e.lower()
                                 and "Failed to load resource" not in e]
    browser.assert_clean()


def test_a_bad_value_forced_into_a_control_shows_an_inline_error_and_the_sandbox_keeps_working(
    browser, site_url, built_site
):
    page = browser.page
    path, ids = next(iter(pages_with_sandboxes(built_site).items()))
    page.goto(site_url + path)
    figure_id = ids[0]
    wait_live(page, figure_id)
    slider = page.locator(f"#{figure_id} input[type=range]:not([disabled])").first
    name, maximum = slider.get_attribute("name"), slider.get_attribute("max")
    # What a tampered page (or a bug) could send: a value the declaration does not allow.
    slider.evaluate("s => { s.removeAttribute('max'); s.value = '100000'; s.dispatchEvent(new Event('input', "
                    "{bubbles: true})); }")
    alert = page.locator(f"#{figure_id} [role=alert]")
    alert.wait_for(timeout=UPDATE_TIMEOUT_MS)
    assert name in alert.inner_text() and "between" in alert.inner_text()
    assert page.locator(f"#{figure_id} svg").count() >= 1, "the last good figure must stay"
    count = renders(page, figure_id)
    slider.evaluate("(s, max) => s.setAttribute('max', max)", maximum)
    slider.focus()
    slider.press("Home")
    page.wait_for_function("([id, n]) => Number(document.getElementById(id).dataset.renders) > n",
                           arg=[figure_id, count], timeout=UPDATE_TIMEOUT_MS)
    assert alert.count() == 0 or not alert.is_visible()
    browser.assert_clean()
