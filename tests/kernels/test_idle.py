"""explainer.idle: work left for the browser's idle time runs a step per task, newest work first, never in CPython."""

import pytest

from explainer import idle


@pytest.fixture
def browser(monkeypatch):
    """A stand-in for Pyodide's event loop: the tasks it would run, in order."""
    tasks = []
    monkeypatch.setattr(idle, "IN_BROWSER", True)
    monkeypatch.setattr(idle, "_call_soon", tasks.append)
    monkeypatch.setattr(idle, "_waiting", {})
    return tasks


def run_all(tasks, limit=100):
    for _ in range(limit):
        if not tasks:
            return
        tasks.pop(0)()
    raise AssertionError("idle work did not finish")


def counter(steps, log, name):
    def step():
        log.append(name)
        return log.count(name) >= steps
    return step


def test_a_step_runs_once_per_task_until_it_says_done(browser):
    log = []
    idle.later("lab", counter(3, log, "a"))
    assert log == [] and len(browser) == 1  # nothing runs before the current request has replied
    browser.pop(0)()
    assert log == ["a"] and len(browser) == 1
    run_all(browser)
    assert log == ["a", "a", "a"]


def test_newer_work_replaces_the_waiting_work_of_the_same_key(browser):
    log = []
    idle.later("lab", counter(5, log, "old"))
    browser.pop(0)()
    idle.later("lab", counter(2, log, "new"))
    idle.later("other", counter(1, log, "other"))
    run_all(browser)
    assert log == ["old", "new", "other", "new"]


def test_a_failing_step_is_dropped_and_reported(browser, capsys):
    def broken():
        raise RuntimeError("boom")

    idle.later("lab", broken)
    run_all(browser)
    assert "RuntimeError: boom" in capsys.readouterr().err
    assert idle._waiting == {}


def test_an_interrupt_that_lands_in_a_step_goes_no_further_and_the_step_runs_again(browser):
    # An interrupt written for a reader's cell as it ended may land in idle work instead.
    log = []

    def interrupted_once():
        log.append("step")
        if log.count("step") == 1:
            raise KeyboardInterrupt
        return True

    idle.later("lab", interrupted_once)
    try:
        browser.pop(0)()
    except KeyboardInterrupt:
        pytest.fail("the interrupt went on into the event loop")
    run_all(browser)
    assert log == ["step", "step"]
    assert idle._waiting == {}


def test_outside_the_browser_nothing_is_left_for_later(monkeypatch):
    monkeypatch.setattr(idle, "IN_BROWSER", False)
    monkeypatch.setattr(idle, "_call_soon", lambda callback: pytest.fail("scheduled outside the browser"))
    idle.later("lab", lambda: pytest.fail("ran outside the browser"))
