"""The shadow of v on u: the part of v along u, and the part perpendicular to it."""

import math

import numpy as np

from explainer import figure as fig
from explainer.projection import projection
from explainer.sandbox import FloatParam, sandbox

LIMIT = 6.5  # both axes run from -LIMIT to LIMIT: v reaches length 6
ESSAY_U_ANGLE = round(math.degrees(math.atan2(0.8, 0.6)), 2)  # 53.13°: u = [0.6, 0.8], the essay's example


def _beside(start: np.ndarray, end: np.ndarray, gap: float = 0.45) -> np.ndarray:
    """A point beside the middle of the segment start→end, off to its left: where the segment's label goes."""
    along = end - start
    normal = np.array([-along[1], along[0]]) / max(np.linalg.norm(along), 1e-9)
    return (start + end) / 2 + gap * normal


@sandbox(
    FloatParam("u_angle", "Direction of u", 0, 180, step=0.01, default=ESSAY_U_ANGLE, unit="°"),
    FloatParam("v_angle", "Direction of v", -180, 180, step=1, default=0, unit="°"),
    FloatParam("v_length", "Length of v", 0.5, 6, step=0.1, default=5),
    title="Projection: the shadow of v on u",
)
def projection_shadow(u_angle: float, v_angle: float, v_length: float) -> dict:
    """Split v into v∥ along the unit vector u and v⊥ perpendicular to it."""
    u = fig.direction(u_angle)  # (2,) unit length
    v = v_length * fig.direction(v_angle)  # (2,)
    parallel, perpendicular = projection(v, u)
    along = 2 * LIMIT * u  # the line through u, drawn across the whole plot
    return fig.figure(
        axes=fig.axes(xlim=(-LIMIT, LIMIT), ylim=(-LIMIT, LIMIT), aspect="equal", xlabel="x₁", ylabel="x₂"),
        marks=[
            fig.line([-along[0], along[0]], [-along[1], along[1]], color="muted", width=1, dash=True),
            fig.line([v[0], parallel[0]], [v[1], parallel[1]], color="muted", width=1, dash=True),
            fig.arrow((0, 0), parallel, color="secondary", width=5, label="v∥ (shadow)"),
            fig.arrow(parallel, v, color="accent"),
            fig.text(*_beside(parallel, v), "v⊥", color="accent", anchor="middle"),
            fig.arrow((0, 0), v, color="primary", label="v"),
            fig.arrow((0, 0), u, color="ink", label="u"),
        ],
        readouts=[
            fig.readout("uᵀv", u @ v),
            fig.readout("‖v∥‖", np.linalg.norm(parallel)),
            fig.readout("‖v⊥‖", np.linalg.norm(perpendicular)),
            fig.readout("uᵀv⊥", u @ perpendicular),
        ],
    )
