"""Finding our `/// name | argument` blocks in a page's Markdown, with the line each one starts on.

The syntax is pymdown-extensions' generic block (`/// name | argument`, an optional YAML body, a closing `///`), so
lessons read the same as the admonitions and details around them. The blocks are found by a preprocessor rather than
by pymdownx's block framework because that framework turns a block it cannot parse back into plain text, silently,
and knows no line numbers; here every error names `file:line` and stops the build (a live preview shows it in the
page instead, see _page.PREVIEW). Which file, and how its raw HTML reaches the site root, is the
current page's context (_page.py), whichever engine converts it.
"""

import difflib
import html
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import yaml
from markdown.preprocessors import Preprocessor

from build_scripts.figures.jobs import FigureError
from build_scripts.markdown import _page

FIGURE_DIR = "assets/figures"  # site-relative, where the build puts every static figure


def static_images_html(light_file: str, dark_file: str, alt: str, css_class: str) -> str:
    """Light and dark variants of a static figure; Material shows the one matching the palette (#only-light/-dark)."""
    root, alt = _page.PAGE.get().to_site_root, html.escape(alt)
    return "".join(
        f'<img class="{css_class}" src="{root}{FIGURE_DIR}/{file}#only-{scheme}" alt="{alt}" loading="lazy">'
        for file, scheme in ((light_file, "light"), (dark_file, "dark"))
    )


# Block names pymdown-extensions itself handles, which a near-miss check must not flag.
PYMDOWNX_BLOCKS = frozenset(
    "admonition details html tab caption figure-caption table-caption define note tip warning danger info "
    "attention caution error hint important success question failure bug example quote abstract".split()
)

RE_FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<fence>`{3,}|~{3,})")
RE_CLOSER = re.compile(r"^[ ]*/{3,}[ ]*$")
RE_HEADER = re.compile(r"^(?P<indent>[ ]*)(?P<slashes>/{3,})[ ]*(?P<name>[\w-]+)[ ]*(?:\|[ ]*(?P<argument>.*?))?[ ]*$")


class MarkdownSourceError(ValueError):
    """Bad authoring input; the message starts with `file:line:`."""

    def __init__(self, line: int, message: str, path: str | None = None):
        page = _page.PAGE.get()
        self.path = path or page.source_path
        self.line = line + page.line_offset
        self.reason = " ".join(part.strip() for part in message.splitlines() if part.strip())  # always one line
        message = self.reason
        super().__init__(f"{self.path}:{self.line}: {message}")


@dataclass(frozen=True)
class Block:
    """One block as written: where it is, its argument, and its YAML body already parsed."""

    name: str
    argument: str
    options: dict
    option_lines: dict  # option name -> line number of its key
    line: int  # 1-based line of the header
    end: int  # 0-based index of the closing line
    indent: str

    def error(self, message: str, option: str | None = None) -> MarkdownSourceError:
        """An error pointing at this block, or at one option's line when given."""
        return MarkdownSourceError(self.option_lines.get(option, self.line), f"{self.name} '{self.argument}': {message}")


def fenced_code_lines(lines: list[str]) -> set[int]:
    """Indices of lines inside fenced code blocks (fences included): blocks shown as code are not blocks."""
    inside, opener = set(), None
    for index, line in enumerate(lines):
        match = RE_FENCE.match(line)
        if opener is None and match:
            opener = match.group("fence")
            inside.add(index)
        elif opener is not None:
            inside.add(index)
            if match and match.group("fence")[0] == opener[0] and len(match.group("fence")) >= len(opener) \
                    and not line.strip()[len(match.group("fence")):].strip():
                opener = None
    return inside


# libyaml's loader where PyYAML has it: each block body is read by the page check and again by the extension. On an
# error the pure-Python loader reads it again: its marks point at the line at fault, libyaml's at times one further.
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(text: str, loader_class) -> tuple[yaml.Node | None, object]:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        return node, loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()


def _parse_body(body: list[str], first_line: int) -> tuple[dict, dict]:
    """The YAML body as a mapping, plus the line of each top-level key; errors name the line."""
    text = "\n".join(body)
    try:
        try:
            node, options = _load_yaml(text, FAST_LOADER)
        except yaml.YAMLError:
            node, options = _load_yaml(text, yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        if mark is not None:
            line = first_line + mark.line
        elif isinstance(error, yaml.reader.ReaderError):  # a character YAML refuses: its position, not a mark
            line = first_line + text[: error.position].count("\n")
        else:
            line = first_line
        problem = getattr(error, "problem", None) or getattr(error, "reason", None) or str(error)
        if isinstance(error, yaml.reader.ReaderError):
            problem = f"character {error.character!r} is not allowed in YAML ({error.reason})"
        if "mapping values are not allowed" in problem:
            problem += " (a value containing ': ' must be quoted)"
        raise MarkdownSourceError(line, f"malformed YAML: {problem}") from None
    if options is None:
        return {}, {}
    if not isinstance(options, dict):
        raise MarkdownSourceError(first_line, f"the body must be 'name: value' lines (got {type(options).__name__})")
    keys = [(key.value, first_line + key.start_mark.line) for key, _ in node.value]
    seen = set()
    for key, line in keys:
        if key in seen:
            raise MarkdownSourceError(line, f"'{key}' is given twice")
        seen.add(key)
    return options, dict(keys)


def find_blocks(lines: list[str], names: set[str]) -> Iterator[Block]:
    """Every block called one of `names`, outside code fences. A near miss of a name is an error, and so is a closing
    `///` that closes nothing (what is left when a block's first line is missing or misspelled)."""
    in_code = fenced_code_lines(lines)
    others_open = 0  # blocks of other names (pymdownx's, or our other extensions') not closed yet
    index = 0
    while index < len(lines):
        match = None if index in in_code else RE_HEADER.match(lines[index])
        if match and match.group("name") in names:
            block = _read_block(lines, index, match)
            yield block
            index = block.end + 1
            continue
        if match:
            name = match.group("name")
            near = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
            if near and name not in PYMDOWNX_BLOCKS:
                raise MarkdownSourceError(index + 1, f"unknown block '{name}' (did you mean '{near[0]}'?)")
            others_open += 1
        elif index not in in_code and RE_CLOSER.match(lines[index]):
            if not others_open:
                raise MarkdownSourceError(index + 1, "this '///' line closes no block: is the block's first line "
                                                     "('/// name | …') missing or misspelled?")
            others_open -= 1
        index += 1


