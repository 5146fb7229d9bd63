"""Block diagrams of whole models: what the lessons' ablations remove, drawn where it sits.

Diagrams are drawn on a canvas of one data unit per px (640 wide, like every figure of the site) in the theme's
roles: the residual stream in primary, norms in accent, the branches in secondary, the tags that name what an
ablation can remove in warn. The sizes they print (width, heads, depth) come from explainer.ablation, the lab's model.
"""

import numpy as np
from matplotlib.colors import to_rgba
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch
from matplotlib.path import Path as CurvePath

from build_scripts.figures.registry import illustration
from build_scripts.figures.theme import Theme, new_figure
from explainer.ablation import MAX_DEPTH, AblationConfig
from explainer.tasks import LETTERS, SEPARATOR

TINT_OPACITY = 0.15  # box fills: a tint of their role, so the label stays readable on it
STREAM_X = 190  # where the residual stream runs, bottom to top
BRANCH_X = 330  # the centre of the branches' boxes, to the right of the stream


def _canvas(figure):
    """Frameless axes over the whole figure, one data unit per px, origin bottom left."""
    width, height = figure.get_size_inches() * figure.dpi
    axes = figure.add_axes([0, 0, 1, 1])
    axes.set_xlim(0, width)
    axes.set_ylim(0, height)
    axes.set_axis_off()
    return axes


def _label(axes, xy, content: str, theme: Theme, role: str = "ink", kind: str = "label", **style):
    """Text at xy (px), centred unless told otherwise."""
    style.setdefault("ha", "center")
    style.setdefault("va", "center")
    axes.text(*xy, content, color=theme.color(role), fontsize=theme.font(kind), zorder=6, **style)


def _tint(theme: Theme, role: str):
    """A role's colour at TINT_OPACITY, for fills: the outline keeps the full colour."""
    return to_rgba(theme.color(role), TINT_OPACITY)


def _block(axes, centre, size, label: str, theme: Theme, role: str, kind: str = "label"):
    """A rounded box tinted with its role and outlined in it, its (possibly two-line) label centred inside."""
    (x, y), (width, height) = centre, size
    axes.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                                  boxstyle="round,pad=0,rounding_size=6", facecolor=_tint(theme, role),
                                  edgecolor=theme.color(role), linewidth=theme.width(1.5), zorder=3))
    _label(axes, centre, label, theme, kind=kind, linespacing=1.3)


def _path(axes, points, theme: Theme, role: str = "ink", width: float = 1.5, head: bool = True):
    """A polyline through points (px), with an arrowhead at its end when `head`."""
    style = f"-|>,head_length={theme.width(9)},head_width={theme.width(4)}" if head else "-"
    axes.add_patch(FancyArrowPatch(path=CurvePath(np.asarray(points, dtype=float)), arrowstyle=style,
                                   mutation_scale=1, color=theme.color(role), linewidth=theme.width(width),
                                   joinstyle="miter", capstyle="butt", zorder=2))


def _add(axes, centre, theme: Theme, radius: float = 11):
    """The ⊕ where a branch's output joins the stream."""
    axes.add_patch(Circle(centre, radius, facecolor=_tint(theme, "primary"), edgecolor=theme.color("primary"),
                          linewidth=theme.width(2), zorder=5))
    _label(axes, centre, "+", theme, "primary", kind="title", fontweight="bold")


def _tag(axes, anchor, content: str, theme: Theme, side: str = "right"):
    """A rounded tag naming what an ablation removes, joined by a short leader to the part at `anchor`."""
    x, y = anchor
    step = 14 if side == "right" else -14
    width = 16 + 6.6 * len(content)
    left = x + step if side == "right" else x + step - width
    axes.plot([x, x + step], [y, y], color=theme.color("warn"), linewidth=theme.width(1), zorder=2)
    axes.add_patch(FancyBboxPatch((left, y - 10), width, 20, boxstyle="round,pad=0,rounding_size=10",
                                  facecolor="none", edgecolor=theme.color("warn"), linewidth=theme.width(1.5),
                                  zorder=6))
    _label(axes, (left + width / 2, y), content, theme, "warn", kind="tick", fontweight="bold")


