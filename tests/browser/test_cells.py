"""Live code cells in Chromium on the offline Pyodide 0.27.7: the editor, running, output, errors, checks, sessions,
persistence, the keyboard, runaway code (with and without cross-origin isolation), and that pages without cells load
no editor.

The pages are built from Markdown with the project's own mkdocs.yml, plugin and theme (a real `mkdocs build
--strict` of a small docs folder), so the cells are exactly what the `/// cell` block writes.
"""

import re
import time

import pytest

from support import BOOT_TIMEOUT_MS, CROSS_ORIGIN_ISOLATION, INTERRUPT_GRACE_MS, StaticSiteServer, build_pages

pytestmark = pytest.mark.browser

RUN_TIMEOUT_MS = 30_000
EDITOR_FILE = re.compile(r"/assets/explainer/editor\.js$")

CELLS_PAGE = '''\
# Cells under test

[A page without cells](other.md)

/// sandbox | attention_scale
///

/// cell | Output
```python
import sys
import time

print("first")
print("to stderr", file=sys.stderr)
time.sleep(0.5)
print("second")
import numpy as np
np.arange(3) * 2
```
///

/// cell | Scratch
```python
x = 1
```
///

/// cell | Runaway
timeout: 2
```python
while True:
    pass
```
///

/// cell | Checked
setup: |
  target = 42
check:
  output: "42"
  test: |
    assert answer == target, f"answer is {answer}"
  success: Forty-two it is.
  failure: That is not the answer.
```python
answer = 41
print(answer)
```
///

/// cell | Define
session: shared
```python
kept = 21
runs = globals().get("runs", 0) + 1
```
///

/// cell | Use
session: shared
```python
(kept * 2, runs)
```
///

/// cell | Draw
```python
from explainer import figure as fig

show(fig.figure(axes=fig.axes(xlim=(0, 1), ylim=(0, 1), title="A rising line"), marks=[fig.line([0, 1], [0, 1])]))
```
///
'''

PAGES = {
    "index.md": "# Home\n\n[Cells](cells.md), [other](other.md).\n",
    "cells.md": CELLS_PAGE,
    "other.md": "# No cells here\n\nBack to [the cells](cells.md).\n",
}


@pytest.fixture(scope="module")
def cells_site(tmp_path_factory):
    """The project's site configuration over a docs folder of test pages, built and served."""
    server = StaticSiteServer(tmp_path_factory.mktemp("cells-site"))
    result = build_pages(tmp_path_factory.mktemp("cells-project"), PAGES, server.root, server.url)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr}"
    yield server
    server.close()


@pytest.fixture(scope="module")
def site_url(cells_site):
    return cells_site.url  # the `browser` fixture's off-origin guard follows this address


# ---- helpers --------------------------------------------------------------------------------------------------------


def cell_id(page, title: str) -> str:
    title = page.locator(".cell__title", has_text=re.compile(f"^{title}$"))
    return page.locator(".cell", has=title).get_attribute("id")


def open_cells(page, url: str) -> None:
    page.goto(url + "cells/")
    page.wait_for_function("[...document.querySelectorAll('.cell')].every(c => c.dataset.state === 'ready')")


def editor_text(page, cell: str) -> str:
    return page.locator(f"#{cell} .cm-content").evaluate(
        "node => [...node.querySelectorAll('.cm-line')].map(line => line.textContent).join('\\n')")


def replace_code(page, cell: str, code: str) -> None:
    """Select everything in the editor and type `code` over it, as a reader would (a paste: no auto-indent)."""
    page.locator(f"#{cell} .cm-content").click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(code)
    assert editor_text(page, cell) == code


def run(page, cell: str, timeout: int = BOOT_TIMEOUT_MS) -> str:
    """Press Run and wait for the cell's outcome; returns its status line."""
    page.locator(f"#{cell} .cell__run").click()
    page.wait_for_function("id => !['running', 'ready'].includes(document.getElementById(id).dataset.state)",
                           arg=cell, timeout=timeout)
    return page.locator(f"#{cell} .cell__status").inner_text()


