"""The pipeline's settings and the parts of mkdocs.yml it relies on, read the same way whichever engine builds.

The settings are the `explainer` entry of mkdocs.yml's `plugins:` (MkDocs hands them to the plugin; Zensical ignores
plugins it does not know, so the pipeline reads the file itself):

    plugins:
      - explainer:
          self_host: true

mkdocs.yml must also name our Markdown extensions and list the page scripts and styles in extra_javascript and
extra_css (Zensical runs no plugin that could add them); `check_site` says what is missing.
"""

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from build_scripts import site_runtime

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
CONFIG_FILE = PROJECT_ROOT / "mkdocs.yml"
PLUGIN = "explainer"
# Our Markdown extensions, by the block each adds; a site without one cannot build its pages.
BLOCK_EXTENSIONS = {
    "build_scripts.markdown.sandbox": "sandbox",
    "build_scripts.markdown.figure": "figure",
    "build_scripts.markdown.quiz": "quiz",
    "build_scripts.markdown.trainer": "trainer",
}
# Not a block, but pages rely on it being there: `{{ quantity }}`.
QUANTITY_EXTENSION = "build_scripts.markdown.quantities"


class SiteConfigError(ValueError):
    """mkdocs.yml lacks something the pipeline needs; the message says what to write."""


@dataclass(frozen=True)
class PipelineConfig:
    """`plugins: - explainer: {...}` in mkdocs.yml. The MkDocs plugin declares the same options (mkdocs_plugin/config.py)."""

    enabled: bool = True
    """Set to false to build the pages without live sandboxes: the blocks still validate, static figures and the
    page scripts are still written, but no wheel, runtime.json or Pyodide."""

    self_host: bool = True
    """Copy the Pyodide runtime into the site, so readers fetch nothing from a third party (the default); false loads
    Pyodide 0.27.7's core from the official CDN instead (a smaller site; the wheels and bytecode stay the site's)."""

    cache_dir: str = "build/cache/figures"
    """Where rendered static figures are kept between builds, relative to mkdocs.yml (keyed by what each depends
    on, so an unchanged figure is never rendered twice)."""

    workers: int = 0
    """Processes that render static figures in parallel; 0 means one per CPU core."""

    offline: bool = False
    """Offline reading: a service worker (sw.js at the site's root) keeps the pages a reader visits and, once they
    have used a live figure or cell, the Python runtime, so a second visit works without a network. Needs
    self_host (the worker keeps only the site's own files). Off under `serve`."""

    csp: bool = True
    """Write a Content-Security-Policy into every page (a <meta http-equiv> tag): scripts only from the site itself
    and the inline scripts the pages hold, by their hashes; nothing from another origin. Off under `serve` (its
    live-reload script is inline)."""

    def __post_init__(self):
        if self.offline and not (self.self_host and self.enabled):
            raise SiteConfigError(f"mkdocs.yml: plugins: {PLUGIN}: offline: true needs self_host: true (the service "
                                  f"worker keeps only the site's own files, and the runtime must be one of them)")

    @classmethod
    def from_options(cls, options: dict | None) -> "PipelineConfig":
        """Check the options as written in mkdocs.yml; an unknown name or a wrong type is a SiteConfigError."""
        options = options or {}
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for name, value in options.items():
            if name not in fields:
                raise SiteConfigError(f"mkdocs.yml: plugins: {PLUGIN}: unknown option '{name}'; "
                                      f"options: {', '.join(fields)}")
            kind = type(fields[name].default)
            if type(value) is not kind:
                raise SiteConfigError(f"mkdocs.yml: plugins: {PLUGIN}: {name} must be {kind.__name__} "
                                      f"(got {value!r})")
        return cls(**options)


@dataclass(frozen=True)
class Site:
    """A site as the pipeline sees it: its folders, its settings, and what its mkdocs.yml declares."""

    config_file: Path
    docs_dir: Path
    site_dir: Path
    options: PipelineConfig
    markdown_extensions: tuple[str, ...] = ()
    extra_javascript: tuple[str, ...] = ()
    extra_css: tuple[str, ...] = ()
    nav: list | None = field(default=None, compare=False)
    site_url: str = ""  # where the site will be served (mkdocs.yml's site_url: SITE_URL when set)

    @property
    def root(self) -> Path:
        """The folder of mkdocs.yml: relative settings are relative to it."""
        return self.config_file.parent

    @property
    def cache_dir(self) -> Path:
        """The figure cache."""
        return self.root / self.options.cache_dir

    def shown(self, path: Path) -> str:
        """A path as authors know it: relative to the project when inside it (docs/lessons/x.md)."""
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else str(path)


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml where PyYAML has it: every build reads this
    """mkdocs.yml's YAML as MkDocs reads it, minus what the pipeline never needs (`!!python/name:…` gives None)."""


