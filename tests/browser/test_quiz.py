"""Quizzes of the built site in Chromium: checking marks answers and explains them, the keyboard alone suffices, and
the selection survives leaving the page and coming back (instant navigation and reload)."""

import re

import pytest

from support import elements_by_page, visit

pytestmark = pytest.mark.browser

WRONG = "Not quite — read the notes under your choices."


def pages_with_quizzes(built_site) -> dict[str, list[str]]:
    """Each page that has quizzes (its path from the site root) with the type of each quiz, in page order."""
    return elements_by_page(built_site, "form", "quiz", "data-quiz-type")


@pytest.fixture(scope="module", params=["single", "multiple"])
def quiz_page(request, built_site) -> tuple[str, int]:
    """The first page with a quiz of the given type, and that quiz's number (data-quiz)."""
    pages = pages_with_quizzes(built_site)
    assert pages, "no page of the site has a quiz: the lessons' `/// quiz` blocks are gone, or the block is broken"
    for path, types in pages.items():
        if request.param in types:
            return path, types.index(request.param) + 1
    pytest.skip(f"no page has a {request.param}-answer quiz")


def open_quiz(page, url: str, number: int):
    page.goto(url)
    quiz = page.locator(f"form.quiz[data-quiz='{number}']")
    quiz.scroll_into_view_if_needed()
    quiz.locator(".quiz__check:visible").wait_for()  # mounted
    return quiz


def answer_numbers(quiz) -> tuple[list[str], list[str]]:
    """The data-answer numbers of the right answers and of the wrong ones."""
    answers = quiz.locator(".quiz__answer")
    right = answers.evaluate_all("as => as.filter(a => a.dataset.correct === 'true').map(a => a.dataset.answer)")
    wrong = answers.evaluate_all("as => as.filter(a => a.dataset.correct !== 'true').map(a => a.dataset.answer)")
    return right, wrong


def answer(quiz, number: str):
    return quiz.locator(f".quiz__answer[data-answer='{number}']")


def shown(locator) -> bool:
    return locator.count() == 1 and locator.is_visible()


def chosen(quiz) -> list[str]:
    return quiz.locator(".quiz__input").evaluate_all("inputs => inputs.filter(i => i.checked).map(i => i.value)")


# ---- checking -------------------------------------------------------------------------------------------------------


def test_every_quiz_mounts_with_its_explanations_hidden_under_their_answers(browser, site_url, built_site):
    page = browser.page
    for path, types in pages_with_quizzes(built_site).items():
        visit(page, site_url, path)  # page to page: quiz.js mounts each page's quizzes on document$
        quizzes = page.locator("form.quiz")
        quizzes.last.locator(".quiz__check:visible").wait_for()
        assert quizzes.count() == len(types)
        assert page.locator(".quiz__key").count() == 0, "the no-JavaScript key should give way to the live quiz"
        for index, kind in enumerate(types):
            quiz = quizzes.nth(index)
            answers = quiz.locator(".quiz__answer")
            assert answers.count() >= 2
            assert quiz.locator(".quiz__answer > .quiz__feedback").count() == answers.count()
            assert quiz.locator(".quiz__feedback:visible, .quiz__verdict:visible").count() == 0
            expected = "radio" if kind == "single" else "checkbox"
            assert set(quiz.locator(".quiz__input").evaluate_all("i => i.map(x => x.type)")) == {expected}
        # Math in questions, answers and explanations is typeset like the prose's, hidden explanations included.
        untypeset = page.locator("form.quiz .arithmatex:not(:has(.katex))")
        assert untypeset.count() == 0, untypeset.all_inner_texts()
        assert page.locator("form.quiz .katex-error").count() == 0
    browser.assert_clean()


def test_a_wrong_answer_is_marked_explained_and_announced_and_the_right_one_then_counts(browser, site_url, quiz_page):
    path, number = quiz_page
    quiz = open_quiz(browser.page, site_url + path, number)
    right, wrong = answer_numbers(quiz)
    result = quiz.locator(".quiz__result")
    assert result.get_attribute("aria-live") == "polite" and result.get_attribute("role") == "status"

    answer(quiz, wrong[0]).locator("label").click()
    quiz.get_by_role("button", name="Check answer").click()
    picked = answer(quiz, wrong[0])
    assert "quiz__answer--wrong" in picked.get_attribute("class")
    assert picked.locator(".quiz__verdict").inner_text() == "Not right"  # in words, not colour alone
    assert shown(picked.locator(".quiz__feedback"))
    feedback_id = picked.locator(".quiz__feedback").get_attribute("id")
    assert feedback_id in picked.locator("input").get_attribute("aria-describedby")
    for n in right:  # the reader also learns what was right, and why
        assert "quiz__answer--missed" in answer(quiz, n).get_attribute("class")
        assert answer(quiz, n).locator(".quiz__verdict").inner_text() == "Right answer, not chosen"
        assert shown(answer(quiz, n).locator(".quiz__feedback"))
    for n in wrong[1:]:
        assert not shown(answer(quiz, n).locator(".quiz__feedback"))
    assert result.inner_text() == WRONG
    assert quiz.get_attribute("data-result") == "wrong"

    # Changing the answer clears the old marks; checking again judges the new one.
    if quiz.get_attribute("data-quiz-type") == "multiple":
        answer(quiz, wrong[0]).locator("label").click()  # untick the wrong one
    for n in right:
        answer(quiz, n).locator("label").click()
    assert result.inner_text() == "" and quiz.locator(".quiz__verdict:visible").count() == 0
    quiz.get_by_role("button", name="Check answer").click()
    assert re.fullmatch(r"Correct\.", result.inner_text())
    for n in right:
        assert "quiz__answer--right" in answer(quiz, n).get_attribute("class")
        assert answer(quiz, n).locator(".quiz__verdict").inner_text() == "Right"
        assert shown(answer(quiz, n).locator(".quiz__feedback"))
    for n in wrong:
        assert not shown(answer(quiz, n).locator(".quiz__feedback"))
        assert not shown(answer(quiz, n).locator(".quiz__verdict"))
    browser.assert_clean()


