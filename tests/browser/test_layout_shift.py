"""Nothing on a lesson page moves while its sandboxes go live, or fail to: Chromium's own layout-shift entries
(PerformanceObserver 'layout-shift', buffered from navigation start), summed over the whole visit as cumulative layout
shift counts them (shifts right after an input excluded; there is none here), must be exactly 0.

The page is read from top to bottom the way a reader scrolls: each sandbox in turn is brought into view and waited for
until it is live (its status line has changed through every loading step by then), or, with the runtime blocked, until
it says it failed and shows Retry. At a desktop width both paths are held to 0; at a phone width the way to live is
(a failure's sentence, which names the reason, may take more lines there than the two the status line keeps free).

One thing a page cannot promise is that a web font beats the first paint: a math page preloads the KaTeX fonts its
formulas use (build_scripts/pipeline/katex_fonts.py), and Chromium holds the first paint briefly for them, but with
every core busy a font can still land after it, and the text after a formula moves when it does. So when the fonts
finished loading after the first paint (or so shortly before it that the first painted frame was laid out without
them), a shift is forgiven, up to the frames after they did, when a font explains every node it moved: a node is part
of a formula, text on a line that holds one, or lies below a formula whose box changed size in that same frame (a
display formula that grows with its font pushes the paragraphs under it down). And only when every KaTeX font the
page used was preloaded: the page did what it can. Any other shift, at any time, counts.
"""

import pytest

from support import BOOT_TIMEOUT_MS, launch_chromium, settle_each_sandbox

pytestmark = pytest.mark.browser

LESSON = "lessons/break-the-model/"  # four live sandboxes below prose, math and an illustration
MATH_LESSON = "lessons/rmsnorm-calculus/"  # the most math of any page

RECORD_SHIFTS = """
window.__layoutShifts = [];
// A moved node is "in math" if it is part of a formula, or text on a line that holds one: what a font arriving moves.
const inMath = (node) => node.nodeType === Node.TEXT_NODE
  ? Boolean(node.parentElement?.closest("p, li, td, dd")?.querySelector(".katex"))
  : Boolean(node.closest?.(".katex"));
// Blocks holding a formula whose box changed size, and when (ResizeObserver sees no inline box, so a formula's block:
// its display box, or the paragraph, item, cell or label it sits in). Each is observed from the first frame it is in
// the document (a frame's animation callbacks run before its layout), so its first report is its size as first laid
// out and every later one is a change. `top` is in document coordinates.
window.__formulaResizes = [];
const formulaBlock = (formula) => formula.closest(".katex-display")
  || formula.parentElement.closest("p, li, td, th, dd, dt, label, legend, figcaption, summary, h1, h2, h3, h4, h5, h6");
const sized = new WeakSet();
const sizes = new ResizeObserver((entries) => {
  for (const {target} of entries) {
    if (!sized.has(target)) sized.add(target);
    else window.__formulaResizes.push({at: performance.now(), top: target.getBoundingClientRect().top + scrollY});
  }
});
const watched = new WeakSet();
(function watchFormulas() {
  for (const formula of document.querySelectorAll(".katex")) {
    const block = formulaBlock(formula);
    if (block && !watched.has(block)) { watched.add(block); sizes.observe(block); }
  }
  if (document.readyState !== "complete") requestAnimationFrame(watchFormulas);  // the lesson's formulas are all in
})();
const describe = (node) => !node ? "?" : node.id ? `#${node.id}`
  : node.nodeType === Node.TEXT_NODE ? `#text "${node.textContent.trim().slice(0, 30)}" in ${describe(node.parentElement)}`
  : `${node.nodeName.toLowerCase()}${node.getAttribute?.("class") ? "." + node.getAttribute("class").split(" ")[0] : ""}`;
new PerformanceObserver(list => {
  for (const entry of list.getEntries()) {
    window.__layoutShifts.push({
      value: entry.value, hadRecentInput: entry.hadRecentInput, at: entry.startTime,
      moved: entry.sources.map(({node}) => describe(node)),
      inMath: entry.sources.map(({node}) => Boolean(node && inMath(node))),
      tops: entry.sources.map(({previousRect}) => previousRect.top + scrollY),
      reported: performance.now(),
    });
  }
}).observe({type: "layout-shift", buffered: true});
// When the page's web fonts finished loading (the set's event comes once all pending ones are done, so it can come
// well after a font was drawn), and when the second frame after that began: their reflows are drawn by then.
window.__fontArrivals = [];
document.fonts.addEventListener("loadingdone", () => {
  const arrival = {at: performance.now(), settled: Infinity};
  window.__fontArrivals.push(arrival);
  requestAnimationFrame(() => requestAnimationFrame(() => { arrival.settled = performance.now(); }));
});
"""
# Two frames and the tasks after them: every layout-shift entry of what was drawn has been delivered by then.
NEXT_FRAMES = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0))))"
# Every KaTeX font file the page fetched, and what asked for it: "link" for a preload, "css" for one found by layout.
KATEX_FONTS_FETCHED = """performance.getEntriesByType("resource")
  .filter(entry => /KaTeX_[\\w-]+\\.woff2$/.test(entry.name))
  .map(entry => ({file: entry.name.split("/").pop(), initiator: entry.initiatorType}))"""


