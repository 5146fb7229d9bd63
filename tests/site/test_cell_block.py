"""The `/// cell` block: Markdown in, the cell's container around an ordinary highlighted code block out, every
authoring mistake named by file:line (in Python-Markdown and as a one-line `mkdocs build --strict` error); the
editor bundle; and the lesson's cells, run under CPython exactly as the browser's worker runs them."""

import gzip
import html
import json
import re
import textwrap

import markdown
import pytest

from build_scripts import editor_bundle
from build_scripts.markdown.cell import MAX_TIMEOUT, find_cells, read_cell
from explainer import live
from support import PROJECT_ROOT, copy_project_site_sources, markdown_error, run_mkdocs_build

EXTENSIONS = ["build_scripts.markdown.cell", "pymdownx.superfences", "pymdownx.highlight", "admonition"]
LESSON = PROJECT_ROOT / "docs" / "lessons" / "try-it-yourself.md"

CELL = """
/// cell | Try it
session: norm
timeout: 5
autorun: true
setup: |
  import numpy as np
check:
  output: "3"
  test: |
    assert x == 3
  success: Good.
  failure: Not yet.

```python
x = 1 + 2
print(x)
```
///
"""


def convert(text: str) -> str:
    return markdown.markdown(textwrap.dedent(text), extensions=EXTENSIONS)


def error_of(text: str) -> str:
    return str(markdown_error(convert, text))


def configs(page_html: str) -> list[dict]:
    return [json.loads(html.unescape(value)) for value in re.findall(r'data-config="([^"]*)"', page_html)]


# ---- what the page gets -------------------------------------------------------------------------------------------


def test_a_cell_is_its_config_around_the_sites_highlighted_code_block():
    page = convert("Before.\n" + CELL + "\nAfter.")
    assert page.startswith("<p>Before.</p>\n<div class=\"cell\" id=\"cell-1\" data-cell=\"1\" data-state=\"static\" ")
    assert '<p class="cell__title">Try it</p>\n<div class="highlight"><pre>' in page
    assert '<span class="nb">print</span>' in page, "the code is highlighted like any fence: readable without JS"
    assert page.endswith("</code></pre></div>\n</div>\n<p>After.</p>")
    assert configs(page) == [{
        "title": "Try it", "code": "x = 1 + 2\nprint(x)", "session": "norm", "timeout": 5.0, "autorun": True,
        "setup": "import numpy as np\n",
        "check": {"output": "3", "test": "assert x == 3\n", "success": "Good.", "failure": "Not yet."},
    }]


def test_the_defaults_and_page_numbering():
    page = convert("/// cell\n```python\nprint(1)\n```\n///\n\n/// cell\n```py\nprint(2)\n```\n///\n")
    assert re.findall(r'id="(cell-\d)" data-cell="(\d)"', page) == [("cell-1", "1"), ("cell-2", "2")]
    assert configs(page)[0] == {"title": "", "code": "print(1)", "session": None, "timeout": 10.0, "autorun": False,
                                "setup": "", "check": None}
    assert 'class="cell__title"' not in page


def test_a_cell_inside_an_admonition_keeps_its_code_and_a_fence_inside_it_is_not_the_end():
    page = convert('!!! note\n\n    /// cell\n    ```python\n    s = """\n    ///\n    """\n    ```\n    ///\n')
    assert configs(page)[0]["code"] == 's = """\n///\n"""'
    assert page.count('<div class="cell"') == 1 and '<div class="admonition note">' in page


def test_blocks_shown_as_code_are_not_cells():
    page = convert("````markdown\n/// cell\n```python\nx = 1\n```\n///\n````\n")
    assert '<div class="cell"' not in page and "/// cell" in page


# ---- authoring mistakes: one error each, naming the line -------------------------------------------------------


