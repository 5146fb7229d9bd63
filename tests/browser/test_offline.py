"""Offline reading in a reader's browser (the `reader` fixture: service workers on, the policy enforced): once a
visit has used a live figure, the footer says the site is available offline, and with the server gone the pages read
come back, their sandboxes go live and their code cells run; a new build's service worker replaces what changed and
deletes the old caches, keeping the runtime.

The site is served from a copy (hard links) by a server of this test's own, which the test stops: no request can
reach anything then, whatever the browser's idea of being offline.
"""

import json
import re

import pytest
from playwright.sync_api import expect

from build_scripts.pipeline import offline
from build_scripts.pipeline.pages import read_page, site_pages
from build_scripts.site_runtime import ASSET_DIR
from support import serve_copy, wait_until

pytestmark = pytest.mark.browser

BOOT_TIMEOUT_MS = 90_000
LESSON = "lessons/try-it-yourself/"


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


def goes_live(page) -> None:
    figure = page.locator("figure.sandbox").first
    figure.scroll_into_view_if_needed()
    expect(figure).to_have_attribute("data-state", "live", timeout=BOOT_TIMEOUT_MS)


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
    page.goto(own_site.url)
    expect(page.locator("h1").first).to_be_visible()
    assert reader.violations() == []
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


@pytest.mark.xfail(reason="known gap (issue 16): after a rebuild the new service worker activates and deletes the old "
                   "caches, but the changed page script it keeps is sometimes the old copy; not diagnosed yet",
                   strict=False)
def test_a_new_build_replaces_what_changed_and_deletes_the_rest(reader, own_site, built_site):
    page = reader.page
    page.goto(own_site.url + LESSON)
    goes_live(page)
    expect(page.locator("[data-explainer-offline]")).to_be_visible(timeout=BOOT_TIMEOUT_MS)
    old_version = json.loads(re.match(r"self\.__EXPLAINER_OFFLINE = (\{.*?\});\n",
                                      (own_site.root / offline.WORKER_NAME).read_text())[1])["version"]
    # The next build: a page script changed, and the pipeline writes the service worker's lists again. The copy's
    # files are hard links into the session's site: each changed one is replaced, not written through.
    script = own_site.root / ASSET_DIR / "quiz.js"
    text = script.read_text() + "\n// the next build\n"
    script.unlink()
    script.write_text(text)
    (own_site.root / offline.WORKER_NAME).unlink()
    pages = [read_page(own_site.root, path) for path in site_pages(own_site.root)]
    lists = offline.write_service_worker(own_site.root, pages, manifest(own_site.root), site_url_of(built_site))
    assert lists["version"] != old_version
    page.reload()  # a navigation looks for a new service worker
    # Looked at by cache names only, every half second: reading every cache's entries in a tight loop kept the new
    # worker from activating (a test artefact, not a reader's case).
    page.wait_for_function("""version => caches.keys().then((names) => {
        const visited = names.filter((name) => name.startsWith("explainer-visited-"));
        return visited.length > 0 && visited.every((name) => name.includes(version));
    })""", arg=lists["version"], polling=500, timeout=BOOT_TIMEOUT_MS)
    caches = page.evaluate(CACHE_CONTENTS)
    quiz = [text for entries in caches.values() for url, text in entries if "/assets/explainer/quiz.js" in url]
    assert quiz == [text], "the new file is kept, the old one deleted"
    assert not [name for name in caches if old_version in name]
    runtime = next(entries for name, entries in caches.items() if name.startswith("explainer-runtime"))
    assert any(url.endswith("/pyodide.asm.wasm") for url, _ in runtime), "the runtime stays kept"
    goes_live(page)