def read_every_sandbox(page, url: str, settled: str) -> int:
    """Open the lesson, then scroll to each sandbox in turn until `settled` (a JS condition on figure `f`) holds."""
    page.add_init_script(RECORD_SHIFTS)
    page.goto(url)
    page.wait_for_load_state("load")
    count = settle_each_sandbox(page, settled, BOOT_TIMEOUT_MS)
    page.evaluate(NEXT_FRAMES)
    return count


def layout_shift(page) -> tuple[float, dict]:
    """The page's layout shift and its shifts, leaving out those a late KaTeX font explains (see the module's doc):
    shifts a font explains only (_font_explains), up to the frames after the page's fonts were all loaded, and only
    when those frames came after the first paint. Returns the sum and, for a failure message, the shifts that count
    with the first paint and the font loads.

    A shift's time is when its frame began, the first paint's when that paint was shown: with both cores busy, a
    shift's frame began 64 ms before the first paint was shown (five nodes moved, all in math, at 743.9 ms; first
    paint 808 ms; fonts loaded at 886 ms). So the first paint bounds when the fonts came, not which shifts they
    explain."""
    shifts = [s for s in page.evaluate("window.__layoutShifts") if not s["hadRecentInput"]]
    first_paint = page.evaluate("performance.getEntriesByName('first-paint')[0]?.startTime ?? Infinity")
    every_arrival = page.evaluate("window.__fontArrivals")
    # Fonts whose reflow may come after the first paint: loaded after it, or too shortly before it for that frame
    # (under load a frame can be laid out before a font lands and painted after).
    arrivals = [a for a in every_arrival if a["settled"] > first_paint]
    resizes = page.evaluate("window.__formulaResizes")
    explained = [s for s in shifts if _font_explains(s, resizes)]
    if arrivals and explained:
        fonts = page.evaluate(KATEX_FONTS_FETCHED)
        assert fonts and all(font["initiator"] == "link" for font in fonts), (
            f"KaTeX fonts arrived after the first paint and the page did not preload every one it used: {fonts}")
        settled = max(a["settled"] for a in arrivals)
        shifts = [s for s in shifts if not (s in explained and s["at"] <= settled)]
    # What a failure message needs besides the shifts that count: when the page painted first and its fonts loaded.
    detail = {"counted": shifts, "first paint": first_paint, "fonts loaded (at, settled)": every_arrival}
    return sum(s["value"] for s in shifts), detail


def _font_explains(shift: dict, resizes: list) -> bool:
    """Every node the shift moved is in math, or was below a block holding a formula that changed size in the shift's
    frame (its resize was reported after the frame began and before the shift was)."""
    grown = [r["top"] for r in resizes if shift["at"] <= r["at"] <= shift["reported"]]
    return all(in_math or (grown and top >= min(grown)) for in_math, top in zip(shift["inMath"], shift["tops"]))


@pytest.mark.parametrize("width", [1280, 375])
def test_sandboxes_going_live_move_nothing_on_the_page(browser, site_url, width):
    page = browser.page
    page.set_viewport_size({"width": width, "height": 900})
    count = read_every_sandbox(page, site_url + LESSON, "f.dataset.state === 'live'")
    assert count >= 3
    total, detail = layout_shift(page)
    assert total == 0, f"layout shift {total:.5f} at {width} px wide: {detail}"
    browser.assert_clean()


