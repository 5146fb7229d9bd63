"""The built pages as the pipeline reads them once an engine has written them: what each page loads and links to, its
inline scripts and its anchors; and the one way the pipeline writes into them (tags at the top of <head>).

The Content-Security-Policy (csp.py), the service worker's file list (offline.py) and the link check (links.py) all
read pages through `read_page`, so they agree on what a page references.
"""

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

# Script types a browser runs; anything else (application/json, text/template) is data.
SCRIPT_TYPES = {"", "text/javascript", "application/javascript", "module"}
# Where a page names another file: (tag, attribute).
REFERENCE_ATTRIBUTES = {("a", "href"), ("link", "href"), ("script", "src"), ("img", "src"), ("source", "src"),
                        ("iframe", "src"), ("video", "src"), ("audio", "src"), ("embed", "src"), ("object", "data"),
                        ("form", "action")}


class PageError(ValueError):
    """A built page the pipeline cannot finish; the message names the page."""


@dataclass(frozen=True)
class Reference:
    """One place a page names another address."""

    tag: str
    attribute: str
    value: str
    line: int
    rel: str = ""  # a <link>'s rel


@dataclass
class Page:
    """One built HTML page."""

    path: str  # relative to the site folder: "lessons/norm/index.html"
    inline_scripts: list[tuple[dict, str]] = field(default_factory=list)  # (attributes, text) of scripts a browser runs
    data_scripts: dict[str, str] = field(default_factory=dict)  # id → text of non-JavaScript <script> (Material's config)
    references: list[Reference] = field(default_factory=list)
    anchors: set[str] = field(default_factory=set)  # every id, and every <a name>
    handlers: list[tuple[str, str, int]] = field(default_factory=list)  # (tag, on… attribute, line)

    @property
    def url(self) -> str:
        """The page's address relative to the site's root ("" for the home page, "lessons/norm/" for a lesson)."""
        return self.path.removesuffix("index.html")


class _PageParser(HTMLParser):
    def __init__(self, page: Page):
        super().__init__(convert_charrefs=True)
        self.page = page
        self.script: tuple[dict, list[str]] | None = None

    def handle_starttag(self, tag, attrs):
        attributes = {name: value or "" for name, value in attrs}
        line = self.getpos()[0]
        for name in ("id",) + (("name",) if tag == "a" else ()):
            if attributes.get(name):
                self.page.anchors.add(attributes[name])
        for name in attributes:
            if name.startswith("on"):
                self.page.handlers.append((tag, name, line))
        for (known_tag, name) in REFERENCE_ATTRIBUTES:
            if tag == known_tag and attributes.get(name):
                self.page.references.append(Reference(tag, name, attributes[name], line, attributes.get("rel", "")))
        if tag == "script" and "src" not in attributes:
            self.script = (attributes, [])

    def handle_data(self, data):
        if self.script is not None:
            self.script[1].append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self.script is not None:
            attributes, parts = self.script
            text = "".join(parts)
            if attributes.get("type", "").lower() in SCRIPT_TYPES:
                self.page.inline_scripts.append((attributes, text))
            elif attributes.get("id"):
                self.page.data_scripts[attributes["id"]] = text
            self.script = None


def read_page(site_dir: Path, path: Path) -> Page:
    """Read one built page (`path` inside `site_dir`)."""
    page = Page(path.relative_to(site_dir).as_posix())
    parser = _PageParser(page)
    # Script text is kept verbatim (convert_charrefs touches only text outside <script>, which HTMLParser reads raw).
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return page


def site_pages(site_dir: Path) -> list[Path]:
    """Every HTML page of a built site, in a stable order."""
    return sorted(site_dir.rglob("*.html"))


def site_path(page: Page, value: str, site_url: str) -> str | None:
    """The file a reference of `page` points at, relative to the site's root (fragment and query dropped), or None
    when it points outside the site (another origin, mailto:, data:, …). Site-absolute paths ("/explainer/x/") and
    full addresses under site_url count as the site's own."""
    base = urlsplit(site_url or "/")
    prefix = base.path if base.path.endswith("/") else base.path + "/"
    target = urlsplit(urljoin(f"{prefix}{page.url}", value.strip()))
    if target.scheme and target.scheme not in ("http", "https"):
        return None
    if target.netloc and (target.scheme, target.netloc) != (base.scheme or target.scheme, base.netloc):
        return None
    if not target.path.startswith(prefix):
        return None
    return target.path[len(prefix):]


def file_for(site_dir: Path, path: str) -> Path:
    """The file a static host serves for a site path (a folder's index.html)."""
    return site_dir / path / "index.html" if path == "" or path.endswith("/") else site_dir / path


# What insert_head_tags writes (so that publishing a site twice does not write it twice).
RE_OURS = re.compile(r'\n    <meta (?:http-equiv="Content-Security-Policy"|name="explainer-offline") [^>]*>')
RE_HEAD = re.compile(r"<head\b[^>]*>(\s*<meta charset=[^>]*>)?", re.I)


def insert_head_tags(html: str, tags: list[str], where: str) -> str:
    """The page with `tags` placed at the top of <head>, right after <meta charset> (a policy only covers what
    follows it), replacing those an earlier run put there; `where` names the page in the error when it has no
    <head>."""
    html = RE_OURS.sub("", html)
    match = RE_HEAD.search(html)
    if not match:
        raise PageError(f"{where}: no <head> to put {', '.join(tags)} into")
    return html[: match.end()] + "".join(f"\n    {tag}" for tag in tags) + html[match.end():]
