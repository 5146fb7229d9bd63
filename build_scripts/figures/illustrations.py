"""The lessons' illustrations: the RMSNorm essay's pictures and the ablation lesson's anatomy diagram.

Every number drawn comes from an `explainer` call on the lessons' example inputs ([3, 4], u = [0.6, 0.8], v = [5, 0],
r = 5, α = c = 0.1, ...), so a figure cannot disagree with the kernels the text and the sandboxes use. Each figure
is drawn inside the theme's matplotlib settings (build_scripts/figures/jobs.py does that for every figure), so
every artist gets the palette's ink and fonts.
"""

import math

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle
from matplotlib.path import Path as CurvePath
from matplotlib.ticker import FixedLocator, MultipleLocator, NullFormatter, NullLocator

from build_scripts.figures.description import Canvas, draw_into
from build_scripts.figures.registry import illustration
from build_scripts.figures.theme import FONT_PX, Theme, new_figure, plot_axes
from explainer.ablation import rotate
from explainer.attention import attention_scores
from explainer.figure import FIGURE_WIDTH, MARGINS, STYLE
from explainer.norms import rmsnorm, rmsnorm_jacobian
from explainer.projection import (perpendicular_length_change, perpendicular_length_change_approx,
                                  projection_matrix, rejection_matrix)
from explainer.sandbox import get_sandbox

PLANE = 2  # d: the essay's vectors live in the plane, so RMSNorm's circle has radius √2
RADIUS = math.sqrt(PLANE)
GRID_OPACITY = STYLE["axes"]["grid_opacity"]  # as the sandboxes' grid, in both renderers
FILL_OPACITY = 0.15  # boxes and regions: a tint of their role, text stays readable on it


def _number(value, digits: int = 6) -> str:
    """A number as the lessons print it: up to `digits` significant digits and a true minus sign."""
    return f"{float(value):.{digits}g}".replace("-", "−")


def _vector(values, digits: int = 6) -> str:
    """A vector as the lessons print it: [1.8, −2.4]."""
    return "[" + ", ".join(_number(v, digits) for v in values) + "]"


def _panel(figure, left: float, bottom: float, width: float, height: float):
    """Axes at a box given in figure px (origin bottom left), for side-by-side panels."""
    figure_width, figure_height = figure.get_size_inches() * figure.dpi
    return figure.add_axes([left / figure_width, bottom / figure_height, width / figure_width, height / figure_height])


def _canvas(figure):
    """Axes over the whole figure with one data unit per px and no frame: the drawing board for diagrams."""
    width, height = figure.get_size_inches() * figure.dpi
    axes = _panel(figure, 0, 0, width, height)
    axes.set_xlim(0, width)
    axes.set_ylim(0, height)
    axes.set_axis_off()
    return axes


def _fit_equal(axes, xlim, ylim):
    """Equal aspect that fills the axes' box: the shorter range is widened about its centre (as explainer.figure)."""
    figure_size = axes.figure.get_size_inches() * axes.figure.dpi
    box = axes.get_position()
    box_px = np.array([box.width, box.height]) * figure_size  # (2,) width, height
    limits = np.array([xlim, ylim], dtype=float)  # (2, 2)
    per_px = np.max((limits[:, 1] - limits[:, 0]) / box_px)
    centres = limits.mean(axis=1)  # (2,)
    limits = np.stack([centres - per_px * box_px / 2, centres + per_px * box_px / 2], axis=1)  # (2, 2)
    axes.set_xlim(*limits[0])
    axes.set_ylim(*limits[1])
    axes.set_aspect("equal", adjustable="box")


def _plane(axes, theme: Theme, xlim, ylim, step: float = 1):
    """Equal-aspect coordinate plane filling its box, with a faint grid and the coordinate axes through the origin."""
    _fit_equal(axes, xlim, ylim)
    for axis in (axes.xaxis, axes.yaxis):
        axis.set_major_locator(MultipleLocator(step))
    axes.grid(True, color=theme.color("muted"), alpha=GRID_OPACITY, linewidth=theme.width(1))
    axes.set_axisbelow(True)
    for line in (axes.axhline, axes.axvline):
        line(0, color=theme.color("muted"), linewidth=theme.width(1), zorder=1)


def _arrow(axes, start, end, theme: Theme, role: str, width: float = 2, **style):
    """An arrow from start to end in data coordinates, its head sized like the live renderer's (8 + 2·width px)."""
    head = 8 + 2 * width
    patch = FancyArrowPatch(tuple(start), tuple(end), shrinkA=0, shrinkB=0, mutation_scale=1,
                            arrowstyle=f"-|>,head_length={theme.width(head)},head_width={theme.width(0.45 * head)}",
                            color=theme.color(role), linewidth=theme.width(width), zorder=style.pop("zorder", 4),
                            joinstyle="miter", capstyle="butt", **style)
    axes.add_patch(patch)
    return patch


def _flow(axes, points, theme: Theme, role: str, width: float = 1.5, head: bool = True):
    """A polyline through points (data coordinates), ending in an arrowhead when `head`."""
    style = f"-|>,head_length={theme.width(9)},head_width={theme.width(4)}" if head else "-"
    path = CurvePath(np.asarray(points, dtype=float))
    axes.add_patch(FancyArrowPatch(path=path, arrowstyle=style, mutation_scale=1, color=theme.color(role),
                                   linewidth=theme.width(width), joinstyle="miter", capstyle="butt", zorder=2))


