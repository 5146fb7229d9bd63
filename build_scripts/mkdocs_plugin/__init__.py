"""The MkDocs plugin `explainer`: a thin layer over build_scripts' plain functions."""

from build_scripts.mkdocs_plugin.plugin import ExplainerPlugin

__all__ = ["ExplainerPlugin"]
