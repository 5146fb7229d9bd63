"""The ablation lab's model: a small decoder-only transformer whose four pillars can be switched off one by one.

The pillars are the ones the first lesson takes apart: positions (none / sinusoidal / RoPE), the residual add, the
normalisation (none / RMSNorm / LayerNorm, before or after the branch) and the causal mask. The weights are random
(seeded) with the plain variance-preserving initialisation (std 1/√fan_in, no depth-dependent scaling): what the
diagnostics show comes from the architecture, not from an initialisation tuned to make a point.

`run_ablation` runs one sentence through the model and measures, layer by layer, what the lesson talks about. The
block itself (norms, RoPE, attention, MLP, and where the switches are read) lives in explainer.layers, beside its
backward pass, so the model that trains (explainer.training) is this model, not a copy.
"""

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from explainer import layers
from explainer._checks import fail
from explainer.layers import (MAX_DEPTH, NORMS, PLACEMENTS, POSITIONAL,  # noqa: F401 (the lab's names for them)
                              normalise, rotate, visible)

# Status thresholds, documented here and in the lesson.
EXPLODING_GROWTH = 1e3  # the stream's RMS grew 1000-fold from the embeddings: three orders of magnitude
VANISHING_GROWTH = 1e-3  # ... or shrank 1000-fold
VANISHING_TOKEN_SIGNAL = 1e-2  # the tokens differ by under 1% of the stream's size: which token is which is lost

# A small vocabulary is enough for the lab's sentences; each word gets a seeded random embedding.
VOCABULARY = (
    "the a cat dog bird chases sees bites likes owes big small hungry grey old young quickly slowly "
    "and with from to bank money alice bob pays reads book writes letter sun rises sets"
).split()


@dataclass(frozen=True)
class AblationConfig:
    """One arrangement of the model; every field is a switch the lesson flips or a size it keeps small."""

    depth: int = 6  # number of blocks; the lab's slider runs 1 to MAX_DEPTH
    width: int = 64  # d, the residual stream's width
    heads: int = 4  # attention heads; each reads width / heads features
    positional: str = "rope"  # how positions enter: not at all, added sinusoids, or rotated queries and keys
    residual: bool = True  # h + F(h) when on, F(h) alone when off
    norm: str = "rmsnorm"  # what normalises the stream
    placement: str = "pre"  # pre: h + F(N(h)); post: N(h + F(h))
    causal_mask: bool = True  # a position may only read itself and earlier positions
    seed: int = 0  # the random weights and embeddings

    def __post_init__(self):
        layers.check_architecture(self, caller="AblationConfig")


# ---- weights ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Weights:
    """Seeded random parameters: embeddings and, per block, attention and MLP matrices stacked over depth."""

    embeddings: np.ndarray  # (V, d)
    qkv: np.ndarray  # (L, d, 3d)
    out: np.ndarray  # (L, d, d)
    up: np.ndarray  # (L, d, 4d)
    down: np.ndarray  # (L, 4d, d)


_WEIGHTS_CACHE: dict = {}


def init_weights(config: AblationConfig) -> Weights:
    """The model's weights for `config` (explainer.layers.init_weights; the same seed gives the same weights)."""
    key = (config.seed, config.width)
    if key not in _WEIGHTS_CACHE:
        # All MAX_DEPTH blocks are drawn, so depth 8 is the first 8 blocks of depth 24.
        _WEIGHTS_CACHE[key] = Weights(**layers.init_weights(np.random.default_rng(config.seed), len(VOCABULARY),
                                                            config.width, MAX_DEPTH))
    return _WEIGHTS_CACHE[key]


# ---- the block and what its attention did -----------------------------------------------------------------------


@dataclass
class LayerRecord:
    """What one block's attention did (filled in by `block`)."""

    logit_std: float = math.nan
    logit_max: float = math.nan
    entropy: float = math.nan


def _record_attention(cache, heads: int, causal: bool, record: LayerRecord) -> None:
    """The first sentence's attention logits (unmasked entries, all heads) and the weights' mean entropy."""
    length = cache.logits.shape[-1]
    seen = cache.logits[0][:, visible(length, causal)]  # (H, n)
    mean = seen.sum() / seen.size
    record.logit_std, record.logit_max = math.sqrt(((seen - mean) ** 2).sum() / seen.size), float(seen.max())
    first = cache.weights[0][:, visible(length, causal)]  # masked weights are exactly 0 and add nothing
    record.entropy = float(-(first * np.log(first)).sum() / (heads * length))


