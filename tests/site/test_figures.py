"""Static figures: byte-for-byte repeatable, cached by what they depend on, rendered in parallel, and every
mistake named (the broken figure and the pages using it; an unknown name with file:line)."""

import importlib
import linecache
import sys
import textwrap
from html.parser import HTMLParser

import markdown
import pytest

from build_scripts.figures.jobs import FigureError, illustration_jobs, render_all, sandbox_jobs
from build_scripts.figures import registry as figure_registry
from build_scripts.figures.registry import declarations
from build_scripts.markdown._blocks import SOURCE_PATH, MarkdownSourceError
from explainer.sandbox import registry
from support import copy_project_site_sources, run_mkdocs_build

FIGURES_MODULE = """
from build_scripts.figures.registry import illustration
from build_scripts.figures.theme import new_figure, plot_axes


@illustration("cache_test_a", alt="A line.")
def cache_test_a(theme):
    figure = new_figure(theme, height=200)
    plot_axes(figure, theme).plot([0, 1], [0, {a_slope}], color=theme.color("primary"))
    return figure


@illustration("cache_test_b", alt="Another line.")
def cache_test_b(theme):
    figure = new_figure(theme, height=200)
    plot_axes(figure, theme).plot([0, 1], [1, 0], color=theme.color("accent"))
    return figure


@illustration("cache_test_broken", alt="Never drawn.")
def cache_test_broken(theme):
    return 1 / 0
"""


@pytest.fixture
def figures_module(tmp_path, monkeypatch):
    """A module of test illustrations that the test can edit, as an author edits a figure function."""
    path = tmp_path / "figures_for_cache_test.py"
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(figure_registry, "ILLUSTRATION_MODULES",
                        [*figure_registry.ILLUSTRATION_MODULES, "figures_for_cache_test"])

    def write(a_slope: int):
        path.write_text(FIGURES_MODULE.format(a_slope=a_slope))
        linecache.checkcache(str(path))
        if "figures_for_cache_test" in sys.modules:
            return importlib.reload(sys.modules["figures_for_cache_test"])
        return importlib.import_module("figures_for_cache_test")

    yield write
    sys.modules.pop("figures_for_cache_test", None)


def test_declarations_read_from_source_are_the_ones_the_module_registers_when_imported():
    declared = declarations()
    for name, declaration in declared.items():
        function = declaration.load()
        assert function.__name__ == declaration.function and function.__module__ == declaration.module
        assert f"def {declaration.function}(" in declaration.source
    assert set(figure_registry._REGISTERED) >= set(declared)


def test_a_helper_edit_reaches_the_key_of_every_figure_using_it_and_no_other():
    source = declarations()
    helpers_of = {name: d.source for name, d in source.items()}
    # A module-level helper appears in the key source of the figures that call it, and only those.
    users = [name for name, text in helpers_of.items() if "def _box(" in text]
    assert users and len(users) < len(source)


def test_every_sandbox_view_renders_to_identical_bytes_twice_with_no_date():
    for name, sandbox in registry().items():
        for job in sandbox_jobs(name, sandbox.defaults(), 360):
            first, second = job.render(), job.render()
            assert first == second, f"{job.file_name} differs between two renders"
            assert b"<dc:date>" not in first and b"/work/" not in first


def test_an_unchanged_figure_is_never_rendered_twice_and_an_edit_rerenders_only_its_own(figures_module, tmp_path):
    figures_module(a_slope=1)
    jobs = lambda: illustration_jobs("cache_test_a") + illustration_jobs("cache_test_b")  # noqa: E731
    cache = tmp_path / "cache"
    assert len(render_all(jobs(), cache, workers=2).rendered) == 4
    again = render_all(jobs(), cache, workers=2)
    assert again.rendered == [] and len(again.reused) == 4
    figures_module(a_slope=2)  # the author changes one function
    after_edit = render_all(jobs(), cache, workers=2)
    assert sorted(after_edit.rendered) == sorted(job.file_name for job in illustration_jobs("cache_test_a"))
    assert len(after_edit.reused) == 2
    manifest = (cache / "manifest.json").read_text()
    assert all(job.file_name in manifest for job in jobs())
    assert not [p for p in cache.iterdir() if p.name.startswith(".")], "a temporary file was left behind"


def test_a_figure_that_raises_is_named_with_the_pages_that_use_it(figures_module, tmp_path):
    figures_module(a_slope=1)
    jobs = illustration_jobs("cache_test_broken", "docs/a.md:3") + illustration_jobs("cache_test_broken", "docs/b.md:9")
    with pytest.raises(FigureError) as caught:
        render_all(jobs + illustration_jobs("cache_test_b"), tmp_path / "cache", workers=2)
    message = str(caught.value)
    assert "figure 'cache_test_broken' (illustration, light) failed: ZeroDivisionError: division by zero" in message
    assert "used at docs/a.md:3, docs/b.md:9" in message


