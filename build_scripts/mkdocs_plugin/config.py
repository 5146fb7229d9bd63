"""Options of the `explainer` MkDocs plugin."""

from mkdocs.config import config_options as c
from mkdocs.config.base import Config


class ExplainerConfig(Config):
    """`plugins: - explainer: {...}` in mkdocs.yml."""

    enabled = c.Type(bool, default=True)
    """Set to false to build the pages without live sandboxes (the blocks still validate and show static figures)."""

    self_host = c.Type(bool, default=False)
    """Copy the Pyodide runtime into the site, so readers fetch nothing from a third party (default: the official
    CDN for Pyodide 0.27.7)."""

    cache_dir = c.Type(str, default=".cache/figures")
    """Where rendered static figures are kept between builds, relative to mkdocs.yml (keyed by what each depends
    on, so an unchanged figure is never rendered twice)."""

    workers = c.Type(int, default=0)
    """Processes that render static figures in parallel; 0 means one per CPU core."""
