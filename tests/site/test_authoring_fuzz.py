"""A contributor's mistakes, fuzzed: valid sandbox, figure, quiz, cell and trainer blocks, math and {{ quantity }}
references are mutated (truncated YAML, tabs, unknown keys, wrong types, NaN and huge numbers, unicode, unclosed and nested blocks, blocks in
lists and admonitions, repeated blocks, CRLF files, a byte-order mark) and each page is built for real, in process.

Whatever the mutation, the outcome is one of two:
- the build succeeds, every block of the page is in it (none dropped silently, none left as text) and ids are unique;
- the build fails with one line `docs/page.md:<line>: <message>` (a line of the page) and writes no page.
Never a traceback (an exception other than the build's own error), never a half-built site.
"""

import contextlib
import contextvars
import logging
import os
import re
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort, BuildError, PluginError

from build_scripts.figures.jobs import DEFAULT_CACHE_DIR

# 70 pages (about 20 s here) in `make test`; FUZZ_EXAMPLES=1000 searches deeper by hand.
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "70"))
fuzzed = settings(derandomize=True, database=None, deadline=None, max_examples=EXAMPLES,
                  suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

SANDBOX = """\
/// sandbox | projection_shadow
u_angle: 30
fixed: [v_length]
caption: Drag v and watch its shadow.
height: 320
///"""

FIGURE = """\
/// figure | magnitude_vs_direction
caption: Two vectors along one direction.
///"""

QUIZ = """\
/// quiz | Which part keeps the stream's scale in check?
type: single
answers:
  - text: The norm in front of each branch.
    correct: true
    feedback: Right, the branch reads a normalised copy.
  - text: The causal mask.
    feedback: No, the mask decides who reads whom.
///"""

CELL = """\
/// cell | Square it
session: fuzz
timeout: 5
check:
  output: "9"
  success: Right.
```python
x = 3
print(x * x)
```
///"""

TRAINER = """\
/// trainer
caption: Train it yourself.
///"""

QUANTITY = "The stream grew {{ ablation.no_norm_growth_24 }}-fold."
MATH = "A norm: \\(\\lVert h \\rVert = \\sqrt{h^\\top h}\\), and \\[ y = x + F(x). \\]"
BLOCKS = {"sandbox": SANDBOX, "figure": FIGURE, "quiz": QUIZ, "cell": CELL, "trainer": TRAINER, "quantity": QUANTITY,
          "math": MATH}

CONFIG = """\
site_name: Fuzz
site_url: http://127.0.0.1:8000/
docs_dir: docs
strict: true
theme:
  name: mkdocs
plugins:
  - explainer:
      enabled: false
      cache_dir: {cache}
markdown_extensions:
  - build_scripts.markdown.quantities
  - build_scripts.markdown.sandbox
  - build_scripts.markdown.figure
  - build_scripts.markdown.quiz
  - build_scripts.markdown.trainer
  - build_scripts.markdown.math
  - build_scripts.markdown.cell
  - admonition
  - pymdownx.superfences
  - pymdownx.blocks.admonition
  - pymdownx.blocks.details
nav:
  - page.md
"""

ERROR_LINE = re.compile(r"^docs/page\.md:(\d+): \S.*$")
HEADER = re.compile(r"^[ ]*/{3,}[ ]*(sandbox|figure|quiz|cell|trainer)\b")


# ---- mutations: each takes a block's text and a hypothesis draw ---------------------------------------------------


def truncate(text, draw):
    return text[: draw(st.integers(0, len(text)))]


def tabs(text, draw):
    lines = text.split("\n")
    index = draw(st.integers(0, len(lines) - 1))
    lines[index] = "\t" + lines[index]
    return "\n".join(lines)


def unknown_key(text, draw):
    key = draw(st.sampled_from(["captoin", "colour", "u_angel", "answer", "zzz", "heigth"]))
    return text.replace("\n", f"\n{key}: 1\n", 1)


def wrong_type(text, draw):
    value = draw(st.sampled_from(["[1, 2]", "{a: 1}", "yes", "'text'", "-3", "0", "null", "~", "[]"]))
    return re.sub(r"(?m)^(\s*(?:- )?\w+): .*$", lambda m: f"{m.group(1)}: {value}", text, count=1)


def bad_number(text, draw):
    value = draw(st.sampled_from([".nan", ".inf", "-.inf", "1e400", "10000000000000000000000", "-0", "1_000"]))
    return re.sub(r"(?m)^(u_angle|height|caption|type): .*$", lambda m: f"{m.group(1)}: {value}", text, count=1)


def unicode(text, draw):
    garbage = draw(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6))
    position = draw(st.integers(0, len(text)))
    return text[:position] + garbage + text[position:]


def unclose(text, draw):
    return text.rsplit("///", 1)[0] if text.endswith("///") else text + "\n///"


def nest(text, draw):
    inner = draw(st.sampled_from(list(BLOCKS.values())))
    lines = text.split("\n")
    at = draw(st.integers(1, max(1, len(lines) - 1)))
    return "\n".join(lines[:at] + inner.split("\n") + lines[at:])


def in_list(text, draw):
    return "- an item\n\n" + textwrap.indent(text, "    ")


def in_admonition(text, draw):
    return '!!! note "Try it"\n\n' + textwrap.indent(text, "    ")


