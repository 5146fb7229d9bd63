r"""Math, typeset at build time: `\( … \)` inline and `\[ … \]` on lines of their own, as in LaTeX.

Every formula becomes KaTeX's HTML (and MathML, for screen readers) in the page, so a reader downloads KaTeX's CSS
and fonts, never its JavaScript, and nothing is typeset after the page appears. The KaTeX is the one npm installed
(package.json), run by build_scripts/katex_server.mjs: one Node process per build, started on the first formula
the cache does not hold, fed formulas one per line. Each result is kept in build/cache/math/, keyed by the formula,
KaTeX's version, the options and the server script, so a rebuild starts no Node at all.

Formulas are found by a preprocessor in the author's own lines, after the blocks (sandbox, figure, quiz, code cell)
and before code fences are stashed, so a formula KaTeX rejects stops the build with `docs/<file>.md:<line>: math …`,
the line of the mistake itself. Fenced and inline code are left alone; `\\(` is an escaped backslash, not math.
A display formula standing alone (blank lines around it) becomes `<div class="arithmatex">`, any other formula
`<span class="arithmatex">`: the markup pymdownx.arithmatex gave the browser's KaTeX before.

The MathML costs the page's load some layout, and one way to skip it was measured and not taken (December 2026,
rmsnorm-calculus, fresh profiles, interleaved). Chromium lays the hidden MathML out like any other content: traced,
a load's layout took 218 ms at the median with it and 156 ms with it removed (display: none, which screen readers
would lose too). `content-visibility: auto` on `.katex-mathml` keeps it for screen readers and skips it off screen:
layout 144 ms against 217 ms over 6 traced loads each. But untraced, over 12 loads each, the longest task stayed
where it was (median 77.5 ms against 74.5 ms without) and so did the blocking time (38 against 37.5 ms).
"""

import atexit
import functools
import hashlib
import html
import json
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from markdown import Extension
from markdown.preprocessors import Preprocessor

from build_scripts._files import files_digest, write_atomic
from build_scripts.markdown._blocks import MarkdownSourceError, fenced_code_lines

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SERVER = PROJECT_ROOT / "build_scripts" / "katex_server.mjs"
KATEX_PACKAGE = PROJECT_ROOT / "node_modules" / "katex" / "package.json"
CACHE_DIR = PROJECT_ROOT / "build" / "cache" / "math"
# As the browser's auto-render used them: HTML for the eye, MathML for screen readers (throwOnError and strict are
# the server's: every problem is an error here).
KATEX_OPTIONS = {"output": "htmlAndMathml"}
SHOWN = 40  # characters of a formula an error message quotes

RE_TOKEN = re.compile(r"(?P<code>`+)|\\\\|\\(?P<open>[(\[])")
RE_CLOSE = {"(": re.compile(r"(?:\\.|[^\\])*?\\\)", re.S), "[": re.compile(r"(?:\\.|[^\\])*?\\\]", re.S)}
RE_BLANK_LINE = re.compile(r"\n[ \t]*\n")


