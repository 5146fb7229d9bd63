"""Offline reading in a reader's browser (the `reader` fixture: service workers on, the policy enforced): once a
visit has used a live figure, the footer says the site is available offline, and with the server gone the pages read
come back, their sandboxes go live and their code cells run; a new build's service worker replaces what changed and
deletes the old caches, keeping the runtime, and a page left open gets the new files at its next navigation, whatever
caching headers the host sends.

The site is served from a copy (hard links) by a server of this test's own, which the test stops: no request can
reach anything then, whatever the browser's idea of being offline.
"""

import json
import re

import pytest
from playwright.sync_api import expect

from build_scripts._files import write_atomic
from build_scripts.pipeline import offline
from build_scripts.pipeline.pages import read_page, site_pages
from build_scripts.site_runtime import ASSET_DIR
from support import BOOT_TIMEOUT_MS, search_finds, serve_copy, wait_until
from test_addresses import follow_link_to, goes_live

pytestmark = pytest.mark.browser

LESSON = "lessons/try-it-yourself/"
OTHER_LESSON, THIRD_LESSON = "lessons/rmsnorm-geometry/", "lessons/rmsnorm-calculus/"


@pytest.fixture
def own_site(built_site, tmp_path):
    server = serve_copy(built_site, tmp_path / "site")
    yield server
    server.close()


def manifest(site) -> dict:
    return json.loads((site / ASSET_DIR / "runtime.json").read_text())


def site_url_of(site) -> str:
    """The address the site was built for (the sitemap's first page)."""
    return re.search(r"<loc>([^<]+)</loc>", (site / "sitemap.xml").read_text())[1]


def test_a_second_visit_works_with_the_server_gone(reader, own_site):
    page = reader.page
    note = page.locator("[data-explainer-offline]")
    page.goto(own_site.url + LESSON)
    expect(note).to_be_hidden()
    goes_live(page)
    expect(note).to_be_visible(timeout=BOOT_TIMEOUT_MS)  # the runtime is kept once it has booted
    page.goto(own_site.url)
    expect(note).to_be_visible()
    own_site.close()

    page.goto(own_site.url + LESSON)
    goes_live(page)
    cell = page.locator(".cell").first
    cell.scroll_into_view_if_needed()
    expect(cell).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
    cell.locator(".cell__run").click()
    expect(cell).to_have_attribute("data-state", "done", timeout=BOOT_TIMEOUT_MS)
    expect(note).to_be_visible()
    search_finds(page, "residual", "lessons/break-the-model/")  # search.js and the theme's worker, kept
    page.goto(own_site.url)
    expect(page.locator("h1").first).to_be_visible()
    assert reader.violations() == []
    assert reader.console_errors == []


REGISTERED = "async () => Boolean(await navigator.serviceWorker.getRegistration())"
# When the page went live (page.js) and when offline.js registered the service worker, on the page's clock.
MARKS = """() => Object.fromEntries(["explainer:page-live", "explainer:offline-register"].map(
  (name) => [name, performance.getEntriesByName(name).map((mark) => mark.startTime)]))"""


def settle_ms(site) -> int:
    """offline.js's SETTLE_MS: how long after the page is live it registers the service worker."""
    found = re.search(r"\bconst SETTLE_MS = (\d+);", (site / ASSET_DIR / "offline.js").read_text())
    assert found, f"{ASSET_DIR}/offline.js has no `const SETTLE_MS = <ms>;`"
    return int(found[1])


def test_the_service_worker_is_registered_a_while_after_the_page_is_live(reader, own_site):
    """Its install fetches and checks the whole shell, then it keeps the runtime: on a page that boots Python, not
    before the page is live (page.js's whenLive); on any page, only once the page has stayed live SETTLE_MS, so that
    work takes no CPU from the next page's boot when the reader moves on at once."""
    page = reader.page
    page.route("**/assets/pyodide/**", lambda route: None)  # never answered: the runtime stays booting
    page.goto(own_site.url + "lessons/break-the-model/")
    page.wait_for_load_state("load")
    page.wait_for_timeout(2000)  # long enough for a registration made at once to show
    assert page.evaluate("ExplainerRuntime.state") == "booting"
    assert not page.evaluate(REGISTERED), "the service worker was registered while the page was booting"

    page.unroute("**/assets/pyodide/**")
    page.goto(own_site.url)  # the home page: nothing live, so live at once
    settle = settle_ms(own_site.root)
    wait_until(lambda: page.evaluate(REGISTERED), page, "registered on a page with nothing live",
               timeout_ms=settle + 10_000)
    marks = page.evaluate(MARKS)
    assert len(marks["explainer:page-live"]) == 1 and len(marks["explainer:offline-register"]) == 1, marks
    waited = marks["explainer:offline-register"][0] - marks["explainer:page-live"][0]
    assert waited >= settle, f"registered {waited:.0f} ms after the page went live, not after {settle} ms"
    assert reader.console_errors == []