def block(h: np.ndarray, weights: Weights, layer: int, config: AblationConfig, record: LayerRecord) -> np.ndarray:
    """One transformer block (explainer.layers.block, where the four switches are read), recording its attention."""
    h, caches = layers.block(h, weights.qkv[layer], weights.out[layer], weights.up[layer], weights.down[layer], config)
    _record_attention(caches[0][2], config.heads, config.causal_mask, record)
    return h


# ---- the experiment -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AblationResult:
    """Per-layer diagnostics (index 0 is the embeddings; layer l is after block l) and the verdict."""

    residual_rms: list[float]  # RMS of the residual stream
    token_signal: list[float]  # RMS of the stream minus its mean over positions: what tells tokens apart
    update_ratio: list[float]  # RMS of what each block changed ÷ RMS of the stream it got (nan at index 0)
    logit_std: list[float]  # spread of the attention logits (unmasked entries, all heads)
    logit_max: list[float]  # largest attention logit
    attention_entropy: list[float]  # mean entropy of the attention weights, in nats (log T = uniform)
    word_order_sensitivity: float  # see run_ablation
    first_nonfinite_layer: int | None  # the first layer whose stream holds inf or NaN
    status: str  # HEALTHY, VANISHING, EXPLODING or NAN
    reason: str  # one sentence saying why
    config: AblationConfig = field(repr=False)


def tokenize(sentence: str) -> np.ndarray:
    """Word ids of a sentence made of VOCABULARY words (lower case, separated by spaces)."""
    ids = []
    for word in sentence.lower().split():
        if word not in VOCABULARY:
            fail(f"'{word}' is not in the lab's vocabulary ({', '.join(VOCABULARY)})", caller="tokenize")
        ids.append(VOCABULARY.index(word))
    return np.array(ids, dtype=int)


def _check_tokens(name: str, tokens) -> np.ndarray:
    tokens = np.asarray(tokens)
    if tokens.ndim != 1 or tokens.size < 2 or not np.issubdtype(tokens.dtype, np.integer):
        fail(f"{name} must be a 1-D sequence of at least 2 word ids (got {tokens!r})", caller="run_ablation")
    if tokens.min() < 0 or tokens.max() >= len(VOCABULARY):
        fail(f"{name} must be word ids from 0 to {len(VOCABULARY) - 1} (got {tokens.tolist()})", caller="run_ablation")
    return tokens


def _rms(x: np.ndarray) -> float:
    return math.sqrt(float(np.vdot(x, x)) / x.size)


def _pooled(h: np.ndarray, config: AblationConfig) -> np.ndarray:
    """Mean over positions of the final stream (after the final norm of a pre-norm model), (2, d)."""
    return layers.final_norm(h, config).mean(axis=1)


def word_order_sensitivity(pooled: np.ndarray) -> float:
    """‖a − b‖ / (‖a‖ + ‖b‖) for the two pooled outputs a, b: 0 when identical, at most 1 (triangle inequality)."""
    a, b = pooled
    total = np.linalg.norm(a) + np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / total) if total > 0 else 0.0


def verdict(residual_rms: list[float], token_signal: list[float], first_nonfinite: int | None) -> tuple[str, str]:
    """The status and a one-sentence reason, from the thresholds at the top of this module."""
    if first_nonfinite is not None:
        return "NAN", f"the residual stream overflowed to inf/NaN at layer {first_nonfinite}"
    growth = residual_rms[-1] / residual_rms[0]
    distinct = token_signal[-1] / residual_rms[-1] if residual_rms[-1] > 0 else 0.0
    if growth > EXPLODING_GROWTH:
        return "EXPLODING", f"the stream's RMS grew {growth:.3g}× from the embeddings to the last layer"
    if growth < VANISHING_GROWTH:
        return "VANISHING", f"the stream's RMS shrank to {growth:.3g}× of the embeddings' by the last layer"
    if distinct < VANISHING_TOKEN_SIGNAL:
        return "VANISHING", (f"the positions' vectors differ by {100 * distinct:.2g}% of their size at the last "
                             "layer: the tokens have become indistinguishable")
    return "HEALTHY", f"the stream's RMS changed {growth:.3g}× and the tokens still differ by {100 * distinct:.0f}%"