def _branch(axes, theme: Theme, leave_y: float, name: str, body_height: float, tags: list[str]) -> float:
    """One pre-norm branch beside the stream: out at leave_y, RMSNorm, the branch, back into a ⊕; returns its y."""
    norm_y = leave_y + 26
    body_y = norm_y + 12 + 20 + body_height / 2  # 20 px of arrow between the norm and the branch
    join_y = body_y + body_height / 2 + 16
    _path(axes, [(STREAM_X, leave_y), (BRANCH_X, leave_y), (BRANCH_X, norm_y - 12)], theme)
    _block(axes, (BRANCH_X, norm_y), (104, 24), "RMSNorm", theme, "accent", kind="tick")
    _tag(axes, (BRANCH_X + 52, norm_y), "norm", theme)
    _path(axes, [(BRANCH_X, norm_y + 12), (BRANCH_X, body_y - body_height / 2)], theme)
    _block(axes, (BRANCH_X, body_y), (150, body_height), name, theme, "secondary")
    for index, tag in enumerate(tags):
        _tag(axes, (BRANCH_X + 75, body_y + 12 - 24 * index), tag, theme)
    _path(axes, [(BRANCH_X, body_y + body_height / 2), (BRANCH_X, join_y), (STREAM_X + 11, join_y)], theme)
    _add(axes, (STREAM_X, join_y), theme)
    _tag(axes, (STREAM_X - 11, join_y), "residual", theme, side="left")
    return join_y


@illustration("decoder_model", alt=(
    "A decoder-only transformer, bottom to top. Tokens enter a token embedding; the residual stream runs up through "
    "a block repeated L times, where one branch reads it through an RMSNorm into causal self-attention with RoPE and "
    "adds its result back, and a second does the same with an RMSNorm and an MLP. A final RMSNorm and the "
    "unembedding give next-token scores. Tags mark what an ablation can remove: norms, residual adds, positions, "
    "the causal mask."))
def decoder_model(theme: Theme):
    """The decoder-only transformer of the lessons, pre-norm blocks and all, with every removable part tagged."""
    lab = AblationConfig()  # the sizes of the lab's model, printed beside the stack
    figure = new_figure(theme, height=470)
    axes = _canvas(figure)
    _label(axes, (STREAM_X, 14), "tokens:  " + "  ".join(LETTERS[:5] + SEPARATOR), theme)
    _path(axes, [(STREAM_X, 26), (STREAM_X, 38)], theme)
    _block(axes, (STREAM_X, 51), (150, 26), "token embedding", theme, "primary")
    frame_bottom = 74
    first = _branch(axes, theme, 90, "causal\nself-attention", 44, ["positions (RoPE)", "causal mask"])
    second = _branch(axes, theme, first + 22, "MLP", 30, [])
    top = second + 22
    axes.add_patch(FancyBboxPatch((52, frame_bottom), 536, top - frame_bottom, boxstyle="round,pad=0,rounding_size=10",
                                  facecolor="none", edgecolor=theme.color("muted"), linewidth=theme.width(1),
                                  linestyle=(0, (4, 3)), zorder=1))
    _label(axes, (576, top - 12), f"block × L   (the lab: L = 1 to {MAX_DEPTH})", theme, "muted", kind="tick",
           ha="right")
    _path(axes, [(STREAM_X, 64), (STREAM_X, first - 11)], theme, "primary", width=3.5, head=False)
    _path(axes, [(STREAM_X, first + 11), (STREAM_X, second - 11)], theme, "primary", width=3.5, head=False)
    _path(axes, [(STREAM_X, second + 11), (STREAM_X, top + 14)], theme, "primary", width=3.5)  # to the final norm
    _label(axes, (STREAM_X - 12, (64 + first) / 2 - 20), "residual\nstream h", theme, "primary", kind="tick",
           ha="right", linespacing=1.3)
    final_y = top + 26
    _block(axes, (STREAM_X, final_y), (104, 24), "RMSNorm", theme, "accent", kind="tick")
    _tag(axes, (STREAM_X + 52, final_y), "norm", theme)
    _path(axes, [(STREAM_X, final_y + 12), (STREAM_X, final_y + 24)], theme)
    _block(axes, (STREAM_X, final_y + 37), (150, 26), "unembedding", theme, "primary")
    _path(axes, [(STREAM_X, final_y + 50), (STREAM_X, final_y + 62)], theme)
    _label(axes, (STREAM_X, final_y + 74), "scores for the next token", theme)
    sizes = f"the lab's model:\nwidth d = {lab.width}\n{lab.heads} attention heads\nMLP 4d = {4 * lab.width} wide"
    _label(axes, (620, 458), sizes, theme, "muted", kind="tick", ha="right", va="top", linespacing=1.4)
    return figure