def output_blocks(page, cell: str) -> list[tuple[str, str]]:
    """What the cell shows under the editor, in order: (class, text) of each block."""
    blocks = page.locator(f"#{cell} .cell__output > *").evaluate_all(
        "nodes => nodes.map(n => [n.className, n.textContent])")
    return [tuple(block) for block in blocks]


def marked_lines(page, cell: str) -> list[str]:
    return page.locator(f"#{cell} .cm-errorLine").all_inner_texts()


# ---- running ------------------------------------------------------------------------------------------------------


def test_output_streams_in_order_while_the_code_runs_then_the_last_value(browser, site_url):
    page = browser.page
    open_cells(page, site_url)
    cell = cell_id(page, "Output")
    page.locator(f"#{cell} .cell__run").click()
    # "first" and the stderr line arrive while the code still sleeps: streamed, not sent at the end.
    page.wait_for_function("""id => {
      const cell = document.getElementById(id);
      return cell.dataset.state === 'running' && cell.querySelector('.cell__stream--stderr');
    }""", arg=cell, timeout=BOOT_TIMEOUT_MS)
    page.wait_for_function("id => document.getElementById(id).dataset.state === 'done'", arg=cell,
                           timeout=RUN_TIMEOUT_MS)
    assert output_blocks(page, cell) == [
        ("cell__stream cell__stream--stdout", "first\n"),
        ("cell__stream cell__stream--stderr", "to stderr\n"),
        ("cell__stream cell__stream--stdout", "second\n"),
        ("cell__result", "array([0, 2, 4])"),
    ]
    assert re.fullmatch(r"Ran in \d+ ms\.", page.locator(f"#{cell} .cell__status").inner_text())
    colours = page.locator(f"#{cell} .cell__stream").evaluate_all(
        "nodes => nodes.map(n => getComputedStyle(n).borderLeftStyle)")
    assert colours[0] != colours[1], "stdout and stderr are styled apart"
    browser.assert_clean()


def test_edited_code_runs_and_errors_show_a_trimmed_traceback_with_the_line_marked(browser, site_url):
    page = browser.page
    open_cells(page, site_url)
    cell = cell_id(page, "Scratch")
    replace_code(page, cell, "print(6 * 7)")
    assert run(page, cell).startswith("Ran in")
    assert output_blocks(page, cell) == [("cell__stream cell__stream--stdout", "42\n")]

    replace_code(page, cell, "def f(x):\n    return 1 / x\n\nf(0)")
    assert run(page, cell) == "Error on line 2: ZeroDivisionError: division by zero"
    traceback = page.locator(f"#{cell} .cell__traceback").inner_text()
    assert 'File "<cell>", line 4' in traceback and 'File "<cell>", line 2' in traceback
    assert "live.py" not in traceback and "_pyodide" not in traceback, traceback
    assert marked_lines(page, cell) == ["    return 1 / x"]

    replace_code(page, cell, "x = 1\ny = (\n")
    assert run(page, cell).startswith("Error on line 2: SyntaxError")
    assert marked_lines(page, cell) == ["y = ("]
    page.locator(f"#{cell} .cm-content").click()
    page.keyboard.press("End")
    page.keyboard.type("2)")
    assert marked_lines(page, cell) == [], "an edit clears the marked line"
    browser.assert_clean()


def test_a_check_fails_then_passes_and_hidden_setup_runs_first(browser, site_url):
    page = browser.page
    open_cells(page, site_url)
    cell = cell_id(page, "Checked")
    run(page, cell)
    verdict = page.locator(f"#{cell} .cell__check")
    assert verdict.get_attribute("data-passed") == "false"
    assert verdict.inner_text().startswith("Check failed: That is not the answer.")
    replace_code(page, cell, "answer = target\nprint(answer)")  # `target` comes from the hidden setup
    run(page, cell)
    assert verdict.get_attribute("data-passed") == "true"
    assert verdict.inner_text() == "Check passed: Forty-two it is."
    browser.assert_clean()


