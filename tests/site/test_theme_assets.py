"""The theme's palette and main stylesheets without the rules that restyled whole pages, and its script bundle with its
color-scheme statements patched, its table mount passing over the tables the pages have wrapped, and V8's compile
hint first (build_scripts/pipeline/theme_assets.py): each written once under a name of its own, every page pointed at
it and its Markdown tables wrapped as the theme would, everything else kept, the bundle's source map still matching
its lines, a second run a no-op, and the real themes of both engines handled."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from build_scripts.pipeline.pages import PageError
from build_scripts.pipeline.theme_assets import (COMPILE_HINT, CUT_RULES, TABLE_WRAPPER, TABLES_NOT_WRAPPED,
                                                 lean_bundle, lean_theme_assets, with_patched_color_scheme,
                                                 with_wrapped_tables, with_wrapped_tables_left_alone,
                                                 without_cut_rules)
from support import CUT_FROM_THEME, assert_pages_link_the_lean_theme_assets

SWITCHING = ("[data-md-color-switching] *,[data-md-color-switching] :after,[data-md-color-switching] :before"
             "{transition-duration:0s!important}")
PALETTE = ('@charset "UTF-8";' + SWITCHING + "[data-md-color-scheme=slate]{--md-hue:232}"
           + "@media screen{[data-md-color-switching] .md-header{transition:none}.md-header{color:red}}"
           + "/*# sourceMappingURL=palette.0123abcd.min.css.map*/")
TABLE_EDGES = (".md-typeset table:not([class]) td>:first-child,.md-typeset table:not([class]) th>:first-child"
               "{margin-top:0}"
               ".md-typeset table:not([class]) td>:last-child,.md-typeset table:not([class]) th>:last-child"
               "{margin-bottom:0}")
MAIN = (".md-typeset table:not([class]){font-size:.64rem}" + TABLE_EDGES
        + ".md-typeset table:not([class]) td:not([align]){text-align:left}"
        + "@media print{" + TABLE_EDGES + ".md-typeset td{color:red}}")
PAGE = ('<!doctype html><html><head><link rel="stylesheet" href="{prefix}{main}">'
        '<link rel="stylesheet" href="{prefix}{palette}"></head><body></body></html>')
THEME = {"main": "assets/stylesheets/main.4567cdef.min.css", "palette": "assets/stylesheets/palette.0123abcd.min.css"}


def write_site(root: Path, theme: dict[str, str] = THEME) -> dict[str, Path]:
    for sheet, path in theme.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text({"main": MAIN, "palette": PALETTE}[sheet])
    pages = {"index.html": "", "lessons/a/index.html": "../../", "404.html": "/"}
    written = {}
    for page, prefix in pages.items():
        (root / page).parent.mkdir(parents=True, exist_ok=True)
        (root / page).write_text(PAGE.format(prefix=prefix, **theme))
        written[page] = root / page
    return written


def linked(page: Path) -> list[str]:
    return re.findall(r'href="([^"]*)"', page.read_text())


def test_every_page_links_one_lean_copy_of_each_that_keeps_all_but_the_cut_rules_and_a_second_run_changes_nothing(
        tmp_path):
    pages = write_site(tmp_path)
    leaner = lean_theme_assets(tmp_path)

    assert leaner.keys() == set(THEME.values())
    lean_main, lean_palette = leaner[THEME["main"]], leaner[THEME["palette"]]
    assert re.fullmatch(r"assets/stylesheets/main-lean\.[0-9a-f]{8}\.min\.css", lean_main)
    assert re.fullmatch(r"assets/stylesheets/palette-lean\.[0-9a-f]{8}\.min\.css", lean_palette)
    assert linked(pages["index.html"]) == [lean_main, lean_palette]
    assert linked(pages["lessons/a/index.html"]) == ["../../" + lean_main, "../../" + lean_palette]
    assert linked(pages["404.html"]) == ["/" + lean_main, "/" + lean_palette]
    assert (tmp_path / lean_palette).read_text() == (
        '@charset "UTF-8";[data-md-color-scheme=slate]{--md-hue:232}@media screen{.md-header{color:red}}'
        "/*# sourceMappingURL=palette.0123abcd.min.css.map*/")
    assert (tmp_path / lean_main).read_text() == (
        ".md-typeset table:not([class]){font-size:.64rem}"
        ".md-typeset table:not([class]) td:not([align]){text-align:left}@media print{.md-typeset td{color:red}}")
    for sheet, path in THEME.items():
        assert (tmp_path / path).read_text() == {"main": MAIN, "palette": PALETTE}[sheet], "the theme's file stays"

    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    assert lean_theme_assets(tmp_path) == {}
    assert {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()} == before


def test_a_theme_without_the_rules_is_left_as_it_is_and_a_missing_stylesheet_is_named(tmp_path):
    theme = {"main": "assets/stylesheets/modern/main.4567cdef.min.css",
             "palette": "assets/stylesheets/modern/palette.89ef0123.min.css"}
    pages = write_site(tmp_path, theme)
    (tmp_path / theme["palette"]).write_text(".md-header{color:red}")
    (tmp_path / theme["main"]).write_text(".md-typeset table:not([class]) td{padding:0}")
    assert lean_theme_assets(tmp_path) == {}
    assert linked(pages["index.html"]) == [theme["main"], theme["palette"]]

    (tmp_path / theme["palette"]).unlink()
    with pytest.raises(PageError, match=r"404\.html: links assets/stylesheets/modern/palette\.89ef0123\.min\.css, "
                                        "which the site does not have"):
        lean_theme_assets(tmp_path)


@pytest.mark.parametrize("theme", ["material", "zensical"])
@pytest.mark.parametrize(("sheet", "rules"), [("palette", 1), ("main", 2)])
def test_the_installed_themes_stylesheets_lose_exactly_the_cut_rules(theme, sheet, rules):
    """What the step relies on in the real themes: each of their palette stylesheets has the switching rule and each
    main stylesheet the two table rules, and only those go."""
    package = pytest.importorskip(theme)
    sheets = sorted(Path(package.__file__).parent.glob(f"templates/assets/stylesheets/**/{sheet}.*.min.css"))
    assert sheets, f"{theme} ships no {sheet} stylesheet where the step looks for it"
    for path in sheets:
        css = path.read_text(encoding="utf-8")
        lean, removed = without_cut_rules(sheet, css)
        assert removed == rules, path
        assert len(css) - len(lean) == sum(len(rule[0]) for rule in CUT_RULES[sheet].finditer(css)) < 250, path
        assert re.search(CUT_FROM_THEME[sheet], css) and not re.search(CUT_FROM_THEME[sheet], lean), path


def test_the_built_site_links_only_the_lean_theme_assets(built_site):
    assert_pages_link_the_lean_theme_assets(built_site)


# The palette component's statements on the color-scheme meta, as Material's bundle has them (names minified).
COLOR_SCHEME_STATEMENTS = ('let o=x("meta",{name:"color-scheme"});document.head.appendChild(o);'
                           'i.pipe(m(()=>{let s=Ce("header"),a=window.getComputedStyle(s);'
                           'return o.content=a.colorScheme,a.backgroundColor}));')
BUNDLE = "function li(e){" + COLOR_SCHEME_STATEMENTS + "}\n//# sourceMappingURL=bundle.89abcdef.min.js.map\n"
BUNDLE_PATH = "assets/javascripts/bundle.89abcdef.min.js"


def scripts(page: Path) -> list[str]:
    return re.findall(r'src="([^"]*)"', page.read_text())


def test_the_bundle_takes_the_pages_color_scheme_meta_and_sets_it_only_when_it_differs(tmp_path):
    (tmp_path / BUNDLE_PATH).parent.mkdir(parents=True)
    (tmp_path / BUNDLE_PATH).write_text(BUNDLE)
    pages = {"index.html": "", "lessons/a/index.html": "../../"}
    for page, prefix in pages.items():
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text(f'<html><body><script src="{prefix}{BUNDLE_PATH}"></script></body></html>')

    leaner = lean_theme_assets(tmp_path)
    assert leaner.keys() == {BUNDLE_PATH}
    lean = leaner[BUNDLE_PATH]
    assert re.fullmatch(r"assets/javascripts/bundle-lean\.[0-9a-f]{8}\.min\.js", lean)
    for page, prefix in pages.items():
        assert scripts(tmp_path / page) == [prefix + lean]
    assert (tmp_path / lean).read_text() == (
        "//# allFunctionsCalledOnLoad\n"
        """function li(e){let o=document.querySelector('meta[name="color-scheme"]')||"""
        """document.head.appendChild(x("meta",{name:"color-scheme"}));"""
        """i.pipe(m(()=>{let s=Ce("header"),a=window.getComputedStyle(s);"""
        """return o.content!==a.colorScheme&&(o.content=a.colorScheme),a.backgroundColor}));}\n"""
        "//# sourceMappingURL=bundle.89abcdef.min.js.map\n"), "no map beside the bundle: its address stays"
    assert (tmp_path / BUNDLE_PATH).read_text() == BUNDLE, "the theme's file stays"
    assert lean_theme_assets(tmp_path) == {}, "a second run finds the lean copy linked, and nothing to change"

    (tmp_path / BUNDLE_PATH).write_text("function li(e){}")  # a bundle without the statements: the hint only
    (tmp_path / "index.html").write_text(f'<html><body><script src="{BUNDLE_PATH}"></script></body></html>')
    lean = lean_theme_assets(tmp_path)[BUNDLE_PATH]
    assert scripts(tmp_path / "index.html") == [lean]
    assert (tmp_path / lean).read_text() == COMPILE_HINT + "function li(e){}"
    assert lean_bundle(COMPILE_HINT + "function li(e){}") == (COMPILE_HINT + "function li(e){}", 0), "hinted once"


def test_the_lean_bundle_points_at_a_copy_of_the_theme_source_map_one_line_down(tmp_path):
    """The hint is one more line at the top: the lean copy's map starts with an empty line, so every mapping still
    names the line its code is on; the theme's map stays as it is."""
    theme_map = {"version": 3, "sources": ["src/a.ts"], "sourcesContent": ["let a = 1;"], "names": ["a"],
                 "mappings": "AAAA,IAAIA;AACA"}
    (tmp_path / BUNDLE_PATH).parent.mkdir(parents=True)
    (tmp_path / BUNDLE_PATH).write_text(BUNDLE)
    (tmp_path / (BUNDLE_PATH + ".map")).write_text(json.dumps(theme_map))
    (tmp_path / "index.html").write_text(f'<html><body><script src="{BUNDLE_PATH}"></script></body></html>')

    lean = lean_theme_assets(tmp_path)[BUNDLE_PATH]
    text = (tmp_path / lean).read_text()
    assert text.startswith(COMPILE_HINT)
    lean_map_name = lean.rsplit("/", 1)[1] + ".map"
    assert text.endswith(f"\n//# sourceMappingURL={lean_map_name}\n")
    assert json.loads((tmp_path / lean).with_name(lean_map_name).read_text()) == {
        **theme_map, "mappings": ";AAAA,IAAIA;AACA"}
    assert json.loads((tmp_path / (BUNDLE_PATH + ".map")).read_text()) == theme_map


