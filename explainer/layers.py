"""The pieces of a transformer, each forward beside its backward: the ablation lab and the training lab share them.

A forward returns its output and a cache (what the backward needs); a backward takes the gradient of a loss with
respect to the output and the cache, and returns the gradients with respect to the inputs and weights. Backwards are
checked against central differences in tests/kernels/test_training.py.

The switches are read from any object with the fields `depth`, `width`, `heads`, `positional` (none / sinusoidal /
rope), `residual`, `norm` (none / rmsnorm / layernorm), `placement` (pre / post) and `causal_mask`: `AblationConfig`
and `TrainingConfig` both are one, checked by `check_architecture` and given weights by `init_weights`. Only this
module reads the switches: `embed` (sinusoidal positions), `block` and `block_backward` (the residual, the norm and
its place, RoPE, the mask) and `final_norm` (a pre-norm model's last norm).
"""

import functools
import math
import sys
from dataclasses import dataclass

import numpy as np

from explainer._checks import as_choice, as_int, fail

POSITIONAL = ("none", "sinusoidal", "rope")
NORMS = ("none", "rmsnorm", "layernorm")
PLACEMENTS = ("pre", "post")
MAX_DEPTH = 24  # the lab's deepest stack: its weights are drawn for this many blocks, whatever the depth shown
MAX_WIDTH = 1024  # far past anything the lessons run; a bound, so a typo cannot ask for gigabytes
BLOCK_WEIGHTS = ("qkv", "out", "up", "down")  # each block's matrices, in the order `block` takes them
# Pyodide's numpy is built without BLAS: its matmul sums each output down a column of the right operand, about 3×
# faster at the lab's sizes when those columns are contiguous. With BLAS every layout is fast, and another layout can
# change the last bits of a product, so elsewhere weights keep the layout they were drawn in.
WITHOUT_BLAS = sys.platform == "emscripten"

# ---- the architecture: its switches checked, its weights drawn --------------------------------------------------


