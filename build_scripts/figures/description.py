"""The static renderer: a figure description (explainer/figure.py) drawn by matplotlib, for the page's first view.

It follows the live SVG renderer's layout rules (build_scripts/browser/README.md, "The SVG renderer") step by step,
in the same pixel space: a 640 × height box with y pointing down, the plot area inside MARGINS, the same scales,
equal-aspect widening, arrowheads, label offsets and legend. Every length, width, opacity and type size comes from
explainer/figure_style.json (STYLE), the file render.js gets at build. So the hand-over from the static figure to the
live one does not jump; tests/browser/test_figure_parity.py holds both renderers to it, positions and styles.
"""

import math
from dataclasses import dataclass

import matplotlib
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Polygon, Rectangle

from build_scripts.figures.theme import FONT_PX, PT, Theme, new_figure, rc_params
from explainer.figure import FIGURE_WIDTH, MARGINS, STYLE

LEGEND_LABELLED = ("line", "bars", "region", "heatmap")  # points and arrows carry their label beside them
AXES, LEGEND = STYLE["axes"], STYLE["legend"]


@dataclass(frozen=True)
class Plot:
    """The plot area in box pixels (y down) and the data → pixel maps of both axes."""

    left: float
    right: float
    top: float
    bottom: float
    xlim: tuple
    ylim: tuple
    xscale: str
    yscale: str

    def x(self, value):
        """Pixel column of a data x, or None (null, or ≤ 0 on a log axis)."""
        return _scale(value, self.xscale, self.xlim, self.left, self.right)

    def y(self, value):
        """Pixel row of a data y, or None."""
        return _scale(value, self.yscale, self.ylim, self.bottom, self.top)


def _scale(value, kind: str, limits, start: float, end: float):
    if value is None or not math.isfinite(value) or (kind == "log" and value <= 0):
        return None
    low, high, value = (math.log10(v) if kind == "log" else v for v in (*limits, value))
    return start + (value - low) / (high - low) * (end - start)


def _widen(limits, span: float) -> tuple:
    centre = (limits[0] + limits[1]) / 2
    return centre - span / 2, centre + span / 2


def plot_area(axes: dict, height: int) -> Plot:
    """Where the plot goes and which data limits it shows (equal aspect widens the shorter range)."""
    left, right, top, bottom = MARGINS["left"], FIGURE_WIDTH - MARGINS["right"], MARGINS["top"], height - MARGINS[
        "bottom"]
    xlim, ylim = tuple(axes["xlim"]), tuple(axes["ylim"])
    if axes["aspect"] == "equal" and "log" not in (axes["xscale"], axes["yscale"]):
        x_per_unit, y_per_unit = (right - left) / (xlim[1] - xlim[0]), (bottom - top) / (ylim[1] - ylim[0])
        if x_per_unit > y_per_unit:
            xlim = _widen(xlim, (right - left) / y_per_unit)
        elif y_per_unit > x_per_unit:
            ylim = _widen(ylim, (bottom - top) / x_per_unit)
    return Plot(left, right, top, bottom, xlim, ylim, axes["xscale"], axes["yscale"])


# ---- drawing in box pixels ------------------------------------------------------------------------------------------


