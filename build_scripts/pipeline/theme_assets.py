"""The theme's stylesheets and script bundle, lighter at load: without what made a small change restyle the whole page,
and with the script compiled off the main thread.

Material (and Zensical, which shares its interface) has two such rules, one in each of two stylesheets, and its
script changes the page's color-scheme meta twice as it starts. All cost the most on rmsnorm-calculus, whose 11.5k
elements are mostly its formulas' KaTeX.

- **palette.<hash>.min.css**: `[data-md-color-switching] *, … ::before, … ::after {transition-duration: 0s
  !important}`. The theme suppresses transitions while the light/dark palette switches: its script sets that
  attribute on <body> whenever it applies the palette, and removes it a frame later. It applies the palette as every
  page loads too, so every load set and removed the attribute. Because of the rule, each change restyled every element
  of the page: the load's own first restyle happened inside the theme's script, and one more, of the whole page again,
  came in a task of its own a frame later (78-117 ms on rmsnorm-calculus).
  - Measured in December 2026 with Chromium traces of fresh loads of that page, this build against the one before
    it, interleaved, medians of eight: main-thread time past 50 ms per task 675 ms against 949 ms, longest task
    378 ms against 535 ms. On rmsnorm-geometry (six loads each) the difference was within the noise: 417 against
    376 ms.
  - The transitions are still suppressed when the reader switches the palette: page.js sets
    `data-explainer-switching` on <body> for two frames when a palette input changes, and site.css has the rule under
    that name.
- **main.<hash>.min.css**: `.md-typeset table:not([class]) td > :first-child` (with `th`, and the same for
  `:last-child`): no top margin on the first block of a Markdown table's cell, no bottom margin on the last. Their
  subject is any element, under a table that has no class attribute. So whenever any element's class attribute changes,
  Chromium restyles every element inside it, in case it is such a table. The theme's script changes <html>'s class as
  every page loads (`no-js` to `js`): that restyled the whole page, 10710 of rmsnorm-calculus' 11466 elements, where 54
  are restyled without the rules.
  - site.css has the two rules again with the blocks named (`p`, `ul`, `div`, …). Chromium then restyles only those
    elements (330 on that page; tests/browser/test_site_shell.py counts them).
  - With overrides/main.html, which takes `no-js` off <html> before the body is parsed, a load of that page restyles
    33.1k elements in all, where it restyled 43.4k (under either engine; either change alone saves nothing, since the
    theme's script also sets the class attribute). Measured in December 2026 on fresh profiles, untraced, the build
    before both changes interleaved, eight loads each: longest task on rmsnorm-calculus, median 289 ms against 377 ms
    (total blocking time 264 against 346 ms). On the home page, break-the-model and rmsnorm-geometry the difference
    was within the noise.
- **bundle.<hash>.min.js**: the palette component appends an empty `<meta name="color-scheme">` to <head> as the
  script starts, then sets its content from the header's computed `color-scheme`. Chromium restyles every element of
  the page for each change of such a meta, whatever its value (style change reason `PlatformColorChange`): two
  restyles of the whole page per load, ~50 ms each on rmsnorm-calculus. The build patches the two statements: the
  component takes the color-scheme meta the page already has, and sets its content only when it differs.
  overrides/main.html writes that meta, with the same value the component would compute, as soon as the header is
  parsed (a restyle of the few elements there are then). Switching the palette still sets it.
  - Measured in December 2026, rmsnorm-calculus, fresh profiles, untraced, against the build before the patch and the
    meta, eight loads each, interleaved: 22.4k elements restyled per load instead of 33.1k; longest task median
    207.5 ms against 271 ms, blocking time past 50 ms 183 against 221 ms. (The theme's script restyled the page once
    more, as it made the stylesheets' addresses absolute for instant navigation: overrides/main.html does that before
    the body is parsed, and a load restyles 11.8k elements.)

- **bundle.<hash>.min.js, compiled as it streams in**: the lean bundle starts with V8's explicit compile hint,
  `//# allFunctionsCalledOnLoad` (Chromium 136 on; other engines read a comment). V8 then compiles every function of
  the script on the thread that streams it in, where it would otherwise compile each one on the main thread the first
  time it runs: as the script is evaluated, and again in the theme's DOMContentLoaded handler, which runs most of its
  code for the first time. The theme runs nearly all of it on every page, so little is compiled for nothing. The lean
  copy of the theme's source map (`<lean bundle>.map`) has one empty line more at the top, so it still points at
  the right lines (the patched statements above move the columns after them on their line, as before).
  - Measured in December 2026, fresh profiles, no DevTools attached, against the build without the hint, twelve
    loads each, interleaved: the home page had a long task in 0 loads of 12, against 6 of 12 (50-75 ms, the
    bundle's evaluation among them); the bundle's evaluation in a long frame, median 12.5 ms against 43.5 on
    break-the-model, 34.5 against 45.5 on rmsnorm-geometry. Under Lighthouse, try-it-yourself's longest task had a
    median of 56.0 ms against 63.3 (four runs each).

- **bundle.<hash>.min.js, and the pages: tables wrapped at build time.** As a page loads, the theme's script wraps
  each table without a class (a Markdown table) in two `<div>`s that let a wide table scroll sideways
  (`md-typeset__scrollwrap`, `md-typeset__table`): it swaps the table for a placeholder, then the placeholder for the
  wrapper holding the table. That new child of the article made Chromium restyle everything after it: 1584 of
  break-the-model's 3930 elements, inside the theme's DOMContentLoaded handler. The build writes the same wrapper
  around each such table of the pages, and patches the bundle's selector (`table:not([class])`) to pass over a table
  already inside one. Only when the bundle renders exactly that wrapper (TABLE_WRAPPER): with another theme's markup,
  nothing is wrapped or patched. A reader without JavaScript gets the wrapper too: a wide table scrolls there as well.
  - Measured in December 2026, break-the-model (one table), fresh profiles, no DevTools attached, 8 loads each,
    interleaved, against the page as built before: the DOMContentLoaded handlers took 66.5 ms at the median against
    102.7 ms (the event's own timing); the longest task, 112 against 131.5 ms.

The build writes each stylesheet and the bundle again, under a name of its own beside the theme's
(`palette-lean.<hash>.min.css`, `main-lean.<hash>.min.css`, `bundle-lean.<hash>.min.js`, so no cache pairs the theme's
address with other bytes), and points every page at the copy. This is done after either engine built the pages. A
theme file without anything to change is left as it is.
"""

