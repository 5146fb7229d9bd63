"""`{{ name }}` in a lesson: the text of a named quantity (build_scripts/quantities), computed at build time.

Substituted before anything else reads the page, so it works in prose, tables, admonitions and math alike; code
(fenced or inline) is left alone. An unknown name stops the build with `file:line` and the closest valid name.
"""

import re

from markdown import Extension
from markdown.preprocessors import Preprocessor

from build_scripts.markdown import _page
from build_scripts.markdown._blocks import MarkdownSourceError, fenced_code_lines, shown_in_preview
from build_scripts.quantities import evaluate

RE_QUANTITY = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")
RE_INLINE_CODE = re.compile(r"(`+)(.+?)\1")


def substitute_line(line: str, line_number: int) -> str:
    """One line with every {{ name }} outside inline code replaced by its text."""
    def replace(match):
        try:
            return evaluate(match.group(1))
        except ValueError as error:
            raise MarkdownSourceError(line_number, str(error)) from None

    pieces, last = [], 0
    for code in RE_INLINE_CODE.finditer(line):
        pieces += [RE_QUANTITY.sub(replace, line[last : code.start()]), code.group(0)]
        last = code.end()
    return "".join(pieces) + RE_QUANTITY.sub(replace, line[last:])


def substitute(lines: list[str]) -> list[str]:
    """A page's lines with every {{ name }} outside code replaced by its text."""
    in_code = fenced_code_lines(lines)
    return [line if index in in_code or "{{" not in line else substitute_line(line, index + 1)
            for index, line in enumerate(lines)]


class QuantityPreprocessor(Preprocessor):
    """Replaces every {{ name }} outside code with the quantity's text."""

    @shown_in_preview
    def run(self, lines: list[str]) -> list[str]:
        return substitute(lines)


class QuantityExtension(Extension):
    """Adds `{{ name }}`."""

    def extendMarkdown(self, md):
        md.registerExtension(self)
        _page.register_page_context(md)
        # Before the blocks (29.5, 29.4) read the page, so captions and quiz feedback may quote quantities too.
        md.preprocessors.register(QuantityPreprocessor(md), "explainer-quantities", 29.6)


def makeExtension(**kwargs):  # noqa: N802 (the name Python-Markdown looks for)
    return QuantityExtension(**kwargs)
