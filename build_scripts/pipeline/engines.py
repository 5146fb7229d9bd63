"""Zensical, driven like MkDocs: `build` writes the finished site into mkdocs.yml's site_dir, `serve` previews it
with live reload. (MkDocs needs nothing here: its explainer plugin runs the pipeline, so the command line hands
over to `mkdocs build --strict` or `mkdocs serve`.)

Zensical runs no MkDocs plugin: the pipeline runs around it, in this process. Build: check mkdocs.yml, the nav and
every page, render the figures, let Zensical write the pages, then publish our files into the site (Zensical empties
site_dir when it starts). Serve: the same first, then Zensical's server, while a keeper thread puts our files back
whenever they are missing or their sources change, and the Markdown extensions draw the figures a page newly needs
before Zensical writes it (so the reload shows them).
"""

import threading
import time
from collections.abc import Callable

from build_scripts.figures.jobs import FigureError, FigureJob, render_all
from build_scripts.markdown import _page
from build_scripts.markdown._blocks import FIGURE_DIR, MarkdownSourceError, error_line
from build_scripts.pipeline.config import Site, SiteConfigError, check_site
from build_scripts._files import CODE_DIRS
from build_scripts.pipeline.preview import LastGoodPages
from build_scripts.pipeline.publish import PageError, link_figures, publish, reporter, site_figures
from build_scripts.pipeline.scan import check_nav
from build_scripts.pyodide_runtime import RuntimeSetupError
from build_scripts.site_runtime import ASSET_DIR
from build_scripts.trained_weights import ExportMismatch

# What a build can get wrong in the author's input (or the set-up): one line each, never a traceback.
AUTHOR_ERRORS = (MarkdownSourceError, FigureError, SiteConfigError, RuntimeSetupError, ExportMismatch, PageError)
KEEPER_INTERVAL = 0.5  # seconds between two looks of the serve keeper at the sources and the site


class BuildError(Exception):
    """The build failed; the message is the one line to print."""


def _zensical_failure(error: RuntimeError) -> str:
    """Zensical's error for a Python exception is `Python error: Kind: message` and a traceback: keep one line."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
    for ours in AUTHOR_ERRORS:
        prefix = f"Python error: {ours.__name__}: "
        if first.startswith(prefix):
            message = first.removeprefix(prefix)
            return message if ours is MarkdownSourceError else f"explainer: {message}"
    return f"zensical: {first}"


def prepare(site: Site, emit: Callable[[str], None] | None = None) -> list[str]:
    """What Zensical lacks, before it writes any page: check mkdocs.yml, the nav and every page; render the figures."""
    check_site(site)
    check_nav(site)
    return site_figures(site, emit)


def build_with_zensical(site: Site, clean: bool = False, emit: Callable[[str], None] | None = None) -> dict | None:
    """`zensical build --strict` with the pipeline around it; BuildError carries the one line to print."""
    import zensical

    try:
        figures = prepare(site, emit)
        try:
            zensical.build(str(site.config_file), {"clean": clean, "strict": True})
        except RuntimeError as error:
            raise BuildError(_zensical_failure(error)) from None
        return publish(site, figures, emit=emit)
    except AUTHOR_ERRORS as error:
        raise BuildError(error_line(error)) from None


class SiteKeeper(threading.Thread):
    """While Zensical serves: puts our files into the site whenever they are missing (Zensical empties site_dir at
    its first build) and again when the pages or the code change."""

    def __init__(self, site: Site, emit: Callable[[str], None]):
        super().__init__(name="explainer site keeper", daemon=True)
        self.site, self.emit = site, emit
        self.lock = threading.Lock()  # one render at a time: this thread or a page Zensical converts
        self.figures: list[str] = []
        self.sources: dict = {}

    def snapshot(self) -> dict:
        """Modification times of everything the pipeline reads."""
        files = [self.site.config_file, *self.site.docs_dir.rglob("*.md")]
        for folder in CODE_DIRS:
            files += (self.site.root / folder).rglob("*")
        return {path: path.stat().st_mtime_ns for path in files if path.is_file() and "__pycache__" not in path.parts}

    def published(self) -> bool:
        """Whether the site still holds our files."""
        figure_dir = self.site.site_dir / FIGURE_DIR
        return ((self.site.site_dir / ASSET_DIR / "sandbox.js").is_file()
                and all((figure_dir / name).is_file() for name in self.figures))

    def refresh(self, page_errors: bool = False) -> None:
        """Check the pages again and render what they need, then publish (the last good figures if the check failed):
        an error is printed once per change of the sources, and the site keeps working.

        A page's error is printed by the page itself as Zensical converts it (see _page.PREVIEW), so here only with
        `page_errors` (the first look, when Zensical may serve pages from its cache)."""
        with self.lock:
            try:
                check_nav(self.site)
                self.figures = site_figures(self.site, self.emit)
            except (MarkdownSourceError, FigureError) as error:
                if page_errors:
                    self.emit(error_line(error))
            except SiteConfigError as error:
                self.emit(error_line(error))
            try:
                publish(self.site, self.figures, emit=self.emit, serving=True)
            except RuntimeSetupError as error:
                self.emit(error_line(error))

    def draw_now(self, jobs: list[FigureJob]) -> None:
        """Render the figures a page is converted with, and put them into the site before Zensical writes the page."""
        with self.lock:
            render_all(jobs, self.site.cache_dir, self.site.options.workers or None, progress=reporter(self.emit))
            link_figures(self.site, [job.file_name for job in jobs], self.site.site_dir)

    def run(self) -> None:
        while True:
            sources = self.snapshot()
            if sources != self.sources or not self.published():
                self.sources = sources
                self.refresh()
            time.sleep(KEEPER_INTERVAL)


def serve_with_zensical(site: Site, dev_addr: str, emit: Callable[[str], None]) -> None:
    """`zensical serve` with the pipeline around it; a broken page shows its error above its last good version
    instead of stopping the server (build_scripts/pipeline/preview.py)."""
    import zensical

    keeper = SiteKeeper(site, emit)
    try:
        check_site(site)
    except SiteConfigError as error:
        raise BuildError(error_line(error)) from None
    keeper.sources = keeper.snapshot()
    keeper.refresh(page_errors=True)
    _page.PREVIEW = _page.Preview(report=emit, figures_needed=keeper.draw_now,
                                  page_markdown=LastGoodPages(report=emit).page_markdown)
    keeper.start()
    zensical.serve(str(site.config_file), {"dev_addr": dev_addr, "open": False, "strict": False})
