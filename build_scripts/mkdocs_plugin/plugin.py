"""Hooks of the `explainer` MkDocs plugin; the work lives in build_scripts' plain modules."""

import logging
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin

from build_scripts import site_runtime
from build_scripts.markdown._blocks import SOURCE_LINE_OFFSET, SOURCE_PATH, MarkdownSourceError, find_blocks
from build_scripts.markdown.sandbox import read_placement
from build_scripts.mkdocs_plugin.config import ExplainerConfig
from build_scripts.pyodide_runtime import RuntimeSetupError
from explainer.sandbox import registry

log = logging.getLogger("mkdocs.plugins.explainer")

REQUIRED_EXTENSION = "build_scripts.markdown.sandbox"


class ExplainerPlugin(BasePlugin[ExplainerConfig]):
    """Validates sandbox blocks per page with file:line errors, and ships the live runtime with the site."""

    def on_config(self, config):
        if REQUIRED_EXTENSION not in config.markdown_extensions:
            raise PluginError(f"mkdocs.yml: add '- {REQUIRED_EXTENSION}' to markdown_extensions (the sandbox block)")
        self.config_dir = Path(config.config_file_path).parent
        if self.config.enabled:
            scripts = [f"{site_runtime.ASSET_DIR}/{name}" for name in site_runtime.PAGE_SCRIPTS]
            styles = [f"{site_runtime.ASSET_DIR}/{name}" for name in site_runtime.PAGE_STYLES]
            config.extra_javascript.extend(s for s in scripts if s not in config.extra_javascript)
            config.extra_css.extend(s for s in styles if s not in config.extra_css)
        return config

    def on_page_markdown(self, markdown, page, config, files):
        docs_dir = Path(config.docs_dir)
        shown = docs_dir.relative_to(self.config_dir) if docs_dir.is_relative_to(self.config_dir) else docs_dir
        path = (shown / page.file.src_uri).as_posix()
        SOURCE_PATH.set(path)
        source = page.file.content_string
        SOURCE_LINE_OFFSET.set(source[: len(source) - len(markdown)].count("\n") if source.endswith(markdown) else 0)
        # The extension raises the same errors during conversion; checking here first turns them into a clean
        # one-line build error instead of a traceback.
        try:
            sandboxes = registry()
            for block in find_blocks(markdown.split("\n"), {"sandbox"}):
                read_placement(block, sandboxes)
        except MarkdownSourceError as error:
            raise PluginError(str(error)) from None
        return markdown

    def on_post_build(self, config):
        if not self.config.enabled:
            return
        try:
            manifest = site_runtime.write_site_runtime(Path(config.site_dir), self_host=self.config.self_host)
        except RuntimeSetupError as error:
            raise PluginError(f"explainer: {error}") from None
        log.info("explainer: live sandboxes use Pyodide from %s", manifest["pyodide"]["indexURL"])
