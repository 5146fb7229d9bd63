"""The Jacobian of RMSNorm at h: it drops the part of a small step along h and scales the sideways part by √d/‖h‖."""

import math

import numpy as np

from explainer import figure as fig
from explainer.norms import rmsnorm, rmsnorm_jacobian
from explainer.projection import projection
from explainer.sandbox import FloatParam, sandbox

WIDTH = 2  # d: the vectors here live in the plane
CIRCLE_POINTS = 61  # every 6°: the polygon stays within 0.2 px of the circle at any figure height
RADIUS = math.sqrt(WIDTH)  # where RMSNorm sends every vector when ε = 0
DIRECTION = np.array([0.6, 0.8])  # (2,) the essay's u: h = [3, 4] at length 5
SIDEWAYS = np.array([-0.8, 0.6])  # (2,) u turned a quarter turn anticlockwise: the tangent direction
STEP = 0.1  # ‖dh‖: small enough for the first-order picture to hold
MAGNIFY = 20  # dh and J·dh are drawn this many times longer, or they would be invisible
# Fixed limits around where things happen: dh's tip is at most MAGNIFY·STEP = 2 beyond h's tip (3, 4), and J·dh is
# longest (√2/0.5 · 0.1 · MAGNIFY ≈ 5.7) at the shortest h. x runs as wide as the default plot area allows at equal
# aspect, centred left of h so the legend in the top-right corner covers nothing.
YLIM, X_CENTRE = (-2.6, 6.4), 2.5
PLOT_SHAPE = (fig.FIGURE_WIDTH - fig.MARGINS["left"] - fig.MARGINS["right"]) / (
    fig.DEFAULT_HEIGHT - fig.MARGINS["top"] - fig.MARGINS["bottom"])  # width / height
X_HALF_SPAN = (YLIM[1] - YLIM[0]) * PLOT_SHAPE / 2
XLIM = (X_CENTRE - X_HALF_SPAN, X_CENTRE + X_HALF_SPAN)


@sandbox(
    FloatParam("h_length", "Length of h", 0.5, 5, step=0.1, default=5),
    FloatParam("step_angle", "Direction of dh from h (0° = along h, 90° = sideways)", -180, 180, step=1,
               default=60, unit="°"),
    FloatParam("eps", "ε", 0, 1, step=0.01, default=0),
    title="The Jacobian of RMSNorm keeps only sideways steps",
)
def jacobian_tangent(h_length: float, step_angle: float, eps: float) -> dict:
    """Push h by a small dh: J·dh = (√d/‖h‖)·(sideways part of dh), and a step along h is dropped (J h = 0 at ε = 0)."""
    h = h_length * DIRECTION  # (2,)
    angle = math.radians(step_angle)
    dh = STEP * (math.cos(angle) * DIRECTION + math.sin(angle) * SIDEWAYS)  # (2,)
    along, sideways = projection(dh, h)  # (2,), (2,) radial and tangent parts of dh
    pushed = rmsnorm_jacobian(h, eps=eps) @ dh  # (2,) first-order change of N(h)
    normalised = rmsnorm(h, eps=eps)  # (2,)
    tangent = normalised + np.outer([-20, 20], SIDEWAYS)  # (2, 2) ends of the tangent line at N(h), off the plot
    return fig.figure(
        axes=fig.axes(xlim=XLIM, ylim=YLIM, aspect="equal", xlabel="x₁", ylabel="x₂",
                      xticks=fig.grid_ticks(XLIM, 2), yticks=fig.grid_ticks(YLIM, 2)),
        marks=[
            fig.circle(RADIUS, samples=CIRCLE_POINTS, color="muted", width=1.5, dash=True, label="radius √d = √2"),
            fig.line(tangent[:, 0], tangent[:, 1], color="muted", width=1, label="tangent at N(h)"),
            fig.arrow((0, 0), h, color="primary", label="h"),
            fig.arrow(h, h + MAGNIFY * dh, color="secondary", label=f"dh (×{MAGNIFY})"),
            fig.point(*normalised, color="ink", size=4),
            fig.arrow(normalised, normalised + MAGNIFY * pushed, color="secondary", label=f"J·dh (×{MAGNIFY})"),
            fig.text(XLIM[0] + 0.3, YLIM[0] + 0.4, f"‖dh‖ = {STEP:g}; small arrows drawn ×{MAGNIFY}", color="muted"),
        ],
        readouts=[
            fig.readout("part of dh along h", DIRECTION @ along, digits=4),
            fig.readout("sideways part of dh", SIDEWAYS @ sideways, digits=4),
            fig.readout("‖J·dh‖", np.linalg.norm(pushed), digits=4),
            fig.readout("(√d/‖h‖)·|sideways part|", RADIUS / h_length * np.linalg.norm(sideways), digits=4),
        ],
    )
