"""RMSNorm and LayerNorm over the last axis, each followed by its exact Jacobian at a single vector."""

import numpy as np

from explainer._checks import as_float_array, as_scalar, as_vector, fail


def _gain(gain, width: int, caller: str):
    return np.ones(width) if gain is None else as_vector("gain", gain, caller=caller, length=width)  # (d,)


def _bias(bias, width: int, caller: str):
    return np.zeros(width) if bias is None else as_vector("bias", bias, caller=caller, length=width)  # (d,)


def _eps(eps, caller: str) -> float:
    return as_scalar("eps", eps, caller=caller, minimum=0.0)


def _require_positive(mean_square, caller: str, what: str) -> None:
    # Only reachable with eps = 0: a zero RMS (or variance) has no direction to keep, so the output is 0/0.
    if np.any(mean_square == 0.0):
        fail(f"h must not be {what} when eps = 0 (its scale is 0, so the result is 0/0; use eps > 0)", caller=caller)


def _rms_scale(h, gain, eps: float):
    mean_square = np.mean(h**2, axis=-1, keepdims=True) + eps  # (..., 1)
    return gain * h / np.sqrt(mean_square)  # (..., d)


def _rms_scale_jacobian(h, eps: float):
    # The derivative of h / s with s = sqrt(mean(h²) + ε); with ε = 0 it is (√d/‖h‖)(I − uuᵀ).
    width = h.size
    s = np.sqrt(np.mean(h**2) + eps)
    return np.eye(width) / s - np.outer(h, h) / (width * s**3)  # (d, d)


def rmsnorm(h, gain=None, eps=1e-6):
    """Rescale each vector of h to root-mean-square 1 and multiply by the gain: γ ⊙ h / sqrt(mean(h²) + ε)."""
    h = as_float_array("h", h, caller="rmsnorm", min_ndim=1)  # (..., d)
    gain, eps = _gain(gain, h.shape[-1], "rmsnorm"), _eps(eps, "rmsnorm")
    _require_positive(np.mean(h**2, axis=-1) + eps, "rmsnorm", "an all-zero vector")
    return _rms_scale(h, gain, eps)  # (..., d)


def rmsnorm_jacobian(h, gain=None, eps=1e-6):
    """Exact (d, d) Jacobian of rmsnorm at a 1-D h: diag(γ) (I/s − hhᵀ/(d s³)) with s = sqrt(mean(h²) + ε)."""
    h = as_vector("h", h, caller="rmsnorm_jacobian")  # (d,)
    gain, eps = _gain(gain, h.size, "rmsnorm_jacobian"), _eps(eps, "rmsnorm_jacobian")
    _require_positive(np.mean(h**2) + eps, "rmsnorm_jacobian", "the zero vector")
    return gain[:, None] * _rms_scale_jacobian(h, eps)  # (d, d)


def layernorm(h, gain=None, bias=None, eps=1e-5):
    """Centre each vector of h, rescale it to RMS 1, then apply gain and bias: γ ⊙ (h − μ)/sqrt(var + ε) + β."""
    h = as_float_array("h", h, caller="layernorm", min_ndim=1)  # (..., d)
    width = h.shape[-1]
    gain, bias, eps = _gain(gain, width, "layernorm"), _bias(bias, width, "layernorm"), _eps(eps, "layernorm")
    centred = h - h.mean(axis=-1, keepdims=True)  # (..., d)
    _require_positive(np.mean(centred**2, axis=-1) + eps, "layernorm", "a constant vector")
    # LayerNorm is RMSNorm of the centred vector: the variance is the mean square of what is left after centring.
    return _rms_scale(centred, gain, eps) + bias  # (..., d)


def layernorm_jacobian(h, gain=None, bias=None, eps=1e-5):
    """Exact (d, d) Jacobian of layernorm at a 1-D h: the RMS Jacobian of the centred vector times the centring."""
    h = as_vector("h", h, caller="layernorm_jacobian")  # (d,)
    gain, eps = _gain(gain, h.size, "layernorm_jacobian"), _eps(eps, "layernorm_jacobian")
    _bias(bias, h.size, "layernorm_jacobian")  # checked for a consistent signature; a shift has no derivative
    centred = h - h.mean()  # (d,)
    _require_positive(np.mean(centred**2) + eps, "layernorm_jacobian", "a constant vector")
    centring = np.eye(h.size) - 1.0 / h.size  # (d, d) removes the mean; symmetric and idempotent
    return gain[:, None] * (_rms_scale_jacobian(centred, eps) @ centring)  # (d, d)
