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
    build_scripts/pipeline/theme_assets.py); page.js and site.css stop the transitions when the reader switches."""
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


COLOR_SCHEME_METAS = "[...document.querySelectorAll('meta[name=color-scheme]')].map((meta) => meta.content)"


@pytest.mark.parametrize("preference", ["light", "dark"])
def test_the_one_color_scheme_meta_follows_the_palette_as_the_reader_switches_it(browser, site_url, preference):
    """overrides/main.html writes the meta as the header is parsed; the theme's script (the build's lean copy) takes
    it instead of adding its own, and sets it as the reader switches: automatic, then light, then dark."""
    page = browser.page
    page.emulate_media(color_scheme=preference)
    page.goto(site_url + "lessons/rmsnorm-geometry/")
    page.wait_for_function("document.body.hasAttribute('data-md-color-media')")  # the theme's script ran
    assert page.evaluate(COLOR_SCHEME_METAS) == [preference]
    for media, scheme in [("(prefers-color-scheme: light)", "light"), ("(prefers-color-scheme: dark)", "dark")]:
        page.locator("form[data-md-component=palette] label:visible").first.click()
        page.wait_for_function(f"document.body.dataset.mdColorMedia === '{media}' && "
                               f"document.querySelector('meta[name=color-scheme]').content === '{scheme}'")
        assert page.evaluate(COLOR_SCHEME_METAS) == [scheme]
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


MATH_LESSON = "lessons/rmsnorm-calculus/"  # the most elements of any page (its formulas' KaTeX)


def restyles(page, action) -> list[int]:
    """How many elements Chromium restyled in each style recalculation while `action()` ran, from a trace of it."""
    cdp = page.context.new_cdp_session(page)
    events, complete = [], []
    cdp.on("Tracing.dataCollected", lambda message: events.extend(message["value"]))
    cdp.on("Tracing.tracingComplete", lambda message: complete.append(True))
    cdp.send("Tracing.start", {"traceConfig": {"includedCategories": ["devtools.timeline"]},
                               "transferMode": "ReportEvents"})
    action()
    cdp.send("Tracing.end")
    for _ in range(200):
        if complete:
            break
        page.wait_for_timeout(50)
    assert complete, "Chromium did not finish the trace in 10 s"
    cdp.detach()
    return [event["args"]["elementCount"] for event in events
            if event["name"] == "UpdateLayoutTree" and "elementCount" in event.get("args", {})]


def elements(page) -> int:
    return page.evaluate("document.getElementsByTagName('*').length")


# A load of the math lesson restyles each of its elements about once, as the parser adds them. Before, the theme's
# script restyled every element once more with its switch of <html>'s class from `no-js` to `js`, twice more with the
# color-scheme <meta> it added and then set (Chromium restyles every element for each change of that meta), and once
# more as it made the stylesheets' addresses absolute (each loaded and parsed again): about 4 times over in all.
LOAD_RESTYLES = 1.5


def test_loading_a_lesson_restyles_the_page_no_more_often_than_the_theme_must(browser, site_url):
    """overrides/main.html styles the page for JavaScript from the start, so that the theme's class change on <html>
    restyles a few elements, not the page (with the build's lean main stylesheet), makes the stylesheets' addresses
    absolute before the body is parsed, and writes the color-scheme meta before the content is parsed, which the
    build's lean bundle then leaves alone (theme_assets.py). Each stylesheet is still fetched once."""
    page = browser.page

    def load():
        page.goto(site_url + MATH_LESSON)
        page.wait_for_function("document.body.hasAttribute('data-md-color-media')")  # the theme's script ran
        page.evaluate("document.body.offsetHeight")  # the restyle it left pending happens now

    stylesheets = []
    page.on("request", lambda request: request.resource_type == "stylesheet" and stylesheets.append(request.url))
    counts = restyles(page, load)
    assert set(page.evaluate("document.documentElement.className").split()) == {"js", "js-focus-visible"}
    assert sorted(stylesheets) == sorted(set(stylesheets)), "a stylesheet fetched twice"
    assert page.evaluate("[...document.querySelectorAll('link[rel~=stylesheet]')].every((link) => "
                         "link.getAttribute('href') === link.href && link.sheet !== null)"), "absolute, and applied"
    count = elements(page)
    assert sum(counts) < LOAD_RESTYLES * count, f"{sum(counts)} elements restyled in all for a page of {count}: {counts}"
    browser.assert_clean()


def test_a_class_change_on_the_root_restyles_a_few_elements_not_the_page(browser, site_url):
    """The theme's script changes <html>'s class as every page loads. Two of the theme's rules (margins in a class-less
    table's cells, of any element) made that restyle every element of the page; the build takes them out and site.css
    has them for named blocks (build_scripts/pipeline/theme_assets.py)."""
    page = browser.page
    page.goto(site_url + MATH_LESSON)
    page.wait_for_function("document.documentElement.classList.contains('js-focus-visible')")  # the theme's script ran
    page.evaluate("document.body.offsetHeight")  # nothing left to restyle before the change
    restyled = sum(restyles(page, lambda: page.evaluate(
        "document.documentElement.classList.add('explainer-test'); document.body.offsetHeight")))
    count = elements(page)
    assert 0 < restyled < count * 0.05, f"{restyled} of the page's {count} elements restyled"
    browser.assert_clean()


# Two tables put into a page: a Markdown table (no class) and another, each cell with blocks above and below.
TABLES = """document.querySelector("article").insertAdjacentHTML("beforeend", `
  <table id="markdown"><tbody><tr><td><p>first</p><ul><li>last</li></ul></td></tr></tbody></table>
  <table id="classed" class="explainer-test"><tbody><tr><td><p>first</p><p>last</p></td></tr></tbody></table>`)"""
MARGINS = """(id) => [...document.querySelectorAll(`#${id} td > *`)].map((block) => {
  const style = getComputedStyle(block);
  return [style.marginTop, style.marginBottom];
})"""


def test_a_markdown_tables_cells_have_no_margin_above_their_first_block_or_below_their_last(browser, site_url):
    """What the theme's two rules did, kept by site.css's: only a Markdown table's cells lose the outer margins."""
    page = browser.page
    page.goto(site_url)
    page.evaluate(TABLES)
    (first_top, first_bottom), (last_top, last_bottom) = page.evaluate(MARGINS, "markdown")
    assert (first_top, last_bottom) == ("0px", "0px")
    assert "0px" not in (first_bottom, last_top), "the margins between the blocks stay"
    (classed_top, _), (_, classed_bottom) = page.evaluate(MARGINS, "classed")
    assert "0px" not in (classed_top, classed_bottom), "a table with a class keeps the theme's margins"
    browser.assert_clean()


CODE_PAGE = "contributing/reference/"  # the most code blocks of any page (33)
# A code block the theme has mounted: its copy button, in the bar it puts at the block's top right.
COPY_BUTTONS = "(code) => code.parentElement.querySelectorAll(':scope > .md-code__nav [data-md-type=copy]').length"


def arrive(page, site_url: str, path: str, arrival: str) -> None:
    """Open `path` as a reader would: loaded ("load"), or reached from the home page by instant navigation
    ("instant"), when the theme mounts the new page's content in the same document."""
    if arrival == "instant":
        page.goto(site_url)
        page.wait_for_load_state("load")
    visit(page, site_url, path)


def check_code_blocks_mount_as_they_come_into_view(page, site_url: str, arrival: str) -> None:
    """mkdocs.yml's `content.lazy`: the theme mounts a code block (its copy button) when the block first comes into
    view, not all of them as the page loads (each measured its own size then, laying the page out again). Checks the
    page in view has its buttons, a block far below has none until it is scrolled to, and its button copies it; and
    that every block that scrolls sideways, mounted or not, can be focused to scroll it by keyboard. `arrival`: as
    `arrive` takes it."""
    page.set_viewport_size({"width": 1200, "height": 800})
    arrive(page, site_url, CODE_PAGE, arrival)
    blocks = page.locator("article pre > code")
    assert blocks.count() >= 20, f"{CODE_PAGE} has {blocks.count()} code blocks: pick the page with the most"
    first = blocks.first
    first.scroll_into_view_if_needed()
    page.wait_for_function(COPY_BUTTONS, arg=first.element_handle())
    last = blocks.last
    assert last.evaluate("(code) => code.getBoundingClientRect().top") > 2 * 800, "the last block is not far below"
    page.wait_for_timeout(300)  # time the theme would take to mount it if it mounted every block at once
    assert last.evaluate(COPY_BUTTONS) == 0, "a block far out of view was mounted as the page loaded"
    # Mounted or not, a block that scrolls sideways takes the keyboard's focus (page.js until the theme mounts it).
    tabindex = page.evaluate("[...document.querySelectorAll('article pre > code')]"
                             ".map((code) => [code.scrollWidth > code.clientWidth, code.getAttribute('tabindex')])")
    assert any(scrolls for scrolls, _ in tabindex), f"no block of {CODE_PAGE} scrolls sideways at 1200 px: pick another"
    assert all((index == "0") == scrolls for scrolls, index in tabindex), tabindex
    last.scroll_into_view_if_needed()
    page.wait_for_function(COPY_BUTTONS, arg=last.element_handle())
    button = last.locator("xpath=..").locator("[data-md-type=copy]")
    assert button.count() == 1
    target = button.get_attribute("data-clipboard-target")
    assert page.locator(target).evaluate("(code, last) => code === last", last.element_handle()), target
    button.click()
    page.locator(".md-dialog").get_by_text("Copied to clipboard").wait_for()


@pytest.mark.parametrize("arrival", ["load", "instant"])
def test_code_blocks_mount_as_they_come_into_view(browser, site_url, arrival):
    check_code_blocks_mount_as_they_come_into_view(browser.page, site_url, arrival)
    browser.assert_clean()


TABLE_PAGE = "lessons/break-the-model/"  # a page with a Markdown table
# Every table the page's scripts took out of the document since the observer started (the theme's table mount swaps
# a table for a placeholder, then puts it back inside its wrapper). Installed before the first page's first script
# runs; instant navigation keeps that document, and the observer with it.
RECORD_MOVED_TABLES = """
window.__movedTables = [];
new MutationObserver((records) => {
  for (const record of records)
    for (const node of record.removedNodes)
      if (node.nodeName === "TABLE") window.__movedTables.push(node.outerHTML.slice(0, 80));
}).observe(document, {childList: true, subtree: true});
"""
TABLE_PLACES = """() => [...document.querySelectorAll("article table:not([class])")].map((table) => {
  const inner = table.parentElement, outer = inner.parentElement;
  return [inner.className, outer.className, outer.parentElement.closest(".md-typeset__scrollwrap") !== null];
})"""


def check_tables_stay_where_the_build_put_them(page, site_url: str, arrival: str) -> None:
    """theme_assets.py: the build wraps each Markdown table in the theme's sideways-scroll wrapper and the theme's
    script passes over it, so it no longer moves the table into the wrapper as the page loads (which restyled all that
    followed). The table is in the wrapper, once, and no script took a table out of the document. `arrival`: as
    `arrive` takes it."""
    page.add_init_script(RECORD_MOVED_TABLES)
    arrive(page, site_url, TABLE_PAGE, arrival)
    page.wait_for_function("document.body.hasAttribute('data-md-color-media')")  # the theme's script ran
    page.locator("article table").first.scroll_into_view_if_needed()
    page.evaluate("new Promise((done) => requestAnimationFrame(() => setTimeout(done)))")  # its mounts are done
    places = page.evaluate(TABLE_PLACES)
    assert places, f"{TABLE_PAGE} has no Markdown table: pick a page with one"
    assert all(place == ["md-typeset__table", "md-typeset__scrollwrap", False] for place in places), places
    assert page.evaluate("window.__movedTables") == [], "a script moved a table as the page loaded"


@pytest.mark.parametrize("arrival", ["load", "instant"])
def test_tables_stay_where_the_build_put_them(browser, site_url, arrival):
    check_tables_stay_where_the_build_put_them(browser.page, site_url, arrival)
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
