"""One description, two renderers: the live SVG (render.js) and the static matplotlib figure (description.py) put
every mark of every sandbox's default view in the same place, so the static-to-live hand-over does not jump."""

import json
import math
import re
import shutil

import pytest
from matplotlib.lines import Line2D
from matplotlib.patches import Polygon, Rectangle

from build_scripts.figures.description import draw_description, plot_area
from build_scripts.figures.theme import load_theme
from explainer.figure import DEFAULT_HEIGHT
from explainer.sandbox import registry
from support import PROJECT_ROOT, StaticSiteServer

pytestmark = pytest.mark.browser

TOLERANCE_PX = 0.6  # render.js rounds coordinates to 0.01 px; anything past half a pixel would be visible

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>parity</title></head><body><div id="out"></div><script src="render.js"></script></body></html>"""

# For each mark: where render.js drew it, read back from the SVG it made.
READ_ANCHORS = """([description, height]) => {
  const svg = ExplainerRender.renderFigure(description, {height});
  document.getElementById("out").replaceChildren(svg);
  const numbers = (text) => (text.match(/-?\\d+(\\.\\d+)?/g) || []).map(Number);
  return [...svg.querySelectorAll("g[data-mark]")].map((group) => {
    const type = group.dataset.mark;
    if (type === "point") {
      const c = group.querySelector("circle");
      return c ? [[+c.getAttribute("cx"), +c.getAttribute("cy")]] : [];
    }
    if (type === "arrow") {
      const head = group.querySelector("polygon");
      return head ? [numbers(head.getAttribute("points")).slice(0, 2)] : [];
    }
    if (type === "text") {
      const t = group.querySelector("text");
      return t ? [[+t.getAttribute("x"), +t.getAttribute("y")]] : [];
    }
    if (type === "bars") {
      return [...group.querySelectorAll("rect")].map((r) => ["x", "y", "width", "height"].map((a) => +r.getAttribute(a)));
    }
    if (type === "line") {
      const xy = numbers(group.querySelector("path").getAttribute("d"));
      return xy.length ? [xy.slice(0, 2), xy.slice(-2)] : [];
    }
    const corners = numbers(group.querySelector("polygon")?.getAttribute("points") || "");
    return corners.length ? [corners.slice(0, 2), [corners.length / 2]] : [];
  });
}"""


def static_anchors(description: dict, height: int) -> list[list]:
    """The same anchors, from what description.py handed to matplotlib (read back from the figure's artists)."""
    figure = draw_description(description, load_theme("light"), height)
    canvas = figure.axes[0]
    plot = plot_area(description["axes"], height)
    anchors = []
    for mark in description["marks"]:
        anchors.append(_expected(mark, plot))
    # The canvas is in box pixels with y down: matplotlib's display pixels are (x, height − y) for any (x, y).
    for x, y in [(0, 0), (123.4, 56.7), (640, height)]:
        display = canvas.transData.transform((x, y))
        assert math.isclose(display[0], x, abs_tol=1e-6) and math.isclose(display[1], height - y, abs_tol=1e-6)
    drawn_points = {(round(a.get_xdata()[0], 2), round(a.get_ydata()[0], 2)) for a in canvas.lines
                    if a.get_marker() == "o"}
    for mark, anchor in zip(description["marks"], anchors):
        if mark["type"] == "point" and anchor:
            assert (round(anchor[0][0], 2), round(anchor[0][1], 2)) in drawn_points
    bars = sorted((round(r.get_x(), 2), round(r.get_y(), 2), round(r.get_width(), 2), round(r.get_height(), 2))
                  for r in canvas.patches if isinstance(r, Rectangle) and r.get_zorder() == 2)
    expected_bars = sorted(tuple(round(v, 2) for v in rect) for m, a in zip(description["marks"], anchors)
                           if m["type"] == "bars" for rect in a)
    assert bars == expected_bars
    heads = [p for p in canvas.patches if isinstance(p, Polygon)]
    assert len(heads) >= sum(1 for m, a in zip(description["marks"], anchors) if m["type"] == "arrow" and a)
    assert all(isinstance(line, Line2D) for line in canvas.lines)
    return anchors


def _expected(mark: dict, plot) -> list:
    kind = mark["type"]
    if kind in ("point", "text"):
        x, y = plot.x(mark["x"]), plot.y(mark["y"])
        return [] if x is None or y is None else [[x, y]]
    if kind == "arrow":
        x1, y1, x2, y2 = plot.x(mark["start"][0]), plot.y(mark["start"][1]), plot.x(mark["end"][0]), plot.y(
            mark["end"][1])
        return [] if None in (x1, y1, x2, y2) or math.hypot(x2 - x1, y2 - y1) < 0.5 else [[x2, y2]]
    if kind == "bars":
        rects = []
        for x, h in zip(mark["x"], mark["heights"]):
            if x is None or h is None:
                continue
            left, right, top = plot.x(x - mark["width"] / 2), plot.x(x + mark["width"] / 2), plot.y(h)
            if None not in (left, right, top):
                top = min(top, plot.bottom)
                rects.append([min(left, right), top, abs(right - left), plot.bottom - top])
        return rects
    vertices = [(plot.x(x), plot.y(y)) for x, y in zip(mark["x"], mark["y"])]
    vertices = [[x, y] for x, y in vertices if x is not None and y is not None]
    if kind == "line":
        return [vertices[0], vertices[-1]] if vertices else []
    return [vertices[0], [len(vertices)]] if len(vertices) >= 3 else []


@pytest.fixture(scope="module")
def parity_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity")
    shutil.copy2(PROJECT_ROOT / "build_scripts/browser/render.js", root / "render.js")
    (root / "index.html").write_text(PAGE, encoding="utf-8")
    server = StaticSiteServer(root)
    yield server
    server.close()


@pytest.fixture
def site_url(parity_server):
    return parity_server.url


@pytest.mark.parametrize("name", sorted(registry()))
def test_static_and_live_renderers_place_every_mark_of_the_default_view_alike(browser, site_url, name):
    description = registry()[name].render()
    browser.page.goto(site_url)
    live = browser.page.evaluate(READ_ANCHORS, [json.loads(json.dumps(description)), DEFAULT_HEIGHT])
    static = static_anchors(description, DEFAULT_HEIGHT)
    assert len(live) == len(static) == len(description["marks"])
    for index, (mark, drawn, expected) in enumerate(zip(description["marks"], live, static)):
        assert len(drawn) == len(expected), f"{name} mark {index} ({mark['type']}): {drawn} vs {expected}"
        for got, want in zip(drawn, expected):
            assert all(math.isclose(g, w, abs_tol=TOLERANCE_PX) for g, w in zip(got, want)), (
                f"{name} mark {index} ({mark['type']}): live {got} vs static {want}")
    assert re.search(r"<svg", browser.page.inner_html("#out"))
    browser.assert_clean()
