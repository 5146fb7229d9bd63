"""The theme's palette stylesheet without its colour-switching rule, so that a page's load restyles it once, not twice.

Material (and Zensical, which shares its interface) suppresses transitions while the light/dark palette switches:
its palette stylesheet has `[data-md-color-switching] *, … ::before, … ::after {transition-duration: 0s !important}`,
and its script sets that attribute on <body> whenever the palette is applied, and removes it a frame later. It applies
the palette as every page loads too, so every load sets and removes the attribute, and because of that rule each
change restyles every element of the page: the load's own first restyle happens inside the theme's script, and one
more, of the whole page again, comes in a task of its own a frame later (78-117 ms on rmsnorm-calculus, whose 11.8k
elements are mostly its formulas' KaTeX). Measured on that page in December 2026 with Chromium traces of fresh
loads, this build against the one before it, interleaved, medians of eight: main-thread time past 50 ms per task
675 ms against 949 ms, longest task 378 ms against 535 ms. On rmsnorm-geometry (six loads each) the difference was
within the noise: 417 against 376 ms.

So the build writes the palette stylesheet again without that rule, under a name of its own beside the theme's
(`palette-lean.<hash>.min.css`, so no cache pairs the theme's address with other bytes), and points every page at
it. The transitions are still suppressed when the reader switches the palette: page.js sets `data-explainer-switching`
on <body> for two frames when a palette input changes, and site.css has the rule under that name. Done after either
engine built the pages; a theme whose palette stylesheet has no such rule is left as it is.
"""

import hashlib
import re
from pathlib import Path

from build_scripts._files import write_atomic
from build_scripts.pipeline.pages import PageError, site_pages

# A page's link to the theme's palette stylesheet: Material's assets/stylesheets/palette.<hash>.min.css, or one of
# Zensical's assets/stylesheets/<variant>/palette.<hash>.min.css.
RE_PALETTE_LINK = re.compile(r'(?P<before><link [^>]*href=")(?P<prefix>[^"]*?)'
                             r'(?P<path>assets/stylesheets/(?:[\w-]+/)?palette\.[0-9a-f]+\.min\.css)"')
# A rule (outside or inside an at-rule's block) whose selector names the theme's switching attribute; what comes before
# the selector (a brace, or a statement such as @charset ending in ";") stays.
RE_SWITCHING_RULE = re.compile(r"[^{};]*\[data-md-color-switching\][^{};]*\{[^{}]*\}")
LEAN_NAME = "palette-lean.{digest}.min.css"


def without_switching_rules(css: str) -> tuple[str, int]:
    """The stylesheet without its rules that select `[data-md-color-switching]`, and how many there were."""
    return RE_SWITCHING_RULE.subn("", css)


def lean_palette(site_dir: Path) -> dict[str, str]:
    """Write the lean copy of each palette stylesheet the pages link and point the pages at it; returns {the theme's
    path: the lean copy's}, both relative to the site."""
    leaner: dict[str, str | None] = {}  # the theme's path → the lean copy's (None: nothing to take out)
    for page in site_pages(site_dir):
        html = page.read_text(encoding="utf-8")
        paths = {match["path"] for match in RE_PALETTE_LINK.finditer(html)}
        for path in paths - leaner.keys():
            stylesheet = site_dir / path
            if not stylesheet.is_file():
                raise PageError(f"{page.relative_to(site_dir).as_posix()}: links {path}, which the site does not have")
            css, removed = without_switching_rules(stylesheet.read_text(encoding="utf-8"))
            if not removed:
                leaner[path] = None
                continue
            name = LEAN_NAME.format(digest=hashlib.sha256(css.encode()).hexdigest()[:8])
            write_atomic(stylesheet.with_name(name), css)
            leaner[path] = f"{path.rsplit('/', 1)[0]}/{name}"
        if any(leaner[path] for path in paths):
            lean = RE_PALETTE_LINK.sub(
                lambda match: f'{match["before"]}{match["prefix"]}{leaner[match["path"]] or match["path"]}"', html)
            write_atomic(page, lean)
    return {path: lean for path, lean in leaner.items() if lean}
