"""Helpers the tests import: the project's paths, real site builds, and a static file server for the built site."""

import contextlib
import functools
import http.server
import io
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# How long a browser test waits for Python to boot in the page: the page's own limit is 60 s; this leaves room for a
# loaded CI machine (both cores busy).
BOOT_TIMEOUT_MS = 90_000

# The grace the interrupt tests give an interrupted cell (ExplainerRuntime.interruptGraceMs; the page's own is 5 s):
# they check that Python stops and keeps its variables, not how fast. Python sees an interrupt within milliseconds
# here, idle or loaded, but in CI the worker was twice stopped instead (with 2 s of grace, then 5 s; not reproduced).
INTERRUPT_GRACE_MS = 60_000

# Headless Debian Chromium on a machine with no network: without the background-networking flags it keeps trying
# Google's hosts. (The tests and the browser benchmark both launch it with these.)
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP_VIEWPORT = {"width": 1280, "height": 900}

# The tests' browsers reach the loopback address only: Chromium sends every other request to this proxy, where nothing
# listens (port 9, discard), so it fails at once on any machine, online or not. Chromium never proxies loopback.
NO_NETWORK_FLAGS = ["--proxy-server=http://127.0.0.1:9"]


def launch_chromium(playwright, profile, **options):
    """A persistent Chromium context in the folder `profile`, on Debian's chromium (never a downloaded one), at
    DESKTOP_VIEWPORT unless `options` (launch_persistent_context's keywords) give another, with no way out of the
    loopback address (NO_NETWORK_FLAGS). It shows scrollbars, which Playwright hides by default: pages are laid out
    as in a reader's browser (a scrollbar takes 15 px there)."""
    executable = shutil.which("chromium")
    assert executable, "Debian chromium is not installed: run `make test`, which installs it"
    return playwright.chromium.launch_persistent_context(
        str(profile), executable_path=executable, headless=True, args=[*CHROMIUM_FLAGS, *NO_NETWORK_FLAGS],
        **{"viewport": DESKTOP_VIEWPORT, "ignore_default_args": ["--hide-scrollbars"], **options})


def build_in_process(engine: str, config_file: Path) -> Path:
    """Build a site the way `make build ENGINE=engine` does, in this process (faster than a subprocess); returns
    the site folder (mkdocs.yml's site_dir). Raises on failure. The page context the build leaves behind is dropped."""
    import contextvars

    def build() -> Path:
        if engine == "mkdocs":
            from mkdocs.commands.build import build as mkdocs_build
            from mkdocs.config import load_config

            config = load_config(str(config_file), strict=True)
            mkdocs_build(config)
            return Path(config.site_dir)
        from build_scripts.pipeline.config import read_site
        from build_scripts.pipeline.engines import build_with_zensical

        site = read_site(config_file)
        build_with_zensical(site)
        return site.site_dir

    return contextvars.copy_context().run(build)


def run_pipeline(config_file: Path, *arguments: str) -> subprocess.CompletedProcess:
    """Run `python -m build_scripts.pipeline ARGUMENTS` in the project of `config_file` (never raises on failure)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "build_scripts.pipeline", *arguments, "--config-file", str(config_file)],
                          capture_output=True, text=True, env=env, cwd=config_file.parent)


def run_mkdocs_build(config_file: Path, site_dir: Path, site_url: str | None = None) -> subprocess.CompletedProcess:
    """Run a real `mkdocs build --strict` as a subprocess and return the finished process (never raises on failure)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    if site_url:
        env["SITE_URL"] = site_url
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config_file), "--site-dir", str(site_dir)],
        capture_output=True,
        text=True,
        env=env,
        cwd=config_file.parent,
    )


# What a copy of the project shares with the project (linked, not copied): set-up results and the caches that are
# keyed by their inputs. The copy builds its own wheel (build/cache/wheel) from its own sources.
SHARED_WITH_COPIES = ("build/pyodide", "node_modules", "build/cache/figures", "build/cache/training",
                      "build/cache/trained", "build/cache/pyodide-wheels", "build/cache/precompiled",
                      "build/cache/math")


