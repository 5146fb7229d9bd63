"""The training lab in Chromium on the real runtime (offline Pyodide 0.27.7, the site's own worker): a run draws its
curve chunk by chunk and ends with generations; Stop halts the worker within one chunk and the curve stays; a
sandbox on the same page answers during a run, and a code cell runs in between; changing a setting stops the run and
shows that setting's reference; leaving the page stops the run and coming back shows the run completed before; the
browser's losses are CPython's.

A page written from the Markdown blocks (a trainer and a sandbox) is placed into the built site, so it uses the
site's own browser files, runtime and static views; the navigation test uses the lesson page itself.
"""

import json

import markdown
import numpy as np
import pytest

from build_scripts.markdown._page import PageContext, on_page
from explainer import live
from support import BOOT_TIMEOUT_MS, PROJECT_ROOT

pytestmark = pytest.mark.browser

RUN_TIMEOUT_MS = 120_000
STOP_WITHIN_MS = 250  # Stop halts the worker within one chunk (explainer.streams.train.CHUNK_SECONDS is 0.1 s)
AXE = PROJECT_ROOT / "node_modules/axe-core/axe.min.js"
SMALLEST = {"depth": 1, "steps": 20}
LONG = {"depth": 2, "steps": 600}

MARKDOWN = """
/// trainer
///

/// sandbox | ablation_lab
///
"""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Trainer</title>
<link rel="stylesheet" href="assets/explainer/sandbox.css"><link rel="stylesheet" href="assets/explainer/trainer.css">
</head><body><main>%s</main>
<script src="assets/explainer/render.js"></script><script src="assets/explainer/protocol.js"></script>
<script src="assets/explainer/runtime.js"></script><script src="assets/explainer/page.js"></script>
<script src="assets/explainer/sandbox.js"></script>
<script src="assets/explainer/trainer.js"></script>
<script>
  // What the reader saw change: each counter text and each figure drawn in the lab.
  window.seen = {counters: [], figures: 0};
  new MutationObserver(() => {
    const text = document.querySelector('.trainer__counter').textContent;
    if (text && window.seen.counters.at(-1) !== text) window.seen.counters.push(text);
  }).observe(document.querySelector('.trainer__counter'), {childList: true, characterData: true, subtree: true});
  new MutationObserver(() => { window.seen.figures += 1; })
    .observe(document.querySelector('.trainer__figure'), {childList: true, subtree: true});
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def lab_page(test_page):
    with on_page(PageContext(to_site_root="")):  # the page sits at the site root
        body = markdown.markdown(MARKDOWN, extensions=["build_scripts.markdown.trainer",
                                                       "build_scripts.markdown.sandbox"])
    return test_page("trainer-test.html", PAGE % body)


def slide(slider, value) -> None:
    """Move a range input to `value` with the input event a reader's drag sends."""
    slider.evaluate("(input, value) => { input.value = value; "
                    "input.dispatchEvent(new Event('input', {bubbles: true})); }", str(value))


def choose(page, settings: dict) -> None:
    """Set the lab's controls the way a reader does: each one changed, with its input event."""
    for name, value in settings.items():
        control = page.locator(f"figure.trainer .sandbox__control[data-param={name}]")
        if isinstance(value, bool):
            box = control.locator("input")
            if box.is_checked() != value:
                box.click()
        elif control.locator("select").count():
            control.locator("select").select_option(str(value))
        else:
            slide(control.locator("input"), value)


def lab(page):
    return page.locator("figure.trainer")


def state(page) -> str:
    return lab(page).get_attribute("data-state")


def wait_state(page, wanted: str, timeout: int = RUN_TIMEOUT_MS) -> None:
    page.wait_for_function("s => document.querySelector('figure.trainer').dataset.state === s", arg=wanted,
                           timeout=timeout)


def wait_chunks(page, count: int) -> None:
    page.wait_for_function("n => Number(document.querySelector('figure.trainer').dataset.chunks) >= n", arg=count,
                           timeout=BOOT_TIMEOUT_MS + RUN_TIMEOUT_MS)


def open_lab(page, url: str) -> None:
    page.goto(url)
    lab(page).get_by_role("button", name="Train").wait_for()
    page.wait_for_function("ExplainerRuntime.state === 'ready'", timeout=BOOT_TIMEOUT_MS)  # near the viewport: boots


def train(page, settings: dict, chunks: int = 0) -> None:
    """Choose the settings, press Train and wait for `chunks` chunks of the run to be drawn."""
    choose(page, settings)
    lab(page).get_by_role("button", name="Train").click()
    if chunks:
        wait_chunks(page, int(lab(page).get_attribute("data-chunks")) + chunks)