def _text(axes, xy, content: str, theme: Theme, role: str = "ink", kind: str = "mark_label", offset=(0, 0),
          **style):
    """A label at xy (data coordinates), nudged by `offset` px; alignment and weight go through **style."""
    style.setdefault("ha", "center")
    style.setdefault("va", "center")
    # Offsets in points, not pixels: the SVG backend draws at 72 dpi, so "offset pixels" would shrink there.
    return axes.annotate(content, xy, xytext=[theme.width(d) for d in offset], textcoords="offset points",
                         color=theme.color(role), fontsize=theme.font(kind), zorder=style.pop("zorder", 6), **style)


def _right_angle(axes, corner, first, second, size: float, theme: Theme):
    """The small square that marks a right angle at `corner` between unit directions first and second."""
    corner, first, second = (np.asarray(p, dtype=float) for p in (corner, first, second))
    square = [corner + size * first, corner + size * (first + second), corner + size * second]
    axes.plot(*np.transpose(square), color=theme.color("ink"), linewidth=theme.width(1), zorder=3)


def _circle_line(radius: float, start: float = 0.0, stop: float = 2 * math.pi, samples: int = 181):
    """Points (x, y) of an arc of the circle of `radius` about the origin."""
    turn = np.linspace(start, stop, samples)  # (samples,)
    return radius * np.cos(turn), radius * np.sin(turn)


def _box(axes, centre, size, label: str, theme: Theme, role: str, kind: str = "label"):
    """A rounded box (diagram units are px) tinted with its role, its label centred inside."""
    (x, y), (width, height) = centre, size
    corner, shape = (x - width / 2, y - height / 2), "round,pad=0,rounding_size=6"
    # Tint and outline apart, so the fill's opacity does not fade the outline.
    axes.add_patch(FancyBboxPatch(corner, width, height, boxstyle=shape, facecolor=theme.color(role),
                                  alpha=FILL_OPACITY, edgecolor="none", zorder=3))
    axes.add_patch(FancyBboxPatch(corner, width, height, boxstyle=shape, facecolor="none",
                                  edgecolor=theme.color(role), linewidth=theme.width(1.5), zorder=3))
    _text(axes, (x, y), label, theme, kind=kind)


def _join(axes, centre, theme: Theme, role: str = "primary", radius: float = 11):
    """The ⊕ where a branch's output is added to the stream."""
    axes.add_patch(Circle(centre, radius, facecolor="none", edgecolor=theme.color(role), linewidth=theme.width(2),
                          zorder=5))
    x, y = centre
    axes.plot([x - radius * 0.6, x + radius * 0.6], [y, y], color=theme.color(role), linewidth=theme.width(2), zorder=5)
    axes.plot([x, x], [y - radius * 0.6, y + radius * 0.6], color=theme.color(role), linewidth=theme.width(2), zorder=5)


def _legend(axes, theme: Theme, entries, **placement):
    """A frameless legend of (role, label, style) entries; style is 'line', 'dashed' or 'dot'."""
    handles = []
    for role, label, style in entries:
        if style == "dot":
            handle = Line2D([], [], linestyle="none", marker="o", markersize=theme.width(7), color=theme.color(role))
        else:
            handle = Line2D([], [], color=theme.color(role), linewidth=theme.width(2.5),
                            linestyle="--" if style == "dashed" else "-")
        handles.append((handle, label))
    legend = axes.legend(*zip(*handles), frameon=False, fontsize=theme.font("legend"), handlelength=1.8,
                         labelcolor=theme.color("ink"), **placement)
    legend.set_zorder(7)
    return legend


def _axis_labels(axes, theme: Theme, xlabel: str, ylabel: str):
    axes.set_xlabel(xlabel, fontsize=theme.font("label"))
    axes.set_ylabel(ylabel, fontsize=theme.font("label"))


def _title(axes, content: str, theme: Theme, role: str = "ink"):
    axes.set_title(content, fontsize=theme.font("title"), color=theme.color(role), pad=6)


# ---- sandbox views: where a lesson's picture is a sandbox's own scene ------------------------------------------------

READOUT_ROW, READOUT_GAP = 18, 8  # px per line of readouts under a sandbox view, and the space above them


def _readout_lines(description: dict) -> list[str]:
    """A view's readouts, as the page lists them under a sandbox, wrapped to the plot's width (widths estimated)."""
    room = (FIGURE_WIDTH - MARGINS["left"] - MARGINS["right"]) / (FONT_PX["tick"] * STYLE["legend"]["char_width"])
    lines = []
    for item in (f"{readout['label']} {readout['text']}" for readout in description["readouts"]):
        if lines and len(lines[-1]) + 3 + len(item) <= room:
            lines[-1] += "   " + item
        else:
            lines.append(item)
    return lines


def _sandbox_views(theme: Theme, name: str, views: list[dict], height: int):
    """The sandbox `name` at each set of values, one view under the other, each with its readouts below it.

    Drawn from the sandbox's own description by the renderer of its static view, so the picture and the sandbox
    the lesson places beside it cannot tell different stories.
    """
    sandbox = get_sandbox(name)
    descriptions = [sandbox.render(values) for values in views]
    lines = [_readout_lines(description) for description in descriptions]
    bands = [READOUT_GAP + len(rows) * READOUT_ROW for rows in lines]  # (views,) px under each view
    total = len(views) * height + sum(bands)
    figure = new_figure(theme, total)
    top = 0
    for description, rows, band in zip(descriptions, lines, bands):
        top += height
        draw_into(Canvas(theme, height, figure, bottom=total - top), description)
        top += band
        under = Canvas(theme, band, figure, bottom=total - top)
        for row, text in enumerate(rows):
            under.text(MARGINS["left"], READOUT_GAP + (row + 0.5) * READOUT_ROW, text, size=FONT_PX["tick"])
    return figure


