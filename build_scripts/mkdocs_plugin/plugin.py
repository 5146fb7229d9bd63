"""Hooks of the `explainer` MkDocs plugin; the work lives in build_scripts' plain modules."""

import logging
from pathlib import Path

from markdown import Markdown
from markdown.preprocessors import NormalizeWhitespace
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin

from build_scripts import site_runtime
from build_scripts.figures.jobs import FigureError, render_all
from build_scripts.markdown._blocks import (
    FIGURE_DIR,
    PAGE_TO_ROOT,
    SOURCE_LINE_OFFSET,
    SOURCE_PATH,
    MarkdownSourceError,
    find_blocks,
)
from build_scripts.markdown.cell import find_cells, read_cell
from build_scripts.markdown.figure import read_figure
from build_scripts.markdown.quantities import QuantityPreprocessor
from build_scripts.markdown.quiz import read_quiz
from build_scripts.markdown.sandbox import read_placement
from build_scripts.markdown.trainer import read_trainer
from build_scripts.mkdocs_plugin.config import ExplainerConfig
from build_scripts.pyodide_runtime import RuntimeSetupError
from explainer.sandbox import registry

log = logging.getLogger("mkdocs.plugins.explainer")

REQUIRED_EXTENSIONS = {
    "build_scripts.markdown.sandbox": "sandbox",
    "build_scripts.markdown.figure": "figure",
    "build_scripts.markdown.quiz": "quiz",
}
# Needed only by pages that place a training lab (`/// trainer`).
TRAINER_EXTENSION = "build_scripts.markdown.trainer"
# Not blocks, but pages rely on them being there: `{{ quantity }}`.
ALSO_REQUIRED = ("build_scripts.markdown.quantities",)


class ExplainerPlugin(BasePlugin[ExplainerConfig]):
    """Checks sandbox, figure and quiz blocks per page (file:line errors), renders their static figures, and ships the
    live runtime with the site."""

    def on_config(self, config):
        for extension, block in REQUIRED_EXTENSIONS.items():
            if extension not in config.markdown_extensions:
                raise PluginError(f"mkdocs.yml: add '- {extension}' to markdown_extensions (the {block} block)")
        for extension in ALSO_REQUIRED:
            if extension not in config.markdown_extensions:
                raise PluginError(f"mkdocs.yml: add '- {extension}' to markdown_extensions")
        self.config_dir = Path(config.config_file_path).parent
        self.markdown = Markdown()  # as MkDocs makes it: tabs are 4 columns
        self.cache_dir = self.config_dir / self.config.cache_dir
        if self.config.enabled:
            scripts = [f"{site_runtime.ASSET_DIR}/{name}" for name in site_runtime.PAGE_SCRIPTS]
            styles = [f"{site_runtime.ASSET_DIR}/{name}" for name in site_runtime.PAGE_STYLES]
            config.extra_javascript.extend(s for s in scripts if s not in config.extra_javascript)
            config.extra_css.extend(s for s in styles if s not in config.extra_css)
        return config

    def on_pre_build(self, config):
        self.figure_jobs = []

    def on_page_markdown(self, markdown, page, config, files):
        docs_dir = Path(config.docs_dir)
        shown = docs_dir.relative_to(self.config_dir) if docs_dir.is_relative_to(self.config_dir) else docs_dir
        SOURCE_PATH.set((shown / page.file.src_uri).as_posix())
        source = page.file.content_string
        SOURCE_LINE_OFFSET.set(source[: len(source) - len(markdown)].count("\n") if source.endswith(markdown) else 0)
        PAGE_TO_ROOT.set("../" * page.url.count("/"))
        # The extensions raise the same errors while converting; checking here first turns them into a clean
        # one-line build error instead of a traceback, and tells us which static figures the page needs.
        try:
            sandboxes = registry()
            # The lines as the extensions get them: Python-Markdown first turns tabs into spaces and CRLF into LF.
            lines = NormalizeWhitespace(self.markdown).run(markdown.split("\n"))
            lines = QuantityPreprocessor(None).run(lines)  # blocks may quote {{ quantities }}
            for block in find_blocks(lines, {*REQUIRED_EXTENSIONS.values(), "trainer"}):
                if block.name == "sandbox":
                    self.figure_jobs += read_placement(block, sandboxes).figure_jobs()
                elif block.name == "trainer":
                    if TRAINER_EXTENSION not in config.markdown_extensions:
                        raise MarkdownSourceError(block.line, f"add '- {TRAINER_EXTENSION}' to markdown_extensions in "
                                                              "mkdocs.yml (the trainer block)")
                    self.figure_jobs += read_trainer(block).figure_jobs()
                elif block.name == "figure":
                    self.figure_jobs += read_figure(block)[2]
                else:
                    read_quiz(block, lines)
            for cell in find_cells(lines):
                read_cell(cell)
        except MarkdownSourceError as error:
            raise PluginError(str(error)) from None
        return markdown

    def on_post_build(self, config):
        site_dir = Path(config.site_dir)
        try:
            report = render_all(self.figure_jobs, self.cache_dir, self.config.workers or None, progress=log.debug)
        except FigureError as error:
            raise PluginError(f"explainer: {error}") from None
        (site_dir / FIGURE_DIR).mkdir(parents=True, exist_ok=True)
        for file_name in {job.file_name for job in self.figure_jobs}:
            site_runtime.link_or_copy(self.cache_dir / file_name, site_dir / FIGURE_DIR / file_name)
        log.info("explainer: %d static figures rendered, %d reused from the cache", len(report.rendered),
                 len(report.reused))
        if not self.config.enabled:
            return
        try:
            manifest = site_runtime.write_site_runtime(site_dir, self_host=self.config.self_host)
        except RuntimeSetupError as error:
            raise PluginError(f"explainer: {error}") from None
        log.info("explainer: live sandboxes use Pyodide from %s", manifest["pyodide"]["indexURL"])