def _read_block(lines: list[str], start: int, header: re.Match) -> Block:
    indent, closing = header.group("indent"), header.group("indent") + header.group("slashes")
    for end in range(start + 1, len(lines)):
        if lines[end].rstrip() == closing:
            break
    else:
        raise MarkdownSourceError(start + 1, f"'{header.group('name')}' block is never closed (add a line '{closing}')")
    body = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[start + 1 : end]]
    options, option_lines = _parse_body(body, start + 2)
    argument = (header.group("argument") or "").strip()
    return Block(header.group("name"), argument, options, option_lines, start + 1, end, indent)


def error_line(error: Exception) -> str:
    """How the build prints one of its errors: a Markdown error names its file:line itself, the others say who speaks."""
    return str(error) if isinstance(error, MarkdownSourceError) else f"explainer: {error}"


def previewed(error: Exception) -> str:
    """In a live preview (_page.PREVIEW): report an authoring error and return the box that shows it in the page.
    Otherwise raise it: the build stops."""
    if _page.PREVIEW is None:
        raise error
    _page.PREVIEW.report(error_line(error))
    return _page.error_box(str(error))


def shown_in_preview(run: Callable[[Preprocessor, list[str]], list[str]]):
    """Decorate a preprocessor's run: in a live preview, an authoring error is reported and shown at the top of the
    page, which keeps its text, instead of stopping the server; otherwise it is raised."""

    def guarded(self: Preprocessor, lines: list[str]) -> list[str]:
        try:
            return run(self, lines)
        except (MarkdownSourceError, FigureError) as error:
            return [self.md.htmlStash.store(previewed(error)), "", *lines]

    return guarded


class BlockPreprocessor(Preprocessor):
    """Replace each block with the HTML its handler returns (stashed, so Markdown leaves it alone), or with the
    Markdown lines it returns (which do not keep the page's line count: only for blocks read after every other)."""

    def __init__(self, md, handlers: dict[str, Callable[[Block], str | list[str]]]):
        super().__init__(md)
        self.handlers = handlers
        _page.register_page_context(md)

    @shown_in_preview
    def run(self, lines: list[str]) -> list[str]:
        output, copied = [], 0
        for block in find_blocks(lines, set(self.handlers)):
            try:
                placed = self.handlers[block.name](block)
            except (MarkdownSourceError, FigureError) as error:
                placed = previewed(error)  # a live preview shows it in the block's place; the others still build
            output.extend(lines[copied : block.line - 1])
            copied = block.end + 1
            if isinstance(placed, list):
                output.extend(["", *(block.indent + line if line else line for line in placed), ""])
                continue
            # As many lines as the block had (at least the 3 that keep the HTML its own paragraph), so blocks
            # read after this one still report their authors' line numbers.
            replacement = ["", block.indent + self.md.htmlStash.store(placed), ""]
            output.extend(replacement + [""] * (block.end + 2 - block.line - len(replacement)))
        output.extend(lines[copied:])
        return output