# ---- 1. magnitude and direction -------------------------------------------------------------------------------------


@illustration("magnitude_vs_direction", alt=(
    "Left: two arrows from the origin on one ray, h = [3, 4] of length 5 and 3h = [9, 12] of length 15. Right: "
    "their common direction, the unit vector u = [0.6, 0.8] on the circle of radius 1."))
def magnitude_vs_direction(theme: Theme):
    """[3, 4] and [9, 12]: two lengths, one direction u = h/‖h‖ (RMSNorm's output divided by √d)."""
    figure = new_figure(theme, height=360)
    short, long = np.array([3.0, 4.0]), np.array([9.0, 12.0])
    direction = rmsnorm(short, eps=0) / RADIUS  # (2,) N(h) = √d·u, so this is u
    lengths = np.linalg.norm([short, long], axis=1)  # (2,)

    left = _panel(figure, 48, 40, 330, 292)
    _plane(left, theme, (-0.5, 10.5), (-0.5, 13), step=2)
    _arrow(left, (0, 0), long, theme, "secondary", width=4, zorder=3)
    _arrow(left, (0, 0), short, theme, "primary", width=2.5)
    _text(left, 0.8 * long, f"3h = {_vector(long)}\n‖3h‖ = {_number(lengths[1])}", theme, "secondary",
          offset=(-24, 0), ha="right", multialignment="left")
    _text(left, short, f"h = {_vector(short)}\n‖h‖ = {_number(lengths[0])}", theme, "primary", offset=(12, -6),
          ha="left", va="top", multialignment="left")
    _title(left, "two lengths …", theme)

    right = _panel(figure, 420, 40, 200, 292)
    _plane(right, theme, (-1.3, 1.3), (-1.3, 1.3), step=1)
    right.plot(*_circle_line(1.0), color=theme.color("muted"), linewidth=theme.width(1.5), linestyle="--")
    right.plot(*np.transpose([(0, 0), 1.35 * direction]), color=theme.color("muted"), linestyle=":",
               linewidth=theme.width(1.5))
    _arrow(right, (0, 0), direction, theme, "accent", width=3)
    _text(right, direction, f"u = {_vector(direction)}", theme, "accent", offset=(0, 30), va="bottom")
    _text(right, (0, -1), "radius 1", theme, "muted", kind="tick", offset=(0, 12))
    _title(right, "… one direction u = h/‖h‖", theme)
    return figure


# ---- 2. RMSNorm puts every vector on one circle --------------------------------------------------------------------


@illustration("rmsnorm_sphere", alt=(
    "Six arrows of different lengths and directions and, on a dashed circle of radius √2, the dot where RMSNorm "
    "sends each one: along the same ray, at length √2 whether the arrow was longer or shorter."))
def rmsnorm_sphere(theme: Theme):
    """RMSNorm (γ = 1, ε = 0) maps every vector along its own ray onto the circle of radius √d = √2."""
    figure = new_figure(theme, height=400)
    inputs = np.array([[3.0, 4.0], [0.6, 0.8], [-5.0, 2.0], [-0.6, -0.7], [2.5, -3.0], [5.5, 0.8]])  # (6, 2)
    images = rmsnorm(inputs, eps=0)  # (6, 2) all at length √2
    axes = plot_axes(figure, theme)
    _plane(axes, theme, (-6, 6), (-3.6, 4.4), step=1)
    axes.plot(*_circle_line(RADIUS), color=theme.color("muted"), linewidth=theme.width(1.5), linestyle="--")
    for h, image in zip(inputs, images):
        reach = max(np.linalg.norm(h), RADIUS)  # the ray from the origin past both h and N(h)
        axes.plot(*np.transpose([h, image * reach / RADIUS]), color=theme.color("muted"), linestyle=":",
                  linewidth=theme.width(1.5), zorder=2)
        _arrow(axes, (0, 0), h, theme, "primary", width=2)
    axes.plot(*images.T, linestyle="none", marker="o", markersize=theme.width(9), color=theme.color("secondary"),
              zorder=5)
    same = images[0]
    axes.annotate(f"N([3, 4]) = N([0.6, 0.8])\n= {_vector(same, 3)}", same, xytext=(-0.9, 3.2), ha="right",
                  va="center", multialignment="left", color=theme.color("secondary"), fontsize=theme.font("tick"),
                  arrowprops={"arrowstyle": "-", "color": theme.color("secondary"), "linewidth": theme.width(1),
                              "shrinkA": 4, "shrinkB": 6})
    _legend(axes, theme, [("primary", "h: inputs of any length", "line"),
                          ("secondary", "N(h) = √d · h/‖h‖", "dot"),
                          ("muted", f"circle of radius √d = √2 ≈ {_number(RADIUS, 4)}", "dashed")],
            loc="lower left")
    _axis_labels(axes, theme, "x₁", "x₂")
    return figure


# ---- 3. softmax and the scale of the scores -------------------------------------------------------------------------


@illustration("attention_scale", sandbox="attention_scale", alt=(
    "Bars of attention weights on two key tokens: for scores [1, 2] (s = 1) the weights are 0.269 and 0.731; for the "
    "same scores ten times larger, [10, 20] (s = √10), 0.000045 and 0.999955: the order is unchanged but one key "
    "takes almost all the weight."))
def attention_scale(theme: Theme):
    """The attention_scale sandbox at s = √10: scores [10, 20] beside [1, 2], a blend turned into a near one-hot pick."""
    return _sandbox_views(theme, "attention_scale", [{"qk_scale": math.sqrt(10)}], height=320)