WRAPPED = "".join((TABLE_WRAPPER[0], "{}", TABLE_WRAPPER[1]))


def test_each_class_less_table_is_wrapped_once_and_nothing_else_is_touched():
    table = "<table>\n<tr><td>1</td></tr>\n</table>"
    nested = '<table id="outer"><tr><td><table><tr><td>2</td></tr></table></td></tr></table>'
    page = "\n".join([
        "<p>before</p>", table, '<table class="trainer__table"><tr><td>3</td></tr></table>',
        "<table></table><table></table>",  # one table's end at the next one's start
        nested, "<pre><code>&lt;table&gt;&lt;/table&gt;</code></pre>", '<script>const t = "<table></table>";</script>'])
    wrapped, count = with_wrapped_tables(page)
    assert count == 5
    assert wrapped == "\n".join([
        "<p>before</p>", WRAPPED.format(table), '<table class="trainer__table"><tr><td>3</td></tr></table>',
        WRAPPED.format("<table></table>") + WRAPPED.format("<table></table>"),
        WRAPPED.format('<table id="outer"><tr><td>' + WRAPPED.format("<table><tr><td>2</td></tr></table>")
                       + "</td></tr></table>"),
        "<pre><code>&lt;table&gt;&lt;/table&gt;</code></pre>", '<script>const t = "<table></table>";</script>'])
    assert with_wrapped_tables(wrapped) == (wrapped, 0), "a wrapped table stays as it is"