def check_architecture(config, caller: str) -> None:
    """Reject sizes or switches the block cannot run, naming the field: the check both models' configs share."""
    as_int("depth", config.depth, caller=caller, minimum=1, maximum=MAX_DEPTH)
    as_int("width", config.width, caller=caller, minimum=2, maximum=MAX_WIDTH)
    as_int("heads", config.heads, caller=caller, minimum=1, maximum=config.width)
    if config.width % config.heads or (config.width // config.heads) % 2:
        fail(f"width must split into heads of an even size (got width {config.width}, heads {config.heads})",
             caller=caller)
    for name, choices in (("positional", POSITIONAL), ("norm", NORMS), ("placement", PLACEMENTS)):
        as_choice(name, getattr(config, name), choices, caller=caller)
    for name in ("residual", "causal_mask"):
        if not isinstance(getattr(config, name), bool):
            fail(f"{name} must be True or False (got {getattr(config, name)!r})", caller=caller)


def fan_in_normal(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Weights drawn from N(0, 1/fan_in), fan_in = shape[-2]: a random input keeps its scale through the matrix."""
    return rng.standard_normal(shape) / math.sqrt(shape[-2])


def init_weights(rng: np.random.Generator, vocabulary: int, width: int, depth: int) -> dict[str, np.ndarray]:
    """Embeddings of RMS 1, `depth` blocks' matrices (BLOCK_WEIGHTS, stacked over depth), then the unembedding that
    turns the final stream into next-token logits, drawn in this order.

    The plain variance-preserving initialisation, no depth-dependent scaling: what the lab shows comes from the
    architecture, not from an initialisation tuned to make a point.
    """
    return {"embeddings": rng.standard_normal((vocabulary, width)),  # (V, d)
            "qkv": fan_in_normal(rng, depth, width, 3 * width),  # (L, d, 3d)
            "out": fan_in_normal(rng, depth, width, width),  # (L, d, d)
            "up": fan_in_normal(rng, depth, width, 4 * width),  # (L, d, 4d)
            "down": fan_in_normal(rng, depth, 4 * width, width),  # (L, 4d, d)
            "unembedding": fan_in_normal(rng, width, vocabulary)}  # (d, V)


def for_products(matrices: np.ndarray) -> np.ndarray:
    """`matrices` (..., n, m) laid out to be the right operand of `x @ matrices` as fast as this numpy allows.

    The same values; column-major where numpy has no BLAS (there each product sums in the same order whatever the
    layout, so it is the same number), unchanged elsewhere.
    """
    return np.ascontiguousarray(matrices.swapaxes(-1, -2)).swapaxes(-1, -2) if WITHOUT_BLAS else matrices


def summed_outer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """aᵀb for a (N, n) and b (N, m): the sum over N of outer products, (n, m), what every weight's gradient is.

    Without BLAS, both operands are first copied into the layout numpy's own product reads fastest (rows of the
    left, columns of the right: over twice as fast here); it sums in the same order whatever the layout, so the number
    is the same. Elsewhere the plain product.
    """
    if WITHOUT_BLAS:
        return np.ascontiguousarray(a.T) @ np.asfortranarray(b)
    return a.T @ b


# ---- normalisation ------------------------------------------------------------------------------------------------


def normalise(h: np.ndarray, kind: str) -> np.ndarray:
    """RMSNorm or LayerNorm over the last axis with gain 1 (the same formulas as explainer.norms), or nothing."""
    width = h.shape[-1]
    if kind == "rmsnorm":
        return h / np.sqrt(np.einsum("...i,...i->...", h, h)[..., None] / width + 1e-6)
    if kind == "layernorm":
        centred = h - h.sum(axis=-1, keepdims=True) / width
        return centred / np.sqrt(np.einsum("...i,...i->...", centred, centred)[..., None] / width + 1e-5)
    return h


def normalise_backward(h: np.ndarray, kind: str, grad: np.ndarray) -> np.ndarray:
    """The gradient with respect to h, given the gradient with respect to normalise(h, kind)."""
    if kind == "none":
        return grad
    width = h.shape[-1]
    centred = h - h.sum(axis=-1, keepdims=True) / width if kind == "layernorm" else h  # (..., d)
    eps = 1e-5 if kind == "layernorm" else 1e-6
    scale = np.sqrt(np.einsum("...i,...i->...", centred, centred)[..., None] / width + eps)  # (..., 1)
    out = centred / scale  # (..., d)
    grad_centred = (grad - out * (np.einsum("...i,...i->...", grad, out)[..., None] / width)) / scale  # (..., d)
    if kind == "layernorm":
        return grad_centred - grad_centred.sum(axis=-1, keepdims=True) / width
    return grad_centred


# ---- positions ----------------------------------------------------------------------------------------------------


def sinusoidal_positions(length: int, width: int) -> np.ndarray:
    """The original transformer's position codes: sines and cosines of geometrically spaced frequencies, (T, d)."""
    position = np.arange(length)[:, None]  # (T, 1)
    frequency = 10000.0 ** (-np.arange(0, width, 2) / width)  # (d/2,)
    codes = np.empty((length, width))
    codes[:, 0::2] = np.sin(position * frequency)
    codes[:, 1::2] = np.cos(position * frequency)
    return codes  # (T, d)


@functools.cache
def _rotation(length: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    angle = np.arange(length)[:, None] * 10000.0 ** (-np.arange(0, width, 2) / width)  # (T, dh/2)
    return np.cos(angle), np.sin(angle)


def rotate(x: np.ndarray, sign: float = 1.0) -> np.ndarray:
    """RoPE: turn each pair of features of position t by t·θ_i (by −t·θ_i with sign −1), over (..., T, dh)."""
    cos, sin = _rotation(x.shape[-2], x.shape[-1])  # (T, dh/2) each
    if sign < 0:
        sin = -sin
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., T, dh/2)
    rotated = np.empty_like(x)
    rotated[..., 0::2] = even * cos - odd * sin
    rotated[..., 1::2] = even * sin + odd * cos
    return rotated


def rotate_backward(grad: np.ndarray) -> np.ndarray:
    """The gradient through `rotate`: a rotation's transpose is the rotation the other way."""
    return rotate(grad, -1.0)


def embed(table: np.ndarray, tokens: np.ndarray, switches) -> np.ndarray:
    """The stream's start: each token's row of `table`, plus sinusoidal position codes when the switches say so."""
    h = table[tokens]  # (..., T, d)
    if switches.positional == "sinusoidal":
        h = h + sinusoidal_positions(tokens.shape[-1], table.shape[-1])
    return h


@functools.cache
def visible(length: int, causal: bool) -> np.ndarray:
    """(T, T) True where query i may read key j: j ≤ i under the causal mask, everywhere without it."""
    return np.tril(np.ones((length, length), dtype=bool)) if causal else np.ones((length, length), dtype=bool)


# ---- attention ----------------------------------------------------------------------------------------------------


@dataclass
class AttentionCache:
    """What attention_backward needs, and what the ablation lab measures (logits, weights)."""

    x: np.ndarray | None  # (B, T, d) the input (None where only the input's gradient is wanted: sequence_cache)
    q: np.ndarray  # (B, H, T, dh) after RoPE when on
    k: np.ndarray  # (B, H, T, dh)
    v: np.ndarray  # (B, H, T, dh)
    logits: np.ndarray  # (B, H, T, T) masked entries −inf
    weights: np.ndarray  # (B, H, T, T) masked entries exactly 0
    mixed: np.ndarray | None  # (B, T, d) the heads' outputs side by side (None as x)
    qkv: np.ndarray  # (d, 3d)
    out: np.ndarray  # (d, d)
    rope: bool


def attention(x: np.ndarray, qkv: np.ndarray, out: np.ndarray, heads: int, rope: bool, causal: bool):
    """Multi-head self-attention over positions, (B, T, d) -> (B, T, d), and its cache."""
    batch, length, width = x.shape
    head_width = width // heads
    # (3, B, H, T, dh), copied to be contiguous: RoPE and the products below run faster on it (the same numbers)
    projected = np.ascontiguousarray((x @ qkv).reshape(batch, length, 3, heads, head_width).transpose(2, 0, 3, 1, 4))
    if rope:
        projected[:2] = rotate(projected[:2])
    q, k, v = projected  # (B, H, T, dh) each
    logits = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head_width)  # (B, H, T, T)
    logits = np.where(visible(length, causal), logits, -np.inf)
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)  # (B, H, T, T)
    mixed = (weights @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)  # (B, T, d)
    return mixed @ out, AttentionCache(x, q, k, v, logits, weights, mixed, qkv, out, rope)  # (B, T, d)


