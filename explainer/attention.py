"""Softmax and scaled dot-product attention, batched over leading axes, with the softmax Jacobian."""

import numpy as np

from explainer._checks import as_float_array, as_int, as_vector, fail


def softmax(x, axis=-1):
    """Turn scores into weights that are positive and sum to 1 along `axis`; -inf entries get weight 0."""
    x = as_float_array("x", x, caller="softmax", min_ndim=1, allow_neg_inf=True)  # (..., n)
    axis = as_int("axis", axis, caller="softmax", minimum=-x.ndim, maximum=x.ndim - 1)
    top = np.max(x, axis=axis, keepdims=True)  # (..., 1)
    if np.any(np.isneginf(top)):
        fail(f"x must have at least one entry above -inf along axis {axis} (a fully masked row has no weights)",
             caller="softmax")
    # Subtracting the largest score changes nothing mathematically but keeps exp() ≤ 1, so 1000 cannot overflow.
    weights = np.exp(x - top)  # (..., n)
    return weights / np.sum(weights, axis=axis, keepdims=True)  # (..., n)


def softmax_jacobian(x):
    """Exact (n, n) Jacobian of softmax at a 1-D x: diag(p) − ppᵀ."""
    p = softmax(as_vector("x", x, caller="softmax_jacobian"))  # (n,)
    return np.diag(p) - np.outer(p, p)  # (n, n)


def _check_queries_keys(q, k, caller: str):
    q = as_float_array("q", q, caller=caller, min_ndim=2)  # (..., T, d_k)
    k = as_float_array("k", k, caller=caller, min_ndim=2)  # (..., S, d_k)
    if q.shape[-1] != k.shape[-1]:
        fail(f"q and k must share the key width d_k on their last axis (got {q.shape} and {k.shape})", caller=caller)
    try:
        np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    except ValueError:
        fail(f"the leading (batch) axes of q and k must broadcast (got {q.shape} and {k.shape})", caller=caller)
    return q, k


def _scores(q, k, causal: bool, caller: str):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])  # (..., T, S)
    if causal:
        queries, keys = scores.shape[-2:]
        if queries != keys:
            fail(f"causal=True needs as many queries as keys (got T={queries}, S={keys})", caller=caller)
        future = np.triu(np.ones((queries, keys), dtype=bool), k=1)  # (T, S) True where key j > query i
        scores = np.where(future, -np.inf, scores)  # (..., T, S)
    return scores


def attention_scores(q, k, causal=False):
    """Scaled scores q·k/√d_k of every query against every key, (..., T, S); causal sets key j > query i to -inf."""
    q, k = _check_queries_keys(q, k, "attention_scores")
    return _scores(q, k, bool(causal), "attention_scores")  # (..., T, S)


def attention(q, k, v, causal=False):
    """Scaled dot-product attention: returns (output (..., T, d_v), weights (..., T, S)), weights = softmax(scores)."""
    q, k = _check_queries_keys(q, k, "attention")
    v = as_float_array("v", v, caller="attention", min_ndim=2)  # (..., S, d_v)
    if v.shape[-2] != k.shape[-2]:
        fail(f"k and v must have the same number of positions S (got {k.shape} and {v.shape})", caller="attention")
    try:
        np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        fail(f"the leading (batch) axes of q, k, v must broadcast (got {q.shape}, {k.shape}, {v.shape})",
             caller="attention")
    weights = softmax(_scores(q, k, bool(causal), "attention"), axis=-1)  # (..., T, S)
    return weights @ v, weights  # (..., T, d_v), (..., T, S)