# ---- 4. where the norm sits -----------------------------------------------------------------------------------------


def _prenorm_row(axes, theme: Theme, stream_y: float):
    """h → N → F → (+ h): the branch reads a normalised copy, the stream runs straight through."""
    branch_y, join_x = stream_y + 52, 470
    _flow(axes, [(168, stream_y), (join_x - 11, stream_y)], theme, "primary", width=3, head=False)
    _flow(axes, [(join_x + 11, stream_y), (606, stream_y)], theme, "primary", width=3)
    _flow(axes, [(210, stream_y), (210, branch_y), (262, branch_y)], theme, "ink")
    _box(axes, (290, branch_y), (56, 30), "N", theme, "accent")
    _flow(axes, [(318, branch_y), (352, branch_y)], theme, "ink")
    _box(axes, (380, branch_y), (56, 30), "F", theme, "secondary")
    _flow(axes, [(408, branch_y), (join_x, branch_y), (join_x, stream_y + 11)], theme, "ink")
    _join(axes, (join_x, stream_y), theme)


def _postnorm_row(axes, theme: Theme, stream_y: float):
    """h → F → (+ h) → N: the add's result, the stream itself, is normalised."""
    branch_y, join_x = stream_y + 52, 470
    _flow(axes, [(168, stream_y), (join_x - 11, stream_y)], theme, "primary", width=3, head=False)
    _flow(axes, [(join_x + 11, stream_y), (512, stream_y)], theme, "primary", width=3, head=False)
    _box(axes, (540, stream_y), (56, 30), "N", theme, "accent")
    _flow(axes, [(568, stream_y), (606, stream_y)], theme, "primary", width=3)
    _flow(axes, [(210, stream_y), (210, branch_y), (352, branch_y)], theme, "ink")
    _box(axes, (380, branch_y), (56, 30), "F", theme, "secondary")
    _flow(axes, [(408, branch_y), (join_x, branch_y), (join_x, stream_y + 11)], theme, "ink")
    _join(axes, (join_x, stream_y), theme)


def _placement_labels(axes, theme: Theme, stream_y: float, name: str, formula: str, note: str):
    _text(axes, (20, stream_y + 92), name, theme, kind="title", ha="left", fontweight="bold")
    _text(axes, (20, stream_y + 70), formula, theme, ha="left")
    _text(axes, (160, stream_y), "hₗ", theme, "primary", kind="label", ha="right")
    _text(axes, (612, stream_y), "hₗ₊₁", theme, "primary", kind="label", ha="left")
    _text(axes, (387, stream_y - 26), note, theme, "muted", kind="tick")


@illustration("prenorm_vs_postnorm", alt=(
    "Two block diagrams. Pre-norm: the residual stream runs straight from h to the add, and a side branch applies "
    "the norm N, then F, and adds the result. Post-norm: the branch applies F alone, and N sits on the stream "
    "itself after the add."))
def prenorm_vs_postnorm(theme: Theme):
    """The two placements of the norm: on the branch's input (pre) or on the stream after the add (post)."""
    figure = new_figure(theme, height=340)
    axes = _canvas(figure)
    pre_y, post_y = 220, 58
    _prenorm_row(axes, theme, pre_y)
    _postnorm_row(axes, theme, post_y)
    _placement_labels(axes, theme, pre_y, "Pre-norm", "hₗ₊₁ = hₗ + F(N(hₗ))",
                      "nothing on the residual path but the add: its gradient keeps a plain identity term")
    _placement_labels(axes, theme, post_y, "Post-norm", "hₗ₊₁ = N(hₗ + F(hₗ))",
                      "the stream itself passes through N, and so does every gradient along it")
    axes.plot([20, 620], [(pre_y + post_y) / 2 + 26] * 2, color=theme.color("muted"), linewidth=theme.width(1),
              alpha=GRID_OPACITY * 2)
    return figure


# ---- 6. the two projection matrices ---------------------------------------------------------------------------------


def _grid_points(reach: int = 2):
    """Integer points of the square [−reach, reach]², (n, 2)."""
    steps = np.arange(-reach, reach + 1, dtype=float)
    return np.array([(x, y) for y in steps for x in steps])  # (n, 2)


def _matrix_panel(axes, theme: Theme, points, images, role: str, lines):
    """Points (muted) joined to their images (role) on the plane, with the lines of u and ⊥ u dashed."""
    _plane(axes, theme, (-2.9, 2.9), (-2.9, 2.9), step=2)
    for direction, line_role in lines:
        axes.plot(*np.transpose([-4 * direction, 4 * direction]), color=theme.color(line_role), linestyle="--",
                  linewidth=theme.width(1.5), zorder=2)
    if images is not None:
        gaps = np.full_like(points, np.nan)  # a NaN row breaks the line: one path for every segment
        segments = np.stack([points, images, gaps], axis=1).reshape(-1, 2)  # (3n, 2) start, end, break
        axes.plot(*segments.T, color=theme.color("muted"), linewidth=theme.width(1), alpha=0.6, zorder=2)
        axes.plot(*points.T, linestyle="none", marker="o", markersize=theme.width(4), color=theme.color("muted"),
                  zorder=3)
    shown = points if images is None else images
    axes.plot(*shown.T, linestyle="none", marker="o", markersize=theme.width(7), color=theme.color(role), zorder=4)


@illustration("projection_matrices", alt=(
    "Three panels of a square grid of points. Left: the grid, with u = [0.6, 0.8] and the dashed lines along u and "
    "across it. Middle: uuᵀ moves every point straight onto the line of u. Right: I − uuᵀ moves every point onto "
    "the line perpendicular to u."))