def test_a_session_runs_the_cells_above_first_and_restart_forgets_its_variables(browser, site_url):
    page = browser.page
    open_cells(page, site_url)
    define, use = cell_id(page, "Define"), cell_id(page, "Use")
    status = run(page, use)
    assert status.startswith("Ran in") and "after Define" in status, status
    assert output_blocks(page, use) == [("cell__result", "(42, 1)")]
    run(page, use)
    assert output_blocks(page, use) == [("cell__result", "(42, 1)")], "Define ran once: it is not run again"
    run(page, define)
    run(page, use)
    assert output_blocks(page, use) == [("cell__result", "(42, 2)")], "one namespace for the session"
    page.locator(f"#{use} .cell__restart").click()
    page.wait_for_function("id => document.getElementById(id).querySelector('.cell__status').textContent"
                           ".startsWith('Restarted')", arg=use)
    run(page, use)
    assert output_blocks(page, use) == [("cell__result", "(42, 1)")], "after Restart the session starts afresh"
    browser.assert_clean()


def test_show_draws_a_figure_description_with_the_sites_svg_renderer(browser, site_url):
    page = browser.page
    open_cells(page, site_url)
    cell = cell_id(page, "Draw")
    run(page, cell)
    svg = page.locator(f"#{cell} .cell__figure svg.explainer-figure")
    assert svg.get_attribute("aria-label") == "A rising line"
    assert svg.locator("[data-mark=line]").count() == 1
    browser.assert_clean()


# ---- editing: reset, persistence, keyboard --------------------------------------------------------------------------


def test_edits_survive_a_reload_and_instant_navigation_and_reset_restores_the_original(browser, site_url):
    page = browser.page
    open_cells(page, site_url)
    cell = cell_id(page, "Scratch")
    replace_code(page, cell, "edited = True")
    page.reload()
    open_cells(page, site_url)
    assert editor_text(page, cell) == "edited = True"

    page.locator("a", has_text="A page without cells").click()  # Material's instant navigation: no page load
    page.wait_for_function("document.querySelector('h1')?.textContent.startsWith('No cells here')")
    page.locator("article a", has_text="the cells").click()
    page.wait_for_function("document.querySelector('.cell')?.dataset.state === 'ready'")
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1, "instant: one document"
    assert editor_text(page, cell) == "edited = True"

    page.locator(f"#{cell} .cell__reset").click()
    assert editor_text(page, cell) == "x = 1"
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('explainer-cell:'))") == []
    page.reload()
    open_cells(page, site_url)
    assert editor_text(page, cell) == "x = 1"
    browser.assert_clean()


def test_the_keyboard_alone_reaches_edits_runs_and_leaves_a_cell(browser, site_url):
    page = browser.page
    open_cells(page, site_url)
    cell = cell_id(page, "Scratch")
    page.locator(f"#{cell} .cell__title").click()  # a click on plain text just before the editor: no focus
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("id => document.activeElement.closest('.cm-content') !== null"
                         " && document.activeElement.closest('.cell').id === id", cell):
            break
    else:
        pytest.fail("Tab never reached the editor")
    page.keyboard.press("ControlOrMeta+End")
    page.keyboard.press("Enter")
    page.keyboard.type("for i in range(2):")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")  # Tab indents inside the editor (on top of the automatic indent)...
    page.keyboard.type("print(i)")
    assert editor_text(page, cell) == "x = 1\nfor i in range(2):\n        print(i)"
    page.keyboard.press("Control+Enter")
    page.wait_for_function("id => document.getElementById(id).dataset.state === 'done'", arg=cell,
                           timeout=BOOT_TIMEOUT_MS)
    assert output_blocks(page, cell) == [("cell__stream cell__stream--stdout", "0\n1\n")]
    page.keyboard.press("Escape")  # ...and Escape leaves it, onto the cell's Run button
    assert page.evaluate("document.activeElement.classList.contains('cell__run')")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.classList.contains('cell__reset')")
    page.keyboard.press("Enter")
    assert editor_text(page, cell) == "x = 1"
    browser.assert_clean()