import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

from build_scripts._files import write_atomic
from build_scripts.pipeline.pages import PageError, site_pages

# A page's link to one of the theme's stylesheets (Material's assets/stylesheets/<sheet>.<hash>.min.css, or one of
# Zensical's assets/stylesheets/<variant>/<sheet>.<hash>.min.css) or to its script bundle.
RE_THEME_LINK = re.compile(
    r'(?P<before><(?:link [^>]*href|script [^>]*src)=")(?P<prefix>[^"]*?)(?P<path>assets/(?:stylesheets/(?:[\w-]+/)?'
    r'(?P<sheet>palette|main)\.[0-9a-f]+\.min\.css|javascripts/(?P<bundle>bundle)\.[0-9a-f]+\.min\.js))"')
# Per stylesheet, the rules taken out (outside or inside an at-rule's block): the palette's rules that select the
# switching attribute, main's that give a class-less table's cells' first and last element their margins. What comes
# before a rule's selector (a brace, or a statement such as @charset ending in ";") stays.
CUT_RULES = {
    "palette": re.compile(r"[^{};]*\[data-md-color-switching\][^{};]*\{[^{}]*\}"),
    "main": re.compile(r"[^{};]*table:not\(\[class\]\) t[dh]\s*>\s*:(?:first|last)-child[^{};]*\{[^{}]*\}"),
}
# The bundle's two statements on the color-scheme meta (minified: the names differ between Material's and Zensical's
# bundles), and what each becomes: take the page's meta if it has one; set its content only when it differs.
BUNDLE_PATCHES = (
    (re.compile(r'let (\w+)=(\w+)\("meta",\{name:"color-scheme"\}\);document\.head\.appendChild\(\1\);'),
     r"""let \1=document.querySelector('meta[name="color-scheme"]')||"""
     r"""document.head.appendChild(\2("meta",{name:"color-scheme"}));"""),
    (re.compile(r"(\w+)\.content=(\w+)\.colorScheme,"), r"\1.content!==\2.colorScheme&&(\1.content=\2.colorScheme),"),
)
# The bundle's table mount (the content component's query for class-less tables), what it becomes (tables the build
# wrapped are passed over), and the wrapper the theme renders around each such table, as the build writes it.
RE_TABLE_MOUNT = re.compile(r'(\w+)\("table:not\(\[class\]\)",(\w+)\)')
TABLES_NOT_WRAPPED = "table:not([class]):not(.md-typeset__table>table)"
TABLE_WRAPPER = ('<div class="md-typeset__scrollwrap"><div class="md-typeset__table">', "</div></div>")
RE_TABLE_WRAPPER_RENDER = re.compile(
    r'\w+\("div",\{class:"md-typeset__scrollwrap"\},\w+\("div",\{class:"md-typeset__table"\},\w+\)\)')
