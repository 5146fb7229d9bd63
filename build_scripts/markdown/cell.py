"""The `cell` block: a fenced Python code block that readers can edit and run in the page.

    /// cell | Write your own RMSNorm          (the title is optional)
    session: norm          # cells of one session build on each other, in page order (see README.md)
    timeout: 5             # seconds the code may run before it is stopped (default 10, at most 60)
    autorun: true          # run as soon as the cell nears the screen (default false: the reader presses Run)
    setup: |               # hidden code run before the cell's, each time
      import numpy as np
    check:                 # optional: expected output and/or a small test, with a message for each outcome
      output: "3"
      test: |
        assert abs(rmsnorm(x)).max() < 10
      success: Your RMSNorm matches.
      failure: Not yet; look at the axis you average over.

    ```python
    def rmsnorm(x):
        ...
    ```
    ///

Options first (YAML, like the sandbox and quiz blocks), then the code as an ordinary fenced block: the code stays
code in an author's editor, and multi-line `setup` and `test` fit where a fence's header line could not hold them.
The fence is left in the page for pymdownx.superfences, so without JavaScript the cell is the site's ordinary
highlighted code block; build_scripts/browser/cells.js replaces it with an editor. Every option, and the code, setup
and test as Python, is checked at build: a mistake stops it with `file:line`.
"""

import difflib
import html
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from markdown import Extension
from markdown.preprocessors import Preprocessor

from build_scripts.markdown._blocks import (
    PYMDOWNX_BLOCKS,
    RE_FENCE,
    RE_HEADER,
    Block,
    MarkdownSourceError,
    _parse_body,
    fenced_code_lines,
)
from build_scripts.site_runtime import BOOT_TIMEOUT_MS
from explainer.sandbox import closest

NAME = "cell"
LANGUAGES = ("python", "py")
DEFAULT_TIMEOUT = 10  # seconds
MAX_TIMEOUT = BOOT_TIMEOUT_MS / 1000  # the runtime's own limit on any request (runtime.json's timeout_ms)
RE_SESSION = re.compile(r"[A-Za-z][\w-]{0,39}")
CHECK_KEYS = ("output", "test", "success", "failure")
TITLE_SHOWN = 48  # characters of the title an error message quotes


# ---- options: each checked by one small typed validator ---------------------------------------------------------


