"""The `figure` block: places one of the lessons' illustrations (build_scripts/figures/illustrations.py) by name.

    /// figure | magnitude_vs_direction
    caption: Two vectors with one direction and different lengths.
    alt: Arrows [3, 4] and [9, 12] from the origin along the same line.   # optional: the figure's own alt text
    ///

The page gets the light and dark SVGs (Material shows the one that matches the palette) and the caption (plain text
and `\\( … \\)` math). An unknown
name, a missing caption or an unknown key stops the build with file:line.
"""

from collections.abc import Callable
from dataclasses import dataclass

from markdown import Extension

from build_scripts.figures.jobs import FigureJob, illustration_jobs
from build_scripts.figures.registry import get_declaration
from build_scripts.markdown import _page
from build_scripts.markdown._blocks import Block, BlockPreprocessor, static_images_html
from build_scripts.markdown.math import MathError, text_html
from explainer.sandbox import closest

OPTIONS = ("caption", "alt")


def _text(block: Block, option: str) -> str:
    value = block.options.get(option)
    if not isinstance(value, str) or not value.strip():
        raise block.error(f"{option} must be non-empty text (got {value!r})", option)
    return value.strip()


@dataclass(frozen=True)
class FigurePlacement:
    """An illustration as one page places it."""

    name: str
    caption: str  # HTML, formulas typeset
    alt: str
    figure_jobs: list[FigureJob]  # its SVGs, light and dark


def read_figure(block: Block) -> FigurePlacement:
    """Check a figure block against the illustrations' declarations; errors name the line."""
    try:
        illustration = get_declaration(block.argument)
    except ValueError as error:
        raise block.error(str(error).replace(f"figure {block.argument!r}", "figure")) from None
    for key in block.options:
        if key not in OPTIONS:
            raise block.error(f"unknown key '{key}'{closest(str(key), OPTIONS)}; options: {', '.join(OPTIONS)}", key)
    if "caption" not in block.options:
        raise block.error("needs a caption: every figure tells the reader what to look at")
    alt = _text(block, "alt") if "alt" in block.options else illustration.alt
    try:
        caption = text_html(_text(block, "caption"))
    except MathError as error:
        raise block.error(str(error), "caption") from None
    used_at = f"{_page.PAGE.get().source_path}:{block.line}"
    return FigurePlacement(illustration.name, caption, alt, illustration_jobs(illustration.name, used_at))


def figure_html(placement: FigurePlacement) -> str:
    """The page's <figure>: both palette variants and the caption."""
    light, dark = (job.file_name for job in placement.figure_jobs)
    images = static_images_html(light, dark, placement.alt, "illustration__image")
    return (f'<figure class="illustration" data-figure="{placement.name}">{images}'
            f"<figcaption>{placement.caption}</figcaption></figure>")


class FigureExtension(Extension):
    """Adds the `/// figure | name` block."""

    def extendMarkdown(self, md):
        md.registerExtension(self)
        handlers: dict[str, Callable[[Block], str]] = {"figure": self.place}
        md.preprocessors.register(BlockPreprocessor(md, handlers), "explainer-figure", 29.4)

    @staticmethod
    def place(block: Block) -> str:
        placement = read_figure(block)
        if _page.PREVIEW:
            _page.PREVIEW.figures_needed(placement.figure_jobs)
        return figure_html(placement)


def makeExtension(**kwargs):  # noqa: N802 (the name Python-Markdown looks for)
    return FigureExtension(**kwargs)