# V8's explicit compile hint for a whole script: it must come first, before any code.
COMPILE_HINT = "//# allFunctionsCalledOnLoad\n"
# The bundle's last line, naming its source map (a file beside it).
RE_SOURCE_MAP = re.compile(r"^//# sourceMappingURL=([\w.-]+\.map)[ \t]*$", re.MULTILINE)
LEAN_NAME = "{name}-lean.{digest}.min.{ext}"


def without_cut_rules(sheet: str, css: str) -> tuple[str, int]:
    """The stylesheet (`sheet`: "palette" or "main") without the rules CUT_RULES names for it, and how many there
    were."""
    return CUT_RULES[sheet].subn("", css)


def with_patched_color_scheme(js: str) -> tuple[str, int]:
    """The theme's bundle with its color-scheme statements patched (BUNDLE_PATCHES), and how many were."""
    patched = 0
    for pattern, replacement in BUNDLE_PATCHES:
        js, count = pattern.subn(replacement, js)
        patched += count
    return js, patched


def with_wrapped_tables_left_alone(js: str) -> tuple[str, int]:
    """The theme's bundle with its table mount passing over the tables the build wraps (TABLES_NOT_WRAPPED), and how
    many mounts were patched: none unless the bundle renders TABLE_WRAPPER's markup, once."""
    if len(RE_TABLE_WRAPPER_RENDER.findall(js)) != 1:
        return js, 0
    return RE_TABLE_MOUNT.subn(lambda match: f'{match[1]}("{TABLES_NOT_WRAPPED}",{match[2]})', js)


