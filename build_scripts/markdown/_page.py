"""The page being converted, as whichever engine runs our Markdown extensions describes it.

Error messages name the author's file and line (`docs/lessons/norm.md:42`), and raw HTML that points at files the
build writes (`assets/figures/…`) needs the way from the page to the site root. Each engine tells us differently:

- Zensical registers its page with every Markdown instance it makes (`zensical.extensions.context`: a preprocessor
  holding `page.path`, relative to docs_dir, and the config). Our extensions read it from there, and since Zensical
  resolves a relative `src` in raw HTML against the Markdown file's folder, paths go up from that folder.
- MkDocs tells extensions nothing; the explainer plugin sets the page in `on_page_markdown`. MkDocs leaves raw HTML
  alone, so paths go up from the page's URL.
- Plain Python-Markdown (tests, other tools): no page; errors still name the line, paths start at the domain root.

A live preview (`make serve`, under either engine) sets PREVIEW: a broken page is then converted from its last good
version, or shows its error in place of what could not be built, instead of stopping the server (see
build_scripts/pipeline/preview.py); under Zensical, figures a page newly needs are drawn before it is written.
"""

import contextlib
import contextvars
import html
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from markdown.preprocessors import Preprocessor

ZENSICAL_CONTEXT = "rendering_context"  # the name zensical.extensions.context registers its preprocessor under


@dataclass(frozen=True)
class PageContext:
    """Where the page comes from and where it goes."""

    source_path: str = "<markdown>"  # as the author knows it (docs/lessons/norm.md): what errors name
    line_offset: int = 0  # lines the engine cut from the top (YAML front matter) before our extensions saw the page
    to_site_root: str = "/"  # put before a site-relative path in the page's raw HTML to reach that file


PAGE: contextvars.ContextVar[PageContext] = contextvars.ContextVar("PAGE", default=PageContext())


@dataclass(frozen=True)
class Preview:
    """What a live preview does instead of stopping: report a broken block, and draw the figures a page needs."""

    report: Callable[[str], None]  # one line per error, e.g. print to stderr
    figures_needed: Callable[[list], None]  # FigureJobs a page places; drawn and put into the site before it is shown
    # Under Zensical, which tells no plugin about its pages: given a page (as errors name it) and its Markdown, the
    # Markdown to convert and, when that is the page's last good version instead, the error it stands for.
    page_markdown: Callable[[str, str], tuple[str, str | None]] | None = None


PREVIEW: Preview | None = None


@contextlib.contextmanager
def on_page(context: PageContext) -> Iterator[PageContext]:
    """Convert (or scan) inside `with on_page(...)`: errors and paths then refer to that page."""
    token = PAGE.set(context)
    try:
        yield context
    finally:
        PAGE.reset(token)


def front_matter_lines(source: str, markdown: str) -> int:
    """How many lines the engine cut from the top of the file `source` to give `markdown` (0 if it cut nothing)."""
    return source[: len(source) - len(markdown)].count("\n") if markdown and source.endswith(markdown) else 0


def mkdocs_page(docs_dir: str, src_uri: str, url: str, source: str, markdown: str) -> PageContext:
    """The context of a page MkDocs converts (docs_dir as shown to authors, e.g. "docs")."""
    return PageContext(f"{docs_dir}/{src_uri}", front_matter_lines(source, markdown), "../" * url.count("/"))


def zensical_page(root_dir: str, docs_dir: str, path: str, lines: list[str]) -> PageContext:
    """The context of a page Zensical converts: `path` is relative to docs_dir, `lines` what Zensical passed us."""
    source_file = Path(root_dir, docs_dir, path)
    try:
        source = source_file.read_text(encoding="utf-8")
    except OSError:
        source = ""
    docs = Path(docs_dir)
    shown = docs.relative_to(root_dir) if docs.is_absolute() and docs.is_relative_to(root_dir) else docs
    return PageContext(f"{shown.as_posix()}/{path}", front_matter_lines(source, "\n".join(lines)), "../" * path.count("/"))


class PageContextPreprocessor(Preprocessor):
    """Runs first: under Zensical, makes its page the current one (under MkDocs the plugin has done so already)."""

    def run(self, lines: list[str]) -> list[str]:
        if ZENSICAL_CONTEXT in self.md.preprocessors:
            zensical = self.md.preprocessors[ZENSICAL_CONTEXT]
            page = zensical_page(zensical.config["root_dir"], zensical.config["docs_dir"], zensical.page.path, lines)
            PAGE.set(page)
            if PREVIEW is not None and PREVIEW.page_markdown is not None:
                markdown, error = PREVIEW.page_markdown(page.source_path, "\n".join(lines))
                lines = markdown.split("\n")
                if error:  # Zensical writes only the pages that changed: the broken one says it shows its last version
                    # Raw HTML, not stashed: the whitespace normalisation after this preprocessor drops stash marks.
                    lines = [error_box(error, note=LAST_GOOD_NOTE), "", *lines]
        return lines


def register_page_context(md) -> None:
    """Called by each of our extensions; the first registers the preprocessor (before whitespace normalisation, 30)."""
    if "explainer-page" not in md.preprocessors:
        md.preprocessors.register(PageContextPreprocessor(md), "explainer-page", 31)


LAST_GOOD_NOTE = "The page shows its last good version until this is fixed."


def error_box(*errors: str, note: str = "") -> str:
    """The HTML a live preview shows at the top of a page: the errors that stand, one paragraph each, and a note."""
    paragraphs = "".join(f"<p>{html.escape(error)}</p>" for error in errors)
    note = f"<p><em>{html.escape(note)}</em></p>" if note else ""
    return (f'<div class="admonition failure explainer-error" role="alert"><p class="admonition-title">'
            f"Build error</p>{paragraphs}{note}</div>")