class Canvas:
    """A matplotlib Axes spanning a box in pixels, y down, like the SVG viewBox (the whole figure, or one panel).

    Every artist drawn is also filed under the part of the figure being drawn (`part`: "grid", "mark 3", "legend 0",
    ...), so a test can hold each part's styles against the live renderer's.
    """

    def __init__(self, theme: Theme, height: int, figure: Figure | None = None, bottom: float = 0.0):
        self.theme, self.height = theme, height
        self.figure = figure or new_figure(theme, height)
        total = self.figure.get_size_inches()[1] * self.figure.dpi
        self.ax = self.figure.add_axes((0, bottom / total, 1, height / total))
        self.ax.set_xlim(0, FIGURE_WIDTH)
        self.ax.set_ylim(height, 0)
        self.ax.set_axis_off()
        self.part, self.parts = "", {}

    def color(self, role: str) -> str:
        return self.theme.color(role)

    def _file(self, artist, clip=None):
        artist.set_clip_path(clip)
        self.parts.setdefault(self.part, []).append(artist)
        return artist

    def line(self, xs, ys, role, width, dash=False, clip=None, alpha=1.0, z=2, cap=STYLE["line"]["cap"]):
        dashes = [length / width for length in STYLE["line"]["dash"]]  # matplotlib scales dashes by the line width
        join = STYLE["line"]["join"]
        (artist,) = self.ax.plot(xs, ys, color=self.color(role), linewidth=width * PT, alpha=alpha, zorder=z,
                                 solid_capstyle=cap, dash_capstyle=cap, solid_joinstyle=join, dash_joinstyle=join,
                                 linestyle=(0, dashes) if dash else "-")
        return self._file(artist, clip)

    def axis_line(self, xs, ys, alpha=1.0, z=1.5):
        """A grid line, spine or tick: muted, in the axes' stroke width and cap."""
        return self.line(xs, ys, "muted", AXES["stroke_width"], alpha=alpha, z=z, cap=AXES["cap"])

    def text(self, x, y, content, role="ink", size=FONT_PX["mark_label"], anchor="start", clip=None, **extra):
        align = {"start": "left", "middle": "center", "end": "right"}[anchor]
        artist = self.ax.text(x, y, content, color=self.color(role), fontsize=size * PT, ha=align, va="center",
                              **{"zorder": 4, **extra})
        return self._file(artist, clip)

    def polygon(self, corners, role, opacity=1.0, clip=None, z=3):
        patch = Polygon(corners, closed=True, facecolor=self.color(role), alpha=opacity, edgecolor="none", zorder=z)
        self.ax.add_patch(patch)
        return self._file(patch, clip)

    def rect(self, left, top, width, height, role, opacity=1.0, clip=None, z=2):
        patch = Rectangle((left, top), width, height, facecolor=self.color(role), alpha=opacity, edgecolor="none",
                          zorder=z)
        self.ax.add_patch(patch)
        return self._file(patch, clip)

    def dot(self, x, y, radius, role, clip=None):
        (artist,) = self.ax.plot([x], [y], marker="o", markersize=2 * radius * PT, color=self.color(role),
                                 markeredgewidth=0, linestyle="none", zorder=3)
        return self._file(artist, clip)


def draw_axes(canvas: Canvas, plot: Plot, axes: dict) -> None:
    """Grid, spines, ticks and their labels, axis labels and title, as the live renderer places them."""
    x_ticks = [(plot.x(t["value"]), t["label"]) for t in axes["xticks"]]
    y_ticks = [(plot.y(t["value"]), t["label"]) for t in axes["yticks"]]
    x_ticks = [(at, label) for at, label in x_ticks if at is not None and plot.left - 0.5 <= at <= plot.right + 0.5]
    y_ticks = [(at, label) for at, label in y_ticks if at is not None and plot.top - 0.5 <= at <= plot.bottom + 0.5]
    tick, gap, font = AXES["tick_length"], AXES["tick_label_gap"], FONT_PX
    canvas.part = "grid"
    if axes["grid"]:
        for at, _ in x_ticks:
            canvas.axis_line([at, at], [plot.top, plot.bottom], alpha=AXES["grid_opacity"], z=1)
        for at, _ in y_ticks:
            canvas.axis_line([plot.left, plot.right], [at, at], alpha=AXES["grid_opacity"], z=1)
    canvas.part = "spines"
    canvas.axis_line([plot.left, plot.left, plot.right], [plot.top, plot.bottom, plot.bottom])
    for at, label in x_ticks:
        canvas.part = "ticks"
        canvas.axis_line([at, at], [plot.bottom, plot.bottom + tick])
        canvas.part = "tick labels"
        canvas.text(at, plot.bottom + tick + gap + font["tick"] / 2, label, size=font["tick"], anchor="middle")
    for at, label in y_ticks:
        canvas.part = "ticks"
        canvas.axis_line([plot.left - tick, plot.left], [at, at])
        canvas.part = "tick labels"
        canvas.text(plot.left - tick - gap, at, label, size=font["tick"], anchor="end")
    canvas.part = "axis labels"
    middle_x, middle_y = (plot.left + plot.right) / 2, (plot.top + plot.bottom) / 2
    if axes["xlabel"]:
        canvas.text(middle_x, canvas.height - AXES["xlabel_baseline_above_bottom"] - font["label"] / 2, axes["xlabel"],
                    size=font["label"], anchor="middle")
    if axes["ylabel"]:
        canvas.text(AXES["ylabel_centre_x"], middle_y, axes["ylabel"], size=font["label"], anchor="middle",
                    rotation=90)
    if axes["title"]:
        canvas.text(middle_x, STYLE["title"]["centre_y"], axes["title"], size=font["title"], anchor="middle",
                    fontweight=STYLE["title"]["weight"])