def test_a_page_whose_views_never_start_the_runtime_registers_once_its_early_boot_ends(reader, own_site):
    """A lesson read from its top whose live parts are all further down: boot.js's worker boots Python, no view takes
    it over, and the page counts as live once that boot has ended."""
    page = reader.page
    page.goto(own_site.url + LESSON)
    page.wait_for_function('() => performance.getEntriesByName("explainer:early-boot-end").length > 0',
                           timeout=BOOT_TIMEOUT_MS)
    wait_until(lambda: page.evaluate(REGISTERED), page, "registered after the early boot",
               timeout_ms=settle_ms(own_site.root) + 10_000)
    assert page.evaluate("ExplainerRuntime.state") == "idle", "no view started the runtime (the test's premise)"
    assert reader.console_errors == []


CACHE_CONTENTS = """async () => {
  const found = {};
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    found[name] = await Promise.all((await cache.keys()).map(async (request) => [request.url,
      request.url.includes("/assets/explainer/quiz.js") ? await (await cache.match(request)).text() : ""]));
  }
  return found;
}"""

# Resolves once every visited-pages cache is the given build's (the new worker's activation renames it last), looking
# every quarter second for at most `timeout` ms; false if that never happened.
CACHES_BECOME = """([version, timeout]) => new Promise((resolve) => {
  const deadline = Date.now() + timeout;
  const look = async () => {
    const visited = (await caches.keys()).filter((name) => name.startsWith("explainer-visited-"));
    if (visited.length > 0 && visited.every((name) => name.includes(version))) resolve(true);
    else if (Date.now() > deadline) resolve(false);
    else setTimeout(look, 250);
  };
  look();
})"""

# Set when a service worker takes this page over, which is when its activation starts (offline.js's own listener,
# registered earlier, runs first).
WATCH_TAKEOVER = """() => {
  window.__tookOver = false;
  navigator.serviceWorker.addEventListener("controllerchange", () => { window.__tookOver = true; });
}"""

NEXT_BUILD_SCRIPT = "\nwindow.__nextBuild = true;\n"  # what the next build adds to quiz.js
NEXT_BUILD_TITLE = "The next build: "  # and to the lesson's title


def rewrite(path, change) -> str:
    """Give a file of the copy new text, atomically (the page may be reading it); returns the text. The copy's files
    are hard links into the session's site: the link is replaced, not written through."""
    text = change(path.read_text())
    write_atomic(path, text)
    return text


def rebuild_worker(root, site_url: str) -> str:
    """Write the copy's sw.js again from its files, as the pipeline does at the end of a build (atomically, so the
    session's site keeps its own); returns its version."""
    pages = [read_page(root, path) for path in site_pages(root)]
    return offline.write_service_worker(root, pages, manifest(root), site_url)["version"]


def worker_lists(root) -> dict:
    """The lists written in front of the copy's sw.js: {version, shell, runtime}."""
    return json.loads(re.match(r"self\.__EXPLAINER_OFFLINE = (\{.*?\});\n",
                               (root / offline.WORKER_NAME).read_text())[1])


@pytest.fixture
def pages_host(built_site, tmp_path):
    """The site as GitHub Pages serves it (every file with max-age=600), at an address of its own that instant
    navigation works at: the copy's sitemap names the copy's address, as a build for that address would."""
    server = serve_copy(built_site, tmp_path / "site", headers={"Cache-Control": "max-age=600"})
    rewrite(server.root / "sitemap.xml", lambda text: text.replace(site_url_of(built_site), server.url))
    rebuild_worker(server.root, site_url_of(built_site))  # the sitemap is in the worker's lists, with its integrity
    yield server
    server.close()