def projection_matrices(theme: Theme):
    """A grid of points under P = uuᵀ (onto the line of u) and under I − P (onto the line across u)."""
    figure = new_figure(theme, height=310)
    u = np.array([0.6, 0.8])
    across = rejection_matrix(u) @ np.array([0.0, 1.0])
    across /= np.linalg.norm(across)  # (2,) a unit vector ⊥ u
    points = _grid_points()  # (25, 2)
    along_u = points @ projection_matrix(u).T  # (25, 2) P x for every row x
    across_u = points @ rejection_matrix(u).T  # (25, 2) (I − P) x
    lines = [(u, "good"), (across, "secondary")]
    panels = [("x: a grid of points", None, "primary"), ("P x = u uᵀ x", along_u, "good"),
              ("(I − P) x", across_u, "secondary")]
    for index, (title, images, role) in enumerate(panels):
        axes = _panel(figure, 40 + index * 204, 66, 188, 204)
        _matrix_panel(axes, theme, points, images, role, lines)
        if index:
            axes.yaxis.set_major_formatter(NullFormatter())
        _title(axes, title, theme, role if images is not None else "ink")
        if images is None:
            _arrow(axes, (0, 0), u, theme, "accent", width=3, zorder=5)
            _text(axes, u, "u", theme, "accent", offset=(-4, 8), ha="right", va="bottom", fontweight="bold")
    figure.text(0.5, 0.045, "P keeps the part along u; I − P keeps the part across u; the two parts add up to x.",
                ha="center", fontsize=theme.font("label"), color=theme.color("muted"))
    return figure


# ---- 7. the Jacobian of RMSNorm -------------------------------------------------------------------------------------


def _displacements(u, sideways, step: float):
    """Three small steps at h by name: straight out along u, sideways, and a slant between out and back-sideways."""
    slant = (u - sideways) / math.sqrt(2)
    return {"along h": (step * u, "warn"), "sideways": (step * sideways, "good"),
            "at 45°": (step * slant, "secondary")}


def _tangent_scene(axes, theme: Theme, h, normalised, sideways, reach: float):
    """The circle of radius √d, the ray of h, N(h) and the tangent line there (± reach along it)."""
    axes.plot(*_circle_line(RADIUS), color=theme.color("muted"), linewidth=theme.width(1.5), linestyle="--")
    axes.plot(*np.transpose([normalised - reach * sideways, normalised + reach * sideways]),
              color=theme.color("ink"), linewidth=theme.width(1), zorder=2)
    axes.plot(*normalised, marker="o", markersize=theme.width(7), color=theme.color("ink"), zorder=5)


def _jacobian_overview(axes, theme: Theme, h, normalised, sideways, steps, magnify: float, window: float):
    """h with the three steps dh at its tip, N(h) on the circle, and the square the close-up shows."""
    _plane(axes, theme, (-0.5, 5.3), (-0.5, 5.8), step=1)
    _tangent_scene(axes, theme, h, normalised, sideways, reach=1.6)
    _arrow(axes, (0, 0), h, theme, "primary", width=2.5, zorder=3)
    for dh, role in steps.values():
        _arrow(axes, h, h + magnify * dh, theme, role, width=2, zorder=5)
    corner = normalised - window
    axes.add_patch(Rectangle(tuple(corner), 2 * window, 2 * window, facecolor="none", edgecolor=theme.color("ink"),
                             linewidth=theme.width(1), linestyle=(0, (2, 2)), zorder=6))
    _text(axes, 0.6 * h, f"h = {_vector(h)}", theme, "primary", offset=(-10, 6), ha="right", va="bottom")
    _text(axes, h, f"dh at h (×{_number(magnify)})", theme, "ink", kind="tick", offset=(10, -16), ha="left", va="top")
    _text(axes, normalised - 1.6 * sideways, "tangent at N(h)", theme, "ink", kind="tick", offset=(4, -2),
          ha="left", va="top")
    _text(axes, (RADIUS * math.cos(-0.3), RADIUS * math.sin(-0.3)), "radius √2", theme, "muted", kind="tick",
          offset=(6, 0), ha="left")
    _axis_labels(axes, theme, "x₁", "x₂")


def _jacobian_closeup(axes, theme: Theme, h, normalised, sideways, images, magnify: float, window: float):
    """Around N(h): the images J·dh, on the tangent line, and a ring where J·dh = 0."""
    _fit_equal(axes, (normalised[0] - window, normalised[0] + window), (normalised[1] - window, normalised[1] + window))
    axes.xaxis.set_major_locator(NullLocator())
    axes.yaxis.set_major_locator(NullLocator())
    axes.plot(*np.transpose([(0, 0), 2 * normalised]), color=theme.color("primary"), linewidth=theme.width(2.5),
              alpha=0.5, zorder=1)
    _tangent_scene(axes, theme, h, normalised, sideways, reach=2 * window)
    for image, role in images:
        if np.linalg.norm(image) > 1e-12:
            _arrow(axes, normalised, normalised + magnify * image, theme, role, width=2.5, zorder=6)
        else:
            axes.plot(*normalised, marker="o", markersize=theme.width(18), markerfacecolor="none",
                      color=theme.color(role), markeredgewidth=theme.width(2.5), zorder=6)
            _text(axes, normalised, "J·dh = 0", theme, role, kind="tick", offset=(-16, -4), ha="right")
    _text(axes, normalised, "N(h)", theme, "ink", offset=(36, 2), fontweight="bold")
    _title(axes, f"close to N(h): J·dh (×{_number(magnify)})", theme)