def _flag(value, option: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{option} must be true or false (got {value!r})")
    return value


def _timeout(value, option: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_TIMEOUT:
        raise ValueError(f"{option} must be a number of seconds above 0 and at most {MAX_TIMEOUT:g} (got {value!r})")
    return float(value)


def _session(value, option: str) -> str:
    if not isinstance(value, str) or not RE_SESSION.fullmatch(value):
        raise ValueError(f"{option} must be a name of letters, digits, '-' or '_' starting with a letter, "
                         f"at most 40 characters (got {value!r})")
    return value


def _text(value, option: str) -> str:
    if not isinstance(value, str) or not value.strip():
        quote = " (put it in quotes)" if isinstance(value, int | float) and not isinstance(value, bool) else ""
        raise ValueError(f"{option} must be non-empty text (got {value!r}){quote}")
    return value


class PythonSyntaxError(ValueError):
    """Code that does not compile; `line` is the line within that code."""

    def __init__(self, what: str, error: SyntaxError):
        self.line = error.lineno or 1
        super().__init__(f"{what} is not valid Python: {error.msg} (its line {self.line})")


def _python(code: str, what: str) -> str:
    """`code` if it compiles (the reader's browser runs Python 3.12, like the build's preferred Python)."""
    try:
        compile(code, f"<{what}>", "exec", dont_inherit=True)
    except SyntaxError as error:
        raise PythonSyntaxError(what, error) from None
    return code


def _code(value, option: str) -> str:
    return _python(_text(value, option), option)


def _check(value, option: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{option} must hold 'output:' and/or 'test:' lines, with optional 'success:' and "
                         f"'failure:' messages (got {value!r})")
    for key in value:
        if key not in CHECK_KEYS:
            raise ValueError(f"{option}: unknown key '{key}'{closest(str(key), CHECK_KEYS)}; "
                             f"valid keys: {', '.join(CHECK_KEYS)}")
    if "output" not in value and "test" not in value:
        raise ValueError(f"{option} needs 'output:' (what the code should print) or 'test:' (Python that raises "
                         "when the reader's code is wrong), or both")
    checked = {key: _text(value[key], f"{option}.{key}") for key in value}
    if "test" in checked:
        _python(checked["test"], f"{option}.test")
    return checked


OPTIONS: dict[str, tuple[object, Callable]] = {
    "session": (None, _session),  # None: the page's own namespace, shared by every cell that names no session
    "timeout": (DEFAULT_TIMEOUT, _timeout),
    "autorun": (False, _flag),
    "setup": ("", _code),
    "check": (None, _check),
}


# ---- finding the blocks -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CellBlock:
    """One cell as written: its options (a Block with the YAML part) and the fenced code after them."""

    block: Block
    fence: tuple[str, ...]  # the fence's lines as written, opening and closing lines included
    code: str
    code_line: int  # 1-based line of the code's first line

    def error(self, message: str, option: str | None = None, line: int | None = None) -> MarkdownSourceError:
        """An error pointing at `line`, else at one option's line when given, else at the cell's first line."""
        title = " ".join(self.block.argument.split())
        if len(title) > TITLE_SHOWN:
            title = title[:TITLE_SHOWN].rsplit(" ", 1)[0] + "…"
        line = line or self.block.option_lines.get(option, self.block.line)
        return MarkdownSourceError(line, f"cell '{title}': {message}" if title else f"cell: {message}")


def find_cells(lines: list[str]) -> Iterator[CellBlock]:
    """Every `/// cell` block outside code fences, in page order; a near miss of the name is an error."""
    in_code = fenced_code_lines(lines)
    index = 0
    while index < len(lines):
        match = None if index in in_code else RE_HEADER.match(lines[index])
        if match and match.group("name") == NAME:
            cell = _read_cell(lines, index, match)
            yield cell
            index = cell.block.end + 1
            continue
        if match and match.group("name") not in PYMDOWNX_BLOCKS \
                and difflib.get_close_matches(match.group("name"), [NAME], n=1, cutoff=0.75):
            raise MarkdownSourceError(index + 1, f"unknown block '{match.group('name')}' (did you mean '{NAME}'?)")
        index += 1


def _read_cell(lines: list[str], start: int, header: re.Match) -> CellBlock:
    indent, closing = header.group("indent"), header.group("indent") + header.group("slashes")
    body_start = start + 1
    opener = next((i for i in range(body_start, len(lines)) if RE_FENCE.match(lines[i])
                   or lines[i].rstrip() == closing), None)
    if opener is None or lines[opener].rstrip() == closing:
        raise MarkdownSourceError(start + 1, "a cell needs its code in a fenced block after the options "
                                             "(a line ```python, the code, a line ```), then a line "
                                             f"'{closing}' closing the cell")
    fence = RE_FENCE.match(lines[opener])
    language = lines[opener].strip()[len(fence.group("fence")):].strip().split(" ", 1)[0].lstrip("{.").rstrip("}")
    if language not in LANGUAGES:
        raise MarkdownSourceError(opener + 1, f"a cell's code must be a ```python fence (got "
                                              f"{lines[opener].strip()!r})")
    fence_end = next((i for i in range(opener + 1, len(lines)) if _closes(lines[i], fence.group("fence"))), None)
    if fence_end is None:
        raise MarkdownSourceError(opener + 1, f"the cell's code fence is never closed (add a line "
                                              f"'{fence.group('indent')}{fence.group('fence')}')")
    end = next((i for i in range(fence_end + 1, len(lines)) if lines[i].strip()), None)
    if end is None or lines[end].rstrip() != closing:
        where = end + 1 if end is not None else start + 1
        raise MarkdownSourceError(where, f"a cell ends with a line '{closing}' right after its code fence "
                                         "(options go before the fence)")
    body = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[body_start:opener]]
    options, option_lines = _parse_body(body, body_start + 1)
    block = Block(NAME, (header.group("argument") or "").strip(), options, option_lines, start + 1, end, indent)
    code_indent = fence.group("indent")
    code = "\n".join(line[len(code_indent):] if line.startswith(code_indent) else line.lstrip()
                     for line in lines[opener + 1 : fence_end])
    return CellBlock(block, tuple(lines[opener : fence_end + 1]), code, opener + 2)


def _closes(line: str, opener: str) -> bool:
    match = RE_FENCE.match(line)
    return bool(match) and match.group("fence")[0] == opener[0] and len(match.group("fence")) >= len(opener) \
        and not line.strip()[len(match.group("fence")):].strip()


# ---- reading a cell ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """A checked cell, ready for the page: its code and what the browser needs to run it."""

    title: str
    code: str
    session: str | None
    timeout: float
    autorun: bool
    setup: str
    check: dict | None

    def config(self) -> dict:
        """The JSON the page's cells.js reads (the cell's data-config attribute)."""
        return {"title": self.title, "code": self.code, "session": self.session, "timeout": self.timeout,
                "autorun": self.autorun, "setup": self.setup, "check": self.check}


def read_cell(cell: CellBlock) -> Cell:
    """Check a cell's options and its Python; errors name the option's line (or the code's)."""
    block = cell.block
    values = {name: default for name, (default, _) in OPTIONS.items()}
    for key, value in block.options.items():
        if key not in OPTIONS:
            raise cell.error(f"unknown option '{key}'{closest(str(key), OPTIONS)}; valid: {', '.join(OPTIONS)}", key)
        try:
            values[key] = OPTIONS[key][1](value, key)
        except ValueError as error:
            raise cell.error(str(error), key) from None
    if not cell.code.strip():
        raise cell.error("the code block is empty: give the reader code to start from", line=cell.code_line - 1)
    try:
        _python(cell.code, "the code")
    except PythonSyntaxError as error:
        raise cell.error(str(error).replace(f" (its line {error.line})", ""), line=cell.code_line + error.line - 1) \
            from None
    return Cell(block.argument, cell.code, values["session"], float(values["timeout"]), values["autorun"],
                values["setup"], values["check"])


# ---- HTML -------------------------------------------------------------------------------------------------------


def cell_opening_html(cell: Cell, number: int) -> str:
    """The cell's container up to its code: cells.js reads the config and puts the editor where the code is."""
    config = json.dumps(cell.config(), ensure_ascii=False, separators=(",", ":"))
    title = f'<p class="cell__title">{html.escape(cell.title)}</p>' if cell.title else ""
    # The config is an attribute, not a JSON <script>: instant navigation re-creates inline scripts as JavaScript.
    return (f'<div class="cell" id="cell-{number}" data-cell="{number}" data-state="static" '
            f'data-config="{html.escape(config)}">{title}')


class CellPreprocessor(Preprocessor):
    """Wraps each cell's code fence in its container, numbering cells in page order for unique ids."""

    def run(self, lines: list[str]) -> list[str]:
        output, copied = [], 0
        for number, cell in enumerate(find_cells(lines), start=1):
            block = cell.block
            opening = self.md.htmlStash.store(cell_opening_html(read_cell(cell), number))
            closing = self.md.htmlStash.store("</div>")
            output.extend(lines[copied : block.line - 1])
            # The container's start replaces the header and the options, its end the closing line; the fence stays
            # for superfences. Padding keeps the line count (when the options leave room for the blank lines that
            # keep each piece apart), so blocks read after this one still report their authors' line numbers.
            before = cell.code_line - 1 - block.line  # header and options
            after = block.end - (cell.code_line - 2 + len(cell.fence))  # blank lines and the closing line
            output.extend(_padded(["", block.indent + opening, ""], before))
            output.extend(cell.fence)
            output.extend(_padded(["", block.indent + closing, ""], after))
            copied = block.end + 1
        output.extend(lines[copied:])
        return output


def _padded(lines: list[str], count: int) -> list[str]:
    return lines + [""] * (count - len(lines))


class CellExtension(Extension):
    """Adds the `/// cell` block."""

    def extendMarkdown(self, md):
        md.registerExtension(self)
        # Beside the other blocks: after {{ quantities }} (29.6), before superfences (25), which renders the fence.
        md.preprocessors.register(CellPreprocessor(md), "explainer-cell", 29.2)


def makeExtension(**kwargs):  # noqa: N802 (the name Python-Markdown looks for)
    return CellExtension(**kwargs)
