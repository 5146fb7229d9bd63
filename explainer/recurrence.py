"""Two ways a quantity can grow through L layers: by a fixed fraction of itself, or by a fixed amount."""

import numpy as np

from explainer._checks import as_float_array, as_int, as_scalar


def _history(h0, layers, caller: str):
    h0 = as_float_array("h0", h0, caller=caller)  # (...)
    layers = as_int("layers", layers, caller=caller, minimum=0)
    history = np.empty((layers + 1, *h0.shape))  # (L+1, ...)
    history[0] = h0
    return history


def proportional_recurrence(h0, alpha, layers):
    """Every layer adds alpha times what is already there, h_{l+1} = (1 + α) h_l: returns h_0..h_L."""
    history = _history(h0, layers, "proportional_recurrence")  # (L+1, ...)
    alpha = as_scalar("alpha", alpha, caller="proportional_recurrence")
    with np.errstate(over="ignore"):  # compounding past float64's range gives inf, which is the honest answer
        for layer in range(1, len(history)):
            history[layer] = (1 + alpha) * history[layer - 1]
    return history


def constant_recurrence(h0, c, layers):
    """Every layer adds the same amount c, h_{l+1} = h_l + c: returns h_0..h_L."""
    history = _history(h0, layers, "constant_recurrence")  # (L+1, ...)
    c = as_scalar("c", c, caller="constant_recurrence")
    with np.errstate(over="ignore"):
        for layer in range(1, len(history)):
            history[layer] = history[layer - 1] + c
    return history