def copy_project_site_sources(destination: Path) -> Path:
    """Copy mkdocs.yml, docs/ and what they read into `destination`; return the copied mkdocs.yml.

    The copy is a project of its own (a build in a subprocess imports build_scripts from it, and builds the wheel
    from its explainer/ and pyproject.toml); the prepared Pyodide runtime, node_modules and the input-keyed caches
    are linked, not copied.
    """
    for name in ("mkdocs.yml", "pyproject.toml", "README.md"):
        shutil.copy2(PROJECT_ROOT / name, destination / name)
    for folder in ("docs", "explainer", "build_scripts", "overrides"):
        shutil.copytree(PROJECT_ROOT / folder, destination / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (destination / "build" / "cache").mkdir(parents=True)
    for linked in SHARED_WITH_COPIES:
        if (PROJECT_ROOT / linked).exists():
            (destination / linked).symlink_to(PROJECT_ROOT / linked)
    return destination / "mkdocs.yml"


def build_pages(destination: Path, pages: dict[str, str], site_dir: Path,
                site_url: str) -> subprocess.CompletedProcess:
    """Build a site of the given pages ({"cells.md": markdown, ...}, in nav order) with the project's own mkdocs.yml,
    plugin, theme and browser code: a copy of the project whose docs/ holds only these pages (and the assets)."""
    destination.mkdir(parents=True, exist_ok=True)
    config = copy_project_site_sources(destination)
    for page in (destination / "docs").rglob("*.md"):
        page.unlink()
    for name, text in pages.items():
        (destination / "docs" / name).write_text(text, encoding="utf-8")
    nav = "".join(f"  - {name}\n" for name in pages)
    text = config.read_text()
    config.write_text(text[: text.index("\nnav:")] + f"\nnav:\n{nav}")
    return run_mkdocs_build(config, site_dir, site_url=site_url)


class SiteRequestHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the MIME types Pyodide needs (a .wasm served as anything else makes 0.27 hang)."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".json": "application/json",
        ".whl": "application/zip",
    }

    # HTTP/1.1, as real hosts answer: Chromium ignores an ETag in an HTTP/1.0 answer (see send_file_head).
    protocol_version = "HTTP/1.1"

    extra_headers: dict[str, str] = {}
    path_headers: dict[str, dict[str, str]] = {}  # URL path → headers for that file only
    replaced: dict[str, bytes] = {}  # URL path → bytes served instead of the file (a tampered copy)
    delays: dict[str, float] = {}  # URL path → seconds its answer waits (a slow file)
    requests: list[tuple[str, int]] = []  # (URL path, status) of every request answered

    etag = None  # the answer's validator, once send_head knows the file

    def end_headers(self):
        headers = {**self.extra_headers, **self.path_headers.get(urlsplit(self.path).path, {})}
        if self.etag:
            headers["ETag"] = self.etag
        for name, value in headers.items():
            self.send_header(name, value)
        super().end_headers()

    def send_head(self):
        self.etag = None  # one connection carries several requests (HTTP/1.1): nothing of the last answer stays
        path = urlsplit(self.path).path
        if path in self.delays:
            time.sleep(self.delays[path])
        body = self.replaced.get(path)
        if body is None:
            return self.send_file_head()
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path + "index.html" if path.endswith("/") else path))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def send_file_head(self):
        """The file's answer, validated by an ETag of its modification time in nanoseconds and its size: a copy the
        browser revalidates is fresh (304) only if the file is unchanged. (The library's own check compares
        Last-Modified to the second, so a file rewritten within the second of its last answer would be taken as
        unchanged.)"""
        file = Path(self.translate_path(self.path))
        if file.is_dir():
            file = file / "index.html"
        with contextlib.suppress(OSError):
            stat = file.stat()
            self.etag = f'"{stat.st_mtime_ns:x}-{stat.st_size:x}"'
        if self.etag and self.etag in self.headers.get("If-None-Match", ""):
            self.send_response(http.HTTPStatus.NOT_MODIFIED)
            self.end_headers()
            return None
        return super().send_head()

    def log_request(self, code="-", size="-"):
        self.requests.append((urlsplit(self.path).path, int(getattr(code, "value", code))))

    def log_message(self, format, *args):
        pass


# The headers that make a page cross-origin isolated (SharedArrayBuffer, Pyodide's interrupt buffer).
CROSS_ORIGIN_ISOLATION = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}


class _SiteHTTPServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return  # a browser that closed while a file was on its way (a page that was left): not the server's error
        super().handle_error(request, client_address)


