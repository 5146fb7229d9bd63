"""The static renderer: a figure description (explainer/figure.py) drawn by matplotlib, for the page's first view.

It follows the live SVG renderer's layout rules (build_scripts/browser/README.md, "The SVG renderer") step by step,
in the same pixel space: a 640 × height box with y pointing down, the plot area inside MARGINS, the same scales,
equal-aspect widening, arrowheads, label offsets and legend. So the hand-over from the static figure to the live
one does not jump; tests/browser/test_figure_parity.py holds both renderers to it.
"""

import math
from dataclasses import dataclass

import matplotlib
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Polygon, Rectangle

from build_scripts.figures.theme import FONT_PX, PT, Theme, new_figure, rc_params
from explainer.figure import FIGURE_WIDTH, MARGINS

LEGEND_LABELLED = ("line", "bars", "region")  # points and arrows carry their label beside them
TICK_LENGTH = 5


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
    """A matplotlib figure whose one Axes spans the whole box in pixels, y down, like the SVG viewBox."""

    def __init__(self, theme: Theme, height: int):
        self.theme, self.height = theme, height
        self.figure = new_figure(theme, height)
        self.ax = self.figure.add_axes((0, 0, 1, 1))
        self.ax.set_xlim(0, FIGURE_WIDTH)
        self.ax.set_ylim(height, 0)
        self.ax.set_axis_off()

    def color(self, role: str) -> str:
        return self.theme.color(role)

    def line(self, xs, ys, role, width, dash=False, clip=None, alpha=1.0, z=2):
        (artist,) = self.ax.plot(xs, ys, color=self.color(role), linewidth=width * PT, alpha=alpha, zorder=z,
                                 solid_capstyle="round", solid_joinstyle="round", dash_capstyle="round",
                                 linestyle=(0, (6 / width, 4 / width)) if dash else "-")
        artist.set_clip_path(clip)
        return artist

    def text(self, x, y, content, role="ink", size=FONT_PX["mark_label"], anchor="start", clip=None, **extra):
        align = {"start": "left", "middle": "center", "end": "right"}[anchor]
        artist = self.ax.text(x, y, content, color=self.color(role), fontsize=size * PT, ha=align, va="center",
                              **{"zorder": 4, **extra})
        artist.set_clip_path(clip)
        return artist

    def polygon(self, corners, role, opacity=1.0, clip=None, z=3):
        patch = Polygon(corners, closed=True, facecolor=self.color(role), alpha=opacity, edgecolor="none", zorder=z)
        self.ax.add_patch(patch)
        patch.set_clip_path(clip)
        return patch


def draw_axes(canvas: Canvas, plot: Plot, axes: dict) -> None:
    """Grid, spines, ticks and their labels, axis labels and title, as the live renderer places them."""
    x_ticks = [(plot.x(t["value"]), t["label"]) for t in axes["xticks"]]
    y_ticks = [(plot.y(t["value"]), t["label"]) for t in axes["yticks"]]
    x_ticks = [(at, label) for at, label in x_ticks if at is not None and plot.left - 0.5 <= at <= plot.right + 0.5]
    y_ticks = [(at, label) for at, label in y_ticks if at is not None and plot.top - 0.5 <= at <= plot.bottom + 0.5]
    if axes["grid"]:
        for at, _ in x_ticks:
            canvas.line([at, at], [plot.top, plot.bottom], "muted", 1, alpha=0.25, z=1)
        for at, _ in y_ticks:
            canvas.line([plot.left, plot.right], [at, at], "muted", 1, alpha=0.25, z=1)
    canvas.line([plot.left, plot.left, plot.right], [plot.top, plot.bottom, plot.bottom], "muted", 1, z=1.5)
    for at, label in x_ticks:
        canvas.line([at, at], [plot.bottom, plot.bottom + TICK_LENGTH], "muted", 1, z=1.5)
        canvas.text(at, plot.bottom + TICK_LENGTH + 3 + FONT_PX["tick"] / 2, label, size=FONT_PX["tick"],
                    anchor="middle")
    for at, label in y_ticks:
        canvas.line([plot.left - TICK_LENGTH, plot.left], [at, at], "muted", 1, z=1.5)
        canvas.text(plot.left - TICK_LENGTH - 3, at, label, size=FONT_PX["tick"], anchor="end")
    middle_x, middle_y = (plot.left + plot.right) / 2, (plot.top + plot.bottom) / 2
    if axes["xlabel"]:
        canvas.text(middle_x, canvas.height - 8 - FONT_PX["label"] / 2, axes["xlabel"], size=FONT_PX["label"],
                    anchor="middle")
    if axes["ylabel"]:
        canvas.text(16, middle_y, axes["ylabel"], size=FONT_PX["label"], anchor="middle", rotation=90)
    if axes["title"]:
        canvas.text(middle_x, 14, axes["title"], size=FONT_PX["title"], anchor="middle", fontweight="semibold")


def _mark_label(canvas, text, x, y, role, anchor, clip):
    if text:
        canvas.text(x, y, text, role=role, anchor=anchor, clip=clip)


def draw_line(canvas, mark, plot, clip):
    points = [(plot.x(x), plot.y(y)) for x, y in zip(mark["x"], mark["y"])]
    xs = [math.nan if x is None or y is None else x for x, y in points]  # NaN lifts the pen, as null does live
    ys = [math.nan if x is None or y is None else y for x, y in points]
    canvas.line(xs, ys, mark["color"], mark["width"], dash=mark["dash"], clip=clip)