@illustration("jacobian_tangent_plane", alt=(
    "The vector h = [3, 4], the circle of radius √2 and N(h) on it with the circle's tangent line there. Three small "
    "steps at the tip of h, and in a close-up around N(h) their images under RMSNorm's Jacobian: the step along h "
    "maps to zero, the sideways step maps onto the tangent line shrunk by √2/5 ≈ 0.28, the slanted one keeps only "
    "its sideways part."))
def jacobian_tangent_plane(theme: Theme):
    """J = (√d/‖h‖)(I − uuᵀ) at h = [3, 4]: steps along h vanish, sideways ones are scaled by √2/5 ≈ 0.28."""
    figure = new_figure(theme, height=440)
    h = np.array([3.0, 4.0])
    normalised, jacobian = rmsnorm(h, eps=0), rmsnorm_jacobian(h, eps=0)  # (2,), (2, 2)
    u = normalised / RADIUS
    sideways = np.array([-u[1], u[0]])  # (2,) u turned a quarter turn: the tangent direction at N(h)
    step, magnify, window = 0.1, 20, 0.65  # ‖dh‖; how much longer dh and J·dh are drawn; the close-up's half-side
    steps = _displacements(u, sideways, step)
    images = [(jacobian @ dh, role) for dh, role in steps.values()]  # first-order changes of N(h)
    _jacobian_overview(_panel(figure, 56, 48, 330, 372), theme, h, normalised, sideways, steps, magnify, window)
    _jacobian_closeup(_panel(figure, 414, 190, 210, 210), theme, h, normalised, sideways, images, magnify, window)
    gain = np.linalg.norm(jacobian @ sideways)  # how much a unit sideways step is scaled: √d/‖h‖
    legend_axes = _panel(figure, 404, 8, 236, 150)
    legend_axes.set_axis_off()
    _legend(legend_axes, theme, [(role, f"dh {name}", "line") for name, (_, role) in steps.items()],
            loc="upper left", title=f"‖dh‖ = {_number(step)}", title_fontsize=theme.font("legend"))
    summary = f"J = (√d/‖h‖)(I − uuᵀ)\nalong h → 0\nsideways → × √2/{_number(np.linalg.norm(h))} ≈ {gain:.2f}"
    legend_axes.text(0.04, 0.02, summary, transform=legend_axes.transAxes, ha="left", va="bottom",
                     fontsize=theme.font("tick"), color=theme.color("ink"), linespacing=1.5)
    return figure


# ---- 8. a curve is almost its tangent -------------------------------------------------------------------------------


@illustration("tangent_zoom", sandbox="tangent_zoom", alt=(
    "Three windows around x₀ = 1 on the curve x² and its tangent line, one under the other, each a quarter as wide "
    "as the last (half-widths 1, 1/4 and 1/16). The shaded gap between curve and tangent shrinks from 1 to 0.0625 "
    "to 0.0039: sixteen times smaller per four-fold zoom, so max gap / w² stays at 1."))
def tangent_zoom(theme: Theme):
    """The tangent_zoom sandbox (x² at x₀ = 1) at zooms 1, 3 and 5: half-widths 1, 1/4, 1/16, the gap 16× smaller each."""
    return _sandbox_views(theme, "tangent_zoom", [{"zoom": zoom} for zoom in (1, 3, 5)], height=150)


# ---- 9. a sideways nudge barely changes the length ------------------------------------------------------------------


def _nudge_triangle(axes, theme: Theme, r: float, drawn_eps: float):
    """Length r along x₁, a sideways nudge (drawn enlarged), the new length, and the arc of radius r."""
    tip, nudged = np.array([r, 0.0]), np.array([r, drawn_eps])
    angle = math.atan2(drawn_eps, r)
    axes.plot(*_circle_line(r, -0.1, angle + 0.14, 60), color=theme.color("muted"), linestyle="--",
              linewidth=theme.width(1.5))
    on_arc = r * nudged / np.linalg.norm(nudged)
    axes.plot(*np.transpose([(0, 0), on_arc]), color=theme.color("good"), linewidth=theme.width(2.5))
    axes.plot(*np.transpose([on_arc, nudged]), color=theme.color("accent"), linewidth=theme.width(6),
              solid_capstyle="butt", zorder=5)
    _arrow(axes, (0, 0), tip, theme, "primary", width=2.5)
    _arrow(axes, tip, nudged, theme, "secondary", width=2)
    _right_angle(axes, tip, (-1, 0), (0, 1), 0.25, theme)
    _text(axes, tip / 2, f"r = {_number(r)}", theme, "primary", offset=(0, -8), va="top")
    _text(axes, (tip + nudged) / 2, "ε", theme, "secondary", kind="title", offset=(8, 0), ha="left")
    _text(axes, nudged / 2, "√(r² + ε²)", theme, "good", offset=(-6, 8), ha="right", va="bottom")
    _text(axes, (on_arc + nudged) / 2, "Δr", theme, "accent", kind="title", offset=(4, 16), va="bottom",
          fontweight="bold")
    _text(axes, (0.55 * r, r * math.sin(-0.1) - 0.35), "arc of radius r", theme, "muted", kind="tick", ha="left")
    _text(axes, (r / 2, -1.5), "not to scale: ε drawn enlarged", theme, "muted", kind="tick")