class StaticSiteServer:
    """Serve a folder on 127.0.0.1 from a background thread; the port is known before anything is built into it.
    `headers` are added to every response (e.g. CROSS_ORIGIN_ISOLATION), `path_headers` (also an attribute, which a
    test may change while it serves) to one path's. `requests` lists every (path, status) answered; a path put into
    `replaced` is answered with those bytes instead of its file (a folder's path, as the folder's index.html would
    be); a path put into `delays` is answered that many seconds late."""

    def __init__(self, root: Path, headers: dict[str, str] | None = None,
                 path_headers: dict[str, dict[str, str]] | None = None):
        self.root = root
        self.requests: list[tuple[str, int]] = []
        self.replaced: dict[str, bytes] = {}
        self.delays: dict[str, float] = {}
        self.path_headers: dict[str, dict[str, str]] = dict(path_headers or {})
        handler_class = type("Handler", (SiteRequestHandler,), {
            "extra_headers": dict(headers or {}), "path_headers": self.path_headers,
            "requests": self.requests, "replaced": self.replaced, "delays": self.delays})
        handler = functools.partial(handler_class, directory=str(root))
        self._server = _SiteHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self._server.server_port}/"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self):
        self._server.shutdown()
        self._server.server_close()

    def served(self, suffix: str) -> int:
        """How many requests for a path ending in `suffix` were answered."""
        return sum(1 for path, _ in self.requests if path.endswith(suffix))


def serve_copy(site: Path, folder: Path, **options) -> StaticSiteServer:
    """A server of its own for a copy of a built site (hard links, so nothing is copied): another port than the
    site's, and one a test may stop; `options` go to StaticSiteServer."""
    shutil.copytree(site, folder, copy_function=os.link)
    return StaticSiteServer(folder, **options)


def wait_until(condition, page, message: str = "timed out", timeout_ms: int = 90_000):
    """Poll a Python-side condition (a server's request log, Playwright's list of workers, what the page is asked)
    until it holds; returns its value. The pause between two looks is Playwright's, not time.sleep: the sync API
    processes its events and runs route handlers only while inside its calls."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not (value := condition()):
        assert time.monotonic() < deadline, message
        page.wait_for_timeout(25)
    return value


def markdown_error(convert, text: str, path: str = "docs/page.md"):
    """The MarkdownSourceError that `convert(text)` raises while converting the page `path` (fails if none)."""
    import pytest

    from build_scripts.markdown._blocks import MarkdownSourceError
    from build_scripts.markdown._page import PageContext, on_page

    with on_page(PageContext(path)), pytest.raises(MarkdownSourceError) as caught:
        convert(text)
    return caught.value


def elements_by_page(site: Path, tag: str, css_class: str, attribute: str) -> dict[str, list[str]]:
    """For each page of a built site that has <tag class="… css_class …"> elements: its path from the site root
    ("" for the home page, else ending in "/") and each element's `attribute`, in page order."""
    from html.parser import HTMLParser

    class Finder(HTMLParser):
        def __init__(self):
            super().__init__()
            self.found = []

        def handle_starttag(self, name, attrs):
            attrs = dict(attrs)
            if name == tag and css_class in (attrs.get("class") or "").split():
                self.found.append(attrs[attribute])

    pages = {}
    for html in sorted(site.rglob("index.html")):
        finder = Finder()
        finder.feed(html.read_text())
        if finder.found:
            pages[html.parent.relative_to(site).as_posix().removesuffix(".") + "/"] = finder.found
    return pages


def page_path(page: str) -> str:
    """Where the site serves a Markdown page (its path relative to docs/): its path from the site root, "" for the
    home page, else ending in "/" (MkDocs' and Zensical's directory URLs)."""
    stem = page.removesuffix(".md")
    return "" if stem == "index" else stem.removesuffix("/index") + "/"


# Per theme stylesheet the pipeline rewrites (build_scripts/pipeline/theme_assets.py), what its lean copy lacks.
CUT_FROM_THEME = {"palette": r"data-md-color-switching", "main": r"t[dh]\s*>\s*:(?:first|last)-child"}


def assert_pages_link_the_lean_theme_assets(site: Path) -> None:
    """The built pages link one palette and one main stylesheet of the theme, each the pipeline's lean copy, which has
    none of the rules the pipeline takes out, and load one script bundle, the lean copy that takes the page's
    color-scheme meta, starts with V8's compile hint and passes over the Markdown tables, which the pages have wrapped
    as the theme's script would."""
    pages = [page.read_text() for page in site.rglob("*.html")]
    bundles = {link for html in pages
               for link in re.findall(r'src="[^"]*?(assets/javascripts/bundle[-.][^"]*\.js)"', html)}
    assert len(bundles) == 1 and "/bundle-lean." in next(iter(bundles)), f"the pages load {sorted(bundles)}"
    bundle = (site / next(iter(bundles))).read_text()
    assert """querySelector('meta[name="color-scheme"]')""" in bundle
    assert bundle.startswith("//# allFunctionsCalledOnLoad\n"), "V8's compile hint comes first"
    assert "table:not([class]):not(.md-typeset__table>table)" in bundle, "the theme's script moves wrapped tables"
    tables = [html for html in pages if "<table>" in html]
    assert tables, "no page has a Markdown table: the wrapped tables are not checked"
    assert all(html.count("<table>") == html.count('<div class="md-typeset__table"><table>') for html in tables)
    for sheet, cut in CUT_FROM_THEME.items():
        links = {link for html in pages
                 for link in re.findall(rf'href="[^"]*?(assets/stylesheets/(?:[\w-]+/)?{sheet}[-.][^"]*\.css)"', html)}
        assert len(links) == 1 and f"/{sheet}-lean." in next(iter(links)), f"the pages link {sorted(links)}"
        assert not re.search(cut, (site / next(iter(links))).read_text()), f"{next(iter(links))} has /{cut}/"