class _TableFinder(HTMLParser):
    """Where each class-less <table> of a page starts and where its </table> ends, as character offsets."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=False)
        self.html = html
        self.line_starts = [0, *(match.end() for match in re.finditer("\n", html))]
        self.open: list[int | None] = []  # per open <table>: its start offset, None when it has a class
        self.tables: list[tuple[int, int]] = []

    def position(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.open.append(None if any(name == "class" for name, _ in attrs) else self.position())

    def handle_endtag(self, tag):
        if tag == "table" and self.open:
            start = self.open.pop()
            if start is not None:
                self.tables.append((start, self.html.index(">", self.position()) + 1))


def with_wrapped_tables(html: str) -> tuple[str, int]:
    """The page with each class-less table inside TABLE_WRAPPER, as the theme's script would put it (one already
    inside stays as it is), and how many were wrapped."""
    if "<table" not in html:
        return html, 0
    finder = _TableFinder(html)
    finder.feed(html)
    finder.close()
    before, after = TABLE_WRAPPER
    tables = [(start, end) for start, end in finder.tables
              if not (html.endswith(before, 0, start) and html.startswith(after, end))]
    # At one offset, a table's end comes before the next table's start.
    insertions = sorted([(end, 0, after) for _, end in tables] + [(start, 1, before) for start, _ in tables])
    parts, last = [], 0
    for offset, _, text in insertions:
        parts += [html[last:offset], text]
        last = offset
    return "".join(parts) + html[last:], len(tables)


def lean_bundle(js: str) -> tuple[str, int]:
    """The theme's bundle with its color-scheme statements patched (BUNDLE_PATCHES), its table mount passing over the
    tables the build wraps, and the compile hint first, and how many changes that made."""
    js, patched = with_patched_color_scheme(js)
    js, mounts = with_wrapped_tables_left_alone(js)
    patched += mounts
    if not js.startswith(COMPILE_HINT):
        js, patched = COMPILE_HINT + js, patched + 1
    return js, patched


def _with_lean_source_map(bundle: Path, lean: Path, js: str) -> str:
    """`js` (the lean copy of `bundle`, to be written as `lean`) pointing at a copy of the theme's source map whose
    lines match it: the compile hint is one line more at the top. A bundle that names no map beside it is left as it
    is."""
    match = RE_SOURCE_MAP.search(js)
    theme_map = bundle.with_name(match[1]) if match else None
    if theme_map is None or not theme_map.is_file():
        return js
    source_map = json.loads(theme_map.read_text(encoding="utf-8"))
    source_map["mappings"] = ";" + source_map["mappings"]  # one line with no mapping: the hint
    write_atomic(lean.with_name(lean.name + ".map"), json.dumps(source_map, separators=(",", ":")))
    return js[:match.start(1)] + lean.name + ".map" + js[match.end(1):]


def lean_theme_assets(site_dir: Path) -> dict[str, str]:
    """Write the lean copy of each theme stylesheet and script bundle the pages link and point the pages at it;
    returns {the theme's path: the lean copy's}, both relative to the site."""
    leaner: dict[str, str | None] = {}  # the theme's path → the lean copy's (None: nothing to change)
    wrapping: set[str] = set()  # the theme's bundles whose lean copy passes over the tables the build wraps
    for page in site_pages(site_dir):
        html = page.read_text(encoding="utf-8")
        assets = {match["path"]: match["sheet"] or match["bundle"] for match in RE_THEME_LINK.finditer(html)}
        for path in assets.keys() - leaner.keys():
            asset = site_dir / path
            if not asset.is_file():
                raise PageError(f"{page.relative_to(site_dir).as_posix()}: links {path}, which the site does not have")
            text = asset.read_text(encoding="utf-8")
            name = assets[path]
            text, changed = lean_bundle(text) if name == "bundle" else without_cut_rules(name, text)
            if not changed:
                leaner[path] = None
                continue
            lean_name = LEAN_NAME.format(name=name, digest=hashlib.sha256(text.encode()).hexdigest()[:8],
                                         ext=path.rsplit(".", 1)[1])
            if name == "bundle":
                text = _with_lean_source_map(asset, asset.with_name(lean_name), text)
                if TABLES_NOT_WRAPPED in text:
                    wrapping.add(path)
            write_atomic(asset.with_name(lean_name), text)
            leaner[path] = f"{path.rsplit('/', 1)[0]}/{lean_name}"
        if any(leaner[path] for path in assets):
            lean = RE_THEME_LINK.sub(
                lambda match: f'{match["before"]}{match["prefix"]}{leaner[match["path"]] or match["path"]}"', html)
            if wrapping & assets.keys():
                lean, _ = with_wrapped_tables(lean)
            write_atomic(page, lean)
    return {path: lean for path, lean in leaner.items() if lean}