def test_checking_with_nothing_chosen_asks_for_a_choice(browser, site_url, quiz_page):
    path, number = quiz_page
    quiz = open_quiz(browser.page, site_url + path, number)
    quiz.get_by_role("button", name="Check answer").click()
    assert quiz.locator(".quiz__result").inner_text() == "Choose an answer first."
    assert quiz.locator(".quiz__verdict:visible, .quiz__feedback:visible").count() == 0
    browser.assert_clean()


def test_the_keyboard_alone_answers_and_checks(browser, site_url, quiz_page):
    path, number = quiz_page
    page = browser.page
    quiz = open_quiz(page, site_url + path, number)
    right, wrong = answer_numbers(quiz)
    single = quiz.get_attribute("data-quiz-type") == "single"
    # Start just before the quiz, as if the reader had tabbed there through the prose.
    quiz.evaluate("form => { form.tabIndex = -1; form.focus(); }")

    def focused() -> dict:
        return page.evaluate("""() => ({id: document.activeElement.id, value: document.activeElement.value,
            tag: document.activeElement.tagName, outline: getComputedStyle(document.activeElement).outlineStyle})""")

    def choose_by_keyboard(numbers: list[str]):
        """Tab into the answers, choose `numbers` (Space; arrow keys within a radio group), then Tab to Check."""
        page.keyboard.press("Tab")
        assert focused()["outline"] != "none", "a keyboard focus must be visible"
        if single:
            current = int(focused()["value"])
            target = int(numbers[0])
            for _ in range(abs(target - current)):
                page.keyboard.press("ArrowDown" if target > current else "ArrowUp")
            page.keyboard.press("Space")
            page.keyboard.press("Tab")
        else:
            for _ in range(quiz.locator(".quiz__input").count()):
                if (focused()["value"] in numbers) != page.evaluate("document.activeElement.checked"):
                    page.keyboard.press("Space")
                page.keyboard.press("Tab")
        assert focused()["tag"] == "BUTTON" and focused()["outline"] != "none"

    choose_by_keyboard(wrong[:1])
    assert chosen(quiz) == wrong[:1]
    page.keyboard.press("Enter")
    assert quiz.locator(".quiz__result").inner_text() == WRONG
    assert "quiz__answer--wrong" in answer(quiz, wrong[0]).get_attribute("class")

    quiz.evaluate("form => form.focus()")
    choose_by_keyboard(right)
    assert chosen(quiz) == right
    page.keyboard.press("Space")  # a button also answers to Space
    assert quiz.locator(".quiz__result").inner_text() == "Correct."
    browser.assert_clean()


# ---- state kept on the page ------------------------------------------------------------------------------------------


def test_the_selection_survives_instant_navigation_away_and_back_and_a_reload(browser, site_url, quiz_page):
    path, number = quiz_page
    page = browser.page
    quiz = open_quiz(page, site_url + path, number)
    right, wrong = answer_numbers(quiz)
    answer(quiz, wrong[0]).locator("label").click()
    quiz.get_by_role("button", name="Check answer").click()
    # Another quiz of the page, if there is one, is left chosen but not checked.
    other = page.locator(f"form.quiz:not([data-quiz='{number}'])").first
    has_other = other.count() == 1
    if has_other:
        other.locator(".quiz__label").last.click()
    left = {"quiz": chosen(quiz), "other": chosen(other) if has_other else None}

    def assert_as_left():
        assert chosen(quiz) == left["quiz"]
        assert quiz.locator(".quiz__result").inner_text() == WRONG
        assert "quiz__answer--wrong" in answer(quiz, wrong[0]).get_attribute("class")
        assert shown(answer(quiz, wrong[0]).locator(".quiz__feedback"))
        if has_other:
            assert chosen(other) == left["other"]
            assert other.locator(".quiz__verdict:visible").count() == 0
            assert other.locator(".quiz__result").inner_text() == ""

    page.evaluate("window.__sameDocument = true")
    page.locator("a.md-header__button.md-logo").click()  # the site's logo: home, by instant navigation
    page.wait_for_url(site_url)
    page.locator("article h1").wait_for()
    page.go_back()  # Material handles the history step too, without a reload
    page.wait_for_url("**/" + path)
    quiz.locator(".quiz__check:visible").wait_for()
    assert page.evaluate("window.__sameDocument === true"), "navigation reloaded the page instead of swapping it"
    assert_as_left()

    page.reload()
    quiz.locator(".quiz__check:visible").wait_for()
    assert_as_left()
    browser.assert_clean()


def test_a_checked_quiz_fits_a_375px_screen(browser, site_url, quiz_page):
    path, number = quiz_page
    page = browser.page
    page.set_viewport_size({"width": 375, "height": 800})
    quiz = open_quiz(page, site_url + path, number)
    right, wrong = answer_numbers(quiz)
    answer(quiz, wrong[0]).locator("label").click()
    quiz.get_by_role("button", name="Check answer").click()
    box = quiz.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 375
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    browser.assert_clean()
