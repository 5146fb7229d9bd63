"""Hooks of the `explainer` MkDocs plugin: a thin adapter over build_scripts.pipeline, which Zensical builds use too."""

import logging
import traceback
from pathlib import Path

from click import ClickException
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin

from build_scripts.figures.jobs import FigureError, error_text
from build_scripts.markdown import _page
from build_scripts.markdown._blocks import MarkdownSourceError, error_line
from build_scripts.mkdocs_plugin.config import ExplainerConfig
from build_scripts.pipeline.config import PipelineConfig, Site, SiteConfigError, check_site
from build_scripts.pipeline.preview import LastGoodPages, LastGoodSite, show_banner
from build_scripts.pipeline.publish import PageError, package_data, publish, render_figures
from build_scripts.pipeline.scan import scan_page
from build_scripts.pyodide_runtime import RuntimeSetupError
from build_scripts.trained_weights import ExportMismatch

log = logging.getLogger("mkdocs.plugins.explainer")


class _Said(logging.Handler):
    """What MkDocs and the plugins print at WARNING and above while it is attached."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


class ExplainerPlugin(BasePlugin[ExplainerConfig]):
    """Checks the blocks of each page (file:line errors), renders their static figures, and ships the live runtime.

    Under `mkdocs serve` no error stops the preview (build_scripts/pipeline/preview.py): an authoring mistake does
    not fail the build, its page is converted from its last good version and every page shows the error; a rebuild
    that fails for another reason puts back the last finished site, with the cause. The plugin object lives as long
    as the server (MkDocs keeps a plugin that has on_startup across rebuilds), and so does what it remembers."""

    preview: LastGoodPages | None = None  # while serving (a build run without on_startup, as in tests: None)
    last_site: LastGoodSite | None = None  # while serving, from the first build on

    def on_startup(self, *, command, dirty):
        self.preview = LastGoodPages(report=log.error) if command == "serve" else None
        if self.preview:
            _page.PREVIEW = _page.Preview(report=log.error, figures_needed=lambda jobs: self.figure_jobs.extend(jobs))

    def on_shutdown(self):
        _page.PREVIEW = None
        if self.last_site:
            self.last_site.remove()

    def on_config(self, config):
        try:
            self.site = Site(Path(config.config_file_path).resolve(), Path(config.docs_dir), Path(config.site_dir),
                             PipelineConfig(**dict(self.config)), tuple(config.markdown_extensions),
                             tuple(str(script) for script in config.extra_javascript), tuple(config.extra_css),
                             site_url=config.site_url or "")
            check_site(self.site)
        except SiteConfigError as error:
            raise PluginError(error_line(error)) from None
        return config

    def on_pre_build(self, config):
        self.figure_jobs = []
        self.figure_failures = []
        if self.preview:
            self.preview.errors.clear()  # MkDocs converts every page again: the errors standing are this build's
        try:
            package_data(log.info)  # before any page is read: the lab's trained weights
        except ExportMismatch as error:
            raise PluginError(error_line(error)) from None

    def on_page_markdown(self, markdown, page, config, files):
        docs_dir = self.site.shown(self.site.docs_dir)
        # Stays the current page while MkDocs converts it: our Markdown extensions read it (build_scripts/markdown/_page).
        context = _page.mkdocs_page(docs_dir, page.file.src_uri, page.url, page.file.content_string, markdown)
        _page.PAGE.set(context)
        if self.preview:
            markdown, jobs, _ = self.preview.checked(context.source_path, markdown)
            self.figure_jobs += jobs
            return markdown
        try:
            self.figure_jobs += scan_page(markdown)
        except (MarkdownSourceError, FigureError) as error:
            raise PluginError(error_line(error)) from None
        return markdown

    def on_post_build(self, config):
        try:
            figures = render_figures(self.figure_jobs, self.site, log.info)
        except FigureError as error:
            if not self.preview:
                raise PluginError(error_line(error)) from None
            log.error(error_line(error))
            self.figure_failures.append(error_line(error))
            figures = [name for name in sorted({job.file_name for job in self.figure_jobs})
                       if (self.site.cache_dir / name).is_file()]  # the others drew: show them
        try:
            manifest = publish(self.site, figures, Path(config.site_dir), log.info,
                               serving=self.preview is not None)
        except (RuntimeSetupError, PageError) as error:
            raise PluginError(error_line(error)) from None
        if self.preview:
            self.last_site = self.last_site or LastGoodSite(Path(config.site_dir))
            self.last_site.keep()
            if errors := [*self.preview.errors.values(), *self.figure_failures]:
                show_banner(Path(config.site_dir), errors)
        log.debug("explainer: %d static figures", len(figures))
        if manifest:
            log.info("explainer: live sandboxes use Pyodide from %s", manifest["pyodide"]["indexURL"])

    build_error: BaseException | None = None  # what failed the build, before MkDocs turned it into Abort

    def on_build_error(self, error):
        self.build_error = error  # MkDocs turns a BuildError into Abort("Aborted with a BuildError!")

    def on_serve(self, server, config, builder):
        """Every rebuild from now on: one that fails puts back the last finished site, with the cause on every page
        and in the terminal (each time; MkDocs' own log prints a repeated error once), instead of leaving every
        request waiting for a build that works."""

        def rebuild_or_keep_the_last_site():
            said = _Said()
            logging.getLogger("mkdocs").addHandler(said)
            self.build_error = None
            try:
                builder()
            except Exception as error:  # anything: a bug in the code, a broken mkdocs.yml, a strict warning
                logging.getLogger("mkdocs").removeHandler(said)
                if self.last_site is None:
                    raise
                self.last_site.restore(self.failure_lines(self.build_error or error, said.lines))
            finally:
                logging.getLogger("mkdocs").removeHandler(said)

        server.builder = rebuild_or_keep_the_last_site
        return server

    @staticmethod
    def failure_lines(error: BaseException, said: list[str]) -> list[str]:
        """What made a rebuild fail, as the banner lists it: what was printed while it ran and, printed here if not
        yet, the error itself (with its traceback when it is a bug rather than a message)."""
        message = str(error) if isinstance(error, ClickException) else error_text(error)
        if message not in said:
            log.error(message if isinstance(error, ClickException) else "".join(traceback.format_exception(error)))
        log.error("explainer: the preview shows the last finished build until this is fixed")
        return said if message in said else [*said, message]