def _environment_tag(loader: _Loader, node: yaml.Node):
    """`!ENV NAME` or `!ENV [NAME, OTHER, default]`: the first variable that is set, else the default."""
    if isinstance(node, yaml.ScalarNode):
        return os.environ.get(loader.construct_scalar(node))
    *names, default = loader.construct_sequence(node)
    return next((os.environ[name] for name in names if name in os.environ), default)


_Loader.add_constructor("!ENV", _environment_tag)
_Loader.add_multi_constructor("", lambda loader, suffix, node: None)


def _plugin_options(plugins) -> tuple[bool, dict]:
    """Whether mkdocs.yml lists our plugin, and its options."""
    if isinstance(plugins, dict):
        return PLUGIN in plugins, plugins.get(PLUGIN) or {}
    for entry in plugins or []:
        if entry == PLUGIN:
            return True, {}
        if isinstance(entry, dict) and PLUGIN in entry:
            return True, entry[PLUGIN] or {}
    return False, {}


def _names(entries) -> tuple[str, ...]:
    """Names of list entries that are either `name` or `{name: options}`."""
    return tuple(next(iter(entry)) if isinstance(entry, dict) else str(entry) for entry in entries or [])


def read_site(config_file: Path = CONFIG_FILE) -> Site:
    """Read mkdocs.yml as the pipeline needs it (without MkDocs: Zensical builds use it too)."""
    config_file = Path(config_file).resolve()
    try:
        config = yaml.load(config_file.read_text(encoding="utf-8"), Loader=_Loader) or {}
    except (OSError, yaml.YAMLError) as error:
        raise SiteConfigError(f"{config_file}: {error}") from None
    listed, options = _plugin_options(config.get("plugins"))
    if not listed:
        raise SiteConfigError(f"{config_file.name}: add '- {PLUGIN}' to plugins (its options configure the build)")
    root = config_file.parent
    return Site(config_file, root / config.get("docs_dir", "docs"), root / config.get("site_dir", "site"),
                PipelineConfig.from_options(options), _names(config.get("markdown_extensions")),
                _names(config.get("extra_javascript")), _names(config.get("extra_css")), config.get("nav"),
                config.get("site_url") or "")


def page_assets() -> tuple[list[str], list[str]]:
    """The page scripts (in order) and styles every page must load, site-relative."""
    return ([f"{site_runtime.ASSET_DIR}/{name}" for name in site_runtime.PAGE_SCRIPTS],
            [f"{site_runtime.ASSET_DIR}/{name}" for name in site_runtime.PAGE_STYLES])


def check_site(site: Site) -> None:
    """Raise SiteConfigError naming what mkdocs.yml must add for our blocks and (live sandboxes) page code to work."""
    for extension, block in BLOCK_EXTENSIONS.items():
        if extension not in site.markdown_extensions:
            raise SiteConfigError(f"mkdocs.yml: add '- {extension}' to markdown_extensions (the {block} block)")
    if QUANTITY_EXTENSION not in site.markdown_extensions:
        raise SiteConfigError(f"mkdocs.yml: add '- {QUANTITY_EXTENSION}' to markdown_extensions")
    if not site.options.enabled:
        return  # no live sandboxes: the pages need not load their code
    scripts, styles = page_assets()
    for setting, wanted, listed in (("extra_javascript", scripts, site.extra_javascript),
                                    ("extra_css", styles, site.extra_css)):
        if [entry for entry in listed if entry in wanted] != wanted:
            raise SiteConfigError(f"mkdocs.yml: {setting} must list, in this order: {', '.join(wanted)} "
                                  f"(the page code of sandboxes and quizzes)")


def nav_pages(nav) -> list[str]:
    """Every Markdown page a nav names (relative to docs_dir), in order."""
    pages = []
    for entry in nav or []:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        if isinstance(value, list):
            pages += nav_pages(value)
        elif isinstance(value, str) and value.endswith(".md") and not re.match(r"^[a-z]+://", value):
            pages.append(value)
    return pages