class MathError(ValueError):
    """A formula that cannot be typeset; `offset` is where in the searched text the problem is."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


# ---- KaTeX, one Node process per build ------------------------------------------------------------------------------


class KatexServer:
    """Typesets TeX with build_scripts/katex_server.mjs, started on first use; results are cached on disk by formula."""

    def __init__(self, cache_dir: Path = CACHE_DIR):
        self.cache_dir = cache_dir
        self.process = None
        self.stderr = None
        self.lock = threading.Lock()  # one request at a time on the pipe, whichever thread converts a page
        self.memory: dict[str, str] = {}

    @functools.cached_property
    def version(self) -> str:
        try:
            return json.loads(KATEX_PACKAGE.read_text())["version"]
        except FileNotFoundError:
            raise RuntimeError(f"KaTeX is not installed ({KATEX_PACKAGE} is missing): run `make setup`") from None

    @functools.cached_property
    def fingerprint(self) -> str:
        """What every cached result depends on besides its formula: KaTeX, the options and the server script."""
        return f"{self.version}:{json.dumps(KATEX_OPTIONS, sort_keys=True)}:{files_digest([SERVER], PROJECT_ROOT)}"

    def render(self, tex: str, display: bool) -> str:
        """KaTeX's HTML for one formula; a formula KaTeX rejects raises KatexError."""
        key = hashlib.sha256(json.dumps([self.fingerprint, display, tex]).encode()).hexdigest()
        if key in self.memory:
            return self.memory[key]
        cached = self.cache_dir / f"{key}.html"
        if cached.is_file():
            result = cached.read_text(encoding="utf-8")
        else:
            result = self._ask(tex, display)
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(cached, result)
        self.memory[key] = result
        return result

    def _ask(self, tex: str, display: bool) -> str:
        with self.lock:
            if self.process is None:
                self._start()
            try:
                self.process.stdin.write(json.dumps({"tex": tex, "display": display}) + "\n")
                self.process.stdin.flush()
            except BrokenPipeError:
                pass  # the server has stopped; reading its answer says why
            answer = self._read_line()
        if "error" in answer:
            raise KatexError(answer["error"], answer.get("position"))
        return answer["html"]

    def _start(self) -> None:
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("math: Node.js is needed to typeset formulas at build time (apt-get install nodejs)")
        self.stderr = tempfile.TemporaryFile()  # read only if the server dies: a pipe left unread could fill up
        self.process = subprocess.Popen([node, str(SERVER), json.dumps(KATEX_OPTIONS)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.stderr, text=True, encoding="utf-8",
                                        cwd=PROJECT_ROOT)
        atexit.register(self.close)
        started = self._read_line()
        if started.get("version") != self.version:
            self.close()
            raise RuntimeError(f"math: {SERVER.name} runs KaTeX {started.get('version')}, "
                               f"node_modules has {self.version}")

    def _read_line(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            self.stderr.seek(0)
            reason = self.stderr.read().decode(errors="replace").strip() or f"exit status {self.process.returncode}"
            self.process = None
            raise RuntimeError(f"math: the KaTeX server ({SERVER.name}) stopped: {reason}")
        return json.loads(line)

    def close(self) -> None:
        """End the Node process (it also ends by itself when this process exits and its stdin closes)."""
        if self.process is not None:
            self.process.stdin.close()
            self.process.wait()
            self.process = None


class KatexError(Exception):
    """KaTeX's own message for a formula it rejects, and the offset in the formula it points at (or None)."""

    def __init__(self, message: str, position: int | None):
        super().__init__(message)
        self.message, self.position = message, position


KATEX = KatexServer()


def formula_html(tex: str, display: bool, block: bool = False) -> str:
    """One formula as the page gets it: KaTeX's HTML in the `arithmatex` wrapper the stylesheet targets.

    The inner <span> is the one the browser's auto-render put around each formula: with it a display formula keeps
    its margins inside its box, as before, instead of collapsing them with the paragraphs around it.
    """
    tag = "div" if block else "span"
    return f'<{tag} class="arithmatex"><span>{KATEX.render(tex, display)}</span></{tag}>'


# ---- finding formulas -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Formula:
    """One formula in a text: where it starts and ends (delimiters included), its TeX, and its kind."""

    start: int
    end: int
    tex: str
    display: bool

    def shown(self) -> str:
        tex = " ".join(self.tex.split())
        tex = tex if len(tex) <= SHOWN else tex[: SHOWN - 1] + "…"
        return f"\\[{tex}\\]" if self.display else f"\\({tex}\\)"


def find_formulas(text: str) -> Iterator[Formula]:
    """Every `\\( … \\)` and `\\[ … \\]` outside inline code; one left open in its paragraph is an error."""
    position = 0
    while token := RE_TOKEN.search(text, position):
        if token["code"]:
            position = _code_span_end(text, token)
        elif token["open"]:
            closing = RE_CLOSE[token["open"]].match(text, token.end())
            if closing is None or RE_BLANK_LINE.search(text, token.end(), closing.end()):
                close = "\\)" if token["open"] == "(" else "\\]"
                raise MathError(f"math: '{token.group()}' is never closed (add '{close}' in the same paragraph)",
                                token.start())
            yield Formula(token.start(), closing.end(), text[token.end() : closing.end() - 2], token["open"] == "[")
            position = closing.end()
        else:
            position = token.end()  # an escaped backslash


def _code_span_end(text: str, opener: re.Match) -> int:
    """Where an inline code span opened by `opener` ends (past its closing backticks), or just past the opener."""
    closer = re.compile(rf"(?<!`){opener['code']}(?!`)").search(text, opener.end())
    if closer is None or RE_BLANK_LINE.search(text, opener.end(), closer.start()):
        return opener.end()
    return closer.end()


def _typeset(formula: Formula, block: bool = False) -> str:
    try:
        return formula_html(formula.tex, formula.display, block)
    except KatexError as error:
        where = formula.start + 2 + (error.position or 0)
        raise MathError(f"math {formula.shown()}: {error.message}", where) from None


def text_html(text: str) -> str:
    """Plain text (a caption) as HTML: escaped, with its formulas typeset; a bad formula raises MathError."""
    pieces, copied = [], 0
    for formula in find_formulas(text):
        pieces += [html.escape(text[copied : formula.start]), _typeset(formula)]
        copied = formula.end
    return "".join(pieces) + html.escape(text[copied:])


# ---- the page -------------------------------------------------------------------------------------------------------


def _stands_alone(text: str, formula: Formula) -> bool:
    """A display formula on lines of its own, with a blank line (or its container's edge) before and after."""
    line_start = text.rfind("\n", 0, formula.start) + 1
    line_end = len(text) if (end := text.find("\n", formula.end)) < 0 else end
    if text[line_start : formula.start].strip() or text[formula.end : line_end].strip():
        return False
    before = text[: max(line_start - 1, 0)].rsplit("\n", 1)[-1] if line_start else ""
    after = text[line_end + 1 :].split("\n", 1)[0]
    indent = len(text[line_start : formula.start])
    return (not before.strip() or len(before) - len(before.lstrip()) < indent) and not after.strip()


class MathPreprocessor(Preprocessor):
    """Replaces every formula outside code with its typeset HTML (stashed, so Markdown leaves it alone)."""

    def run(self, lines: list[str]) -> list[str]:
        in_code = fenced_code_lines(lines)
        output, run_start = [], 0
        for index in range(len(lines) + 1):
            if index == len(lines) or index in in_code:
                output += self._replace(lines[run_start:index], run_start)
                output += lines[index : index + 1]
                run_start = index + 1
        return output

    def _replace(self, lines: list[str], first_line: int) -> list[str]:
        """Lines outside code, with their formulas typeset; errors name the page's line."""
        text = "\n".join(lines)
        if "\\(" not in text and "\\[" not in text:
            return lines
        pieces, copied = [], 0
        try:
            for formula in find_formulas(text):
                block = formula.display and _stands_alone(text, formula)
                pieces += [text[copied : formula.start], self.md.htmlStash.store(_typeset(formula, block))]
                copied = formula.end
        except MathError as error:
            raise MarkdownSourceError(first_line + text.count("\n", 0, error.offset) + 1, str(error)) from None
        return ("".join(pieces) + text[copied:]).split("\n")


class MathExtension(Extension):
    """Typesets `\\( … \\)` and `\\[ … \\]` at build time."""

    def extendMarkdown(self, md):
        md.registerExtension(self)
        # After our blocks (29.6 to 29.2: their bodies are theirs, a code cell's included), before fences are stashed
        # (25).
        md.preprocessors.register(MathPreprocessor(md), "explainer-math", 29.1)


def makeExtension(**kwargs):  # noqa: N802 (the name Python-Markdown looks for)
    return MathExtension(**kwargs)