def attention_backward(grad: np.ndarray, cache: AttentionCache, weights_too: bool = True):
    """Gradients (x, qkv, out) of attention, given the gradient (B, T, d) of its output (None for the weights'
    unless `weights_too`: a gradient for the input alone costs about half)."""
    batch, heads, length, head_width = cache.q.shape
    width = heads * head_width
    grad_out = summed_outer(cache.mixed.reshape(-1, width), grad.reshape(-1, width)) if weights_too else None  # (d, d)
    grad_mixed = (grad @ cache.out.T).reshape(batch, length, heads, head_width).transpose(0, 2, 1, 3)  # (B, H, T, dh)
    grad_weights = grad_mixed @ cache.v.transpose(0, 1, 3, 2)  # (B, H, T, T)
    grad_v = cache.weights.transpose(0, 1, 3, 2) @ grad_mixed  # (B, H, T, dh)
    along = (grad_weights * cache.weights).sum(axis=-1, keepdims=True)  # (B, H, T, 1)
    grad_logits = cache.weights * (grad_weights - along) / math.sqrt(head_width)  # softmax's Jacobian; masked: 0
    grad_projected = np.empty((3, batch, heads, length, head_width))  # (3, B, H, T, dh): q, k, v
    grad_projected[0], grad_projected[1], grad_projected[2] = grad_logits @ cache.k, grad_logits.transpose(
        0, 1, 3, 2) @ cache.q, grad_v
    if cache.rope:
        grad_projected[:2] = rotate_backward(grad_projected[:2])
    grad_projected = grad_projected.transpose(1, 3, 0, 2, 4).reshape(batch, length, 3 * width)  # (B, T, 3d)
    grad_qkv = (summed_outer(cache.x.reshape(-1, width), grad_projected.reshape(-1, 3 * width)) if weights_too
                else None)  # (d, 3d)
    return grad_projected @ cache.qkv.T, grad_qkv, grad_out  # (B, T, d), (d, 3d), (d, d)


# ---- the MLP ------------------------------------------------------------------------------------------------------


def mlp(x: np.ndarray, up: np.ndarray, down: np.ndarray):
    """The position-wise feed-forward branch: widen 4×, ReLU, project back, (B, T, d) -> (B, T, d), and its cache."""
    hidden = np.maximum(x @ up, 0.0)  # (B, T, 4d)
    return hidden @ down, (x, hidden, up, down)


def mlp_backward(grad: np.ndarray, cache, weights_too: bool = True):
    """Gradients (x, up, down) of the MLP, given the gradient (B, T, d) of its output (None for the weights' unless
    `weights_too`)."""
    x, hidden, up, down = cache
    width, wide = up.shape
    grad_down = summed_outer(hidden.reshape(-1, wide), grad.reshape(-1, width)) if weights_too else None  # (4d, d)
    grad_hidden = (grad @ down.T) * (hidden > 0)  # (B, T, 4d): ReLU passes gradient where it was open
    grad_up = summed_outer(x.reshape(-1, width), grad_hidden.reshape(-1, wide)) if weights_too else None  # (d, 4d)
    return grad_hidden @ up.T, grad_up, grad_down


