"""A sideways nudge ε barely changes a length r: Δr ≈ ε²/(2r), second order, where a nudge along r gives Δr = ε."""

import math

import numpy as np

from explainer import figure as fig
from explainer.projection import perpendicular_length_change, perpendicular_length_change_approx
from explainer.sandbox import FloatParam, sandbox

EPS_LIMITS = (1e-3, 10.0)  # fixed and wider than the slider, so the point moves along curves that stay put
CHANGE_LIMITS = (1e-8, 1e6)  # covers ε²/(2r) for every r; the curves stay below 100, clear of the legend up top
CHANGE_TICKS = [(1e-8, "10⁻⁸"), (1e-6, "10⁻⁶"), (1e-4, "10⁻⁴"), (0.01, "0.01"), (1, "1"), (100, "100"),
                (1e4, "10⁴"), (1e6, "10⁶")]  # every second power of ten
NUDGES = np.geomspace(*EPS_LIMITS, 41)  # (41,) ten per decade: the exact curve's bend near ε = r stays smooth
ENDS = np.array(EPS_LIMITS)  # (2,) Δr = ε and ε²/(2r) are straight lines on log-log axes: their ends draw them


@sandbox(
    FloatParam("r", "Length r", 1, 10, step=0.1, default=5),
    FloatParam("eps", "Sideways nudge ε", 0.01, 3, step=0.01, default=0.1),
    title="A sideways nudge changes a length only at second order",
)
def perpendicular_length(r: float, eps: float) -> dict:
    """Nudge the tip of a length-r vector sideways by ε: its length grows by ε²/(√(r²+ε²)+r) ≈ ε²/(2r), not by ε."""
    exact, approx = perpendicular_length_change(r, eps), perpendicular_length_change_approx(r, eps)
    return fig.figure(
        axes=fig.axes(xlim=EPS_LIMITS, ylim=CHANGE_LIMITS, xscale="log", yscale="log",
                      xlabel="nudge ε", ylabel="change in length Δr", yticks=CHANGE_TICKS),
        marks=[
            fig.line(ENDS, ENDS, color="muted", width=1.5, label="nudge along r: Δr = ε"),
            fig.line(NUDGES, perpendicular_length_change(r, NUDGES), color="primary", label="sideways, exact"),
            fig.line(ENDS, perpendicular_length_change_approx(r, ENDS), color="secondary", dash=True,
                     label="sideways, ε²/(2r)"),
            fig.point(eps, approx, color="secondary", size=4),
            fig.point(eps, exact, color="primary", label=f"ε = {eps:g}"),
        ],
        readouts=[
            fig.readout("exact Δr", exact, digits=8),
            fig.readout("ε²/(2r)", approx, digits=8),
            fig.readout("relative error of ε²/(2r)", 100 * (approx - exact) / exact, unit="%"),
            fig.readout("new length √(r² + ε²)", math.hypot(r, eps), digits=5),
        ],
    )