def test_a_short_run_draws_its_curve_as_it_goes_and_ends_with_generations_and_its_numbers(browser, site_url, lab_page):
    page = browser.page
    open_lab(page, site_url + lab_page)
    train(page, SMALLEST)
    wait_state(page, "done")
    seen = page.evaluate("window.seen")
    assert len(seen["counters"]) >= 3 and seen["figures"] >= 3, seen
    assert seen["counters"][-1] == "Step 20 of 20"
    assert any("steps/s" in text for text in seen["counters"]), seen["counters"]
    assert lab(page).locator(".trainer__progress").evaluate("bar => [bar.value, bar.max]") == [20, 20]
    results = lab(page).locator(".trainer__results")
    assert results.locator("th", has_text="your run (20 steps)").count() == 1
    samples = results.locator(".trainer__sample-list li")
    assert samples.count() == 4
    assert samples.first.locator(".trainer__letter").count() == 5, "every letter of the answer is marked"
    assert results.locator(".trainer__letter--right, .trainer__letter--wrong").count() == 20
    svg = lab(page).locator(".trainer__live svg")
    assert svg.locator("[data-mark=line]").count() == 3, "chance, training, validation (no depth-1 run at build)"
    assert "validation loss" in svg.get_attribute("aria-label")
    assert page.evaluate("performance.getEntriesByType('measure').some(m => m.name.startsWith("
                         "'explainer:trainer:first-point'))")
    browser.assert_clean()


def test_stop_halts_the_worker_within_a_chunk_and_the_curve_so_far_stays(browser, site_url, lab_page):
    page = browser.page
    open_lab(page, site_url + lab_page)
    train(page, LONG, chunks=3)
    lab(page).get_by_role("button", name="Stop").click()
    drawn = lab(page).locator(".trainer__live").inner_html()
    chunks = lab(page).get_attribute("data-chunks")
    assert state(page) == "stopped"
    page.wait_for_function("document.querySelector('figure.trainer').dataset.halted !== undefined", timeout=10_000)
    halted = int(lab(page).get_attribute("data-halted"))
    assert halted <= STOP_WITHIN_MS, f"the worker went on for {halted} ms after Stop"
    # The worker is free: a render goes through, and nothing more of the run arrives.
    page.evaluate("ExplainerRuntime.call('render', {sandbox: 'projection_shadow', params: {}}).reply")
    assert lab(page).get_attribute("data-chunks") == chunks
    assert lab(page).locator(".trainer__live").inner_html() == drawn, "the curve so far stays"
    stopped_at = lab(page).get_attribute("data-stopped-at")
    assert f"Stopped at step {stopped_at} of 600" in lab(page).locator(".trainer__status").inner_text()
    assert lab(page).get_by_role("button", name="Train").is_enabled()
    assert lab(page).get_by_role("button", name="Stop").is_disabled()
    browser.assert_clean()


def test_a_sandbox_on_the_page_answers_during_a_run(browser, site_url, lab_page):
    page = browser.page
    open_lab(page, site_url + lab_page)
    sandbox = page.locator("figure.sandbox")
    sandbox.scroll_into_view_if_needed()
    page.wait_for_function("document.querySelector('figure.sandbox').dataset.state === 'live'",
                           timeout=BOOT_TIMEOUT_MS)
    train(page, LONG, chunks=2)
    for depth in (3, 5, 7):
        renders = int(sandbox.get_attribute("data-renders"))
        slide(sandbox.locator(".sandbox__control[data-param=depth] input"), depth)
        page.wait_for_function("n => Number(document.querySelector('figure.sandbox').dataset.renders) > n",
                               arg=renders, timeout=10_000)
        assert state(page) == "training", "the sandbox answered while the run went on"
    chunks = int(lab(page).get_attribute("data-chunks"))
    wait_chunks(page, chunks + 1)
    lab(page).get_by_role("button", name="Stop").click()
    browser.assert_clean()


def test_a_code_cell_and_a_run_share_the_worker(browser, site_url, lab_page):
    page = browser.page
    open_lab(page, site_url + lab_page)
    train(page, LONG, chunks=2)
    # A cell holds the worker for a second (one synchronous call); the run waits for it, then goes on.
    reply = page.evaluate("""() => ExplainerRuntime.call('run', {code: 'import time\\ntime.sleep(1)\\n6 * 7',
                                                                session: 'trainer-test'}, {timeoutMs: 30000}).reply""")
    assert reply["ok"] and reply["value"]["result"] == "42", reply
    assert state(page) == "training", "the run was not stopped for the cell's work"
    train_after = int(lab(page).get_attribute("data-chunks"))
    wait_chunks(page, train_after + 2)
    lab(page).get_by_role("button", name="Stop").click()
    browser.assert_clean()