def test_a_new_build_replaces_what_changed_and_reaches_an_open_page(reader, pages_host, built_site):
    page = reader.page
    root = pages_host.root
    page.goto(pages_host.url + LESSON)
    goes_live(page)
    expect(page.locator("[data-explainer-offline]")).to_be_visible(timeout=BOOT_TIMEOUT_MS)
    follow_link_to(page, OTHER_LESSON)  # now in the HTTP cache, fresh for ten minutes by the host's header
    old_version = worker_lists(root)["version"]
    page.evaluate(WATCH_TAKEOVER)
    page.evaluate("window.__samePage = true")

    # The next build: a page script and a lesson changed, and the pipeline writes the service worker's lists again.
    quiz = rewrite(root / ASSET_DIR / "quiz.js", lambda text: text + NEXT_BUILD_SCRIPT)
    rewrite(root / OTHER_LESSON / "index.html", lambda text: text.replace("<title>", f"<title>{NEXT_BUILD_TITLE}", 1))
    version = rebuild_worker(root, site_url_of(built_site))
    assert version != old_version

    asked = pages_host.served("/" + offline.WORKER_NAME)
    follow_link_to(page, LESSON)  # an instant navigation: offline.js looks for a new service worker at once
    wait_until(lambda: pages_host.served("/" + offline.WORKER_NAME) > asked, page, "sw.js was asked for at once",
               timeout_ms=10_000)  # (the browser would by itself, but only after half a minute or so)
    assert page.evaluate("window.__samePage === true"), "instant navigation works at this address"
    wait_until(lambda: page.evaluate("window.__tookOver"), page, "the new service worker took the page over")
    assert page.evaluate(CACHES_BECOME, [version, BOOT_TIMEOUT_MS]), "the new service worker finished activating"
    caches = page.evaluate(CACHE_CONTENTS)
    kept = [text for entries in caches.values() for url, text in entries if "/assets/explainer/quiz.js" in url]
    assert kept == [quiz], "the new quiz.js is kept, the old one deleted"
    assert not [name for name in caches if old_version in name]
    runtime = next(entries for name, entries in caches.items() if name.startswith("explainer-runtime"))
    assert any(url.endswith("/pyodide.asm.wasm") for url, _ in runtime), "the runtime stays kept"
    assert page.evaluate("window.__nextBuild") is None  # the open page still runs the scripts it loaded

    follow_link_to(page, THIRD_LESSON)  # the next navigation loads the whole page, with the new build's scripts
    wait_until(lambda: page.evaluate("window.__nextBuild === true"), page, "the page runs the new quiz.js")
    assert page.evaluate("window.__samePage") is None
    page.evaluate("window.__samePage = true")
    follow_link_to(page, OTHER_LESSON)  # instant again; the changed page is the new one, not the HTTP cache's
    expect(page).to_have_title(re.compile("^" + re.escape(NEXT_BUILD_TITLE)))
    assert page.evaluate("window.__samePage === true")
    goes_live(page)
    assert reader.violations() == []
    assert reader.console_errors == []


def test_a_new_worker_left_waiting_is_asked_to_take_over(reader, pages_host, built_site):
    """Chromium can leave a new build's worker waiting although it called skipWaiting as it installed (the old worker,
    stopped to let it in, started again at that moment: seen in 2 of 12 runs of the test above). offline.js then asks
    the waiting worker to skip waiting again. Here the new worker does not ask by itself at all, so only that message
    can let it in."""
    page = reader.page
    root = pages_host.root
    page.goto(pages_host.url + LESSON)
    goes_live(page)
    wait_until(lambda: page.evaluate("Boolean(navigator.serviceWorker.controller)"), page, "the worker took over")
    page.evaluate(WATCH_TAKEOVER)
    rewrite(root / ASSET_DIR / "quiz.js", lambda text: text + NEXT_BUILD_SCRIPT)
    version = rebuild_worker(root, site_url_of(built_site))
    install_asks = re.compile(r'(self\.addEventListener\("install",\s*\(?\w+\)?\s*=>\s*\{\s*)self\.skipWaiting\(\)[,;]')
    worker = root / offline.WORKER_NAME
    assert install_asks.search(worker.read_text()), "the bundle's install handler changed: update this test"
    rewrite(worker, lambda text: install_asks.sub(r"\1", text, count=1))

    follow_link_to(page, OTHER_LESSON)  # offline.js looks for the new worker
    wait_until(lambda: page.evaluate("window.__tookOver"), page, "the waiting worker took the page over",
               timeout_ms=20_000)
    assert page.evaluate(CACHES_BECOME, [version, BOOT_TIMEOUT_MS]), "the new service worker finished activating"
    assert reader.console_errors == []


def test_a_page_changed_by_a_build_is_read_afresh_online(reader, pages_host):
    """A build that changes a lesson's text only leaves sw.js as it was (its lists name no page): the worker that
    serves the page must still ask the server, not the HTTP cache, and keep what it gets."""
    page = reader.page
    page.goto(pages_host.url + LESSON)
    wait_until(lambda: page.evaluate("Boolean(navigator.serviceWorker.controller)"), page, "the worker took over")
    follow_link_to(page, OTHER_LESSON)  # through the worker, into the HTTP cache for ten minutes
    rewrite(pages_host.root / OTHER_LESSON / "index.html",
            lambda text: text.replace("<title>", f"<title>{NEXT_BUILD_TITLE}", 1))
    follow_link_to(page, LESSON)
    follow_link_to(page, OTHER_LESSON)
    expect(page).to_have_title(re.compile("^" + re.escape(NEXT_BUILD_TITLE)))
    kept = page.evaluate("url => caches.match(url).then((response) => response.text())", pages_host.url + OTHER_LESSON)
    assert f"<title>{NEXT_BUILD_TITLE}" in kept, "the visited pages' cache holds the new copy"
    assert reader.console_errors == []
