"""The SVG renderer (build_scripts/browser/render.js) draws figure descriptions where figure.py's layout rule says.

Descriptions are built with explainer.figure's own helpers, rendered by render.js (as the build writes it, style
included) in a tiny page served from a temporary folder, and every expected pixel position comes from the static
renderer's own layout (build_scripts/figures/description.py plot_area, built on figure.py's FIGURE_WIDTH and
MARGINS), so a drift between the two renderers fails a test.
"""

import io
import json
import re

import pytest

from build_scripts.browser_files import site_files
from build_scripts.figures.description import plot_area  # the layout rule as the static renderer applies it
from explainer import figure as fig
from support import PROJECT_ROOT, StaticSiteServer

pytestmark = pytest.mark.browser

BROWSER_DIR = PROJECT_ROOT / "build_scripts" / "browser"

PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><link rel="icon" href="data:,"><title>SVG renderer</title>
<link rel="stylesheet" href="sandbox.css"></head>
<body><div id="out"></div><div id="more"></div><script src="render.js"></script></body>
</html>
"""


# ---- the page ----------------------------------------------------------------------------------------------------


@pytest.fixture
def renderer_server(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    served = site_files()
    for name in ("render.js", "sandbox.css"):
        (root / name).write_text(served[name], encoding="utf-8")
    (root / "index.html").write_text(PAGE, encoding="utf-8")
    server = StaticSiteServer(root)
    yield server
    server.close()


@pytest.fixture
def site_url(renderer_server):
    """Point the shared `browser` fixture (its off-origin guard) at this test's server instead of the site."""
    return renderer_server.url


@pytest.fixture
def page(browser, site_url):
    browser.page.goto(site_url + "index.html")
    browser.page.wait_for_function("window.ExplainerRender !== undefined")
    return browser.page


def draw(page, description: dict, height: int = fig.DEFAULT_HEIGHT, into: str = "out") -> None:
    """Render `description` with render.js and put the SVG into the element with id `into`."""
    page.evaluate(
        "([description, height, into]) => document.getElementById(into)"
        ".replaceChildren(ExplainerRender.renderFigure(description, {height}))",
        [description, height, into],
    )