def nav_pages(config_file: Path = PROJECT_ROOT / "mkdocs.yml") -> list[str]:
    """Every page of the site's navigation as a path from the site root ("" for the home page, else ending in "/"),
    read from mkdocs.yml: a lesson added to the nav is tested without editing any test."""
    import yaml

    class Loader(yaml.SafeLoader):  # mkdocs.yml's !ENV and !!python/name tags do not matter for the nav
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    pages = []

    def walk(items):
        for item in items:
            target = next(iter(item.values())) if isinstance(item, dict) else item
            if isinstance(target, list):
                walk(target)
            elif isinstance(target, str) and target.endswith(".md"):
                pages.append(page_path(target))

    walk(yaml.load(config_file.read_text(encoding="utf-8"), Loader=Loader)["nav"])
    return pages


# Follows a link the way a reader's click does: Material's instant navigation (navigation.instant) fetches the page
# and swaps the old page's container for the new one's, without a reload. The old container is marked first, so the
# wait ends only once the new page's content is in place, not merely once the address has changed.
FOLLOW_LINK_JS = """url => {
  window.__sameDocument = true;  // gone if the page is loaded instead
  document.querySelector("[data-md-component=container]").dataset.leaving = "";
  const link = Object.assign(document.createElement("a"), {href: url});
  document.body.append(link);
  link.click();
  link.remove();
}"""


def navigate_instantly(page, url: str) -> None:
    """Open `url` from the page on show by instant navigation, as a reader's click on a link does: the document, its
    worker and the worker's Python stay (one boot for a whole visit). Fails if the page was loaded instead."""
    page.evaluate(FOLLOW_LINK_JS, url)
    page.wait_for_function("!('leaving' in document.querySelector('[data-md-component=container]').dataset)")
    assert page.evaluate("window.__sameDocument === true"), f"{url} was loaded, not reached by instant navigation"
    assert page.url == url, f"instant navigation to {url} ended at {page.url}"


def visit(page, site_url: str, path: str) -> None:
    """Open a page of the site as a reader moving through it does: by instant navigation once a page of the site is
    on show (one Python for the whole visit), else by loading it (the first page of a test; the 404 page, which the
    sitemap does not list, so instant navigation would not take it)."""
    if page.url.startswith(site_url) and path != "404.html":
        navigate_instantly(page, site_url + path)
    else:
        page.goto(site_url + path)
        page.wait_for_load_state("load")


def search_finds(page, query: str, lesson: str, timeout_ms: int = 30_000,
                 results_selector: str = ".md-search-result__item a") -> None:
    """Open the search as a reader does, type `query` and check that a result links to `lesson` within
    `timeout_ms`. `results_selector` finds the theme's result links (Material's by default)."""
    page.keyboard.press("/")  # the theme's shortcut: Material focuses its search box, Zensical opens its dialog
    page.keyboard.type(query)
    # The theme answers each keystroke and replaces its list as answers arrive: the links are read in one go, in the
    # page, until one of them is the lesson (read one by one, they can meet a list that shrank meanwhile).
    results = page.locator(results_selector)

    def shown() -> list[str]:
        return results.evaluate_all("links => links.map(link => link.getAttribute('href') || '')")

    try:
        wait_until(lambda: any(lesson in href for href in shown()), page, timeout_ms=timeout_ms)
    except AssertionError:
        raise AssertionError(f"no result for {query!r} links to {lesson} within {timeout_ms} ms: {shown()}") from None


def settle_each_sandbox(page, settled: str, timeout_ms: int) -> int:
    """Scroll to each sandbox of the open page in turn, as a reader would, and wait until the JavaScript condition
    `settled` (on the figure `f`, e.g. "f.dataset.state === 'live'") holds for it; return how many there are."""
    figures = page.locator("figure.sandbox")
    for index in range(figures.count()):
        figure = figures.nth(index)
        figure.scroll_into_view_if_needed()
        page.wait_for_function(f"f => {settled}", arg=figure.element_handle(), timeout=timeout_ms)
    return figures.count()
