"""Preloads of the KaTeX fonts a math page uses (build_scripts/pipeline/katex_fonts.py): the faces come from
katex.min.css's own rules, each page preloads the faces its shown formulas use, and a second run changes nothing."""

import re
import shutil
from pathlib import Path

import pytest

from build_scripts.pipeline.katex_fonts import KATEX_DIR, faces_used, font_rules, preload_katex_fonts
from build_scripts.pipeline.pages import PageError

KATEX_DIST = Path(__file__).parents[2] / "node_modules/katex/dist"
PAGE = """<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="{prefix}assets/vendor/katex/katex.min.css">
</head><body>{body}</body></html>"""
UPRIGHT_AND_ITALIC = '<span class="katex"><span class="mord">2</span><span class="mord mathnormal">x</span></span>'
BOLD_AND_BIG = ('<span class="katex"><span class="mord mathbf">W</span>'
                '<span class="mop op-symbol large-op">∑</span><span class="delimsizing size3">(</span></span>')


@pytest.fixture
def site(tmp_path):
    """A site folder with the KaTeX the Makefile vendors: its CSS and fonts."""
    katex = tmp_path / KATEX_DIR
    katex.mkdir(parents=True)
    shutil.copy(KATEX_DIST / "katex.min.css", katex)
    shutil.copytree(KATEX_DIST / "fonts", katex / "fonts")
    return tmp_path


def write(site: Path, path: str, body: str, prefix: str = "") -> Path:
    page = site / path
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(PAGE.format(prefix=prefix, body=body))
    return page


def test_the_faces_come_from_katex_own_rules():
    rules = dict((tuple(sorted(classes)), face)
                 for classes, face in font_rules((KATEX_DIST / "katex.min.css").read_text()))
    assert rules[("mathnormal",)] == "KaTeX_Math-Italic"
    assert rules[("mathbf",)] == "KaTeX_Main-Bold"
    assert rules[("delimsizing", "size3")] == "KaTeX_Size3-Regular"
    assert rules[("delim-size4",)] == "KaTeX_Size4-Regular"  # `.delim-size4>span`: the children take the font
    assert rules[("large-op", "op-symbol")] == "KaTeX_Size2-Regular"
    assert rules[("boldsymbol",)] == "KaTeX_Math-BoldItalic"


def test_a_page_uses_the_faces_its_elements_select_and_a_page_without_math_none():
    rules = font_rules((KATEX_DIST / "katex.min.css").read_text())
    assert faces_used(UPRIGHT_AND_ITALIC, rules) == {"KaTeX_Main-Regular", "KaTeX_Math-Italic"}
    assert faces_used(BOLD_AND_BIG, rules) == {"KaTeX_Main-Regular", "KaTeX_Main-Bold", "KaTeX_Size2-Regular",
                                               "KaTeX_Size3-Regular"}
    # Both classes on one element are needed: a Size font is not used because "size3" appears somewhere else.
    assert faces_used('<i class="katex"></i><i class="delimsizing"></i><i class="size3"></i>', rules) == {
        "KaTeX_Main-Regular"}
    assert faces_used('<p class="mathbf">not a formula</p>', rules) == set()


def preloads(page: Path) -> list[str]:
    """The fonts a page preloads right after its link to katex.min.css, in order."""
    after = page.read_text().split('katex.min.css">', 1)[-1]
    ours = re.match(r'(?:\s*<link rel="preload" href="[^"]+" as="font" type="font/woff2" crossorigin data-katex-font>)*',
                    after)[0]
    return re.findall(r'href="([^"]+)"', ours)


def test_each_math_page_preloads_its_faces_after_katex_css_and_a_second_run_changes_nothing(site):
    lesson = write(site, "lessons/a/index.html", BOLD_AND_BIG, prefix="../../")
    plain = write(site, "lessons/c/index.html", UPRIGHT_AND_ITALIC, prefix="../../")
    folded = write(site, "lessons/d/index.html", "<details><summary>Why</summary>" + BOLD_AND_BIG + "</details>"
                   + UPRIGHT_AND_ITALIC, prefix="../../")
    home = write(site, "index.html", "<p>No formulas here.</p>")
    preload_katex_fonts(site)

    fonts = "../../assets/vendor/katex/fonts/"
    assert preloads(lesson) == [fonts + f"KaTeX_{face}.woff2"
                                for face in ("Main-Bold", "Main-Regular", "Size2-Regular", "Size3-Regular")]
    assert all((site / "lessons/a" / href).is_file() for href in preloads(lesson))
    assert preloads(plain) == [fonts + "KaTeX_Main-Regular.woff2", fonts + "KaTeX_Math-Italic.woff2"]
    assert preloads(folded) == preloads(plain)  # a closed <details> shows nothing when the page loads
    assert "preload" not in home.read_text()

    before = {path: path.read_text() for path in site.rglob("*.html")}
    preload_katex_fonts(site)
    assert {path: path.read_text() for path in before} == before


def test_a_math_page_without_katex_css_is_named(site):
    page = write(site, "lessons/a/index.html", UPRIGHT_AND_ITALIC)
    page.write_text(page.read_text().replace("katex.min.css", "other.css"))
    with pytest.raises(PageError, match="lessons/a/index.html: has formulas but does not link"):
        preload_katex_fonts(site)