# The theme's content component as its bundle has it (names minified): the mount of each class-less table, and the
# wrapper it renders around one.
TABLE_MOUNT = ('...M("pre.mermaid",e).map(i=>Zn(i)),...M("table:not([class])",e).map(i=>ti(i)),'
               '...M("details",e).map(i=>Bn(i))')
TABLE_RENDER = ('function Un(e){return x("div",{class:"md-typeset__scrollwrap"},'
                'x("div",{class:"md-typeset__table"},e))}'
                'function ti(e){return e.replaceWith(ei),ei.replaceWith(Un(e)),$({ref:e})}')


@pytest.mark.parametrize("render, wrapped", [(TABLE_RENDER, True),
                                             (TABLE_RENDER.replace("md-typeset__table", "md-table"), False)])
def test_pages_tables_are_wrapped_when_the_bundle_renders_the_same_wrapper_and_passes_over_them(
        tmp_path, render, wrapped):
    """With a theme whose wrapper is another, the build wraps nothing and its mount stays: never two wrappers."""
    (tmp_path / BUNDLE_PATH).parent.mkdir(parents=True)
    (tmp_path / BUNDLE_PATH).write_text(TABLE_MOUNT + render)
    table = "<table><tr><td>1</td></tr></table>"
    (tmp_path / "index.html").write_text(f'<html><body>{table}<script src="{BUNDLE_PATH}"></script></body></html>')
    (tmp_path / "other.html").write_text(f"<html><body>{table}</body></html>")  # links no bundle: left alone

    lean = lean_theme_assets(tmp_path)[BUNDLE_PATH]
    bundle, page = (tmp_path / lean).read_text(), (tmp_path / "index.html").read_text()
    assert (f'M("{TABLES_NOT_WRAPPED}",e)' in bundle) is wrapped
    assert ('M("table:not([class])",e)' in bundle) is not wrapped
    body = WRAPPED.format(table) if wrapped else table
    assert page == f'<html><body>{body}<script src="{lean}"></script></body></html>'
    assert (tmp_path / "other.html").read_text() == f"<html><body>{table}</body></html>"


