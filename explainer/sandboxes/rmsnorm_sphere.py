"""RMSNorm puts every vector on the circle of radius √d, whatever its length: scaling h by c changes nothing."""

import math

import numpy as np

from explainer import figure as fig
from explainer.norms import rmsnorm
from explainer.sandbox import FloatParam, sandbox

WIDTH = 2  # d: the vectors here live in the plane
CIRCLE_POINTS = 61  # every 6°: the polygon stays within 0.2 px of the circle at any figure height
RADIUS = math.sqrt(WIDTH)  # where RMSNorm sends every vector when γ = 1 and ε = 0
LIMIT = 6.5  # y runs from −LIMIT to LIMIT: h reaches length 5
# x runs as wide as the default plot area allows at equal aspect, so the grid and its ticks fill the whole figure.
PLOT_SHAPE = (fig.FIGURE_WIDTH - fig.MARGINS["left"] - fig.MARGINS["right"]) / (
    fig.DEFAULT_HEIGHT - fig.MARGINS["top"] - fig.MARGINS["bottom"])  # width / height
XLIM, YLIM = (-LIMIT * PLOT_SHAPE, LIMIT * PLOT_SHAPE), (-LIMIT, LIMIT)
REACH = 6.0  # c·h longer than this is drawn cut short, so its head stays on the plot
SEPARATE = 0.3  # N(h) gets a label of its own only this far from N(c·h); closer, it is the dot inside N(c·h)
LABEL_GAP = 0.6  # how far beside a point on the circle its label sits


def _clipped(v: np.ndarray) -> tuple[np.ndarray, list[dict]]:
    length = float(np.linalg.norm(v))
    if length <= REACH:
        return v, []
    note = fig.text(0, -LIMIT + 0.45, f"c·h (length {length:.1f}) is drawn cut short at {REACH:g}",
                    color="muted", anchor="middle")
    return v * (REACH / length), [note]


def _beside(at: np.ndarray, side: np.ndarray, content: str, color: str) -> dict:
    x, y = at + LABEL_GAP * side
    anchor = "start" if side[0] > 0.3 else "end" if side[0] < -0.3 else "middle"
    return fig.text(x, y, content, color=color, anchor=anchor)


def _status(moved: float) -> dict:
    if moved < fig.ROUNDING_NOISE:
        return fig.status("SCALE-INVARIANT", "good", "N(c·h) and N(h) are the same point: the length of h is gone.")
    return fig.status("ε AT WORK", "info", "With ε > 0 a short vector lands inside the circle, so the scale shows.")


@sandbox(
    FloatParam("h_angle", "Direction of h", -180, 180, step=0.1, default=53.1, unit="°"),
    FloatParam("h_length", "Length of h", 0.5, 5, step=0.1, default=5),
    FloatParam("scale", "Scale c", 0.1, 4, step=0.1, default=2),
    FloatParam("eps", "ε", 0, 1, step=0.01, default=0),
    title="RMSNorm: every length lands on one circle",
)
def rmsnorm_sphere(h_angle: float, h_length: float, scale: float, eps: float) -> dict:
    """Scale h by c and normalise: with ε = 0, N(c·h) lands on the circle of radius √d exactly where N(h) does."""
    h = h_length * fig.direction(h_angle)  # (2,)
    scaled = scale * h  # (2,)
    normalised, scaled_normalised = rmsnorm(h, eps=eps), rmsnorm(scaled, eps=eps)  # (2,), (2,)
    drawn, notes = _clipped(scaled)
    side = fig.direction(h_angle + 90)  # (2,) labels on the circle sit beside the ray of h, not on it
    moved = float(np.linalg.norm(scaled_normalised - normalised))
    return fig.figure(
        axes=fig.axes(xlim=XLIM, ylim=YLIM, aspect="equal", xlabel="x₁", ylabel="x₂",
                      xticks=fig.grid_ticks(XLIM, 2), yticks=fig.grid_ticks(YLIM, 2)),
        marks=[
            fig.circle(RADIUS, samples=CIRCLE_POINTS, color="muted", width=1.5, dash=True, label="radius √d = √2"),
            fig.arrow((0, 0), drawn, color="muted", width=6, label="c·h"),
            fig.arrow((0, 0), h, color="primary", label="h"),
            fig.point(*scaled_normalised, color="secondary", size=7),
            fig.point(*normalised, color="ink", size=3.5),
            _beside(scaled_normalised, side, "N(c·h)", "secondary"),
            *([_beside(normalised, -side, "N(h)", "ink")] if moved > SEPARATE else []),
            *notes,
        ],
        readouts=[
            fig.readout("‖h‖", np.linalg.norm(h)),
            fig.readout("‖c·h‖", np.linalg.norm(scaled)),
            fig.readout("‖N(c·h)‖", np.linalg.norm(scaled_normalised)),
            fig.readout("‖N(c·h) − N(h)‖", moved),
        ],
        status=_status(moved),
    )