def test_changing_a_setting_during_a_run_stops_it_and_shows_that_settings_reference(browser, site_url, lab_page):
    page = browser.page
    open_lab(page, site_url + lab_page)
    train(page, LONG, chunks=2)
    choose(page, {"residual": False})
    page.wait_for_function("document.querySelector('figure.trainer').dataset.halted !== undefined", timeout=10_000)
    wait_state(page, "ready")
    svg = lab(page).locator(".trainer__live svg")
    assert "no residual" in svg.get_attribute("aria-label")
    legend = svg.inner_html()
    assert "build time: validation" in legend and ">validation<" not in legend, "the reference alone"
    assert "build time, seed 0 (600 steps)" in lab(page).locator(".trainer__results").inner_text()
    browser.assert_clean()


def test_the_browser_run_reproduces_cpython_losses(browser, site_url, lab_page):
    page = browser.page
    open_lab(page, site_url + lab_page)
    settings = {"depth": 2, "steps": 40, "seed": 2, "positional": "sinusoidal", "norm": "layernorm-post"}
    reply = page.evaluate("""settings => ExplainerRuntime.call('stream', {name: 'train', args: {settings}},
                                                            {idleTimeoutMs: 60000}).reply""", settings)
    assert reply["ok"], reply
    in_browser = reply["value"]
    handle = json.loads(live.open_stream("train", json.dumps({"settings": settings})))["handle"]
    while "progress" in (step := json.loads(live.step_stream(handle))):
        pass
    in_cpython = step["done"]
    for key in ("losses", "val_losses"):
        np.testing.assert_allclose(in_browser["curve"][key], in_cpython["curve"][key], rtol=1e-7, err_msg=key)
    assert in_browser["curve"]["val_steps"] == in_cpython["curve"]["val_steps"] == [0, 40]
    assert in_browser["result"]["samples"] == in_cpython["result"]["samples"]
    browser.assert_clean()


def test_the_finished_lab_passes_axe_in_light_and_dark(browser, site_url, lab_page):
    page = browser.page
    open_lab(page, site_url + lab_page)
    train(page, SMALLEST)
    wait_state(page, "done")
    page.add_script_tag(path=str(AXE))
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        violations = page.evaluate("""async () => (await axe.run(document.querySelector('figure.trainer'),
            {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})).violations
            .filter(v => ['serious', 'critical'].includes(v.impact)).map(v => [v.id, v.nodes.map(n => n.target)])""")
        assert not violations, (scheme, violations)
    browser.assert_clean()


def test_leaving_the_page_stops_the_run_and_coming_back_shows_the_run_completed_before(browser, site_url):
    page = browser.page
    page.goto(site_url + "lessons/ablation-experiment/")
    quiz = page.locator("form.quiz[data-predict-trainer]")  # the lab waits for the reader's prediction
    quiz.locator(".quiz__label").first.click()
    quiz.locator(".quiz__check").click()
    lab(page).scroll_into_view_if_needed()
    page.wait_for_function("ExplainerRuntime.state === 'ready'", timeout=BOOT_TIMEOUT_MS)
    train(page, SMALLEST)
    wait_state(page, "done")
    completed = lab(page).locator(".trainer__results").inner_html()
    train(page, {"steps": 600}, chunks=2)

    page.evaluate("window.__sameDocument = true")
    page.locator("a.md-header__button.md-logo").click()  # home, by instant navigation
    page.wait_for_url(site_url)
    page.locator("article h1").wait_for()
    # The run is cancelled: the worker is asked for nothing more than the cancel itself, which it answers.
    page.wait_for_function("ExplainerRuntime.calls.size === 0", timeout=10_000)

    page.go_back()
    page.wait_for_url("**/lessons/ablation-experiment/")
    lab(page).get_by_role("button", name="Train").wait_for()
    assert page.evaluate("window.__sameDocument === true"), "navigation reloaded the page"
    steps = lab(page).locator(".sandbox__control[data-param=steps] input")
    assert steps.input_value() == "600", "the settings of this visit come back"
    choose(page, {"steps": 20})
    wait_state(page, "done", timeout=10_000)
    assert lab(page).locator(".trainer__results").inner_html() == completed
    assert lab(page).locator(".trainer__counter").inner_text() == "Step 20 of 20"
    browser.assert_clean()