def repeated(text, draw):
    return f"{text}\n\n{text}"


def bad_quantity(text, draw):
    return draw(st.sampled_from(["{{ ablation.no_such_thing }}", "{{ }}", "{{ ablation.no_norm_growth_24", "{{{{ x }}}}",
                                 "`{{ in_code }}`", "{{ 1 + 2 }}", "{{ ablation.no_norm_growth_24 }}{{ a.b }}"]))


MUTATIONS = [truncate, tabs, unknown_key, wrong_type, bad_number, unicode, unclose, nest, in_list, in_admonition,
             repeated, bad_quantity]


@st.composite
def pages(draw):
    """A page of one to three blocks, each valid or mutated, written with LF or CRLF, with or without a BOM."""
    parts = ["# Fuzzed page", ""]
    for _ in range(draw(st.integers(1, 3))):
        text = BLOCKS[draw(st.sampled_from(list(BLOCKS)))]
        for mutation in draw(st.lists(st.sampled_from(MUTATIONS), max_size=2)):
            text = mutation(text, draw)
        parts += [text, "", "Some prose after it.", ""]
    page = "\n".join(parts)
    if draw(st.booleans()):
        page = page.replace("\n", "\r\n")
    return ("\ufeff" if draw(st.booleans()) else "") + page


# ---- what the built page holds --------------------------------------------------------------------------------------


class Built(HTMLParser):
    def __init__(self, html: str):
        super().__init__()
        self.ids, self.blocks = [], {"sandbox": 0, "figure": 0, "quiz": 0, "cell": 0, "trainer": 0}
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.append(attrs["id"])
        classes = (attrs.get("class") or "").split()
        if tag == "figure" and "sandbox" in classes:
            self.blocks["sandbox"] += 1
        elif tag == "figure" and "illustration" in classes:
            self.blocks["figure"] += 1
        elif tag == "form" and "quiz" in classes:
            self.blocks["quiz"] += 1
        elif tag == "div" and "cell" in classes:
            self.blocks["cell"] += 1
        elif tag == "figure" and "trainer" in classes:
            self.blocks["trainer"] += 1


def headers_outside_code(page: str) -> dict[str, int]:
    """Block headers as an author sees them: lines `/// name` outside fenced code (counted independently of the
    extensions' own scanner)."""
    counts, fence = {"sandbox": 0, "figure": 0, "quiz": 0, "cell": 0, "trainer": 0}, None
    for line in page.lstrip("\ufeff").replace("\r\n", "\n").split("\n"):
        marker = re.match(r"^\s*(`{3,}|~{3,})", line)
        if marker:
            fence = None if fence and marker.group(1).startswith(fence) else fence or marker.group(1)
            continue
        match = None if fence else HEADER.match(line)
        if match:
            counts[match.group(1)] += 1
    return counts


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    (root / "docs").mkdir()
    cache = DEFAULT_CACHE_DIR  # the project's figure cache: unchanged figures are not drawn again
    (root / "mkdocs.yml").write_text(CONFIG.format(cache=cache), encoding="utf-8")
    return root


class Errors(logging.Handler):
    """The build's ERROR log lines: where MkDocs prints a build error (its exception only says it aborted)."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def build_page(project: Path, page: str):
    """Build the page; returns (the build's error lines, or None if it succeeded; the built page's HTML or None).
    Any exception other than the build's own error propagates: that is a traceback for the contributor."""
    (project / "docs" / "page.md").write_bytes(page.encode("utf-8"))
    site = project / "site"
    for old in site.rglob("*.html") if site.exists() else ():
        old.unlink()
    errors = Errors()
    logger = logging.getLogger("mkdocs")
    logger.addHandler(errors)
    try:
        with contextlib.chdir(project):
            # In a context of its own: the build sets per-page context variables (the page's path, its depth) that
            # must not leak into the tests that run after this one in the same process.
            contextvars.copy_context().run(build, load_config(str(project / "mkdocs.yml"), site_dir=str(site)))
    except (Abort, BuildError, PluginError):
        return errors.lines, None
    finally:
        logger.removeHandler(errors)
    return None, (site / "page" / "index.html").read_text(encoding="utf-8")


@fuzzed
@given(page=pages())
def test_every_mutated_page_builds_whole_or_fails_with_one_file_line_error(project, page):
    errors, html = build_page(project, page)
    event("build failed with a file:line error" if errors is not None else "build succeeded")
    if errors is not None:
        assert not any("Traceback" in line for line in errors), errors
        located = [line for line in errors if ERROR_LINE.match(line)]
        assert len(located) == 1, f"not one docs/page.md:<line> error: {errors}\npage:\n{page}"
        assert "\n" not in located[0]
        assert 1 <= int(ERROR_LINE.match(located[0]).group(1)) <= page.count("\n") + 1, f"line outside: {located}"
        assert not list((project / "site").rglob("*.html")), "a failed build wrote pages (half-built site)"
        return
    built = Built(html)
    assert built.blocks == headers_outside_code(page), f"a block was dropped or duplicated:\n{page}"
    assert len(built.ids) == len(set(built.ids)), f"duplicate ids: {sorted(built.ids)}"
    assert "///" not in re.sub(r"<(pre|code)\b.*?</\1>", "", html, flags=re.S), "a block was left as text"