def test_the_buttons_have_names_that_say_which_cell_they_act_on(browser, site_url):
    page = browser.page
    open_cells(page, site_url)
    cell = cell_id(page, "Scratch")
    names = page.locator(f"#{cell} .cell__toolbar button").evaluate_all(
        "nodes => nodes.map(n => [n.textContent, n.getAttribute('aria-label')])")
    assert names == [["Run", "Run Scratch"], ["Reset", "Reset Scratch to its original code"],
                     ["Copy", "Copy the code of Scratch"], ["Restart", "Restart the Python session of Scratch"]]
    assert page.locator(f"#{cell} .cm-content").get_attribute("aria-label") == "Python code: Scratch"
    browser.assert_clean()


# ---- what a page loads ----------------------------------------------------------------------------------------------


def test_pages_without_cells_load_no_editor_and_a_page_with_cells_loads_it_once(browser, site_url):
    page = browser.page
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    for path in ("", "other/"):
        page.goto(site_url + path)
        page.wait_for_load_state("load")
    assert page.evaluate("typeof window.ExplainerEditor") == "undefined"
    assert not [url for url in requested if EDITOR_FILE.search(url)], "no editor bytes without a cell"
    page.locator("article a", has_text="the cells").click()  # instant navigation onto the page with cells
    page.wait_for_function("document.querySelector('.cell')?.dataset.state === 'ready'")
    page.locator("a", has_text="A page without cells").click()
    page.wait_for_function("document.querySelector('h1')?.textContent.startsWith('No cells here')")
    page.locator("article a", has_text="the cells").click()
    page.wait_for_function("document.querySelector('.cell')?.dataset.state === 'ready'")
    assert len([url for url in requested if EDITOR_FILE.search(url)]) == 1
    browser.assert_clean()


# ---- runaway code ----------------------------------------------------------------------------------------------------


RUN_AWAY = """async (id) => {
  let frames = 0, drawing = true;
  (function tick() { frames += 1; if (drawing) requestAnimationFrame(tick); })();
  const cell = document.getElementById(id);
  const started = performance.now(), buffer = ExplainerRuntime.interruptBuffer;
  cell.querySelector('.cell__run').click();
  while (cell.dataset.state === 'running' || cell.dataset.state === 'ready') {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  drawing = false;
  // With an interrupt buffer, `unread` says whether an interrupt was left there unread (2: Python never looked).
  return {seconds: (performance.now() - started) / 1000, frames, state: cell.dataset.state,
          status: cell.querySelector('.cell__status').textContent, unread: buffer ? buffer[0] : null};
}"""


def bring_sandbox_live(page) -> str:
    figure = page.locator("figure.sandbox")
    figure.scroll_into_view_if_needed()
    page.wait_for_function("document.querySelector('figure.sandbox').dataset.state === 'live'",
                           timeout=BOOT_TIMEOUT_MS)
    return figure.get_attribute("id")


def run_away(page) -> dict:
    """Run the endless loop of the `timeout: 2` cell (Python already booted); what the page saw meanwhile."""
    cell = cell_id(page, "Runaway")
    page.locator(f"#{cell}").scroll_into_view_if_needed()
    return page.evaluate(RUN_AWAY, cell)


def test_an_endless_loop_is_stopped_by_a_fresh_worker_and_the_sandbox_redraws_by_itself(browser, site_url):
    page = browser.page
    open_cells(page, site_url)
    figure = bring_sandbox_live(page)
    assert page.evaluate("ExplainerRuntime.canInterrupt") is False, "no isolation headers: no interrupt buffer"
    renders = int(page.locator(f"#{figure}").get_attribute("data-renders"))
    result = run_away(page)
    assert result["state"] == "stopped" and result["seconds"] < 4, result
    assert result["status"] == ("Stopped: it ran past its time limit of 2 s, so Python was restarted and this "
                                "session's variables are gone; run the cell again to start afresh.")
    assert result["frames"] > 20, f"the page kept drawing while the code ran ({result['frames']} frames)"
    # Nobody touches the sandbox: it draws its current values again on the fresh worker by itself.
    page.wait_for_function("([id, n]) => document.getElementById(id).dataset.renders > n && "
                           "document.getElementById(id).dataset.state === 'live'", arg=[figure, renders],
                           timeout=BOOT_TIMEOUT_MS)
    assert page.evaluate("ExplainerRuntime.reused") == {"wasm": True, "installed": True, "checked": True}, \
        "the fresh worker starts from the module the first compiled, the files it installed and the bytes it checked"
    slider = page.locator(f"#{figure} input[type=range]")
    slider.focus()
    page.keyboard.press("End")
    page.wait_for_function("([id, n]) => document.getElementById(id).dataset.renders > n", arg=[figure, renders + 1],
                           timeout=RUN_TIMEOUT_MS)
    cell = cell_id(page, "Scratch")
    assert run(page, cell).startswith("Ran in"), "cells run again on the fresh worker"
    browser.assert_clean()


