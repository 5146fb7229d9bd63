"""Hooks of the `explainer` MkDocs plugin: a thin adapter over build_scripts.pipeline, which Zensical builds use too."""

import logging
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin

from build_scripts.figures.jobs import FigureError
from build_scripts.markdown._blocks import MarkdownSourceError, error_line
from build_scripts.markdown._page import PAGE, mkdocs_page
from build_scripts.mkdocs_plugin.config import ExplainerConfig
from build_scripts.pipeline.config import PipelineConfig, Site, SiteConfigError, check_site
from build_scripts.pipeline.publish import PageError, publish, render_figures
from build_scripts.pipeline.scan import scan_page
from build_scripts.pyodide_runtime import RuntimeSetupError

log = logging.getLogger("mkdocs.plugins.explainer")


class ExplainerPlugin(BasePlugin[ExplainerConfig]):
    """Checks the blocks of each page (file:line errors), renders their static figures, and ships the live runtime."""

    serving = False

    def on_startup(self, command, dirty):
        self.serving = command == "serve"  # no Content-Security-Policy or service worker while previewing

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

    def on_page_markdown(self, markdown, page, config, files):
        docs_dir = self.site.shown(self.site.docs_dir)
        # Stays the current page while MkDocs converts it: our Markdown extensions read it (build_scripts/markdown/_page).
        PAGE.set(mkdocs_page(docs_dir, page.file.src_uri, page.url, page.file.content_string, markdown))
        try:
            self.figure_jobs += scan_page(markdown)
        except (MarkdownSourceError, FigureError) as error:
            raise PluginError(error_line(error)) from None
        return markdown

    def on_post_build(self, config):
        try:
            figures = render_figures(self.figure_jobs, self.site, log.info)
            manifest = publish(self.site, figures, Path(config.site_dir), log.info, serving=self.serving)
        except (FigureError, RuntimeSetupError, PageError) as error:
            raise PluginError(error_line(error)) from None
        log.debug("explainer: %d static figures", len(figures))
        if manifest:
            log.info("explainer: live sandboxes use Pyodide from %s", manifest["pyodide"]["indexURL"])
