"""Splitting a vector along a direction and across it, and how little a sideways nudge changes a length."""

import numpy as np

from explainer._checks import as_float_array, as_nonzero_vector, fail


def _unit(u):
    # Dividing by the largest entry first keeps ‖u‖ from under- or overflowing for tiny or huge u.
    scaled = u / np.max(np.abs(u))  # (d,)
    return scaled / np.linalg.norm(scaled)  # (d,)


def projection(v, u):
    """Split v (..., d) into its part along u and its part perpendicular to u: returns (parallel, perpendicular)."""
    unit = _unit(as_nonzero_vector("u", u, caller="projection"))  # (d,)
    v = as_float_array("v", v, caller="projection", min_ndim=1)  # (..., d)
    if v.shape[-1] != unit.size:
        fail(f"v must have u's length {unit.size} on its last axis (got shape {v.shape})", caller="projection")
    parallel = (v @ unit)[..., None] * unit  # (..., d)
    return parallel, v - parallel  # (..., d), (..., d)


def projection_matrix(u):
    """The (d, d) matrix uuᵀ/‖u‖² that keeps only the part of a vector along u."""
    unit = _unit(as_nonzero_vector("u", u, caller="projection_matrix"))  # (d,)
    return np.outer(unit, unit)  # (d, d)


def rejection_matrix(u):
    """The (d, d) matrix I − uuᵀ/‖u‖² that removes the part of a vector along u."""
    unit = _unit(as_nonzero_vector("u", u, caller="rejection_matrix"))  # (d,)
    return np.eye(unit.size) - np.outer(unit, unit)  # (d, d)


def _lengths(r, eps, caller: str):
    r = as_float_array("r", r, caller=caller)
    if np.any(r <= 0):
        fail(f"r must be a positive length (got {r.min():g})", caller=caller)
    return r, as_float_array("eps", eps, caller=caller)


def perpendicular_length_change(r, eps):
    """Exact change in length when a vector of length r gets a perpendicular nudge of size eps: √(r²+ε²) − r."""
    r, eps = _lengths(r, eps, "perpendicular_length_change")
    # Written as ε²/(√(r²+ε²) + r): the same number without subtracting two nearly equal lengths when ε ≪ r.
    return eps**2 / (np.hypot(r, eps) + r)


def perpendicular_length_change_approx(r, eps):
    """Second-order estimate ε²/(2r) of the length change under a perpendicular nudge: no first-order term."""
    r, eps = _lengths(r, eps, "perpendicular_length_change_approx")
    return eps**2 / (2 * r)