@pytest.mark.parametrize("text, line, message", [
    ("/// cell\ntimeout: 0\n```python\nx = 1\n```\n///", 2,
     f"cell: timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g} (got 0)"),
    ("/// cell\ntimeout: 61\n```python\nx = 1\n```\n///", 2, "at most 60 (got 61)"),
    ("/// cell\ntimeout: yes\n```python\nx = 1\n```\n///", 2, "(got True)"),
    ("/// cell | T\nautorun: 1\n```python\nx = 1\n```\n///", 2, "cell 'T': autorun must be true or false (got 1)"),
    ("/// cell\nsession: two words\n```python\nx = 1\n```\n///", 2, "session must be a name of letters"),
    ("/// cell\ntimout: 3\n```python\nx = 1\n```\n///", 2,
     "unknown option 'timout' (did you mean 'timeout'?); valid: session, timeout, autorun, setup, check"),
    ("/// cell\nsetup: |\n  x = (\n```python\nx = 1\n```\n///", 2, "setup is not valid Python: '(' was never closed"),
    ("/// cell\ncheck:\n  success: yes!\n```python\nx = 1\n```\n///", 2, "check needs 'output:'"),
    ("/// cell\ncheck:\n  outptu: '1'\n```python\nx = 1\n```\n///", 2, "check: unknown key 'outptu' (did you mean"),
    ("/// cell\ncheck:\n  output: 3\n```python\nx = 1\n```\n///", 2, "check.output must be non-empty text (got 3) "
                                                                      "(put it in quotes)"),
    ("/// cell\ncheck:\n  test: assert (\n```python\nx = 1\n```\n///", 2, "check.test is not valid Python"),
    ("/// cell\n\n```python\nx = 1\ny = (\n```\n///", 5, "the code is not valid Python: '(' was never closed"),
    ("/// cell\n```python\n\n```\n///", 2, "the code block is empty"),
    ("/// cell\ntimeout: 3\n///", 1, "a cell needs its code in a fenced block after the options"),
    ("/// cell\n```js\nx = 1\n```\n///", 2, "a cell's code must be a ```python fence (got '```js')"),
    ("/// cell\n```python\nx = 1\n", 2, "the cell's code fence is never closed (add a line '```')"),
    ("/// cell\n```python\nx = 1\n```\nmore text\n///", 5, "a cell ends with a line '///' right after its code fence"),
    ("/// cells\n```python\nx = 1\n```\n///", 1, "unknown block 'cells' (did you mean 'cell'?)"),
    ("/// cell\ntimeout: [1\n```python\nx = 1\n```\n///", 2, "malformed YAML"),
])
def test_each_mistake_stops_with_the_file_and_line(text, line, message):
    error = error_of("# Page\n\n" + text + "\n")
    assert error.startswith(f"docs/page.md:{line + 2}: ") and message in error, error


def test_the_mkdocs_build_fails_strict_with_one_line_naming_the_file_and_line(tmp_path):
    config = copy_project_site_sources(tmp_path)
    page = tmp_path / "docs" / "lessons" / "try-it-yourself.md"
    text = page.read_text()
    number = text.split("\n").index("timeout: 20") + 1
    page.write_text(text.replace("timeout: 20", "timeout: 600"))
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode != 0
    expected = (f"docs/lessons/try-it-yourself.md:{number}: cell 'Pre-norm to post-norm': timeout must be a number "
                f"of seconds above 0 and at most 60 (got 600)")
    assert f"Error: {expected}" in result.stderr or expected in result.stderr, result.stderr[-2000:]
    assert "Traceback" not in result.stderr


# ---- the editor bundle ------------------------------------------------------------------------------------------


def test_the_editor_is_bundled_once_per_input_and_reused_from_the_cache(tmp_path):
    first = editor_bundle.build_editor_bundle(tmp_path)
    stamp = first.stat().st_mtime_ns
    assert editor_bundle.build_editor_bundle(tmp_path) == first and first.stat().st_mtime_ns == stamp
    text = first.read_text()
    assert "window.ExplainerEditor" in text and "import " not in text[:200], "one classic script, no modules"
    assert first.name == f"editor-{editor_bundle.bundle_digest()[:16]}.js"
    assert len(gzip.compress(first.read_bytes(), 9)) <= 150_000, "the editor stays under 150 KB gzipped"


