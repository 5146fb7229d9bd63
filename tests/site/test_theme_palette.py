"""The theme's palette stylesheet without its colour-switching rule (build_scripts/pipeline/theme_palette.py): written
once under a name of its own, every page pointed at it, everything else of the stylesheet kept, a second run a no-op,
and the real themes of both engines handled."""

import re
from pathlib import Path

import pytest

from build_scripts.pipeline.pages import PageError
from build_scripts.pipeline.theme_palette import RE_SWITCHING_RULE, lean_palette, without_switching_rules
from support import assert_pages_link_the_lean_palette

SWITCHING = ("[data-md-color-switching] *,[data-md-color-switching] :after,[data-md-color-switching] :before"
             "{transition-duration:0s!important}")
PALETTE = ('@charset "UTF-8";' + SWITCHING + "[data-md-color-scheme=slate]{--md-hue:232}"
           + "@media screen{[data-md-color-switching] .md-header{transition:none}.md-header{color:red}}"
           + "/*# sourceMappingURL=palette.0123abcd.min.css.map*/")
PAGE = '<!doctype html><html><head><link rel="stylesheet" href="{prefix}{path}"></head><body></body></html>'
THEME_PATH = "assets/stylesheets/palette.0123abcd.min.css"


def write_site(root: Path, path: str = THEME_PATH) -> dict[str, Path]:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(PALETTE)
    pages = {"index.html": "", "lessons/a/index.html": "../../", "404.html": "/"}
    written = {}
    for page, prefix in pages.items():
        (root / page).parent.mkdir(parents=True, exist_ok=True)
        (root / page).write_text(PAGE.format(prefix=prefix, path=path))
        written[page] = root / page
    return written


def linked(page: Path) -> str:
    return re.search(r'href="([^"]*)"', page.read_text())[1]


def test_every_page_links_one_lean_copy_that_keeps_all_but_the_switching_rules_and_a_second_run_changes_nothing(
        tmp_path):
    pages = write_site(tmp_path)
    leaner = lean_palette(tmp_path)

    lean_path = leaner[THEME_PATH]
    assert re.fullmatch(r"assets/stylesheets/palette-lean\.[0-9a-f]{8}\.min\.css", lean_path)
    assert linked(pages["index.html"]) == lean_path
    assert linked(pages["lessons/a/index.html"]) == "../../" + lean_path
    assert linked(pages["404.html"]) == "/" + lean_path
    lean = (tmp_path / lean_path).read_text()
    assert "data-md-color-switching" not in lean
    assert lean == ('@charset "UTF-8";[data-md-color-scheme=slate]{--md-hue:232}@media screen{.md-header{color:red}}'
                    "/*# sourceMappingURL=palette.0123abcd.min.css.map*/")
    assert (tmp_path / THEME_PATH).read_text() == PALETTE, "the theme's own file stays as it was"

    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    assert lean_palette(tmp_path) == {}
    assert {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()} == before


def test_a_theme_without_the_rule_is_left_as_it_is_and_a_missing_stylesheet_is_named(tmp_path):
    pages = write_site(tmp_path, "assets/stylesheets/modern/palette.89ef0123.min.css")
    (tmp_path / "assets/stylesheets/modern/palette.89ef0123.min.css").write_text(".md-header{color:red}")
    assert lean_palette(tmp_path) == {}
    assert linked(pages["index.html"]) == "assets/stylesheets/modern/palette.89ef0123.min.css"

    (tmp_path / "assets/stylesheets/modern/palette.89ef0123.min.css").unlink()
    with pytest.raises(PageError, match=r"404\.html: links assets/stylesheets/modern/palette\.89ef0123\.min\.css, "
                                        "which the site does not have"):
        lean_palette(tmp_path)


@pytest.mark.parametrize("theme", ["material", "zensical"])
def test_the_installed_themes_palette_stylesheets_lose_exactly_their_switching_rule(theme):
    """What the step relies on in the real themes: each palette stylesheet has the rule, and only that rule goes."""
    package = pytest.importorskip(theme)
    sheets = sorted(Path(package.__file__).parent.glob("templates/assets/stylesheets/**/palette.*.min.css"))
    assert sheets, f"{theme} ships no palette stylesheet where the step looks for it"
    for sheet in sheets:
        css = sheet.read_text(encoding="utf-8")
        lean, removed = without_switching_rules(css)
        assert removed == 1, sheet
        assert len(css) - len(lean) == len(RE_SWITCHING_RULE.search(css)[0]) < 200, sheet
        assert "data-md-color-switching" not in lean, sheet


def test_the_built_site_links_only_the_lean_palette(built_site):
    assert_pages_link_the_lean_palette(built_site)