def _length_change_plot(axes, theme: Theme, r: float, marked, changes):
    """Δr against ε on log-log axes: exact, the ε²/(2r) estimate, and ε itself for contrast."""
    eps = np.geomspace(0.01, 2, 80)  # (80,)
    axes.loglog(eps, eps, color=theme.color("muted"), linestyle=":", linewidth=theme.width(2))
    axes.loglog(eps, perpendicular_length_change(r, eps), color=theme.color("primary"), linewidth=theme.width(2.5))
    axes.loglog(eps, perpendicular_length_change_approx(r, eps), color=theme.color("secondary"), linestyle="--",
                linewidth=theme.width(2))
    axes.plot(marked, changes, linestyle="none", marker="o", markersize=theme.width(8), color=theme.color("accent"),
              zorder=5)
    for eps_value, change, nudge in zip(marked, changes, ((10, -2), (-10, 2))):
        _text(axes, (eps_value, change), f"ε = {_number(eps_value)}\nΔr = {_number(change, 2)}", theme, "accent",
              kind="tick", offset=nudge, ha="left" if nudge[0] > 0 else "right", va="top" if nudge[0] > 0 else "bottom")
    axes.set_xlim(0.01, 2)
    axes.set_ylim(1e-5, 3)
    axes.xaxis.set_major_locator(FixedLocator([0.01, 0.1, 1]))
    axes.xaxis.set_major_formatter(lambda x, _: _number(x))
    axes.yaxis.set_major_locator(FixedLocator([1e-5, 1e-3, 1e-1]))
    axes.yaxis.set_major_formatter(lambda y, _: {1e-5: "10⁻⁵", 1e-3: "10⁻³", 1e-1: "10⁻¹"}.get(y, ""))
    for axis in (axes.xaxis, axes.yaxis):
        axis.set_minor_locator(NullLocator())
        axis.set_minor_formatter(NullFormatter())
    _axis_labels(axes, theme, "sideways nudge ε", "Δr")


@illustration("perpendicular_second_order", alt=(
    "Left: a vector of length r = 5, a small sideways nudge ε at its tip, and the new vector of length "
    "√(r² + ε²), just outside the circle of radius r. Right: the length change Δr against ε on log-log axes, a line "
    "of slope 2 far below ε itself: ε = 0.1 gives Δr ≈ 0.001 and ε = 0.05 gives 0.00025, a quarter of it."))
def perpendicular_second_order(theme: Theme):
    """r = 5 nudged sideways by ε: Δr = √(r² + ε²) − r ≈ ε²/(2r), so halving ε quarters Δr."""
    figure = new_figure(theme, height=380)
    r, marked = 5.0, (0.1, 0.05)
    left = _panel(figure, 16, 84, 280, 250)
    _fit_equal(left, (-0.3, 6.4), (-1.8, 3.0))
    left.set_axis_off()
    _nudge_triangle(left, theme, r, drawn_eps=2.2)
    _title(left, "a sideways nudge at the tip", theme)
    right = _panel(figure, 370, 84, 250, 250)
    changes = perpendicular_length_change(r, np.array(marked))  # (2,) the essay's 0.001 and 0.00025
    _length_change_plot(right, theme, r, marked, changes)
    _legend(right, theme, [("primary", "Δr = √(r² + ε²) − r", "line"), ("secondary", "ε²/(2r)", "dashed"),
                           ("muted", "ε (a first-order change)", "line")], loc="upper left")
    _title(right, f"Δr against ε, r = {_number(r)}", theme)
    quarter = _number(changes[0] / changes[1], 3)
    figure.text(0.5, 0.04, f"Halve ε and Δr falls {quarter}×: the change is second order.", ha="center",
                fontsize=theme.font("label"), color=theme.color("muted"))
    return figure


# ---- 11. the four pillars -------------------------------------------------------------------------------------------


def _pillar_tag(axes, centre, content: str, theme: Theme, role: str):
    """A small outlined tag with the pillar's number."""
    x, y = centre
    width = 10 + 7.5 * len(content)
    axes.add_patch(FancyBboxPatch((x - width / 2, y - 9), width, 18, boxstyle="round,pad=0,rounding_size=9",
                                  facecolor="none", edgecolor=theme.color(role), linewidth=theme.width(1.5), zorder=6))
    _text(axes, centre, content, theme, role, kind="tick", fontweight="bold")


def _block_diagram(axes, theme: Theme, stream_y: float):
    """The pre-norm block: stream, two branches (RMSNorm → attention, RMSNorm → MLP) and their ⊕ joins."""
    branch_y = stream_y + 78
    joins = (330, 560)
    _flow(axes, [(44, stream_y), (joins[0] - 11, stream_y)], theme, "primary", width=3.5, head=False)
    _flow(axes, [(joins[0] + 11, stream_y), (joins[1] - 11, stream_y)], theme, "primary", width=3.5, head=False)
    _flow(axes, [(joins[1] + 11, stream_y), (606, stream_y)], theme, "primary", width=3.5)
    for split, norm_x, box_x, box_width, label, join in ((70, 118, 240, 120, "Attention", joins[0]),
                                                        (356, 404, 500, 76, "MLP", joins[1])):
        _flow(axes, [(split, stream_y), (split, branch_y), (norm_x - 36, branch_y)], theme, "ink")
        _box(axes, (norm_x, branch_y), (72, 30), "RMSNorm", theme, "accent", kind="tick")
        _flow(axes, [(norm_x + 36, branch_y), (box_x - box_width / 2, branch_y)], theme, "ink")
        _box(axes, (box_x, branch_y), (box_width, 44), label, theme, "secondary")
        _flow(axes, [(box_x + box_width / 2, branch_y), (join, branch_y), (join, stream_y + 11)], theme, "ink")
        _join(axes, (join, stream_y), theme)
        _pillar_tag(axes, (norm_x, branch_y + 30), "2", theme, "accent")
    _text(axes, (38, stream_y), "h", theme, "primary", kind="label", ha="right")
    _text(axes, (612, stream_y), "h′", theme, "primary", kind="label", ha="left")
    _pillar_tag(axes, (150, stream_y + 18), "1", theme, "primary")
    _text(axes, (164, stream_y + 18), "residual stream", theme, "primary", kind="tick", ha="left")
    return branch_y


