"""Every page of the built site, as readers use it, audited with axe-core for WCAG 2.1 A and AA in both palettes.

"As readers use it" means after the sandboxes have gone live, with every quiz answered (wrongly, so the verdicts,
explanations and result line are all on screen), and with every code cell's editor in place and the first cell of the
page run (its output, value and check verdict on screen). Every violation fails, whatever its impact, and nothing is
excused: the theme's own markup is fixed where it falls short (overrides/partials/). Besides the WCAG rules, axe
checks the names of dialogs, which Lighthouse's accessibility audit asks for too. Plain checks of the live DOM follow:
headings in order, alt text, labelled controls.
"""

import re

import pytest

from support import BOOT_TIMEOUT_MS, PROJECT_ROOT, settle_each_sandbox, visit

pytestmark = pytest.mark.browser

AXE = PROJECT_ROOT / "node_modules/axe-core/axe.min.js"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
ALSO_RULES = ["aria-dialog-name"]  # a best practice, not a WCAG rule: Material's search dialog had no name

RUN_AXE = """async ([tags, rules]) => {
  const also = Object.fromEntries(rules.map(rule => [rule, {enabled: true}]));
  const result = await axe.run(document, {runOnly: {type: "tag", values: tags}, rules: also});
  const checked = new Set([...result.passes, ...result.violations].map(rule => rule.id));
  return {
    unchecked: rules.filter(rule => !checked.has(rule)),
    violations: result.violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map(n => ({target: n.target.join(" "), summary: n.failureSummary})),
    })),
  };
}"""


def site_pages(built_site) -> list[str]:
    """Every page of the built site, as paths relative to its root ("" for the home page)."""
    pages = [html.parent.relative_to(built_site).as_posix() for html in sorted(built_site.rglob("index.html"))]
    pages = ["" if page == "." else page + "/" for page in pages if not page.startswith(("assets", "search"))]
    return pages + (["404.html"] if (built_site / "404.html").is_file() else [])


def open_as_readers_see_it(page, site_url: str, path: str) -> None:
    """Open a page, bring each sandbox live, answer each quiz with a wrong choice (and let a training lab draw the
    settings a quiz moved it to), run the page's first cell."""
    visit(page, site_url, path)
    settle_each_sandbox(page, "f.dataset.state === 'live'", BOOT_TIMEOUT_MS)
    quizzes = page.locator("form.quiz")
    for index in range(quizzes.count()):
        quiz = quizzes.nth(index)
        quiz.locator(".quiz__answer[data-correct=false] .quiz__label").first.click()
        quiz.locator(".quiz__check").click()
        quiz.locator(".quiz__result").filter(has_text=re.compile(".")).wait_for()
    # A predict quiz moves the training lab after it to new settings: its view of them is drawn by the worker, and
    # until then the old one is dimmed as out of date (a passing state, which axe would judge as low contrast).
    page.wait_for_function("[...document.querySelectorAll('figure.trainer')].every(f => !('stale' in f.dataset))",
                           timeout=BOOT_TIMEOUT_MS)
    if page.locator("div.cell").count():
        page.wait_for_function("[...document.querySelectorAll('div.cell')].every(c => c.dataset.state === 'ready')")
        first = page.locator("div.cell").first
        first.locator(".cell__run").click()
        page.wait_for_function("c => !['ready', 'running'].includes(c.dataset.state)", arg=first.element_handle(),
                               timeout=BOOT_TIMEOUT_MS)


def set_palette(page, dark: bool) -> None:
    """The palette follows the system (Material's automatic palette): emulate a light or a dark system."""
    page.emulate_media(color_scheme="dark" if dark else "light")
    scheme = "slate" if dark else "default"
    page.wait_for_function("s => document.body.dataset.mdColorScheme === s", arg=scheme)


# A transition under way (the theme's back-to-top button fades in and out as the page scrolls) is a passing state that
# axe would judge by its blended colours (4.35:1 once, mid-fade): audit once every finite animation has ended.
ANIMATIONS_ENDED = """() => document.getAnimations().every((animation) => animation.playState !== "running"
  || animation.effect === null || animation.effect.getComputedTiming().iterations === Infinity)"""


