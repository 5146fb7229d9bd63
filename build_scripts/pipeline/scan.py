"""Reading the pages before any engine converts them: every block checked (file:line errors), every figure listed.

The Markdown extensions raise the same errors while converting; checking first turns them into one clean line
instead of an engine's traceback, and tells the build which static figures the pages need. A sandbox is drawn at
its starting values here too (its readouts and label go into the page), so a sandbox that raises is named here, once.
"""

import functools
import re
from pathlib import Path

from markdown import Markdown
from markdown.preprocessors import NormalizeWhitespace

from build_scripts.figures.jobs import FigureJob
from build_scripts.markdown._blocks import find_blocks
from build_scripts.markdown._page import PageContext, on_page
from build_scripts.pipeline.config import BLOCK_EXTENSIONS, Site, SiteConfigError, nav_pages

# YAML front matter as both engines strip it before converting (MkDocs' mkdocs.utils.meta, Zensical alike).
RE_FRONT_MATTER = re.compile(r"^-{3}[ \t]*\n(.*?\n)(?:\.{3}|-{3})[ \t]*\n", re.DOTALL)


@functools.cache
def _normalize_whitespace() -> NormalizeWhitespace:
    return NormalizeWhitespace(Markdown())  # as both engines make it: tabs are 4 columns


def scan_page(markdown: str) -> list[FigureJob]:
    """Check one page's blocks (call inside `on_page(...)`) and return the static figures it shows.

    Raises MarkdownSourceError (a block or quantity is wrong) or FigureError (a sandbox raises at its values)."""
    from build_scripts.markdown import reference
    from build_scripts.markdown.cell import find_cells, read_cell
    from build_scripts.markdown.figure import read_figure
    from build_scripts.markdown.quantities import substitute
    from build_scripts.markdown.quiz import read_quiz
    from build_scripts.markdown.sandbox import read_placement
    from build_scripts.markdown.trainer import read_trainer
    from explainer.sandbox import registry

    sandboxes, jobs = registry(), []
    # The lines as the extensions get them: Python-Markdown first turns tabs into spaces and CRLF into LF.
    lines = _normalize_whitespace().run(markdown.split("\n"))
    lines = substitute(lines)  # blocks may quote {{ quantities }}
    for block in find_blocks(lines, {*BLOCK_EXTENSIONS.values(), reference.NAME}):
        if block.name == "sandbox":
            placement = read_placement(block, sandboxes)
            placement.view()
            jobs += placement.figure_jobs()
        elif block.name == "figure":
            jobs += read_figure(block).figure_jobs
        elif block.name == "trainer":
            jobs += read_trainer(block).figure_jobs()
        elif block.name == reference.NAME:
            reference.read_reference(block)
        else:
            read_quiz(block, lines)
    for cell in find_cells(lines):  # a cell holds a code fence: read by its own scanner
        read_cell(cell)
    return jobs


def doc_pages(site: Site) -> list[Path]:
    """Every Markdown page of the site (both engines build each .md file under docs_dir)."""
    return sorted(site.docs_dir.rglob("*.md"))


def scan_docs(site: Site) -> list[FigureJob]:
    """Check every page of the site; the static figures they show, each with the places that use it."""
    jobs = []
    for path in doc_pages(site):
        source = path.read_text(encoding="utf-8")
        front_matter = RE_FRONT_MATTER.match(source)
        markdown = source[front_matter.end():] if front_matter else source
        with on_page(PageContext(site.shown(path), source[: len(source) - len(markdown)].count("\n"))):
            jobs += scan_page(markdown)
    return jobs


def check_nav(site: Site) -> None:
    """Every page must be in mkdocs.yml's nav and every nav entry a page (MkDocs' strict validation checks this;
    Zensical's strict mode does not, so the pipeline does)."""
    if site.nav is None:
        return  # no nav: the engine lists every page itself
    listed = nav_pages(site.nav)
    pages = [path.relative_to(site.docs_dir).as_posix() for path in doc_pages(site)]
    missing = [page for page in listed if page not in pages]
    if missing:
        raise SiteConfigError(f"mkdocs.yml: nav names {', '.join(missing)}, not found in {site.shown(site.docs_dir)}/")
    omitted = [page for page in pages if page not in listed]
    if omitted:
        where = ", ".join(site.shown(site.docs_dir / page) for page in omitted)
        raise SiteConfigError(f"{where}: not in mkdocs.yml's nav; add it there, so readers can reach it")
