"""Zoom in on a smooth curve until it looks like its tangent line: the gap between them shrinks like the window²."""

import numpy as np

from explainer import figure as fig
from explainer.sandbox import Choice, FloatParam, IntParam, sandbox
from explainer.taylor import TAYLOR_EXAMPLES, tangent_zoom as zoom_window

# ln x is left out: the widest window (x0 ± 2) would cross x = 0 for most of the x0 slider.
FUNCTIONS = ("square", "cube", "sin", "exp")
WIDEST = 2.0  # half-width of the window at zoom 0; every zoom step halves it
HEADROOM = 1.6  # the y range covers the curve with room to spare, so the legend in the corner hides none of it
DRAW_EVERY = 2  # of the window's 101 samples (the max gap reads them all) the curve is drawn through every 2nd: 51
# points, within 0.35 px of the curve for every function, x₀ and zoom at any figure height; the tangent, a straight
# line, through its two ends


def _half_height(window, value: float, half_width: float) -> float:
    # Never less than the half-width, so a flat tangent still shows the curve straightening rather than filling the box.
    reach = max(np.max(np.abs(window.curve - value)), np.max(np.abs(window.tangent - value)), half_width)
    return HEADROOM * float(reach)


@sandbox(
    Choice("function", "Function f", tuple((name, TAYLOR_EXAMPLES[name].formula) for name in FUNCTIONS), "square"),
    FloatParam("x0", "Point x₀", -2, 2, step=0.1, default=1),
    IntParam("zoom", "Zoom (each step halves the window)", 0, 8, default=0),
    title="Zoom in until the curve looks straight",
)
def tangent_zoom(function: str, x0: float, zoom: int) -> dict:
    """Zoom in on f around x₀: the gap to the tangent line shrinks like w², so max gap / w² settles to |f″(x₀)|/2."""
    example = TAYLOR_EXAMPLES[function]
    half_width = WIDEST * 2.0**-zoom
    window = zoom_window(function, x0, half_width)  # xs, curve, tangent: (101,) each
    value, _, curvature = example(x0, order=2)  # f(x0), f'(x0), f''(x0)
    half_height = _half_height(window, value, half_width)
    xs, curve = window.xs[::DRAW_EVERY], window.curve[::DRAW_EVERY]  # (51,) each, both ends included
    ends = [0, -1]
    gap_x = np.concatenate([xs, window.xs[ends[::-1]]])  # (53,) along the curve, back along the tangent
    gap_y = np.concatenate([curve, window.tangent[ends[::-1]]])  # (53,)
    return fig.figure(
        axes=fig.axes(xlim=(x0 - half_width, x0 + half_width), ylim=(value - half_height, value + half_height),
                      xlabel="x", ylabel="f(x)"),
        marks=[
            fig.region(gap_x, gap_y, color="accent", opacity=0.3),  # the gap between curve and tangent
            fig.line(xs, curve, color="primary", width=2.5, label=f"f(x) = {example.formula}"),
            fig.line(window.xs[ends], window.tangent[ends], color="secondary", dash=True, label="tangent at x₀"),
            fig.point(x0, value, color="ink", label="x₀"),
        ],
        readouts=[
            fig.readout("half-width w", half_width, digits=4),
            fig.readout("max gap", window.max_gap),
            fig.readout("max gap / w²", window.max_gap / half_width**2),
            fig.readout("|f″(x₀)| / 2", abs(curvature) / 2),
        ],
    )