def test_a_missing_esbuild_says_what_to_run(tmp_path):
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / ".package-lock.json").write_text("{}")
    entry = tmp_path / editor_bundle.ENTRY.relative_to(PROJECT_ROOT)
    entry.parent.mkdir(parents=True)
    entry.write_text("window.ExplainerEditor = {};")
    with pytest.raises(editor_bundle.EditorBundleError, match=r"esbuild not found: run `make setup`"):
        editor_bundle.build_editor_bundle(tmp_path / "cache", root=tmp_path)


def test_the_site_ships_the_editor_and_the_cells_scripts(built_site):
    assets = built_site / "assets" / "explainer"
    assert (assets / "editor.js").read_bytes() == editor_bundle.build_editor_bundle().read_bytes()
    assert (assets / "cells.js").is_file() and (assets / "cells.css").is_file()
    assert not (assets / "editor").exists(), "the editor's source entry is not copied into the site"
    lesson = (built_site / "lessons" / "try-it-yourself" / "index.html").read_text()
    assert lesson.count('<div class="cell" ') == 5
    assert "assets/explainer/cells.js" in lesson and "assets/explainer/editor.js" not in lesson, \
        "the editor is loaded by cells.js when a cell is on the page, never by a script tag"


# ---- the lesson's cells -------------------------------------------------------------------------------------------

# What a reader might write: each exercise's check must pass with it (and fail with the starting code).
SOLUTIONS = {
    "Your rmsnorm": ("size = np.sqrt(np.sum(h**2, axis=-1, keepdims=True))",
                     "size = np.sqrt(np.mean(h**2, axis=-1, keepdims=True))"),
    "Softmax, by hand": ("e = np.exp(scores)", "e = np.exp(scores - scores.max())"),
    "Pre-norm to post-norm": ("""\
    read = normalise(h, "rmsnorm")
    update, _ = attention(read, weights.qkv[layer], weights.out[layer], config.heads, rope=True, causal=True)
    h = h + update
    read = normalise(h, "rmsnorm")
    update, _ = mlp(read, weights.up[layer], weights.down[layer])
    h = h + update""", """\
    update, _ = attention(h, weights.qkv[layer], weights.out[layer], config.heads, rope=True, causal=True)
    h = normalise(h + update, "rmsnorm")
    update, _ = mlp(h, weights.up[layer], weights.down[layer])
    h = normalise(h + update, "rmsnorm")"""),
    "A search that never ends": ("while (power / 10).denominator != 1:",
                                 "while (power / 10).denominator != 1 and n < 100:"),
}


def run_cell(cell, code: str) -> dict:
    reply = json.loads(live.run_cell_json(json.dumps({"code": code, "session": cell.session or "lesson",
                                                      "setup": cell.setup, "check": cell.check})))
    assert reply["ok"], reply["error"]
    return reply["value"]


def test_the_lessons_cells_run_and_each_check_fails_on_the_start_and_passes_on_a_solution():
    cells = [read_cell(block) for block in find_cells(LESSON.read_text().split("\n"))]
    assert len(cells) >= 3 and all(cell.check for cell in cells)
    assert set(SOLUTIONS) <= {cell.title for cell in cells}
    try:
        for cell in cells:
            if cell.title in SOLUTIONS:
                start, solution = SOLUTIONS[cell.title]
                assert start in cell.code, f"{cell.title}: the starting code changed; update SOLUTIONS"
                if "while" not in start:  # the endless loop is the browser's to stop (tests/browser/test_cells.py)
                    assert run_cell(cell, cell.code)["check"]["passed"] is False, cell.title
                assert run_cell(cell, cell.code.replace(start, solution))["check"]["passed"] is True, cell.title
            else:
                assert run_cell(cell, cell.code)["check"]["passed"] is True, cell.title
    finally:
        for session in {cell.session or "lesson" for cell in cells}:
            live.reset_session(session)


def test_the_readme_documents_the_block_next_to_the_sandbox_block():
    readme = (PROJECT_ROOT / "README.md").read_text()
    assert readme.index("## Add a sandbox") < readme.index("## Add a code cell") < readme.index("## Add an illustration")
    example = readme[readme.index("## Add a code cell"):readme.index("## Add an illustration")]
    block = re.search(r"````markdown\n(.*?)\n````", example, re.S).group(1)
    assert configs(convert(block)), "the README's example is a valid cell"

