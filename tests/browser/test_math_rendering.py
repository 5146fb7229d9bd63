"""Math in a real browser: the formulas arrive typeset in the HTML (no KaTeX script on any page, typeset even with
JavaScript off), and they look as the browser's own KaTeX used to draw them.

The visual check renders a few formulas of a lesson both ways in the same page, at the same place: first as built,
then, for the same elements, the way the site did it before (the vendored katex.min.js + auto-render on the formula's
TeX, with the options of the old docs/javascripts/math.js), and compares the two screenshots pixel by pixel.
"""

import io

import numpy as np
import pytest
from PIL import Image

from support import PROJECT_ROOT, launch_chromium

pytestmark = pytest.mark.browser

MATH_PAGE = "lessons/rmsnorm-calculus/"
KATEX_DIST = PROJECT_ROOT / "node_modules/katex/dist"
# Screenshots of the same formula count as alike when at most this share of pixels differs by more than a quarter of
# the range in some channel (anti-aliasing may differ at a glyph's edge; a wrong glyph or spacing moves far more).
MAX_DIFFERENT_SHARE = 0.005
CHANNEL_STEP = 64

PICK_FORMULAS = """() => {
  const formulas = [...document.querySelectorAll('.arithmatex')];
  const display = formulas.filter(f => f.querySelector('.katex-display'));
  const inline = formulas.filter(f => !f.querySelector('.katex-display'));
  const matrix = display.find(f => f.querySelector('annotation').textContent.includes('bmatrix'));
  const picked = [...display.slice(0, 3), ...inline.slice(0, 4), matrix];
  picked.forEach((formula, index) => formula.dataset.pick = index);
  return picked.map(f => ({tex: f.querySelector('annotation').textContent,
                           display: !!f.querySelector('.katex-display')}));
}"""

# What docs/javascripts/math.js did on every page before formulas were typeset at build time.
TYPESET_IN_THE_BROWSER = """picked => picked.forEach(({tex, display}, index) => {
  const formula = document.querySelector(`[data-pick="${index}"]`);
  formula.textContent = display ? `\\\\[${tex}\\\\]` : `\\\\(${tex}\\\\)`;
  renderMathInElement(formula, {
    delimiters: [{left: "\\\\(", right: "\\\\)", display: false}, {left: "\\\\[", right: "\\\\]", display: true}],
    throwOnError: false,
  });
})"""

KATEX_SCRIPTS = """() => [...document.scripts].map(s => s.src).filter(src => /katex|auto-render|math\\.js/.test(src))"""


def screenshots(page, count: int) -> list[np.ndarray]:
    page.evaluate("document.fonts.ready")
    return [np.asarray(Image.open(io.BytesIO(page.locator(f'[data-pick="{index}"]').screenshot())).convert("RGB"),
                       dtype=np.int16) for index in range(count)]


def different_share(first: np.ndarray, second: np.ndarray) -> float:
    """The share of pixels that differ by more than CHANNEL_STEP in a channel (1.0 when the sizes differ by more than
    a pixel, which a moved or resized formula would)."""
    if any(abs(a - b) > 1 for a, b in zip(first.shape, second.shape)):
        return 1.0
    height, width = min(first.shape[0], second.shape[0]), min(first.shape[1], second.shape[1])
    difference = np.abs(first[:height, :width] - second[:height, :width]).max(axis=2)
    return float((difference > CHANNEL_STEP).mean())


def test_built_formulas_look_like_the_ones_the_browser_typeset_before(browser, site_url):
    page = browser.page
    page.goto(site_url + MATH_PAGE)
    page.wait_for_load_state("load")
    assert page.evaluate("typeof window.katex === 'undefined' && typeof window.renderMathInElement === 'undefined'")
    picked = page.evaluate(PICK_FORMULAS)
    assert len(picked) == 8 and sum(f["display"] for f in picked) == 4
    lesson = (PROJECT_ROOT / "docs" / MATH_PAGE.rstrip("/")).with_suffix(".md").read_text()
    assert all(f["tex"].strip() in lesson for f in picked), "each formula's TeX is the lesson's own"
    built = screenshots(page, len(picked))

    page.add_script_tag(path=str(KATEX_DIST / "katex.min.js"))
    page.add_script_tag(path=str(KATEX_DIST / "contrib/auto-render.min.js"))
    page.evaluate(TYPESET_IN_THE_BROWSER, picked)
    assert page.locator("[data-pick] .katex").count() == len(picked)
    in_browser = screenshots(page, len(picked))

    shares = [different_share(ours, theirs) for ours, theirs in zip(built, in_browser)]
    assert max(shares) <= MAX_DIFFERENT_SHARE, [(f["tex"][:40], share) for f, share in zip(picked, shares)]
    # The tolerance tells formulas apart: any two different ones of the same size differ by well over it (two
    # display formulas of one height, mostly blank margin, differ in about 1.8 % of their pixels).
    same_size = [(a, b) for i, a in enumerate(built) for b in built[i + 1:] if a.shape == b.shape]
    assert same_size and all(different_share(a, b) > 2 * MAX_DIFFERENT_SHARE for a, b in same_size)
    browser.assert_clean()


def test_no_page_loads_a_katex_script(browser, site_url, built_site):
    pages = [p.parent.relative_to(built_site).as_posix() for p in built_site.rglob("index.html")]
    pages = ["" if p == "." else p + "/" for p in pages if not p.startswith(("assets", "search"))]
    assert len(pages) >= 5
    for path in pages:
        browser.page.goto(site_url + path)
        browser.page.wait_for_load_state("load")
        assert browser.page.evaluate(KATEX_SCRIPTS) == [], path
        assert browser.page.evaluate("typeof window.katex") == "undefined", path
    browser.assert_clean()


def test_formulas_are_typeset_with_javascript_off(playwright_instance, site_url, tmp_path):
    chromium = launch_chromium(playwright_instance, tmp_path / "profile", java_script_enabled=False)
    try:
        page = chromium.pages[0] if chromium.pages else chromium.new_page()
        page.goto(site_url + MATH_PAGE)
        formulas = page.locator(".arithmatex")
        assert formulas.count() > 100
        drawn = page.evaluate("""() => [...document.querySelectorAll('.arithmatex')].filter(f => {
          const box = f.querySelector('.katex-html')?.getBoundingClientRect();
          return box && box.width > 0 && box.height > 0;
        }).length""")
        assert drawn == formulas.count()
        # KaTeX's own fonts draw them, served by the site.
        page.evaluate("document.fonts.ready")
        assert page.evaluate("document.fonts.check('16px KaTeX_Main')")
        assert page.evaluate("document.fonts.check('italic 16px KaTeX_Math')")
        assert page.evaluate("[...document.fonts].some(f => f.family === 'KaTeX_Main' && f.status === 'loaded')")
    finally:
        chromium.close()