def _mark_label(canvas, text, x, y, role, anchor, clip):
    if text:
        canvas.text(x, y, text, role=role, anchor=anchor, clip=clip)


def draw_line(canvas, mark, plot, clip):
    points = [(plot.x(x), plot.y(y)) for x, y in zip(mark["x"], mark["y"])]
    xs = [math.nan if x is None or y is None else x for x, y in points]  # NaN lifts the pen, as null does live
    ys = [math.nan if x is None or y is None else y for x, y in points]
    canvas.line(xs, ys, mark["color"], mark["width"], dash=mark["dash"], clip=clip)


def arrow_head(length: float, width: float) -> tuple[float, float]:
    """The arrowhead's length and width in px for a shaft `length` px long drawn `width` px wide."""
    rule = STYLE["arrow"]
    head = min(length, rule["head_length_base"] + rule["head_length_per_width"] * width)
    return head, rule["head_width_ratio"] * head


def draw_arrow(canvas, mark, plot, clip):
    x1, y1, x2, y2 = plot.x(mark["start"][0]), plot.y(mark["start"][1]), plot.x(mark["end"][0]), plot.y(mark["end"][1])
    if None in (x1, y1, x2, y2) or math.hypot(x2 - x1, y2 - y1) < 0.5:
        return
    length, width, rule = math.hypot(x2 - x1, y2 - y1), mark["width"], STYLE["arrow"]
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    head, head_width = arrow_head(length, width)
    bx, by, nx, ny = x2 - ux * head, y2 - uy * head, -uy * head_width / 2, ux * head_width / 2
    canvas.line([x1, bx], [y1, by], mark["color"], width, clip=clip)
    canvas.polygon([(x2, y2), (bx + nx, by + ny), (bx - nx, by - ny)], mark["color"], clip=clip)
    side = rule["label_side_threshold"]
    anchor = "start" if ux > side else "end" if ux < -side else "middle"
    gap = rule["label_gap_vertical"] if anchor == "middle" else rule["label_gap"]
    _mark_label(canvas, mark["label"], x2 + ux * gap, y2 + uy * gap, mark["color"], anchor, clip)


def draw_point(canvas, mark, plot, clip):
    x, y = plot.x(mark["x"]), plot.y(mark["y"])
    if x is None or y is None:
        return
    canvas.dot(x, y, mark["size"], mark["color"], clip=clip)
    rule = STYLE["point"]
    _mark_label(canvas, mark["label"], x + mark["size"] + rule["label_dx"], y - mark["size"] + rule["label_dy"],
                mark["color"], "start", clip)


def draw_bars(canvas, mark, plot, clip):
    half = mark["width"] / 2
    for x, height in zip(mark["x"], mark["heights"]):
        if x is None or height is None:
            continue
        left, right, top = plot.x(x - half), plot.x(x + half), plot.y(height)
        if None in (left, right, top):
            continue
        top = min(top, plot.bottom)
        canvas.rect(min(left, right), top, abs(right - left), plot.bottom - top, mark["color"],
                    opacity=STYLE["bars"]["opacity"], clip=clip)


def draw_text(canvas, mark, plot, clip):
    x, y = plot.x(mark["x"]), plot.y(mark["y"])
    if x is not None and y is not None:
        canvas.text(x, y, mark["text"], role=mark["color"], size=mark["size"], anchor=mark["anchor"], clip=clip)


def draw_region(canvas, mark, plot, clip):
    corners = [(plot.x(x), plot.y(y)) for x, y in zip(mark["x"], mark["y"])]
    corners = [(x, y) for x, y in corners if x is not None and y is not None]
    if len(corners) >= 3:
        canvas.polygon(corners, mark["color"], opacity=mark["opacity"], clip=clip, z=1.8)


def draw_heatmap(canvas, mark, plot, clip):
    columns = [(plot.x(a), plot.x(b)) for a, b in zip(mark["x"], mark["x"][1:])]
    rows = [(plot.y(a), plot.y(b)) for a, b in zip(mark["y"], mark["y"][1:])]
    for (y1, y2), opacities in zip(rows, mark["opacity"]):
        for (x1, x2), opacity in zip(columns, opacities):
            if opacity is not None and None not in (x1, x2, y1, y2):
                canvas.rect(min(x1, x2), min(y1, y2), abs(x2 - x1), abs(y2 - y1), mark["color"], opacity=opacity,
                            clip=clip, z=1.7)