def run_ablation(config: AblationConfig, tokens, permuted_tokens=None) -> AblationResult:
    """Run a sentence (word ids) through the model described by `config` and measure every layer.

    word_order_sensitivity compares the pooled output (the mean over positions of the final stream) of the
    sentence with that of `permuted_tokens` (default: the sentence reversed), as ‖a − b‖ / (‖a‖ + ‖b‖), which lies
    in [0, 1]. With no positions and no causal mask every block treats positions alike (attention is permutation-
    equivariant, the MLP and norms act per position), so the pooled output is exactly invariant: 0 up to rounding.
    Overflow never raises: from the first layer that is not finite, the measurements are nan and status is NAN.
    """
    tokens = _check_tokens("tokens", tokens)
    permuted = tokens[::-1] if permuted_tokens is None else _check_tokens("permuted_tokens", permuted_tokens)
    if sorted(permuted.tolist()) != sorted(tokens.tolist()):
        fail("permuted_tokens must hold the same words as tokens, in another order", caller="run_ablation")
    stack = _stack(config, tokens, permuted)
    first_nonfinite = stack.first_nonfinite if (stack.first_nonfinite or math.inf) <= config.depth else None
    rows = {name: values[: config.depth + 1] for name, values in stack.rows.items()}
    h = stack.states[config.depth]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        sensitivity = math.nan if first_nonfinite else word_order_sensitivity(_pooled(h, config))
    status, reason = verdict(rows["residual_rms"], rows["token_signal"], first_nonfinite)
    return AblationResult(**rows, word_order_sensitivity=sensitivity, first_nonfinite_layer=first_nonfinite,
                          status=status, reason=reason, config=config)


@dataclass
class _Stack:
    """The streams and per-layer measurements of one arrangement, as deep as any run has asked for so far."""

    states: list  # (2, T, d) stream after each layer, index 0 = embeddings
    rows: dict
    first_nonfinite: int | None = None


# Depth d uses the first d of the same 24 blocks, so a deeper run only extends a shallower one. The lab keeps each
# arrangement's layers: dragging the depth slider computes the layers it has not seen yet, not the whole stack.
_LAYERS_CACHE: dict = {}
_LAYERS_CACHE_SIZE = 32  # arrangements kept (the lab has 16 switch settings); each is about 0.2 MB


def clear_cache() -> None:
    """Forget every computed layer (the next run_ablation computes from the embeddings up)."""
    _LAYERS_CACHE.clear()


def _stack(config: AblationConfig, tokens: np.ndarray, permuted: np.ndarray) -> _Stack:
    key = (dataclasses.replace(config, depth=MAX_DEPTH), tokens.tobytes(), permuted.tobytes())
    stack = _LAYERS_CACHE.pop(key, None)
    if stack is None:
        # (2, T, d): the sentence and its permutation side by side
        h = layers.embed(init_weights(config).embeddings, np.stack([tokens, permuted]), config)
        rows = {"residual_rms": [_rms(h[0])], "token_signal": [_rms(h[0] - h[0].mean(axis=0))],
                "update_ratio": [math.nan], "logit_std": [math.nan], "logit_max": [math.nan],
                "attention_entropy": [math.nan]}
        stack = _Stack([h], rows)
    _extend(stack, config)
    _LAYERS_CACHE[key] = stack  # most recently used last
    while len(_LAYERS_CACHE) > _LAYERS_CACHE_SIZE:
        del _LAYERS_CACHE[next(iter(_LAYERS_CACHE))]
    return stack


def _extend(stack: _Stack, config: AblationConfig) -> None:
    weights = init_weights(config)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for layer in range(len(stack.states) - 1, config.depth):
            record, before = LayerRecord(), stack.states[-1]
            h = block(before, weights, layer, config, record) if stack.first_nonfinite is None else before * math.nan
            if stack.first_nonfinite is None and not np.isfinite(h).all():
                stack.first_nonfinite = layer + 1
            _append_layer(stack.rows, h[0], before[0], record)
            stack.states.append(h)


def _append_layer(rows: dict, h: np.ndarray, before: np.ndarray, record: LayerRecord) -> None:
    finite, stream_before = bool(np.isfinite(h).all()), rows["residual_rms"][-1]
    rows["residual_rms"].append(_rms(h) if finite else math.nan)
    rows["token_signal"].append(_rms(h - h.sum(axis=0) / len(h)) if finite else math.nan)
    change = _rms(h - before) / stream_before if finite and stream_before > 0 else math.nan
    rows["update_ratio"].append(change)
    rows["logit_std"].append(record.logit_std)
    rows["logit_max"].append(record.logit_max)
    rows["attention_entropy"].append(record.entropy)