@pytest.mark.parametrize("code, outcome", [
    ("def down(n):\n    return down(n + 1)\n\ndown(0)", r"Error on line 2: RecursionError: maximum recursion depth"),
    # Past what 32-bit WebAssembly can address: numpy refuses before allocating anything.
    ("import numpy as np\n\nhuge = np.ones((1 << 20, 1 << 20))", r"Error on line 3: ValueError: array is too big"),
    # Memory that grows until the WebAssembly heap is full: a MemoryError, or (if the allocator gives up) a fresh worker.
    ("blocks = []\nwhile True:\n    blocks.append(bytearray(1 << 28))",
     r"Error on line 3: MemoryError|Stopped: .*Python was restarted"),
])
def test_deep_recursion_and_huge_allocations_end_in_one_sentence_and_python_goes_on(browser, site_url, code, outcome):
    page = browser.page
    open_cells(page, site_url)
    cell = cell_id(page, "Scratch")
    replace_code(page, cell, code)
    started = time.monotonic()
    status = run(page, cell)
    print(f"{code.splitlines()[-1].strip()}: {status} ({time.monotonic() - started:.1f} s)")
    assert re.match(outcome, status), status
    assert status.count(". ") == 0, f"one sentence: {status}"
    replace_code(page, cell, "print('still here')")
    assert run(page, cell).startswith("Ran in")
    assert output_blocks(page, cell) == [("cell__stream cell__stream--stdout", "still here\n")]
    browser.assert_clean()


@pytest.fixture(scope="module")
def isolated_server(cells_site):
    """The same built pages, served with the headers that make them cross-origin isolated."""
    server = StaticSiteServer(cells_site.root, headers=CROSS_ORIGIN_ISOLATION)
    yield server
    server.close()


class TestWithCrossOriginIsolation:
    """The same pages served with COOP/COEP headers: the cell is interrupted and the worker survives."""

    @pytest.fixture
    def site_url(self, isolated_server):
        return isolated_server.url

    def test_an_endless_loop_is_interrupted_and_every_variable_survives(self, browser, site_url):
        page = browser.page
        open_cells(page, site_url)
        figure = bring_sandbox_live(page)
        assert page.evaluate("crossOriginIsolated && ExplainerRuntime.canInterrupt") is True
        use = cell_id(page, "Use")
        run(page, use)
        page.evaluate(f"ExplainerRuntime.interruptGraceMs = {INTERRUPT_GRACE_MS}")
        generation = page.evaluate("ExplainerRuntime.generation")
        result = run_away(page)
        # Interrupted (not terminated) within the grace the runtime gives Python before it replaces the worker.
        assert result["state"] == "stopped", result
        assert result["seconds"] < 2 + INTERRUPT_GRACE_MS / 1000, result
        assert result["status"] == ("Stopped: it ran past its time limit of 2 s; Python kept this session's "
                                    "variables.")
        assert result["frames"] > 20, result
        assert page.evaluate("[ExplainerRuntime.state, ExplainerRuntime.generation]") == ["ready", generation]
        run(page, use)
        assert output_blocks(page, use) == [("cell__result", "(42, 1)")], "the same worker: Define did not rerun"
        renders = int(page.locator(f"#{figure}").get_attribute("data-renders"))
        page.locator(f"#{figure} input[type=range]").focus()
        page.keyboard.press("End")
        page.wait_for_function("([id, n]) => document.getElementById(id).dataset.renders > n", arg=[figure, renders],
                               timeout=RUN_TIMEOUT_MS)
        browser.assert_clean()

