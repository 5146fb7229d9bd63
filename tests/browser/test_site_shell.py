"""The site shell in a real browser: pages load clean, math typesets, instant navigation, palette, small screens."""

import pytest

from support import BOOT_TIMEOUT_MS, nav_pages, search_finds, settle_each_sandbox, visit

pytestmark = pytest.mark.browser

# Every page of the navigation, read from mkdocs.yml (a page left out of the nav fails the strict build, so this is
# every page): a new lesson is checked here without touching this file.
PAGES = nav_pages()


def test_the_navigation_is_every_page_the_build_writes(built_site):
    built = sorted(p.parent.relative_to(built_site).as_posix() for p in built_site.rglob("index.html"))
    assert sorted(path.rstrip("/") or "." for path in PAGES) == built, (
        "a page is built but missing from mkdocs.yml's nav, or in the nav but not built")


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_with_no_console_error_and_nothing_from_another_origin(browser, site_url, path):
    browser.page.goto(site_url + path)
    browser.page.wait_for_load_state("networkidle")
    assert browser.page.locator("h1").count() == 1
    browser.assert_clean()


def test_math_is_typeset_with_the_sites_own_katex(browser, site_url):
    page = browser.page
    page.goto(site_url + "lessons/rmsnorm-geometry/")
    page.locator(".arithmatex .katex-display").first.wait_for()
    typeset = page.locator(".arithmatex .katex").count()
    written = page.locator(".arithmatex").count()
    assert written > 0 and typeset == written
    assert page.locator(".katex-error").count() == 0
    browser.assert_clean()


def test_instant_navigation_swaps_the_page_without_a_reload_and_typesets_it(browser, site_url):
    page = browser.page
    page.goto(site_url)
    page.evaluate("window.__sameDocument = true")
    page.get_by_role("link", name="Normalize what the branch reads").first.click()
    page.wait_for_url("**/lessons/rmsnorm-geometry/")
    page.locator(".arithmatex .katex").first.wait_for()
    assert page.evaluate("window.__sameDocument === true"), "the click reloaded the page instead of swapping it"
    browser.assert_clean()


def test_palette_toggle_switches_between_light_and_dark(browser, site_url):
    page = browser.page
    page.emulate_media(color_scheme="light")
    page.goto(site_url)

    def scheme():
        return page.locator("body").get_attribute("data-md-color-scheme")

    seen = {scheme()}
    for _ in range(3):  # three palettes: system, light, dark
        page.locator("form[data-md-component=palette] label:visible").first.click()
        seen.add(scheme())
    assert {"default", "slate"} <= seen
    browser.assert_clean()


# Whether page.js's switching attribute is on the body, and a navigation link's transition duration: in the change
# event of the reader's click (after page.js's listener, which captures it) and on each of the three frames after.
RECORD_SWITCH = """
window.__switch = [];
const look = () => window.__switch.push([document.body.hasAttribute("data-explainer-switching"),
                                         getComputedStyle(document.querySelector(".md-nav__link")).transitionDuration]);
document.addEventListener("change", () => {
  look();
  requestAnimationFrame(() => { look(); requestAnimationFrame(() => { look(); requestAnimationFrame(look); }); });
});
"""
THEME_SWITCHING_RULES = """() => [...document.styleSheets].flatMap((sheet) => [...sheet.cssRules])
  .flatMap((rule) => rule.cssRules ? [rule, ...rule.cssRules] : [rule])
  .map((rule) => rule.selectorText || "").filter((selector) => selector.includes("data-md-color-switching"))"""


def test_switching_the_palette_stops_transitions_without_the_themes_rule_that_restyled_every_load(
        browser, site_url):
    """The build takes the theme's rule out of its palette stylesheet (it made every load restyle the whole page:
    build_scripts/pipeline/theme_palette.py); page.js and site.css stop the transitions when the reader switches."""
    page = browser.page
    page.goto(site_url + "lessons/rmsnorm-geometry/")
    page.wait_for_function("document.body.hasAttribute('data-md-color-media')")  # the theme's script ran
    assert page.evaluate(THEME_SWITCHING_RULES) == []
    usual = page.evaluate("getComputedStyle(document.querySelector('.md-nav__link')).transitionDuration")
    assert usual != "0s", "the theme's links have a colour transition: what the switch must not show"
    page.evaluate(RECORD_SWITCH)
    page.locator("form[data-md-component=palette] label:visible").first.click()
    page.wait_for_function("window.__switch.length === 4")
    seen = page.evaluate("window.__switch")
    assert seen[0] == [True, "0s"], f"transitions run while the palette switches: {seen}"
    assert seen[-1] == [False, usual], f"transitions stay off after the switch: {seen}"
    browser.assert_clean()


# Every change of the body's palette attributes from the start of the page, the theme's own ones included.
RECORD_PALETTE_CHANGES = """
window.__paletteChanges = [];
new MutationObserver((records) => {
  for (const record of records) {
    const now = record.target.getAttribute(record.attributeName);
    if (record.target === document.body && record.attributeName.startsWith("data-md-color-") && now !== record.oldValue)
      window.__paletteChanges.push([record.attributeName, record.oldValue, now]);
  }
}).observe(document, {attributes: true, attributeOldValue: true, subtree: true});
"""


@pytest.mark.parametrize("preference", ["light", "dark"])
def test_the_page_is_first_drawn_in_the_palettes_colours(browser, site_url, preference):
    """The built body names the primary and accent colours the theme's script then sets: they must not change on
    load (a reader would see the accent switch from indigo to deep orange). Only the scheme may, for a dark
    preference: one built page serves both."""
    page = browser.page
    page.emulate_media(color_scheme=preference)
    page.add_init_script(RECORD_PALETTE_CHANGES)
    page.goto(site_url + "lessons/rmsnorm-geometry/")
    page.wait_for_function("document.body.hasAttribute('data-md-color-media')")  # the theme's script ran
    changed = {name: (old, new) for name, old, new in page.evaluate("window.__paletteChanges")
               if name != "data-md-color-switching"}
    expected_scheme = {"light": {}, "dark": {"data-md-color-scheme": ("default", "slate")}}[preference]
    assert changed == {"data-md-color-media": (None, "(prefers-color-scheme)"), **expected_scheme}
    browser.assert_clean()


def test_search_finds_a_lesson(browser, site_url):
    page = browser.page
    page.goto(site_url)
    search_finds(page, "residual", "lessons/break-the-model/")
    browser.assert_clean()


@pytest.mark.parametrize("path", PAGES)
def test_nothing_overflows_a_375px_screen(module_browser, site_url, path):
    """A phone-sized reader going from page to page (instant navigation: one Python for the visit), with every
    sandbox live, since a live figure is what stays on screen."""
    page = module_browser.page
    page.set_viewport_size({"width": 375, "height": 800})
    visit(page, site_url, path)
    settle_each_sandbox(page, "f.dataset.state === 'live'", BOOT_TIMEOUT_MS)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    module_browser.assert_clean()