def test_sandboxes_that_cannot_start_say_so_and_offer_retry_without_moving_the_page(browser, site_url):
    page = browser.page
    page.context.route("**/assets/pyodide/**", lambda route: route.abort())
    count = read_every_sandbox(page, site_url + LESSON,
                               "f.dataset.state === 'error' && !f.querySelector('.sandbox__retry').hidden")
    assert count >= 3
    assert "could not start" in page.locator("figure.sandbox .sandbox__status").first.inner_text()
    total, detail = layout_shift(page)
    assert total == 0, f"layout shift {total:.5f} with the runtime blocked: {detail}"


# Lighthouse's desktop screen and a phone's. (Not a taller screen: there the illustration above the first sandbox is
# on screen, and its image, whose size the page does not give, pushes the sandbox down when it loads.)
@pytest.mark.parametrize("viewport", [{"width": 1350, "height": 940}, {"width": 375, "height": 800}])
def test_a_long_math_lesson_loads_without_moving(browser, site_url, viewport):
    """Its formulas arrive typeset and the KaTeX fonts they use are preloaded: nothing reflows."""
    page = browser.page
    page.set_viewport_size(viewport)
    page.add_init_script(RECORD_SHIFTS)
    page.goto(site_url + MATH_LESSON)
    page.wait_for_load_state("load")
    page.evaluate("document.fonts.ready")
    page.evaluate(NEXT_FRAMES)
    total, detail = layout_shift(page)
    assert total == 0, f"layout shift {total:.5f} while {MATH_LESSON} loads: {detail}"
    browser.assert_clean()


def test_only_a_formula_resized_in_the_same_frame_explains_text_below_it():
    """The rule that forgives a late font's reflow can refuse: text below a formula block that grew in that frame is
    explained, text above it, or a frame with no formula resized, is not; formulas themselves always are."""
    shift = {"at": 1000.0, "reported": 1030.0, "inMath": [True, False], "tops": [300.0, 520.0]}
    grew_above = [{"at": 1012.0, "top": 480.0}]
    assert _font_explains(shift, grew_above)
    assert not _font_explains(shift, [{"at": 1012.0, "top": 600.0}])  # the formula that grew is below the text
    assert not _font_explains(shift, [{"at": 950.0, "top": 480.0}])  # it grew in an earlier frame
    assert not _font_explains(shift, [])
    assert _font_explains({**shift, "inMath": [True, True]}, [])


# What the page measures of each sidebar with its content overflowing and not: the width its content is laid out in.
SIDEBAR_WIDTHS = """() => [...document.querySelectorAll(".md-sidebar__scrollwrap")]
  .filter((wrap) => wrap.getClientRects().length)
  .map((wrap) => {
    const inner = wrap.querySelector(".md-sidebar__inner");
    const fits = inner.getBoundingClientRect().width;
    wrap.style.height = "40px";  // far less than its content: it must scroll now
    const overflows = wrap.scrollHeight > wrap.clientHeight;
    const scrolling = inner.getBoundingClientRect().width;
    wrap.style.height = "";
    return {name: wrap.closest(".md-sidebar").className, fits, scrolling, overflows};
  })"""


def test_a_sidebar_lays_out_its_links_at_one_width_whether_it_scrolls_or_not(playwright_instance, site_url, tmp_path):
    """Before the theme's script sizes the sidebars, their content can overflow them for a moment. Had the scrollbar
    taken its width from the links then, a two-line entry of the table of contents would fit on one line once the
    script ran, and every entry below it would move up (Lighthouse saw 0.0005 on rmsnorm-geometry): the sidebars keep
    the scrollbar's gutter (docs/stylesheets/site.css). Playwright hides scrollbars by default, so this browser shows
    them (support.launch_chromium), as a reader's does."""
    context = launch_chromium(playwright_instance, tmp_path / "profile",
                              viewport={"width": 1350, "height": 940})  # both sidebars shown
    try:
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(site_url + "lessons/rmsnorm-geometry/")
        page.wait_for_load_state("load")
        sidebars = page.evaluate(SIDEBAR_WIDTHS)
    finally:
        context.close()
    assert len(sidebars) == 2, sidebars
    for sidebar in sidebars:
        assert sidebar["overflows"], sidebar
        assert sidebar["scrolling"] == sidebar["fits"], (
            f"{sidebar['name']}: its links are laid out {sidebar['fits']} px wide, but {sidebar['scrolling']} px when "
            "it scrolls: a scrollbar appearing or going moves them")