def draw_arrow(canvas, mark, plot, clip):
    x1, y1, x2, y2 = plot.x(mark["start"][0]), plot.y(mark["start"][1]), plot.x(mark["end"][0]), plot.y(mark["end"][1])
    if None in (x1, y1, x2, y2) or math.hypot(x2 - x1, y2 - y1) < 0.5:
        return
    length, width = math.hypot(x2 - x1, y2 - y1), mark["width"]
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    head = min(length, 8 + 2 * width)
    bx, by, nx, ny = x2 - ux * head, y2 - uy * head, -uy * head * 0.45, ux * head * 0.45
    canvas.line([x1, bx], [y1, by], mark["color"], width, clip=clip)
    canvas.polygon([(x2, y2), (bx + nx, by + ny), (bx - nx, by - ny)], mark["color"], clip=clip)
    anchor = "start" if ux > 0.35 else "end" if ux < -0.35 else "middle"
    gap = 12 if anchor == "middle" else 8
    _mark_label(canvas, mark["label"], x2 + ux * gap, y2 + uy * gap, mark["color"], anchor, clip)


def draw_point(canvas, mark, plot, clip):
    x, y = plot.x(mark["x"]), plot.y(mark["y"])
    if x is None or y is None:
        return
    (artist,) = canvas.ax.plot([x], [y], marker="o", markersize=2 * mark["size"] * PT, color=canvas.color(mark["color"]),
                               markeredgewidth=0, linestyle="none", zorder=3)
    artist.set_clip_path(clip)
    _mark_label(canvas, mark["label"], x + mark["size"] + 4, y - mark["size"] - 2, mark["color"], "start", clip)


def draw_bars(canvas, mark, plot, clip):
    half = mark["width"] / 2
    for x, height in zip(mark["x"], mark["heights"]):
        if x is None or height is None:
            continue
        left, right, top = plot.x(x - half), plot.x(x + half), plot.y(height)
        if None in (left, right, top):
            continue
        top = min(top, plot.bottom)
        rect = Rectangle((min(left, right), top), abs(right - left), plot.bottom - top, facecolor=canvas.color(
            mark["color"]), alpha=0.85, edgecolor="none", zorder=2)
        canvas.ax.add_patch(rect)
        rect.set_clip_path(clip)


def draw_text(canvas, mark, plot, clip):
    x, y = plot.x(mark["x"]), plot.y(mark["y"])
    if x is not None and y is not None:
        canvas.text(x, y, mark["text"], role=mark["color"], size=mark["size"], anchor=mark["anchor"], clip=clip)


def draw_region(canvas, mark, plot, clip):
    corners = [(plot.x(x), plot.y(y)) for x, y in zip(mark["x"], mark["y"])]
    corners = [(x, y) for x, y in corners if x is not None and y is not None]
    if len(corners) >= 3:
        canvas.polygon(corners, mark["color"], opacity=mark["opacity"], clip=clip, z=1.8)


DRAW = {"line": draw_line, "arrow": draw_arrow, "point": draw_point, "bars": draw_bars, "text": draw_text,
        "region": draw_region}


def draw_legend(canvas: Canvas, marks: list, plot: Plot) -> None:
    """Top-right inside the plot: one 18 px row per labelled line, bars or region."""
    labelled = [mark for mark in marks if mark["type"] in LEGEND_LABELLED and mark["label"]]
    if not labelled:
        return
    padding, row, swatch, size = 8, 18, 22, FONT_PX["legend"]
    width = math.ceil(2 * padding + swatch + 6 + max(len(m["label"]) for m in labelled) * size * 0.6)
    height = 2 * padding + len(labelled) * row - (row - size)
    left, top = plot.right - 8 - width, plot.top + 8
    canvas.ax.add_patch(FancyBboxPatch((left, top), width, height, boxstyle="round,pad=0,rounding_size=3",
                                       facecolor=canvas.theme.background, alpha=0.85, edgecolor="none", zorder=5))
    for index, mark in enumerate(labelled):
        y, x = top + padding + size / 2 + index * row, left + padding
        if mark["type"] == "line":
            (artist,) = canvas.ax.plot([x, x + swatch], [y, y], color=canvas.color(mark["color"]), zorder=6,
                                       linewidth=mark["width"] * PT, linestyle="--" if mark["dash"] else "-")
        else:
            canvas.ax.add_patch(Rectangle((x + 5, y - 6), 12, 12, facecolor=canvas.color(mark["color"]), zorder=6,
                                          alpha=0.85 if mark["type"] == "bars" else max(mark.get("opacity", 1), 0.35)))
        canvas.text(x + swatch + 6, y, mark["label"], size=size, zorder=6)


def draw_description(description: dict, theme: Theme, height: int) -> Figure:
    """The matplotlib figure of a sandbox's figure description (readouts and status are HTML, not drawn)."""
    # Artists read fonts and colours from rcParams when they are made: draw the whole figure inside the theme.
    with matplotlib.rc_context(rc_params(theme)):
        canvas = Canvas(theme, height)
        return _draw(canvas, description, height)


def _draw(canvas: "Canvas", description: dict, height: int) -> Figure:
    plot = plot_area(description["axes"], height)
    clip = Rectangle((plot.left, plot.top), plot.right - plot.left, plot.bottom - plot.top,
                     transform=canvas.ax.transData, facecolor="none", edgecolor="none")
    canvas.ax.add_patch(clip)
    draw_axes(canvas, plot, description["axes"])
    for mark in description["marks"]:
        DRAW[mark["type"]](canvas, mark, plot, clip)
    draw_legend(canvas, description["marks"], plot)
    return canvas.figure
