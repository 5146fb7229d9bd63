"""Predict, then run, in Chromium on the real runtime: the sandbox after a predict quiz stays locked until the reader
checks an answer; then it unlocks, moves to the values that answer the question, and the feedback quotes its live
readout. A page written from the Markdown blocks is placed into the built site, so it uses the site's own browser
files, runtime and static figures."""

import markdown
import pytest
from playwright.sync_api import expect

from build_scripts.markdown._page import PageContext, on_page
from support import BOOT_TIMEOUT_MS

pytestmark = pytest.mark.browser

TIMEOUT_MS = 30_000

MARKDOWN = """
/// quiz | Predict: what happens to the tokens without the residual add at depth 24?
predict:
  residual: false
  depth: 24
answers:
  - text: They become nearly indistinguishable.
    correct: true
    feedback: "Right: they now differ by {{ live: tokens still distinct }}."
  - text: Nothing changes.
    feedback: "Look again: {{ live: tokens still distinct }}."
///

/// sandbox | ablation_lab
///
"""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Predict</title>
<link rel="stylesheet" href="assets/explainer/sandbox.css"><link rel="stylesheet" href="assets/explainer/quiz.css">
</head><body><main>%s</main>
<script src="assets/explainer/render.js"></script><script src="assets/explainer/protocol.js"></script>
<script src="assets/explainer/runtime.js"></script><script src="assets/explainer/page.js"></script>
<script src="assets/explainer/sandbox.js"></script>
<script src="assets/explainer/quiz.js"></script>
</body></html>
"""


@pytest.fixture(scope="module")
def predict_page(test_page):
    with on_page(PageContext(to_site_root="")):  # the page sits at the site root
        body = markdown.markdown(MARKDOWN, extensions=["build_scripts.markdown.quiz", "build_scripts.markdown.sandbox"])
    return test_page("predict-test.html", PAGE % body)


def control_input(page, name: str):
    return page.locator(f"figure.sandbox .sandbox__control[data-param={name}] input")


def test_the_sandbox_unlocks_on_checking_moves_to_the_answer_and_the_feedback_quotes_it_live(browser, site_url,
                                                                                            predict_page):
    page = browser.page
    page.goto(site_url + predict_page)
    figure = page.locator("figure.sandbox")
    page.wait_for_function("document.querySelector('figure.sandbox').dataset.state === 'live'", timeout=BOOT_TIMEOUT_MS)
    assert figure.get_attribute("data-locked") == ""
    assert control_input(page, "depth").is_disabled() and control_input(page, "residual").is_disabled()
    assert page.locator(".quiz__predict-note").is_visible()
    renders = int(figure.get_attribute("data-renders"))

    page.locator(".quiz__answer[data-answer='2'] label").click()
    page.get_by_role("button", name="Check answer").click()
    assert figure.get_attribute("data-locked") is None and not control_input(page, "depth").is_disabled()
    assert not page.locator(".quiz__predict-note").is_visible()
    assert control_input(page, "depth").input_value() == "24" and not control_input(page, "residual").is_checked()
    assert page.locator("figure.sandbox output[for$=depth]").inner_text() == "24 layers"
    page.wait_for_function("(n) => Number(document.querySelector('figure.sandbox').dataset.renders) > n", arg=renders,
                           timeout=TIMEOUT_MS)
    page.wait_for_function("document.querySelector('figure.sandbox').dataset.state === 'live'", timeout=TIMEOUT_MS)
    live = figure.locator(".sandbox__readout", has_text="tokens still distinct").locator("dd").inner_text()
    quoted = page.locator(".quiz__answer[data-answer='2'] .quiz__live")
    assert quoted.is_visible() and quoted.inner_text() == live

    # The reader plays on: the quoted value follows the sandbox.
    control_input(page, "residual").check()
    page.wait_for_function(
        "(before) => { const dd = [...document.querySelectorAll('.sandbox__readout')].find((r) => "
        "r.querySelector('dt').textContent === 'tokens still distinct').querySelector('dd').textContent;"
        " return document.querySelector(\".quiz__answer[data-answer='2'] .quiz__live\").textContent === dd"
        " && dd !== before; }", arg=live, timeout=TIMEOUT_MS)

    # Coming back later in the visit: the quiz was answered, so the sandbox is unlocked at once.
    page.reload()
    page.locator(".quiz__check:visible").wait_for()
    assert figure.get_attribute("data-locked") is None and not control_input(page, "depth").is_disabled()
    browser.assert_clean()


def test_the_training_lab_after_a_predict_quiz_stays_locked_until_an_answer_then_takes_its_settings(browser, site_url):
    page = browser.page
    page.goto(site_url + "lessons/ablation-experiment/")
    quiz = page.locator("form.quiz[data-predict-trainer]")
    lab = page.locator("figure.trainer")
    expect(quiz).to_have_count(1)
    train = lab.locator(".trainer__train")
    settings = lab.locator(".sandbox__controls :is(input, select)")
    expect(quiz.locator(".quiz__predict-note")).to_be_visible()
    expect(train).to_be_disabled()
    assert settings.count() >= 7 and all(settings.nth(i).is_disabled() for i in range(settings.count()))
    expect(lab.locator("[data-param=positional] select")).to_have_value("rope")

    quiz.locator(".quiz__answer").nth(1).locator("input").check()
    quiz.locator(".quiz__check").click()
    expect(train).to_be_enabled()
    assert not any(settings.nth(i).is_disabled() for i in range(settings.count()))
    expect(lab.locator("[data-param=positional] select")).to_have_value("none")
    expect(lab.locator("[data-param=depth] input")).to_have_value("2")
    expect(lab.locator("[data-param=steps] input")).to_have_value("600")
    expect(quiz.locator(".quiz__predict-note")).to_be_hidden()

    page.reload()  # answered earlier in the visit: the lab comes back unlocked
    expect(page.locator("figure.trainer .trainer__train")).to_be_enabled()
    browser.assert_clean()
