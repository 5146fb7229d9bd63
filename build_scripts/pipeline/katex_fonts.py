"""Preloads of the KaTeX fonts each page's formulas use, so they arrive with the stylesheets, before the first paint.

Formulas are typeset at build time (build_scripts/markdown/math.py), but a browser discovers a font only when its
layout first needs it; the text is then laid out again when the font lands, and whatever follows a formula on its
line moves. A preload starts the download with the stylesheets, and Chromium holds the first paint briefly for fonts
being preloaded, so on an ordinary machine the first layout already has them.

Which faces a page needs is read from katex.min.css itself (every rule that names a KaTeX font family, by the classes
it selects), so it follows the KaTeX the site installs; it works the same under MkDocs and Zensical. (Writing the
fonts into a render-blocking stylesheet as data: URLs was tried and is worse: such a font is still decoded only when
layout first asks for it, so the first layout never has it.)
"""

import functools
import re
from html.parser import HTMLParser
from pathlib import Path

from build_scripts._files import write_atomic
from build_scripts.pipeline.pages import PageError, site_pages

KATEX_DIR = "assets/vendor/katex"  # where the Makefile's vendor step puts KaTeX's CSS and fonts in the site
STYLESHEET = "katex.min.css"
MARK = "data-katex-font"  # on our <link>s, so a second run replaces them

RE_RULE = re.compile(r"(?P<selectors>[^{}@]+)\{(?P<body>[^{}]*)\}")
RE_OUR_LINK = re.compile(r'\n?\s*<link [^>]*%s[^>]*>' % MARK)


@functools.cache
def font_rules(css: str) -> tuple[tuple[frozenset[str], str], ...]:
    """(the classes one element must have, the face they select) for every katex.min.css rule naming a KaTeX family.

    Only the selector's last compound with classes counts (`.katex .delimsizing.size1` → {delimsizing, size1},
    `.delim-size1>span` → {delim-size1}): that element, or its children, take the font. The face is the family with
    the rule's weight and style, as KaTeX names its files. (@font-face blocks select no class and are left out.)
    """
    rules = []
    for match in RE_RULE.finditer(css):
        body = match["body"]
        family = re.search(r"font-family:\s*(KaTeX_\w+)", body)
        if not family:
            continue
        bold = re.search(r"font-weight:\s*(?:700|bold)", body) is not None
        italic = re.search(r"font-style:\s*italic", body) is not None
        face = f"{family[1]}-{('Bold' if bold else '') + ('Italic' if italic else '') or 'Regular'}"
        for selector in match["selectors"].split(","):
            compounds = [re.findall(r"\.([\w-]+)", part) for part in re.split(r"[\s>+~]+", selector.strip())]
            classes = [found for found in compounds if found]
            if classes:
                rules.append((frozenset(classes[-1]), face))
    return tuple(rules)


class _ShownClasses(HTMLParser):
    """The class sets of a page's elements that show when it loads: those inside a closed <details> are left out."""

    def __init__(self):
        super().__init__()
        self.details: list[bool] = []  # for each <details> we are in: is it closed?
        self.class_sets: set[frozenset[str]] = set()

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "details":
            self.details.append("open" not in attributes)
        if not any(self.details) and attributes.get("class"):
            self.class_sets.add(frozenset(attributes["class"].split()))

    def handle_endtag(self, tag):
        if tag == "details" and self.details:
            self.details.pop()


def faces_used(html: str, rules: tuple[tuple[frozenset[str], str], ...]) -> set[str]:
    """The KaTeX faces a page's formulas use when it loads: KaTeX's main face, and each rule's face where a shown
    element has its classes. (A face a rule selects may in the end be overridden by another: a rare extra preload.)"""
    if 'class="katex"' not in html:
        return set()
    parser = _ShownClasses()
    parser.feed(html)
    parser.close()
    faces = {"KaTeX_Main-Regular"}
    for classes, face in rules:
        if any(classes <= element for element in parser.class_sets):
            faces.add(face)
    return faces


def preload_katex_fonts(site_dir: Path) -> None:
    """Give every page with formulas a preload of each KaTeX face it uses, right after its link to katex.min.css."""
    katex_dir = site_dir / KATEX_DIR
    if not (katex_dir / STYLESHEET).exists():
        return
    rules = font_rules((katex_dir / STYLESHEET).read_text(encoding="utf-8"))
    for page in site_pages(site_dir):
        html = page.read_text(encoding="utf-8")
        faces = {face for face in faces_used(html, rules) if (katex_dir / "fonts" / f"{face}.woff2").exists()}
        if not faces:
            continue
        html = RE_OUR_LINK.sub("", html)
        where = page.relative_to(site_dir).as_posix()
        link = re.search(r'<link [^>]*href="(?P<prefix>[^"]*)%s/%s"[^>]*>' % (KATEX_DIR, STYLESHEET), html)
        if not link:
            raise PageError(f"{where}: has formulas but does not link {KATEX_DIR}/{STYLESHEET}")
        ours = "".join(f'\n    <link rel="preload" href="{link["prefix"]}{KATEX_DIR}/fonts/{face}.woff2" as="font" '
                       f'type="font/woff2" crossorigin {MARK}>' for face in sorted(faces))
        write_atomic(page, html[: link.end()] + ours + html[link.end():])
