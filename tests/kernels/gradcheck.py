"""Check an analytic Jacobian against central finite differences along random directions, in float64."""

import numpy as np


def _numeric_directional_derivative(f, x, direction, eps):
    # Central differences: error O(ε²) from the curvature instead of O(ε) for a one-sided step.
    forward = np.asarray(f(x + eps * direction), dtype=float)
    backward = np.asarray(f(x - eps * direction), dtype=float)
    return (forward - backward) / (2 * eps)


def gradcheck(f, jacobian, x, *, eps=1e-6, rtol=1e-5, atol=1e-7, projections=8, rng=None, name=None):
    """Assert ⟨w, J(x) v⟩ ≈ ⟨w, (f(x+εv) − f(x−εv))/2ε⟩ for random unit v and random w, like autograd's check_grads."""
    name = name or getattr(f, "__name__", repr(f))
    rng = np.random.default_rng(0) if rng is None else rng
    x = np.asarray(x, dtype=float)  # (n...)
    fx = np.asarray(f(x), dtype=float)  # (m...)
    J = np.asarray(jacobian(x), dtype=float)
    if J.shape != fx.shape + x.shape:
        raise AssertionError(f"gradcheck({name}): Jacobian has shape {J.shape}, expected {fx.shape + x.shape}")
    J = J.reshape(fx.size, x.size)  # (m, n)
    for projection in range(projections):
        v = rng.standard_normal(x.shape)  # (n...)
        v /= np.linalg.norm(v)
        w = rng.standard_normal(fx.shape)  # (m...)
        analytic = float(w.ravel() @ (J @ v.ravel()))
        numeric = float(w.ravel() @ _numeric_directional_derivative(f, x, v, eps).ravel())
        tolerance = atol + rtol * max(abs(analytic), abs(numeric))
        if not abs(analytic - numeric) <= tolerance:
            raise AssertionError(
                f"gradcheck({name}): projection {projection}: analytic ⟨w, J v⟩ = {analytic!r} but central "
                f"difference gives {numeric!r} (|difference| {abs(analytic - numeric):.3g} > tolerance {tolerance:.3g})"
            )