@pytest.mark.parametrize("theme", ["material", "zensical"])
def test_the_installed_themes_bundle_gets_every_patch_and_still_parses(theme, tmp_path):
    """What the step relies on in the real themes: one statement of each kind in the bundle, one table mount and the
    wrapper the build writes, and JavaScript that Node still parses once all are patched and the hint is on top."""
    package = pytest.importorskip(theme)
    bundles = sorted(Path(package.__file__).parent.glob("templates/assets/javascripts/bundle.*.min.js"))
    assert len(bundles) == 1, f"{theme} ships {bundles}"
    js = bundles[0].read_text(encoding="utf-8")
    patched, count = with_patched_color_scheme(js)
    assert count == 2, f"{bundles[0]}: {count} of the 2 statements found"
    patched, mounts = with_wrapped_tables_left_alone(patched)
    assert mounts == 1, f"{bundles[0]}: its table mount or its wrapper is not the one the build writes"
    assert lean_bundle(js) == (COMPILE_HINT + patched, 4)
    assert patched.count(f'"{TABLES_NOT_WRAPPED}"') == 1 and '"table:not([class])"' not in patched
    assert patched.count("""document.querySelector('meta[name="color-scheme"]')||""") == 1
    assert not re.search(r"(?<!&&\()\b\w+\.content=\w+\.colorScheme", patched), "an unguarded write is left"
    node = shutil.which("node")
    assert node, "Node is installed by `make setup` (npm)"
    (tmp_path / "bundle.js").write_text(lean_bundle(js)[0], encoding="utf-8")
    subprocess.run([node, "--check", str(tmp_path / "bundle.js")], check=True, capture_output=True, timeout=60)