def attributes(page, selector: str) -> list[dict]:
    """Every attribute of every element matching `selector` (plus its text), in document order."""
    return page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)].map((element) => Object.fromEntries(
             [...element.attributes].map((a) => [a.name, a.value]).concat([["text", element.textContent]])))""",
        selector,
    )


def close(a, b, tolerance=0.011):
    return abs(float(a) - float(b)) <= tolerance


def path_points(d: str) -> list[list[tuple[float, float]]]:
    """The runs of an SVG path made of M and L commands: one list of points per pen-down stretch."""
    runs = []
    for command, x, y in re.findall(r"([ML])(-?[\d.]+) (-?[\d.]+)", d):
        if command == "M":
            runs.append([])
        runs[-1].append((float(x), float(y)))
    return runs


# ---- tests ---------------------------------------------------------------------------------------------------------


def test_the_renderer_uses_figure_py_drawing_box_and_colour_roles(page, browser):
    constants = page.evaluate(
        "() => { const {STYLE, FIGURE_WIDTH, DEFAULT_HEIGHT, MARGINS, COLOR_ROLES} = ExplainerRender;"
        " return {STYLE, FIGURE_WIDTH, DEFAULT_HEIGHT, MARGINS, COLOR_ROLES}; }")
    assert constants == {"STYLE": fig.STYLE, "FIGURE_WIDTH": fig.FIGURE_WIDTH, "DEFAULT_HEIGHT": fig.DEFAULT_HEIGHT,
                         "MARGINS": fig.MARGINS, "COLOR_ROLES": list(fig.COLOR_ROLES)}
    browser.assert_clean()


def test_the_source_render_js_refuses_to_run_without_its_style(browser, renderer_server):
    # Only the built copy carries the style; the source, served by mistake, says so instead of drawing wrongly.
    (renderer_server.root / "raw.js").write_text((BROWSER_DIR / "render.js").read_text(encoding="utf-8"))
    page = browser.page
    page.goto(renderer_server.url + "index.html")
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_script_tag(url="raw.js")
    assert any("render.js has no figure style" in error for error in errors), errors


@pytest.mark.parametrize("height", [fig.DEFAULT_HEIGHT, 300])
def test_points_land_at_the_pixels_the_margins_and_limits_give(page, browser, height):
    axes = fig.axes(xlim=(-1, 3), ylim=(0, 4))
    spots = [(1, 2), (-1, 0), (3, 4), (0.25, 3.5)]
    draw(page, fig.figure(axes=axes, marks=[fig.point(x, y) for x, y in spots]), height)
    svg = attributes(page, "#out svg")[0]
    assert svg["viewBox"] == f"0 0 {fig.FIGURE_WIDTH} {height}"
    assert svg["role"] == "img"
    plot = plot_area(axes, height)
    to_x, to_y = plot.x, plot.y
    circles = attributes(page, "#out g[data-mark=point] circle")
    assert len(circles) == len(spots)
    for (x, y), circle in zip(spots, circles):
        assert close(circle["cx"], to_x(x)) and close(circle["cy"], to_y(y)), (x, y, circle)
    assert close(circles[1]["cx"], plot.left) and close(circles[1]["cy"], plot.bottom)
    assert close(circles[2]["cx"], plot.right) and close(circles[2]["cy"], plot.top)
    browser.assert_clean()


def test_log_axes_place_decades_evenly_and_skip_values_that_are_not_positive(page, browser):
    axes = fig.axes(xlim=(1, 1000), ylim=(0.01, 100), xscale="log", yscale="log")
    marks = [
        fig.point(10, 1),
        fig.line([1, 10, 100, 1000], [0.1, 0, 10, 100]),  # 0 has no logarithm: the line breaks there
        fig.bars([10, 100, 300], [1, -5, float("nan")], width=2),  # only the first bar has a height to draw
    ]
    draw(page, fig.figure(axes=axes, marks=marks))
    plot = plot_area(axes, fig.DEFAULT_HEIGHT)
    to_x, to_y = plot.x, plot.y
    circle = attributes(page, "#out g[data-mark=point] circle")[0]
    assert close(circle["cx"], plot.left + (plot.right - plot.left) / 3)
    assert close(circle["cy"], to_y(1)) and close(circle["cx"], to_x(10))

    runs = path_points(attributes(page, "#out g[data-mark=line] path")[0]["d"])
    assert [len(run) for run in runs] == [1, 2], "the point at y=0 must break the line"
    assert close(runs[1][0][0], to_x(100)) and close(runs[1][0][1], to_y(10))

    bars = attributes(page, "#out g[data-mark=bars] rect")
    assert len(bars) == 1
    bar = bars[0]
    assert close(bar["x"], to_x(9)) and close(float(bar["x"]) + float(bar["width"]), to_x(11))
    assert close(bar["y"], to_y(1)), "on a log scale a bar rises from the bottom of the plot"
    assert close(float(bar["y"]) + float(bar["height"]), plot.bottom)
    labels = [t["text"] for t in attributes(page, "#out text[data-axis=x]")]
    assert labels == [tick["label"] for tick in axes["xticks"]] == ["1", "10", "100", "1000"]
    browser.assert_clean()


@pytest.mark.parametrize("xlim, ylim", [((-1, 1), (-1, 1)), ((-10, 10), (-1, 1))], ids=["widens-x", "widens-y"])
def test_equal_aspect_gives_one_data_unit_the_same_pixels_on_both_axes(page, browser, xlim, ylim):
    axes = fig.axes(xlim=xlim, ylim=ylim, aspect="equal")
    draw(page, fig.figure(axes=axes, marks=[fig.point(0, 0), fig.point(1, 0), fig.point(0, 1)]))
    centre, right, up = attributes(page, "#out g[data-mark=point] circle")
    unit_x = float(right["cx"]) - float(centre["cx"])
    unit_y = float(centre["cy"]) - float(up["cy"])
    assert unit_x > 0 and close(unit_x, unit_y, 0.03)
    plot = plot_area(axes, fig.DEFAULT_HEIGHT)
    to_x, to_y = plot.x, plot.y
    assert close(centre["cx"], to_x(0)) and close(centre["cy"], to_y(0))
    assert close(centre["cx"], (plot.left + plot.right) / 2), "the widened range stays centred"
    browser.assert_clean()


def test_every_mark_type_is_drawn_with_its_colour_role(page, browser):
    axes = fig.axes(xlim=(0, 10), ylim=(0, 10))
    marks = [
        fig.region([1, 4, 4, 1], [1, 1, 4, 4], color="accent", opacity=0.3),
        fig.line([0, 5, 10], [0, 5, 0], color="primary", dash=True),
        fig.arrow((2, 2), (6, 2), color="secondary", label="u"),
        fig.point(7, 7, color="good", label="p"),
        fig.bars([8, 9], [3, 4], width=0.5, color="warn"),
        fig.text(5, 9, "hello", color="bad", anchor="middle", size=15),
    ]
    draw(page, fig.figure(axes=axes, marks=marks))
    groups = attributes(page, "#out g[data-mark]")
    assert [g["data-mark"] for g in groups] == ["region", "line", "arrow", "point", "bars", "text"]
    assert [g["class"] for g in groups] == [f"explainer-color-{m['color']}" for m in marks]
    plot = plot_area(axes, fig.DEFAULT_HEIGHT)
    to_x, to_y = plot.x, plot.y

    polygon = attributes(page, "#out g[data-mark=region] polygon")[0]
    corners = [tuple(map(float, corner.split(","))) for corner in polygon["points"].split()]
    assert len(corners) == 4 and close(corners[2][0], to_x(4)) and close(corners[2][1], to_y(4))
    assert polygon["fill-opacity"] == "0.3"

    line = attributes(page, "#out g[data-mark=line] path")[0]
    assert line["stroke-dasharray"] and line["fill"] == "none"

    head = attributes(page, "#out g[data-mark=arrow] polygon")[0]
    tip = tuple(map(float, head["points"].split()[0].split(",")))
    assert close(tip[0], to_x(6)) and close(tip[1], to_y(2)), "the arrowhead's tip is the arrow's end"
    shaft = attributes(page, "#out g[data-mark=arrow] line")[0]
    assert close(shaft["x1"], to_x(2)) and float(shaft["x2"]) < to_x(6)
    arrow_label = attributes(page, "#out g[data-mark=arrow] text")[0]
    assert arrow_label["text"] == "u" and float(arrow_label["x"]) > to_x(6), "the label sits past the head"

    point_label = attributes(page, "#out g[data-mark=point] text")[0]
    assert point_label["text"] == "p" and float(point_label["x"]) > to_x(7)

    bars = attributes(page, "#out g[data-mark=bars] rect")
    assert [b["data-x"] for b in bars] == ["8", "9"]
    assert close(bars[1]["x"], to_x(8.75)) and close(bars[1]["width"], to_x(9.25) - to_x(8.75))
    assert close(bars[1]["y"], to_y(4)) and close(float(bars[1]["y"]) + float(bars[1]["height"]), to_y(0))

    label = attributes(page, "#out g[data-mark=text] text")[0]
    assert label["text"] == "hello" and label["text-anchor"] == "middle" and label["dominant-baseline"] == "middle"
    assert close(label["x"], to_x(5)) and close(label["y"], to_y(9)) and label["font-size"] == "15"
    browser.assert_clean()


# A heat map drawn as one picture: the alpha of each pixel of its mask's image, top row first.
PICTURE_ALPHAS = """async () => {
  const [image] = document.querySelectorAll("#out g[data-mark=heatmap] mask image");
  const picture = new Image();
  picture.src = image.getAttribute("href");
  await picture.decode();
  const canvas = Object.assign(document.createElement("canvas"), {width: picture.width, height: picture.height});
  const context = canvas.getContext("2d");
  context.drawImage(picture, 0, 0);
  const pixels = context.getImageData(0, 0, picture.width, picture.height).data;
  return Array.from({length: picture.height}, (_, row) => Array.from({length: picture.width},
    (_, column) => pixels[4 * (row * picture.width + column) + 3]));
}"""


def shown_colours(page, spots: list[tuple[float, float]]) -> list[tuple[int, int, int]]:
    """The colour on screen at each of `spots` (the figure's own coordinates, in px), from a screenshot."""
    from PIL import Image

    at = page.evaluate("""(spots) => { const matrix = document.querySelector("#out svg").getScreenCTM();
      return spots.map(([x, y]) => { const p = new DOMPoint(x, y).matrixTransform(matrix); return [p.x, p.y]; }); }""",
                       spots)
    shot = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
    return [shot.getpixel((int(x), int(y))) for x, y in at]


def test_an_evenly_spaced_heatmap_is_one_picture_that_shows_each_cell_at_its_opacity(page, browser):
    nan = float("nan")
    axes = fig.axes(xlim=(0, 4), ylim=(-1, 2))
    cells = fig.heatmap([1, 2, 3], [0, 1], [[0.0, 0.5, 1.0], [nan, 0.25, 2.0]], color="accent", vmin=0, vmax=1,
                        label="cosine, full = 1")
    draw(page, fig.figure(axes=axes, marks=[cells]))
    [group] = attributes(page, "#out g[data-mark=heatmap]")
    assert group["class"] == "explainer-color-accent" and group["fill"] == "currentColor"
    [mask] = attributes(page, "#out g[data-mark=heatmap] mask")
    [rect] = attributes(page, "#out g[data-mark=heatmap] > rect")
    assert rect["mask"] == f"url(#{mask['id']})", "one rect in the map's colour, seen through the picture"
    plot = plot_area(axes, fig.DEFAULT_HEIGHT)
    assert close(rect["x"], plot.x(0.5)) and close(float(rect["x"]) + float(rect["width"]), plot.x(3.5))
    assert close(rect["y"], plot.y(1.5)) and close(float(rect["y"]) + float(rect["height"]), plot.y(-0.5))
    # One pixel per cell, the top row (y = 1) first; alpha = opacity × 255; the empty cell and 0 are transparent.
    assert page.evaluate(PICTURE_ALPHAS) == [[0, 64, 255], [0, 128, 255]]
    # And on screen: each cell is the colour at its opacity over the figure's background (read a little off the
    # cells' centres, where the grid lines run).
    spots = [(plot.x(x + 0.2), plot.y(y + 0.2)) for y in (0, 1) for x in (1, 2, 3)]
    zero, half, full, empty, quarter, clipped = shown_colours(page, spots)
    [background] = shown_colours(page, [(plot.x(3.8), plot.y(-0.8))])  # in the plot, outside the map
    accent = tuple(int(part) for part in re.findall(r"\d+", page.evaluate(
        "getComputedStyle(document.querySelector('#out g[data-mark=heatmap]')).color"))[:3])
    assert zero == empty == background and full == clipped == accent
    for shown, opacity in ((half, 128 / 255), (quarter, 64 / 255)):
        assert all(abs(s - (b + opacity * (a - b))) <= 2 for s, a, b in zip(shown, accent, background)), (
            shown, opacity, accent, background)
    ramp = attributes(page, "#out [data-legend-entry] rect")
    assert [float(r["fill-opacity"]) for r in ramp] == fig.STYLE["legend"]["heatmap_ramp"]
    browser.assert_clean()


def test_a_heatmap_whose_cells_differ_in_size_on_screen_is_one_rect_per_cell(page, browser):
    nan = float("nan")
    axes = fig.axes(xlim=(0, 4), ylim=(0, 3))
    cells = fig.heatmap([0, 1, 3, 4], [0, 1, 2], [[0.0, 0.5, 1.0], [nan, 0.25, 2.0]], color="accent", vmin=0, vmax=1)
    draw(page, fig.figure(axes=axes, marks=[cells]))
    assert not attributes(page, "#out g[data-mark=heatmap] mask")
    rects = attributes(page, "#out g[data-mark=heatmap] rect")
    assert [(r["data-row"], r["data-column"]) for r in rects] == [("0", "0"), ("0", "1"), ("0", "2"), ("1", "1"),
                                                                  ("1", "2")], "the empty cell is not drawn"
    assert [float(r["fill-opacity"]) for r in rects] == [0, 0.5, 1, 0.25, 1]
    plot = plot_area(axes, fig.DEFAULT_HEIGHT)
    wide = rects[3]  # row 1 (y from 1 to 2), column 1 (x from 1 to 3)
    assert close(wide["x"], plot.x(1)) and close(float(wide["x"]) + float(wide["width"]), plot.x(3))
    assert close(wide["y"], plot.y(2)) and close(float(wide["y"]) + float(wide["height"]), plot.y(1))
    assert rects[4]["data-value"] == "2", "the value itself stays readable on the cell"
    browser.assert_clean()


def test_nulls_break_lines_and_are_skipped_everywhere_else(page, browser):
    nan = float("nan")
    axes = fig.axes(xlim=(0, 10), ylim=(0, 10))
    marks = [
        fig.line([1, 2, 3, 4, 5, 6], [1, 2, nan, 4, 5, 6]),
        fig.point(nan, 3),
        fig.bars([1, 2, 3], [2, nan, 4]),
        fig.region([1, 2, nan, 3], [1, 5, 5, 1]),
        fig.arrow((1, 1), (nan, 2)),
    ]
    draw(page, fig.figure(axes=axes, marks=marks))
    assert [len(run) for run in path_points(attributes(page, "#out g[data-mark=line] path")[0]["d"])] == [2, 3]
    assert attributes(page, "#out g[data-mark=point] circle") == []
    assert [b["data-x"] for b in attributes(page, "#out g[data-mark=bars] rect")] == ["1", "3"]
    assert len(attributes(page, "#out g[data-mark=region] polygon")[0]["points"].split()) == 3
    assert attributes(page, "#out g[data-mark=arrow] *") == []
    assert len(attributes(page, "#out g[data-mark]")) == len(marks), "every mark keeps its (possibly empty) group"
    browser.assert_clean()


def test_ticks_grid_axis_labels_and_title(page, browser):
    axes = fig.axes(xlim=(0, 1), ylim=(-2, 2), xlabel="angle", ylabel="length", title="Projection",
                    yticks=[(-2, "−2"), (0, "zero"), (2, "2"), (5, "outside")])
    draw(page, fig.figure(axes=axes, marks=[]))
    plot = plot_area(axes, fig.DEFAULT_HEIGHT)
    to_x, to_y = plot.x, plot.y
    x_labels = attributes(page, "#out text[data-axis=x]")
    assert [t["text"] for t in x_labels] == [tick["label"] for tick in axes["xticks"]]
    assert all(close(t["x"], to_x(float(t["data-value"]))) for t in x_labels)
    y_labels = attributes(page, "#out text[data-axis=y]")
    assert [t["text"] for t in y_labels] == ["−2", "zero", "2"], "a tick outside the limits is not drawn"
    assert close(y_labels[1]["y"], to_y(0))
    grid = attributes(page, "#out .explainer-grid line")
    assert len(grid) == len(x_labels) + len(y_labels)
    assert [t["text"] for t in attributes(page, "#out .explainer-axis-labels text")] == ["angle", "length",
                                                                                         "Projection"]

    draw(page, fig.figure(axes=fig.axes(xlim=(0, 1), ylim=(0, 1), grid=False), marks=[]))
    assert attributes(page, "#out .explainer-grid line") == []
    browser.assert_clean()


def test_the_legend_lists_labelled_lines_bars_and_regions_top_right_inside_the_plot(page, browser):
    axes = fig.axes(xlim=(0, 10), ylim=(0, 10))
    marks = [
        fig.line([0, 10], [0, 10], label="signal"),
        fig.line([0, 10], [10, 0]),  # no label: no entry
        fig.bars([5], [5], label="per layer", color="secondary"),
        fig.region([1, 2, 2], [1, 1, 2], label="band", color="accent"),
        fig.text(1, 1, "a note"),  # text is never in the legend
        fig.point(3, 3, label="p"),  # drawn beside the point instead
    ]
    draw(page, fig.figure(axes=axes, marks=marks))
    entries = attributes(page, "#out [data-legend] [data-legend-entry]")
    assert [e["data-legend-entry"] for e in entries] == ["signal", "per layer", "band"]
    assert [e["class"] for e in entries] == ["explainer-color-primary", "explainer-color-secondary",
                                             "explainer-color-accent"]
    box = attributes(page, "#out [data-legend] rect.explainer-legend-box")[0]
    plot = plot_area(axes, fig.DEFAULT_HEIGHT)
    left, top = float(box["x"]), float(box["y"])
    right = left + float(box["width"])
    assert plot.top <= top < plot.top + 20 and plot.right - 20 < right <= plot.right
    assert left > (plot.left + plot.right) / 2
    browser.assert_clean()


def test_marks_are_clipped_to_the_plot_area_with_ids_unique_on_the_page(page, browser):
    description = fig.figure(axes=fig.axes(xlim=(0, 1), ylim=(0, 1)), marks=[fig.point(2, 2)])
    draw(page, description, height=300)
    draw(page, description, height=300, into="more")
    clips = attributes(page, "svg clipPath")
    assert len(clips) == 2 and clips[0]["id"] != clips[1]["id"]
    plot = plot_area(description["axes"], 300)
    rect = attributes(page, f"#out clipPath#{clips[0]['id']} rect")[0]
    assert [float(rect[k]) for k in ("x", "y", "width", "height")] == [
        plot.left, plot.top, plot.right - plot.left, plot.bottom - plot.top]
    layer = attributes(page, "#out .explainer-marks")[0]
    assert layer["clip-path"] == f"url(#{clips[0]['id']})"
    browser.assert_clean()


def _rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_sandbox_css_colours_are_theme_json_in_light_and_dark(page, browser):
    theme = json.loads((BROWSER_DIR / "theme.json").read_text(encoding="utf-8"))
    assert set(theme["light"]) == set(theme["dark"]) == set(fig.COLOR_ROLES)
    marks = [fig.point(0.5, 0.5, color=role) for role in fig.COLOR_ROLES]
    draw(page, fig.figure(axes=fig.axes(xlim=(0, 1), ylim=(0, 1)), marks=marks))
    read = "() => [...document.querySelectorAll('#out g[data-mark]')].map((g) => getComputedStyle(g).color)"
    assert page.evaluate(read) == [_rgb(theme["light"][role]) for role in fig.COLOR_ROLES]
    page.evaluate("document.body.setAttribute('data-md-color-scheme', 'slate')")
    assert page.evaluate(read) == [_rgb(theme["dark"][role]) for role in fig.COLOR_ROLES]
    browser.assert_clean()


def _luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_colour_role_has_3_to_1_contrast_with_its_background(scheme):
    theme = json.loads((BROWSER_DIR / "theme.json").read_text(encoding="utf-8"))
    background = _luminance(theme["background"][scheme])
    for role, colour in theme[scheme].items():
        high, low = sorted([_luminance(colour), background], reverse=True)
        assert (high + 0.05) / (low + 0.05) >= 3, f"{scheme} {role} {colour} is too faint on its background"
