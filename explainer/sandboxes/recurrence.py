"""Two ways to grow through the layers: adding a fraction α of what is there compounds, adding a constant c does not."""

import numpy as np

from explainer import figure as fig
from explainer.recurrence import constant_recurrence, proportional_recurrence
from explainer.sandbox import FloatParam, IntParam, Toggle, sandbox

START = 1.0  # h₀, as in the essay
MAX_LAYERS = 32
LINEAR_LIMITS = (0, 12)  # fits every constant path (at most 1 + 32·0.3); compounding may leave through the top
LOG_LIMITS = (0.5, 1e4)  # fits every path: the largest is 1.3³² ≈ 4400
LAYER_TICKS = [(layer, str(layer)) for layer in range(0, MAX_LAYERS + 1, 4)]


def _path(values: np.ndarray, color: str, label: str) -> list[dict]:
    layers = np.arange(values.size)  # (L+1,)
    return [fig.line(layers, values, color=color, label=label),
            *[fig.point(layer, value, color=color, size=3) for layer, value in zip(layers, values)]]


def _status(compounding: np.ndarray, log_scale: bool) -> dict | None:
    top = LINEAR_LIMITS[1]
    if log_scale or compounding.max() <= top:
        return None
    leaves = int(np.argmax(compounding > top))
    return fig.status("OFF THE PLOT", "info", f"Compounding passes {top:g} at layer {leaves}: "
                                              "switch on the log y-axis to follow it.")


@sandbox(
    FloatParam("alpha", "Fraction α added per layer", 0, 0.3, step=0.01, default=0.1),
    FloatParam("c", "Constant c added per layer", 0, 0.3, step=0.01, default=0.1),
    IntParam("layers", "Layers L", 1, MAX_LAYERS, default=16),
    Toggle("log_scale", "Log y-axis", False),
    title="Compounding versus constant updates",
)
def recurrence(alpha: float, c: float, layers: int, log_scale: bool) -> dict:
    """h ← (1+α)·h reaches (1+α)ᴸ·h₀ after L layers; h ← h + c only reaches h₀ + L·c."""
    compounding = proportional_recurrence(START, alpha, layers)  # (L+1,)
    constant = constant_recurrence(START, c, layers)  # (L+1,)
    return fig.figure(
        axes=fig.axes(xlim=(0, MAX_LAYERS), ylim=LOG_LIMITS if log_scale else LINEAR_LIMITS,
                      yscale="log" if log_scale else "linear", xlabel="layer l", ylabel="hₗ",
                      xticks=LAYER_TICKS),
        marks=[
            *_path(constant, "primary", "h ← h + c"),
            *_path(compounding, "secondary", "h ← (1 + α)·h"),
        ],
        readouts=[
            fig.readout("(1 + α)ᴸ · h₀", compounding[-1]),
            fig.readout("h₀ + L · c", constant[-1]),
        ],
        status=_status(compounding, log_scale),
    )