# ---- the block ----------------------------------------------------------------------------------------------------


def norm_places(switches) -> tuple[str, str]:
    """(before the branch, after the add): the norm sits in one of the two places, "none" in the other."""
    return (switches.norm, "none") if switches.placement == "pre" else ("none", switches.norm)


def block(h: np.ndarray, qkv, out, up, down, switches):
    """One transformer block, (B, T, d) -> (B, T, d), and its cache; the switches are read here and in its backward."""
    pre, post = norm_places(switches)
    update, attention_cache = attention(normalise(h, pre), qkv, out, switches.heads, switches.positional == "rope",
                                        switches.causal_mask)
    added = h + update if switches.residual else update
    middle = normalise(added, post)  # (B, T, d) between the two branches
    update, mlp_cache = mlp(normalise(middle, pre), up, down)
    added_mlp = middle + update if switches.residual else update
    return normalise(added_mlp, post), ((h, added, attention_cache), (middle, added_mlp, mlp_cache))


def block_backward(grad: np.ndarray, caches, switches, weights_too: bool = True):
    """Gradients (h, qkv, out, up, down) of one block, given the gradient (B, T, d) of its output (None for the
    weights' unless `weights_too`). With the residual on this is g + (J_F·J_N)ᵀ g per branch: the identity passes the
    gradient through unchanged, whatever the branch does to it."""
    pre, post = norm_places(switches)
    (h_attention, added_attention, attention_cache), (h_mlp, added_mlp, mlp_cache) = caches
    grad_added = normalise_backward(added_mlp, post, grad)
    grad_read, grad_up, grad_down = mlp_backward(grad_added, mlp_cache, weights_too)
    grad = normalise_backward(h_mlp, pre, grad_read) + (grad_added if switches.residual else 0.0)
    grad_added = normalise_backward(added_attention, post, grad)
    grad_read, grad_qkv, grad_out = attention_backward(grad_added, attention_cache, weights_too)
    grad = normalise_backward(h_attention, pre, grad_read) + (grad_added if switches.residual else 0.0)
    return grad, grad_qkv, grad_out, grad_up, grad_down


def sequence_cache(caches, index: int, qkv, out, up, down):
    """A block's cache cut down to what block_backward(..., weights_too=False) reads, for sequence `index` of its
    batch only (copies, batch axis kept), reading the given weights: the same values, possibly laid out for a
    faster backward (see `for_products`). The inputs only the weights' gradients read (x, mixed) are left out."""
    (h, added, attention_cache), (middle, added_mlp, (_, hidden, _, _)) = caches
    one = slice(index, index + 1)
    attention_cache = AttentionCache(None, *(getattr(attention_cache, name)[one].copy() for name in (
        "q", "k", "v", "logits", "weights")), None, qkv, out, attention_cache.rope)
    return ((h[one], added[one].copy(), attention_cache),
            (middle[one].copy(), added_mlp[one].copy(), (None, hidden[one].copy(), up, down)))


def final_norm(h: np.ndarray, switches) -> np.ndarray:
    """What the model's output reads: a pre-norm stack normalises its last block's output; a post-norm one did."""
    return normalise(h, switches.norm) if switches.placement == "pre" else h


def final_norm_backward(h: np.ndarray, switches, grad: np.ndarray) -> np.ndarray:
    """The gradient with respect to the last block's output h, given the gradient with respect to final_norm(h)."""
    return normalise_backward(h, switches.norm, grad) if switches.placement == "pre" else grad


# ---- the loss -------------------------------------------------------------------------------------------------------


def cross_entropy(logits: np.ndarray, targets: np.ndarray, scored: np.ndarray):
    """Mean −log p(target) over the scored positions, and its gradient with respect to the logits."""
    shifted = logits - logits.max(axis=-1, keepdims=True)  # (B, T, V)
    log_probabilities = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probabilities, targets[..., None], axis=-1)[..., 0]  # (B, T)
    count = scored.sum()
    loss = -(picked * scored).sum() / count
    grad = np.exp(log_probabilities)  # (B, T, V) softmax
    np.put_along_axis(grad, targets[..., None], np.take_along_axis(grad, targets[..., None], axis=-1) - 1, axis=-1)
    return float(loss), grad * (scored[..., None] / count)
