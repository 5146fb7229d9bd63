"""The browser files as the site serves them: build_scripts/browser/ with the parts that have one source elsewhere
written in at build.

- sandbox.css gets the colour roles' custom properties (light on :root, dark on Material's slate scheme) and the
  `explainer-color-<role>` classes, generated from theme.json, the palette the static figures also use.
- render.js gets explainer/figure_style.json, the layout and mark styles the static renderer also reads, as a
  literal in place of its `/* explainer/figure_style.json */ null` marker. Inside the script rather than fetched
  beside it: drawing needs it synchronously, and one more request (or one more inline script on every page) would
  only add a second way to get it.

Pure functions of the sources, so any build (the MkDocs plugin, a plain pipeline, a test's temporary site) serves
the same bytes: `site_files()` is the one list, `write_site_files(folder)` writes it.
"""

import json
from pathlib import Path

from build_scripts._files import write_atomic
from explainer.figure import COLOR_ROLES, STYLE

BROWSER_DIR = Path(__file__).resolve().parent / "browser"
SERVED_SUFFIXES = (".js", ".css", ".json")  # everything in the folder but its README
STYLE_MARKER = "/* explainer/figure_style.json */ null"
SCHEME_SELECTORS = {"light": ":root", "dark": '[data-md-color-scheme="slate"]'}


def palette_css(palette: dict) -> str:
    """The colour roles as CSS: custom properties per scheme, then one class per role for the marks."""
    blocks = []
    for scheme, selector in SCHEME_SELECTORS.items():
        colours = palette[scheme]
        missing = [role for role in COLOR_ROLES if role not in colours]
        if missing:
            raise ValueError(f"theme.json: the {scheme} palette has no colour for {', '.join(missing)}")
        lines = [f"  --explainer-color-{role}: {colours[role]};" for role in COLOR_ROLES]
        lines.append(f"  --explainer-figure-background: {palette['background'][scheme]};")
        blocks.append(f"{selector} {{\n" + "\n".join(lines) + "\n}\n")
    classes = "".join(f".explainer-color-{role} {{ color: var(--explainer-color-{role}); }}\n" for role in COLOR_ROLES)
    return ("/* Generated at build from theme.json (build_scripts/browser_files.py): the colour roles of figure "
            "descriptions. */\n\n" + "\n".join(blocks) + "\n" + classes)


def stylesheet_with_palette(source: str, palette: dict) -> str:
    """sandbox.css as served: the generated palette first, then the hand-written rules."""
    return palette_css(palette) + "\n" + source


def script_with_style(source: str, style: dict) -> str:
    """render.js as served: the figure style written in place of its marker."""
    if source.count(STYLE_MARKER) != 1:
        raise ValueError(f"render.js must hold the marker {STYLE_MARKER!r} exactly once")
    return source.replace(STYLE_MARKER, json.dumps(style, ensure_ascii=False, separators=(",", ":")))


def site_files(browser_dir: Path = BROWSER_DIR) -> dict[str, str]:
    """Every served browser file by name, with its text as the site gets it."""
    files = {path.name: path.read_text(encoding="utf-8") for path in sorted(browser_dir.iterdir())
             if path.is_file() and path.suffix in SERVED_SUFFIXES}
    palette = json.loads(files["theme.json"])
    files["sandbox.css"] = stylesheet_with_palette(files["sandbox.css"], palette)
    files["render.js"] = script_with_style(files["render.js"], STYLE)
    return files


def write_site_files(target: Path, browser_dir: Path = BROWSER_DIR) -> None:
    """Write the served browser files into `target` (a site's assets/explainer/ folder)."""
    target.mkdir(parents=True, exist_ok=True)
    for name, text in site_files(browser_dir).items():
        path = target / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:  # unchanged files keep their mtime
            write_atomic(path, text)