DRAW = {"line": draw_line, "arrow": draw_arrow, "point": draw_point, "bars": draw_bars, "text": draw_text,
        "region": draw_region, "heatmap": draw_heatmap}


def _legend_swatch(canvas: Canvas, mark: dict, x: float, y: float) -> None:
    """A line segment in the line's width and dash, a ramp of squares for a heat map, else one square."""
    swatch, square = LEGEND["swatch"], LEGEND["square"]
    if mark["type"] == "line":
        canvas.line([x, x + swatch], [y, y], mark["color"], mark["width"], dash=mark["dash"], z=6)
    elif mark["type"] == "heatmap":
        step = swatch / len(LEGEND["heatmap_ramp"])
        for index, opacity in enumerate(LEGEND["heatmap_ramp"]):
            canvas.rect(x + index * step, y - square / 2, step, square, mark["color"], opacity=opacity, z=6)
    else:
        opacity = STYLE["bars"]["opacity"] if mark["type"] == "bars" else max(mark["opacity"], LEGEND["min_fill_opacity"])
        canvas.rect(x + (swatch - square) / 2, y - square / 2, square, square, mark["color"], opacity=opacity, z=6)


def legend_box(labelled: list[dict], plot: Plot) -> tuple[float, float, float, float]:
    """Where the legend goes: (left, top, width, height), top-right inside the plot; text widths are estimated."""
    padding, row, size = LEGEND["padding"], LEGEND["row"], FONT_PX["legend"]
    text_width = max(len(m["label"]) for m in labelled) * size * LEGEND["char_width"]
    width = math.ceil(2 * padding + LEGEND["swatch"] + LEGEND["label_gap"] + text_width)
    height = 2 * padding + len(labelled) * row - (row - size)
    return plot.right - LEGEND["inset"] - width, plot.top + LEGEND["inset"], width, height


def draw_legend(canvas: Canvas, marks: list, plot: Plot) -> None:
    """Top-right inside the plot: one row per labelled line, bars, region or heat map."""
    labelled = [(index, mark) for index, mark in enumerate(marks) if mark["type"] in LEGEND_LABELLED and mark["label"]]
    if not labelled:
        return
    left, top, width, height = legend_box([mark for _, mark in labelled], plot)
    canvas.part = "legend box"
    box = FancyBboxPatch((left, top), width, height, boxstyle=f"round,pad=0,rounding_size={LEGEND['corner_radius']}",
                         facecolor=canvas.theme.background, alpha=LEGEND["box_opacity"], edgecolor="none", zorder=5)
    canvas._file(canvas.ax.add_patch(box))
    size = FONT_PX["legend"]
    for row, (index, mark) in enumerate(labelled):
        canvas.part = f"legend {index}"
        y, x = top + LEGEND["padding"] + size / 2 + row * LEGEND["row"], left + LEGEND["padding"]
        _legend_swatch(canvas, mark, x, y)
        canvas.text(x + LEGEND["swatch"] + LEGEND["label_gap"], y, mark["label"], size=size, zorder=6)


def draw_description(description: dict, theme: Theme, height: int) -> Figure:
    """The matplotlib figure of a sandbox's figure description (readouts and status are HTML, not drawn)."""
    return draw_parts(description, theme, height)[0]


def draw_parts(description: dict, theme: Theme, height: int) -> tuple[Figure, dict[str, list]]:
    """The figure of a description and the artists of each of its parts ("grid", "mark 2", "legend 0", ...)."""
    # Artists read fonts and colours from rcParams when they are made: draw the whole figure inside the theme.
    with matplotlib.rc_context(rc_params(theme)):
        canvas = Canvas(theme, height)
        draw_into(canvas, description)
        return canvas.figure, canvas.parts


def draw_into(canvas: Canvas, description: dict) -> None:
    """Draw a description into a canvas's box (the whole figure, or one panel of an illustration)."""
    height = canvas.height
    plot = plot_area(description["axes"], height)
    clip = Rectangle((plot.left, plot.top), plot.right - plot.left, plot.bottom - plot.top,
                     transform=canvas.ax.transData, facecolor="none", edgecolor="none")
    canvas.ax.add_patch(clip)
    draw_axes(canvas, plot, description["axes"])
    for index, mark in enumerate(description["marks"]):
        canvas.part = f"mark {index}"
        DRAW[mark["type"]](canvas, mark, plot, clip)
    draw_legend(canvas, description["marks"], plot)