def audit(page) -> list[dict]:
    page.wait_for_function(ANIMATIONS_ENDED, timeout=10_000)
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(RUN_AXE, [WCAG_TAGS, ALSO_RULES])
    assert not result["unchecked"], f"axe did not run {result['unchecked']} on any element"
    return result["violations"]


def describe(where: str, violation: dict) -> str:
    nodes = "\n".join(f"      {n['target']}: {' '.join(n['summary'].split())}" for n in violation["nodes"])
    return f"  {where}: {violation['id']} ({violation['impact']}): {violation['help']}\n{nodes}"


def violations_as_readers_see_them(page, site_url: str, paths: list[str]) -> list[str]:
    """axe's violations on each page, opened as readers use it, in the light palette and the dark, one line each."""
    failures = []
    for path in paths:
        page.emulate_media(color_scheme="light")
        open_as_readers_see_it(page, site_url, path)
        for dark in (False, True):
            set_palette(page, dark)
            where = f"/{path} ({'dark' if dark else 'light'})"
            failures += [describe(where, violation) for violation in audit(page)]
    return failures


def test_axe_finds_no_violation_on_any_page_in_light_or_dark(browser, site_url, built_site):
    pages = site_pages(built_site)
    assert len(pages) >= 4, pages
    failures = violations_as_readers_see_them(browser.page, site_url, pages)
    assert not failures, "axe: violations of WCAG 2.1 AA (or of a dialog's name):\n" + "\n".join(failures)
    browser.assert_clean()


# ---- the live DOM, page by page -------------------------------------------------------------------------------------

HEADINGS = "() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].map(h => [Number(h.tagName[1]), h.id])"
IMAGES_WITHOUT_ALT = "() => [...document.querySelectorAll('img:not([alt])')].map(i => i.getAttribute('src'))"
# A control's name: a <label> with words (or a title), aria-label(ledby) or title; a button's own text counts too.
# Controls that are not rendered at all (Material's display:none state checkboxes, our Check button before quiz.js
# mounts) are in no one's way and need none.
UNLABELLED_CONTROLS = """() => [...document.querySelectorAll('input, select, textarea, button')]
  .filter(e => e.type !== 'hidden' && e.checkVisibility({visibilityProperty: true}))
  .filter(e => !(e.labels && [...e.labels].some(l => l.textContent.trim() || l.title.trim()))
               && !e.getAttribute('aria-label')?.trim() && !e.getAttribute('aria-labelledby') && !e.title?.trim()
               && !(e.tagName === 'BUTTON' && e.textContent.trim()))
  .map(e => e.outerHTML.slice(0, 160))"""


@pytest.fixture(scope="module")
def loaded_pages(module_browser, site_url, built_site) -> dict[str, dict]:
    """Every page loaded once (the checks below only read it): its headings, images without alt text, unlabelled
    controls and how many controls of ours it has, by path."""
    found, page = {}, module_browser.page
    for path in site_pages(built_site):
        visit(page, site_url, path)
        found[path] = {"headings": page.evaluate(HEADINGS), "images without alt": page.evaluate(IMAGES_WITHOUT_ALT),
                       "unlabelled": page.evaluate(UNLABELLED_CONTROLS),
                       "controls": page.locator(".sandbox__control, .quiz__input").count()}
    module_browser.assert_clean()
    return found


def test_headings_go_down_one_level_at_a_time_on_every_page(loaded_pages):
    problems = []
    for path, found in loaded_pages.items():
        headings = found["headings"]
        if not headings or headings[0][0] != 1 or [level for level, _ in headings].count(1) != 1:
            problems.append(f"/{path}: needs exactly one h1, first (got {headings[:3]}…)")
        for (before, _), (level, anchor) in zip(headings, headings[1:]):
            if level > before + 1:
                problems.append(f"/{path}: h{before} is followed by h{level} (#{anchor})")
    assert not problems, "\n".join(problems)


def test_every_image_has_alt_text_on_every_page(loaded_pages):
    missing = {path: found["images without alt"] for path, found in loaded_pages.items() if found["images without alt"]}
    assert not missing, missing


def test_every_form_control_has_a_label_on_every_page(loaded_pages):
    assert sum(found["controls"] for found in loaded_pages.values()) > 0, (
        "no sandbox or quiz control found: the check checked nothing of ours")
    unlabelled = {path: found["unlabelled"] for path, found in loaded_pages.items() if found["unlabelled"]}
    assert not unlabelled, unlabelled
