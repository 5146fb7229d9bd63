"""One description, two renderers: the live SVG (render.js) and the static matplotlib figure (description.py) draw
every part of a figure alike, in the same place and in the same style (stroke width, dash, cap, opacity, colour
role, font size, weight, anchor), so the static-to-live hand-over does not jump and the two cannot drift apart.

Both sides are read back from what each renderer made: render.js's SVG elements, grouped by the part they belong to
(`g[data-mark]`, the legend entries, grid, ticks, ...), and the matplotlib artists description.py files under the
same part names (`draw_parts`). Each element becomes one record: its kind (stroke, fill, dot or text), its style,
and for marks and the legend its position.
"""

import json
import math

import matplotlib.colors
import numpy as np
import pytest
from matplotlib.lines import Line2D
from matplotlib.text import Text

from build_scripts.browser_files import site_files
from build_scripts.figures.description import draw_parts
from build_scripts.figures.theme import PT, load_theme
from explainer import figure as fig
from explainer.figure import DEFAULT_HEIGHT
from explainer.sandbox import registry
from support import StaticSiteServer

pytestmark = pytest.mark.browser

TOLERANCE_PX = 0.6  # render.js rounds coordinates to 0.01 px; anything past half a pixel would be visible
STYLE_TOLERANCE = 1e-3  # widths, sizes and opacities are the same numbers on both sides, up to float conversions

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>parity</title></head><body><div id="out"></div><script src="render.js"></script></body></html>"""

# What render.js drew, part by part: every element as {kind, role, style..., at: [numbers], text}.
READ_LIVE = """async ([description, height]) => {
  const svg = ExplainerRender.renderFigure(description, {height});
  document.getElementById("out").replaceChildren(svg);
  const numbers = (text) => (text.match(/-?\\d+(\\.\\d+)?(e-?\\d+)?/g) || []).map(Number);
  const inherited = (element, name, fallback) => {
    for (let node = element; node && node !== svg.parentNode; node = node.parentNode) {
      if (node.hasAttribute && node.hasAttribute(name)) return node.getAttribute(name);
    }
    return fallback;
  };
  const role = (element) => {
    if (element.classList.contains("explainer-legend-box")) return "background";
    for (let node = element; node && node !== svg.parentNode; node = node.parentNode) {
      const found = [...(node.classList || [])].find((name) => name.startsWith("explainer-color-"));
      if (found) return found.slice("explainer-color-".length);
    }
    return null;
  };
  const part = (element) => {
    const mark = element.closest("g[data-mark]");
    if (mark) return `mark ${mark.dataset.index}`;
    const entry = element.closest("[data-legend-entry]");
    if (entry) return `legend ${entry.dataset.index}`;
    if (element.classList.contains("explainer-legend-box")) return "legend box";
    const groups = {"explainer-grid": "grid", "explainer-spines": "spines", "explainer-ticks": "ticks",
                    "explainer-tick-labels": "tick labels", "explainer-axis-labels": "axis labels"};
    for (const [name, label] of Object.entries(groups)) if (element.closest(`.${name}`)) return label;
    return null;
  };
  const record = (element) => {
    const tag = element.tagName;
    const a = (name) => element.getAttribute(name);
    if (tag === "text") {
      return {kind: "text", text: element.textContent, size: +inherited(element, "font-size"),
              weight: +inherited(element, "font-weight", 400), anchor: inherited(element, "text-anchor", "start"),
              at: [+a("x"), +a("y")]};
    }
    if (tag === "circle") return {kind: "dot", radius: +a("r"), at: [+a("cx"), +a("cy")]};
    if (tag === "path" || tag === "line") {
      const xy = tag === "line" ? [+a("x1"), +a("y1"), +a("x2"), +a("y2")] : numbers(a("d"));
      const dash = inherited(element, "stroke-dasharray", null);
      return {kind: "stroke", width: +inherited(element, "stroke-width"), dash: dash ? numbers(dash) : null,
              cap: inherited(element, "stroke-linecap", "butt"), opacity: +inherited(element, "stroke-opacity", 1),
              at: xy.length ? [...xy.slice(0, 2), ...xy.slice(-2)] : []};
    }
    const opacity = +inherited(element, "fill-opacity", 1);
    if (tag === "rect") return {kind: "fill", opacity, at: ["x", "y", "width", "height"].map((n) => +a(n))};
    const corners = numbers(a("points"));
    return {kind: "fill", opacity, at: [...corners.slice(0, 2), corners.length / 2]};
  };
  // A heat map drawn as one picture (a rect masked by an image, one pixel per cell): one fill record per cell that
  // shows, bottom row first and left to right as the static renderer draws them, its opacity read off the pixel.
  const pictureCells = async (rect) => {
    const maskId = rect.getAttribute("mask").match(/#([^)]+)/)[1];
    const picture = new Image();
    picture.src = document.getElementById(maskId).querySelector("image").getAttribute("href");
    await picture.decode();
    const canvas = Object.assign(document.createElement("canvas"), {width: picture.width, height: picture.height});
    const context = canvas.getContext("2d");
    context.drawImage(picture, 0, 0);
    const pixels = context.getImageData(0, 0, picture.width, picture.height).data;
    const [x, y, width, height] = ["x", "y", "width", "height"].map((name) => +rect.getAttribute(name));
    const [cellWidth, cellHeight] = [width / picture.width, height / picture.height];
    const cells = [];
    for (let row = picture.height - 1; row >= 0; row--) {
      for (let column = 0; column < picture.width; column++) {
        const alpha = pixels[4 * (row * picture.width + column) + 3];
        if (alpha) cells.push({kind: "fill", opacity: alpha / 255, quantum: 1 / 255,
                               at: [x + column * cellWidth, y + row * cellHeight, cellWidth, cellHeight]});
      }
    }
    return cells;
  };
  const parts = {};
  for (const element of svg.querySelectorAll("path, line, circle, rect, polygon, text")) {
    if (element.closest("clipPath")) continue;
    const name = part(element);
    const records = element.hasAttribute("mask") ? await pictureCells(element) : [record(element)];
    for (const drawn of records) (parts[name] = parts[name] || []).push({...drawn, role: role(element)});
  }
  return parts;
}"""


def _hex(colour) -> str:
    return matplotlib.colors.to_hex(colour).lower()


def static_parts(description: dict, height: int, scheme: str = "light") -> dict[str, list[dict]]:
    """The same records, from the artists description.py made for each part."""
    theme = load_theme(scheme)
    roles = {_hex(colour): role for role, colour in theme.colors.items()} | {_hex(theme.background): "background"}
    _, parts = draw_parts(description, theme, height)
    return {name: [_static_record(artist, roles) for artist in artists] for name, artists in parts.items()}


def _static_record(artist, roles: dict) -> dict:
    if isinstance(artist, Text):
        anchor = {"left": "start", "center": "middle", "right": "end"}[artist.get_horizontalalignment()]
        weight = artist.get_fontweight()
        return {"kind": "text", "role": roles[_hex(artist.get_color())], "text": artist.get_text(),
                "size": artist.get_fontsize() / PT, "weight": 400 if weight == "normal" else int(weight),
                "anchor": anchor, "at": list(artist.get_position())}
    if isinstance(artist, Line2D) and artist.get_marker() == "o":
        return {"kind": "dot", "role": roles[_hex(artist.get_color())], "radius": artist.get_markersize() / PT / 2,
                "at": [artist.get_xdata()[0], artist.get_ydata()[0]]}
    if isinstance(artist, Line2D):
        dashed = artist.get_linestyle() != "-"
        points = [(x, y) for x, y in zip(artist.get_xdata(), artist.get_ydata()) if not (math.isnan(x) or math.isnan(y))]
        # matplotlib keeps the dash pattern scaled by the line width, in points: back to px.
        dash = [length / PT for length in artist._dash_pattern[1]] if dashed else None
        return {"kind": "stroke", "role": roles[_hex(artist.get_color())], "width": artist.get_linewidth() / PT,
                "dash": dash, "cap": artist.get_dash_capstyle() if dashed else artist.get_solid_capstyle(),
                "opacity": 1 if artist.get_alpha() is None else artist.get_alpha(),
                "at": [*points[0], *points[-1]] if points else []}
    opacity = 1 if artist.get_alpha() is None else artist.get_alpha()
    record = {"kind": "fill", "role": roles[_hex(artist.get_facecolor())], "opacity": opacity}
    if hasattr(artist, "get_xy") and not hasattr(artist, "get_width"):  # a polygon: its first corner and count
        corners = np.asarray(artist.get_xy())  # (n + 1, 2) when closed: the first corner again at the end
        corners = corners[:-1] if len(corners) > 1 and np.allclose(corners[0], corners[-1]) else corners
        return record | {"at": [*corners[0], len(corners)]}
    return record | {"at": [artist.get_x(), artist.get_y(), artist.get_width(), artist.get_height()]}


def _same(name: str, index: int, live: dict, static: dict, positions: bool) -> None:
    where = f"{name}, element {index}: live {live} vs static {static}"
    for key in ("kind", "role", "text", "anchor", "weight", "cap"):
        assert live.get(key) == static.get(key), f"{key} differs in {where}"
    for key in ("width", "size", "radius", "opacity"):
        if key in live or key in static:
            # a heat map's picture holds an opacity in 8 bits: within half a step of 1/255
            tolerance = STYLE_TOLERANCE + (live.get("quantum", 0) / 2 if key == "opacity" else 0)
            assert math.isclose(live[key], static[key], abs_tol=tolerance), f"{key} differs in {where}"
    if "dash" in live:
        assert (live["dash"] is None) == (static["dash"] is None), f"dash differs in {where}"
        if live["dash"] is not None:
            assert np.allclose(live["dash"], static["dash"], atol=STYLE_TOLERANCE), f"dash differs in {where}"
    if positions:
        assert len(live["at"]) == len(static["at"]), f"geometry differs in {where}"
        assert all(math.isclose(a, b, abs_tol=TOLERANCE_PX) for a, b in zip(live["at"], static["at"])), (
            f"position differs in {where}")


def assert_parity(page, description: dict, height: int = DEFAULT_HEIGHT) -> None:
    """Every part drawn by both renderers, element by element, in the same style (and, for marks and the legend,
    the same place)."""
    live = page.evaluate(READ_LIVE, [json.loads(json.dumps(description)), height])
    static = static_parts(description, height)
    assert sorted(live, key=str) == sorted(static, key=str), "the renderers drew different parts"
    for name, elements in static.items():
        assert len(live[name]) == len(elements), f"{name}: {live[name]} vs {elements}"
        positions = name.startswith(("mark", "legend"))  # axis text baselines are placed each renderer's own way
        for index, (drawn, expected) in enumerate(zip(live[name], elements)):
            _same(name, index, drawn, expected, positions)


# Every mark type and option at once, with a title, axis labels, a labelled legend of every kind, and nulls.
EVERY_MARK = fig.figure(
    axes=fig.axes(xlim=(0, 10), ylim=(0, 10), xlabel="x label", ylabel="y label", title="Every mark"),
    marks=[
        fig.heatmap([1, 2, 3], [1, 2], [[0.1, 0.5, 0.9], [float("nan"), 0.3, 1.2]], color="good", vmin=0, vmax=1,
                    label="heat map"),
        fig.region([1, 4, 4, 1], [6, 6, 9, 9], color="accent", opacity=0.12, label="faint region"),
        fig.region([5, 6, 6], [1, 1, 2], color="warn", opacity=0.6, label="dense region"),
        fig.line([0, 5, 10], [0, 5, 0], color="primary", dash=True, width=1.5, label="dashed line"),
        fig.line([0, 2, float("nan"), 4, 6], [9, 8, 7, 6, 5], color="ink", width=3),
        fig.arrow((2, 2), (6, 2), color="secondary", width=4, label="right"),
        fig.arrow((6, 3), (6, 7), color="muted", label="up"),
        fig.arrow((6, 7), (2, 8), color="bad", label="left"),
        fig.point(7, 7, color="good", size=6, label="p"),
        fig.bars([8, 9], [3, 4], width=0.5, color="warn", label="bars"),
        fig.text(5, 9.5, "text", color="bad", anchor="middle", size=15),
    ],
)


@pytest.fixture(scope="module")
def parity_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity")
    (root / "render.js").write_text(site_files()["render.js"], encoding="utf-8")
    (root / "index.html").write_text(PAGE, encoding="utf-8")
    server = StaticSiteServer(root)
    yield server
    server.close()


@pytest.fixture
def site_url(parity_server):
    return parity_server.url


@pytest.fixture
def page(browser, site_url):
    browser.page.goto(site_url)
    return browser.page


@pytest.mark.parametrize("name", sorted(registry()))
def test_both_renderers_draw_every_part_of_a_sandbox_default_view_alike(browser, page, name):
    assert_parity(page, registry()[name].render())
    browser.assert_clean()


@pytest.mark.parametrize("height", [DEFAULT_HEIGHT, 240])
def test_both_renderers_draw_every_mark_type_and_legend_swatch_alike(browser, page, height):
    assert_parity(page, EVERY_MARK, height)
    browser.assert_clean()


def test_the_check_catches_a_style_drift(browser, page):
    # The drift this test exists for: a legend swatch drawn at another opacity in one renderer than in the other.
    live = page.evaluate(READ_LIVE, [json.loads(json.dumps(EVERY_MARK)), DEFAULT_HEIGHT])
    static = static_parts(EVERY_MARK, DEFAULT_HEIGHT)
    [swatch] = [e for e in static["legend 1"] if e["kind"] == "fill"]
    assert swatch["opacity"] == fig.STYLE["legend"]["min_fill_opacity"], "a faint region's swatch is raised"
    drifted = dict(swatch, opacity=swatch["opacity"] + 0.05)
    with pytest.raises(AssertionError, match="opacity differs"):
        _same("legend 1", 0, live["legend 1"][0], drifted, positions=True)
    browser.assert_clean()
