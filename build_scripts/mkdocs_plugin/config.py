"""Options of the `explainer` MkDocs plugin: the pipeline's settings (build_scripts/pipeline/config.py), as MkDocs
declares them. A test checks that both list the same options with the same defaults."""

from mkdocs.config import config_options as c
from mkdocs.config.base import Config

from build_scripts.pipeline.config import PipelineConfig

DEFAULTS = PipelineConfig()


class ExplainerConfig(Config):
    """`plugins: - explainer: {...}` in mkdocs.yml; each option is documented on PipelineConfig."""

    enabled = c.Type(bool, default=DEFAULTS.enabled)
    self_host = c.Type(bool, default=DEFAULTS.self_host)
    cache_dir = c.Type(str, default=DEFAULTS.cache_dir)
    workers = c.Type(int, default=DEFAULTS.workers)
    offline = c.Type(bool, default=DEFAULTS.offline)
    csp = c.Type(bool, default=DEFAULTS.csp)