def _rope_panel(axes, theme: Theme, centre, radius: float, turned):
    """Pillar 3: one pair of features at positions 0, 1, 2, ... (rows of `turned`), each turned by position × θ."""
    cx, cy = centre
    axes.add_patch(Circle(centre, radius, facecolor="none", edgecolor=theme.color("muted"),
                          linewidth=theme.width(1), linestyle="--", zorder=2))
    first_turn = math.atan2(turned[1, 1], turned[1, 0])
    axes.plot(*(np.array(_circle_line(0.35 * radius, 0, first_turn, 30)) + np.array(centre)[:, None]),
              color=theme.color("ink"), linewidth=theme.width(1))
    _text(axes, (cx + 0.45 * radius * math.cos(first_turn / 2), cy + 0.45 * radius * math.sin(first_turn / 2)), "θ",
          theme, "ink", kind="tick", ha="left", va="bottom")
    for position, pair in enumerate(turned):
        tip = (cx + radius * pair[0], cy + radius * pair[1])
        _arrow(axes, centre, tip, theme, "primary", width=2, alpha=1 - 0.15 * position)
        _text(axes, tip, f"t = {position}", theme, "primary", kind="tick",
              offset=(16 * pair[0], 10 * pair[1] + 2), ha="left" if pair[0] > 0.3 else "right" if pair[0] < -0.3
              else "center")
    _text(axes, (cx, cy - radius), "position t turns each feature pair by t·θ,", theme, "muted", kind="tick",
          offset=(0, -14))
    _text(axes, (cx, cy - radius), "so q·k depends only on the distance m − n", theme, "muted", kind="tick",
          offset=(0, -31))


def _mask_panel(axes, theme: Theme, corner, cell: float, masked):
    """Pillar 4: the causal mask, (T, T) `masked` True where key j is in query i's future and the score is −∞."""
    length = len(masked)
    left, top = corner
    for i in range(length):
        for j in range(length):
            x, y = left + j * cell, top - (i + 1) * cell
            role = "muted" if masked[i, j] else "primary"
            axes.add_patch(Rectangle((x, y), cell, cell, facecolor=theme.color(role),
                                     alpha=0.08 if masked[i, j] else 0.35, edgecolor="none", zorder=2))
            axes.add_patch(Rectangle((x, y), cell, cell, facecolor="none", edgecolor=theme.color("muted"),
                                     linewidth=theme.width(1), zorder=3))
            if masked[i, j]:
                _text(axes, (x + cell / 2, y + cell / 2), "−∞", theme, "muted", kind="tick")
    _text(axes, (left + length * cell / 2, top), "key j →", theme, "ink", kind="tick", offset=(0, 6), va="bottom")
    _text(axes, (left, top - length * cell / 2), "query i ↓", theme, "ink", kind="tick", offset=(-8, 0), ha="right")
    _text(axes, (left + length * cell / 2, top - length * cell), "i reads only keys j ≤ i", theme, "muted",
          kind="tick", offset=(0, -14))


@illustration("four_pillars", alt=(
    "Anatomy of a pre-norm transformer block. Bottom: the residual stream runs straight through two + joins (pillar 1) "
    "while RMSNorm normalises what the attention and MLP branches read (pillar 2). Top left: RoPE turns q and k by "
    "an angle that grows with position (pillar 3). Top right: the causal mask, a grid whose entries above the "
    "diagonal, future keys, are set to −∞ (pillar 4)."))
def four_pillars(theme: Theme):
    """A pre-norm block's four pillars: residual add and RMSNorm, RoPE inside attention, the causal mask."""
    figure = new_figure(theme, height=480)
    axes = _canvas(figure)
    stream_y = 110
    branch_y = _block_diagram(axes, theme, stream_y)
    _text(axes, (320, stream_y - 42), "1 · residual add: the stream runs straight through, an identity path for "
          "signals and gradients", theme, "primary", kind="tick")
    _text(axes, (320, stream_y - 62), "2 · pre-norm: each branch reads an RMSNorm-ed copy, so its input has a "
          "fixed scale", theme, "accent", kind="tick")
    tag_y = branch_y + 22 + 16
    for x, target in ((215, (160, 256)), (265, (475, 264))):  # from the tags on Attention to their panels
        axes.plot([x, target[0]], [tag_y + 9, target[1]], color=theme.color("muted"), linewidth=theme.width(1),
                  linestyle=(0, (3, 3)), zorder=1)
    _pillar_tag(axes, (215, tag_y), "3", theme, "secondary")
    _pillar_tag(axes, (265, tag_y), "4", theme, "secondary")
    _text(axes, (160, 462), "3 · RoPE: turn q and k by position", theme, "secondary", kind="label", fontweight="bold")
    turned = rotate(np.array([[1.0, 0.0]] * 4))  # (T=4, 2) one feature pair at positions 0-3; θ = 1 rad for it
    _rope_panel(axes, theme, (160, 366), 58, turned)
    _text(axes, (475, 462), "4 · causal mask: no peeking ahead", theme, "secondary", kind="label", fontweight="bold")
    positions = np.zeros((5, 2))  # (T, 2) the scores' values do not matter here, only where −∞ goes
    _mask_panel(axes, theme, (415, 422), 24, np.isneginf(attention_scores(positions, positions, causal=True)))
    return figure
