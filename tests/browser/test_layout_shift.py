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
finished loading after the first paint, a shift that moved only formulas and the text on their lines is forgiven until
the frames after they did, provided every KaTeX font the page used was preloaded (the page did what it can). Any
other shift, at any time, counts.
"""

import pytest

from support import settle_each_sandbox

pytestmark = pytest.mark.browser

LESSON = "lessons/break-the-model/"  # four live sandboxes below prose, math and an illustration
MATH_LESSON = "lessons/rmsnorm-calculus/"  # the most math of any page
BOOT_TIMEOUT_MS = 90_000  # as in test_sandboxes_live.py: the page's own limit is 60 s

RECORD_SHIFTS = """
window.__layoutShifts = [];
// A moved node is "in math" if it is part of a formula, or text on a line that holds one: what a font arriving moves.
const inMath = (node) => node.nodeType === Node.TEXT_NODE
  ? Boolean(node.parentElement?.closest("p, li, td, dd")?.querySelector(".katex"))
  : Boolean(node.closest?.(".katex"));
new PerformanceObserver(list => {
  for (const entry of list.getEntries()) {
    window.__layoutShifts.push({
      value: entry.value, hadRecentInput: entry.hadRecentInput, at: entry.startTime,
      moved: entry.sources.map(({node}) => !node ? "?" : node.id ? `#${node.id}`
        : `${node.nodeName.toLowerCase()}${node.className ? "." + String(node.className).split(" ")[0] : ""}`),
      inMath: entry.sources.every(({node}) => node && inMath(node)),
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


def layout_shift(page) -> tuple[float, list]:
    """The page's layout shift and its shifts, leaving out those a late KaTeX font explains (see the module's doc):
    shifts of formulas and of the text on their lines only, from the first paint to the frames after the page's fonts
    were all loaded, and only when that was after the first paint."""
    shifts = [s for s in page.evaluate("window.__layoutShifts") if not s["hadRecentInput"]]
    first_paint = page.evaluate("performance.getEntriesByName('first-paint')[0]?.startTime ?? Infinity")
    arrivals = [a for a in page.evaluate("window.__fontArrivals") if a["at"] > first_paint]
    if arrivals and any(s["inMath"] for s in shifts):
        fonts = page.evaluate(KATEX_FONTS_FETCHED)
        assert fonts and all(font["initiator"] == "link" for font in fonts), (
            f"KaTeX fonts arrived after the first paint and the page did not preload every one it used: {fonts}")
        settled = max(a["settled"] for a in arrivals)
        shifts = [s for s in shifts if not (s["inMath"] and first_paint <= s["at"] <= settled)]
    return sum(s["value"] for s in shifts), shifts


@pytest.mark.parametrize("width", [1280, 375])
def test_sandboxes_going_live_move_nothing_on_the_page(browser, site_url, width):
    page = browser.page
    page.set_viewport_size({"width": width, "height": 900})
    count = read_every_sandbox(page, site_url + LESSON, "f.dataset.state === 'live'")
    assert count >= 3
    total, shifts = layout_shift(page)
    assert total == 0, f"layout shift {total:.5f} at {width} px wide: {shifts}"
    browser.assert_clean()


def test_sandboxes_that_cannot_start_say_so_and_offer_retry_without_moving_the_page(browser, site_url):
    page = browser.page
    page.context.route("**/assets/pyodide/**", lambda route: route.abort())
    count = read_every_sandbox(page, site_url + LESSON,
                               "f.dataset.state === 'error' && !f.querySelector('.sandbox__retry').hidden")
    assert count >= 3
    assert "could not start" in page.locator("figure.sandbox .sandbox__status").first.inner_text()
    total, shifts = layout_shift(page)
    assert total == 0, f"layout shift {total:.5f} with the runtime blocked: {shifts}"


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
    total, shifts = layout_shift(page)
    assert total == 0, f"layout shift {total:.5f} while {MATH_LESSON} loads: {shifts}"
    browser.assert_clean()