def test_an_unknown_figure_name_is_an_error_at_its_line_with_the_closest_name():
    known = sorted(declarations())
    assert known, "no illustrations are declared"
    typo = known[0][:-1] + ("x" if known[0][-1] != "x" else "y")
    token = SOURCE_PATH.set("docs/page.md")
    try:
        with pytest.raises(MarkdownSourceError) as caught:
            markdown.markdown(f"# T\n\n/// figure | {typo}\ncaption: c\n///\n",
                              extensions=["build_scripts.markdown.figure"])
    finally:
        SOURCE_PATH.reset(token)
    assert str(caught.value).startswith(f"docs/page.md:3: figure '{typo}': unknown figure (did you mean '{known[0]}'?)")


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ("/// figure | {name}\n///\n", 1, "needs a caption"),
        ("/// figure | {name}\ncaption: c\nalt: ''\n///\n", 3, "alt must be non-empty text"),
        ("/// figure | {name}\ncaption: c\nwidth: 3\n///\n", 3, "unknown key 'width'"),
    ],
)
def test_a_figure_block_needs_a_caption_and_knows_its_keys(body, line, message):
    name = sorted(declarations())[0]
    with pytest.raises(MarkdownSourceError) as caught:
        markdown.markdown(body.format(name=name), extensions=["build_scripts.markdown.figure"])
    assert f":{line}: " in str(caught.value) and message in str(caught.value)


class Images(HTMLParser):
    def __init__(self):
        super().__init__()
        self.sources = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img" and "assets/figures/" in (attrs.get("src") or ""):
            self.sources.append((attrs["src"], attrs.get("alt")))


def test_every_static_figure_a_page_shows_is_in_the_site_in_light_and_dark(built_site):
    shown = 0
    for page in built_site.rglob("*.html"):
        images = Images()
        images.feed(page.read_text())
        # Each static figure is a pair: its light variant, then its dark one, of the same figure.
        pairs = list(zip(images.sources[0::2], images.sources[1::2]))
        assert len(pairs) * 2 == len(images.sources), page
        for (light, _), (dark, _) in pairs:
            assert light.endswith("-light.svg#only-light") and dark.endswith("-dark.svg#only-dark"), (light, dark)
            assert light.rsplit("-", 2)[0].rsplit("-", 1)[0] == dark.rsplit("-", 2)[0].rsplit("-", 1)[0], (light, dark)
        for src, alt in images.sources:
            assert alt, f"{page}: {src} has no alt text"
            assert (page.parent / src.split("#")[0]).resolve().is_file(), f"{page}: {src} is missing"
            shown += 1
    assert shown >= 2 * len(registry())


def test_a_broken_figure_fails_the_real_build_naming_it_and_the_page(tmp_path):
    config = copy_project_site_sources(tmp_path)
    module = tmp_path / "build_scripts/figures/illustrations.py"
    module.write_text(module.read_text() + textwrap.dedent(
        """

        @illustration("broken_for_test", alt="Never drawn.")
        def broken_for_test(theme):
            raise RuntimeError("the figure function is broken")
        """))
    page = tmp_path / "docs/sandboxes.md"
    page.write_text(page.read_text() + "\n/// figure | broken_for_test\ncaption: Broken.\n///\n")
    line = page.read_text().split("\n").index("/// figure | broken_for_test") + 1
    config.write_text(config.read_text().replace("self_host: true", f"self_host: true\n      cache_dir: {tmp_path}/c"))
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode != 0
    assert "figure 'broken_for_test' (illustration, light) failed: RuntimeError: the figure function is broken" in (
        result.stderr)
    assert f"docs/sandboxes.md:{line}" in result.stderr


def test_a_figure_depends_on_the_build_code_its_module_imports_so_the_training_figure_follows_the_grid(tmp_path):
    from build_scripts._files import files_digest, module_files
    from support import PROJECT_ROOT

    grid = PROJECT_ROOT / "build_scripts" / "training_grid.py"
    assert grid in module_files(PROJECT_ROOT, ("build_scripts",), "build_scripts.figures.training_figures")
    # The rule on a package of its own: an edit to a module imported (even indirectly) changes the digest.
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "figs.py").write_text("from pkg.grid import SEEDS\n")
    (package / "grid.py").write_text("import pkg.seeds as seeds\nSEEDS = seeds.ALL\n")
    (package / "seeds.py").write_text("ALL = (0, 1, 2)\n")
    (package / "unrelated.py").write_text("X = 1\n")
    files = module_files(tmp_path, ("pkg",), "pkg.figs")
    assert {path.name for path in files} == {"__init__.py", "figs.py", "grid.py", "seeds.py"}
    before = files_digest(files, tmp_path)
    (package / "seeds.py").write_text("ALL = (0, 1, 2, 3)\n")
    assert files_digest(module_files(tmp_path, ("pkg",), "pkg.figs"), tmp_path) != before
