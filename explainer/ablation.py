"""The ablation lab's model: a small decoder-only transformer whose four pillars can be switched off one by one.

The pillars are the ones the first lesson takes apart: positions (none / sinusoidal / RoPE), the residual add, the
normalisation (none / RMSNorm / LayerNorm, before or after the branch) and the causal mask. The weights are random
(seeded) with the plain variance-preserving initialisation (std 1/√fan_in, no depth-dependent scaling): what the
diagnostics show comes from the architecture, not from an initialisation tuned to make a point. Or they are the
weights of the model trained at build time to reverse strings (explainer.trained): the same switches, flipped on a
model that learned to use what they carry, without retraining it.

`run_ablation` runs one sentence through the model and measures, layer by layer, what the lesson talks about,
including how alike the positions' vectors are (the cosine matrices that show rank collapse); `gradient_norms` sends
the gradient of a next-word loss back down the same layers. The block itself (norms, RoPE, attention, MLP, and where
the switches are read) lives in explainer.layers, beside its backward pass, so the model that trains
(explainer.training) is this model, not a copy. Each arrangement's layers are computed once and kept (`_Stack`), so
the lab's depth slider and switches mostly reuse work; `prepare` computes layers ahead for a caller with time to spare.
"""

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from explainer import layers, trained
from explainer._checks import as_choice, fail
from explainer.layers import (MAX_DEPTH, NORMS, PLACEMENTS, POSITIONAL,  # noqa: F401 (the lab's names for them)
                              normalise, rotate, visible)

# Status thresholds, documented here and in the lesson.
EXPLODING_GROWTH = 1e3  # the stream's RMS grew 1000-fold from the embeddings: three orders of magnitude
VANISHING_GROWTH = 1e-3  # ... or shrank 1000-fold
VANISHING_TOKEN_SIGNAL = 1e-2  # the tokens differ by under 1% of the stream's size: which token is which is lost
WEIGHTS = ("random", "trained")

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
    weights: str = "random"  # random: seeded draws; trained: the build-time model (its width, heads and depth at most)

    def __post_init__(self):
        layers.check_architecture(self, caller="AblationConfig")
        as_choice("weights", self.weights, WEIGHTS, caller="AblationConfig")
        if self.weights == "trained":
            shape = trained_shape()
            for name in ("width", "heads"):
                if getattr(self, name) != shape[name]:
                    fail(f"{name} must be {shape[name]} with the trained weights (got {getattr(self, name)})",
                         caller="AblationConfig")
            if self.depth > shape["depth"]:
                fail(f"depth must be at most {shape['depth']} with the trained weights, the blocks it was trained "
                     f"with (got {self.depth})", caller="AblationConfig")


def trained_shape() -> dict:
    """The trained model's sizes and vocabulary size: {width, heads, depth, vocabulary} (explainer.trained)."""
    config, weights = trained.trained_model()
    return {"width": config["width"], "heads": config["heads"], "depth": config["depth"],
            "vocabulary": len(weights["embeddings"])}


def trained_config(depth: int | None = None, **switches) -> AblationConfig:
    """The trained model as the lab runs it: its own sizes, its first `depth` blocks (all by default), `switches`."""
    shape = trained_shape()
    return AblationConfig(depth=depth or shape["depth"], width=shape["width"], heads=shape["heads"],
                          weights="trained", **switches)


def max_depth(config: AblationConfig) -> int:
    """How many blocks the model behind `config` has: MAX_DEPTH drawn at random, or the trained model's."""
    return trained_shape()["depth"] if config.weights == "trained" else MAX_DEPTH


def vocabulary_size(config: AblationConfig) -> int:
    """How many word ids the model behind `config` has embeddings for."""
    return trained_shape()["vocabulary"] if config.weights == "trained" else len(VOCABULARY)


# ---- weights ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Weights:
    """The parameters: embeddings and, per block, attention and MLP matrices stacked over depth."""

    embeddings: np.ndarray  # (V, d)
    qkv: np.ndarray  # (L, d, 3d)
    out: np.ndarray  # (L, d, d)
    up: np.ndarray  # (L, d, 4d)
    down: np.ndarray  # (L, 4d, d)
    unembedding: np.ndarray  # (d, V): reads next-word logits off the final stream, for the gradient's loss

    @functools.cached_property
    def for_forward(self) -> tuple[np.ndarray, ...]:
        """(qkv, out, up, down) laid out for the forward's products (layers.for_products); the backward reads the
        matrices as drawn, whose transposes are already laid out for its products."""
        return tuple(layers.for_products(getattr(self, name)) for name in layers.BLOCK_WEIGHTS)


_WEIGHTS_CACHE: dict = {}


def init_weights(config: AblationConfig) -> Weights:
    """The model's weights for `config`: explainer.layers.init_weights (the same seed gives the same weights), or the
    trained model's (explainer.trained)."""
    if config.weights == "trained":
        if "trained" not in _WEIGHTS_CACHE:
            _WEIGHTS_CACHE["trained"] = Weights(**trained.trained_model()[1])
        return _WEIGHTS_CACHE["trained"]
    key = (config.seed, config.width)
    if key not in _WEIGHTS_CACHE:
        # All MAX_DEPTH blocks are drawn, so depth 8 is the first 8 blocks of depth 24.
        _WEIGHTS_CACHE[key] = Weights(**layers.init_weights(np.random.default_rng(config.seed), len(VOCABULARY),
                                                            config.width, MAX_DEPTH))
    return _WEIGHTS_CACHE[key]


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
    cosine_similarity: list[list[list[float]]] = field(repr=False)  # (T, T) per layer: see cosine_similarities
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


def _check_tokens(name: str, tokens, size: int, caller: str) -> np.ndarray:
    tokens = np.asarray(tokens)
    if tokens.ndim != 1 or tokens.size < 2 or not np.issubdtype(tokens.dtype, np.integer):
        fail(f"{name} must be a 1-D sequence of at least 2 word ids (got {tokens!r})", caller=caller)
    if tokens.min() < 0 or tokens.max() >= size:
        fail(f"{name} must be word ids from 0 to {size - 1} (got {tokens.tolist()})", caller=caller)
    return tokens


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
    tokens, permuted = _checked_pair(config, tokens, permuted_tokens, "run_ablation")
    stack = _stack(config, tokens, permuted)
    first_nonfinite = _first_nonfinite(stack, config.depth)
    rows = {name: values[: config.depth + 1] for name, values in stack.rows.items()}
    h = stack.states[config.depth]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        sensitivity = math.nan if first_nonfinite else word_order_sensitivity(_pooled(h, config))
    status, reason = verdict(rows["residual_rms"], rows["token_signal"], first_nonfinite)
    return AblationResult(**rows, word_order_sensitivity=sensitivity, first_nonfinite_layer=first_nonfinite,
                          status=status, reason=reason, config=config)


def _checked_pair(config: AblationConfig, tokens, permuted_tokens, caller: str) -> tuple[np.ndarray, np.ndarray]:
    size = vocabulary_size(config)
    tokens = _check_tokens("tokens", tokens, size, caller)
    permuted = (tokens[::-1] if permuted_tokens is None
                else _check_tokens("permuted_tokens", permuted_tokens, size, caller))
    if sorted(permuted.tolist()) != sorted(tokens.tolist()):
        fail("permuted_tokens must hold the same words as tokens, in another order", caller=caller)
    return tokens, permuted


def _first_nonfinite(stack: "_Stack", depth: int) -> int | None:
    return stack.first_nonfinite if (stack.first_nonfinite or math.inf) <= depth else None


# ---- how the gradient flows back ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GradientReport:
    """The lab's loss and the size of its gradient at every layer (index 0 is the embeddings; l is after block l)."""

    loss: float  # next_word_loss at the last layer, in nats (ln V is a uniform guess over the V words)
    gradient_norm: list[float]  # ‖∂loss/∂h_l‖ over the first sentence's positions; nan where the stream is not finite
    config: AblationConfig = field(repr=False)


def next_word_loss(h: np.ndarray, weights: Weights, tokens: np.ndarray, config: AblationConfig):
    """The lab's loss at the stream h (1, T, d) of `tokens`, and its gradient with respect to h.

    Each position guesses the next word of the sentence from the final stream (after a pre-norm model's final norm)
    through the unembedding: the mean next-word cross-entropy, in nats, the loss a language model is trained on. The
    last position has no next word and is not scored. With random weights the loss is near chance (the trained model
    was scored on its answers only, so its prompt's letters stay guesses too); what the lab shows is how the
    gradient travels back through the layers.
    """
    length = len(tokens)
    final = layers.final_norm(h, config)  # (1, T, d)
    targets = np.concatenate([tokens[1:], tokens[:1]])[None]  # (1, T): word t + 1 (the last target is not scored)
    scored = (np.arange(length) < length - 1)[None].astype(float)  # (1, T)
    loss, grad_logits = layers.cross_entropy(final @ weights.unembedding, targets, scored)
    return loss, layers.final_norm_backward(h, config, grad_logits @ weights.unembedding.T)  # (1, T, d)


def gradient_norms(config: AblationConfig, tokens, permuted_tokens=None) -> GradientReport:
    """‖∂loss/∂h_l‖ at every layer l of `config` for next_word_loss on the sentence `tokens`.

    Going back through a block multiplies the gradient by the block's transposed Jacobian: with the residual and a
    pre-norm, (I + J_F·J_N)ᵀ per branch, so the identity carries the gradient down however small J_F·J_N is; without
    the residual only (J_F·J_N)ᵀ is left, and the gradient shrinks or grows by its size at every layer. The forward
    pass is run_ablation's (cached; pass the same `permuted_tokens` to share it). Results are cached per depth.
    """
    tokens, permuted = _checked_pair(config, tokens, permuted_tokens, "gradient_norms")
    stack = _stack(config, tokens, permuted)
    _backward(stack, tokens, config, blocks=config.depth + 1)
    loss, norms = stack.gradient_norms[config.depth]
    return GradientReport(loss, norms, config)


def prepare_gradients(config: AblationConfig, tokens, permuted_tokens=None, blocks: int = 1) -> bool:
    """Compute up to `blocks` more blocks of what gradient_norms(config) needs, the forward pass's first and then the
    backward pass's (the loss counts as one); True once gradient_norms(config) has nothing left to compute.

    Like prepare, for idle time: the result is the same, number for number, whichever call computed its parts.
    """
    tokens, permuted = _checked_pair(config, tokens, permuted_tokens, "prepare_gradients")
    known = _LAYERS_CACHE.get(_key(config, tokens, permuted))
    forward = min(blocks, config.depth - (len(known.states) - 1 if known else 0))
    if forward > 0:
        prepare(config, tokens, permuted, blocks=forward)
        return False
    return _backward(_stack(config, tokens, permuted), tokens, config, blocks)


def loss_gradients(config: AblationConfig, tokens, permuted_tokens=None) -> tuple[float, list[np.ndarray]]:
    """next_word_loss of `config` on the sentence `tokens` and its gradient (1, T, d) with respect to the stream at
    every layer, index 0 the embeddings (all nan when the stream is not finite): what gradient_norms measures."""
    tokens, permuted = _checked_pair(config, tokens, permuted_tokens, "loss_gradients")
    return _gradients(_stack(config, tokens, permuted), tokens, config)


def _gradients(stack: "_Stack", tokens: np.ndarray, config: AblationConfig) -> tuple[float, list[np.ndarray]]:
    if _first_nonfinite(stack, config.depth) is not None:
        return math.nan, [np.full(stack.states[0][:1].shape, math.nan)] * (config.depth + 1)
    loss, gradients = _backward_start(stack, tokens, config)
    _backward_steps(stack, gradients, config, config.depth)
    return loss, gradients[::-1]


def _backward_start(stack: "_Stack", tokens: np.ndarray, config: AblationConfig) -> tuple[float, list[np.ndarray]]:
    """The loss at config.depth and its gradient there: the list the backward pass goes on from, top layer first."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        loss, grad = next_word_loss(stack.states[config.depth][:1], init_weights(config), tokens, config)
    return loss, [grad]  # (1, T, d) at the last layer; each step appends the gradient one block further down


def _backward_steps(stack: "_Stack", gradients: list, config: AblationConfig, blocks: int) -> None:
    """Carry `gradients` (top layer first) down through up to `blocks` more blocks (the weights' gradients skipped)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for _ in range(min(blocks, config.depth + 1 - len(gradients))):
            layer = config.depth - len(gradients)  # the block whose backward gives the gradient at its input
            gradients.append(layers.block_backward(gradients[-1], stack.caches[layer], config, weights_too=False)[0])


def _backward(stack: "_Stack", tokens: np.ndarray, config: AblationConfig, blocks: int) -> bool:
    """Up to `blocks` more blocks of config's backward pass, kept in the stack between calls (the loss counts as a
    block); once complete, the gradient's norm at every layer goes into stack.gradient_norms. True when it is there."""
    depth = config.depth
    if depth in stack.gradient_norms:
        return True
    if _first_nonfinite(stack, depth) is not None:
        stack.gradient_norms[depth] = math.nan, [math.nan] * (depth + 1)
        return True
    if depth not in stack.backward:
        stack.backward[depth] = _backward_start(stack, tokens, config)
        blocks -= 1
    loss, gradients = stack.backward[depth]
    _backward_steps(stack, gradients, config, blocks)
    if len(gradients) <= depth:
        return False
    del stack.backward[depth]
    with np.errstate(over="ignore", invalid="ignore"):
        stacked = np.concatenate(gradients[::-1])  # (L + 1, T, d), the embeddings first
        stack.gradient_norms[depth] = loss, np.sqrt(np.einsum("ltd,ltd->l", stacked, stacked)).tolist()
    return True


# ---- how alike the positions are ------------------------------------------------------------------------------------


def cosine_similarities(h: np.ndarray) -> np.ndarray:
    """(..., T, T) cosine of the angle between every two positions' vectors of h (..., T, d): 1 on the diagonal, 1
    everywhere once the positions' vectors all point the same way (rank collapse), about 0 for unrelated vectors.
    A position whose vector is zero has no direction: its row and column are nan."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        unit = h / np.sqrt(np.einsum("...td,...td->...t", h, h))[..., None]  # (..., T, d)
        return np.clip(unit @ unit.swapaxes(-1, -2), -1.0, 1.0)  # (..., T, T), rounding kept within [−1, 1]


# ---- the layers of each arrangement, computed once ------------------------------------------------------------------


@dataclass
class _Stack:
    """One arrangement's layers for one pair of sentences, as deep as any run has asked for so far."""

    states: list  # (2, T, d) the stream after each layer, index 0 = embeddings
    caches: list  # per block: the first sentence's cache (layers.sequence_cache), for its records and the backward
    rows: dict  # per-layer diagnostics of the first sentence, as long as `states`
    first_nonfinite: int | None = None
    gradient_norms: dict = field(default_factory=dict)  # depth -> (loss, norms per layer): see gradient_norms
    backward: dict = field(default_factory=dict)  # depth -> (loss, gradients so far, top first): a backward under way


# Depth d uses the first d of the same 24 blocks, so a deeper run only extends a shallower one. The lab keeps each
# arrangement's layers: dragging the depth slider computes the layers it has not seen yet, not the whole stack.
_LAYERS_CACHE: dict = {}
_LAYERS_CACHE_SIZE = 16  # arrangements kept (the lab has 16 switch settings); each is at most about 1.6 MB


def clear_cache() -> None:
    """Forget every computed layer (the next run_ablation computes from the embeddings up)."""
    _LAYERS_CACHE.clear()


def prepare(config: AblationConfig, tokens, permuted_tokens=None, blocks: int = 1) -> bool:
    """Compute up to `blocks` more of `config`'s layers (never past config.depth) into the cache of computed layers,
    so that a later run_ablation of it finds them; True once all of them are computed.

    For a caller with time to spare (the lab, between a reader's changes): nothing else changes, since a result is
    the same, number for number, whichever call computed its layers.
    """
    tokens, permuted = _checked_pair(config, tokens, permuted_tokens, "prepare")
    known = _LAYERS_CACHE.get(_key(config, tokens, permuted))
    target = min(config.depth, (len(known.states) - 1 if known else 0) + blocks)
    _stack(dataclasses.replace(config, depth=target), tokens, permuted)
    return target == config.depth


def preparing(configs: list[AblationConfig], tokens, permuted_tokens=None) -> Callable[[], bool]:
    """A step for idle time (explainer.idle.later): each call computes one more block of the next of `configs` that
    still lacks some (its forward pass, then its backward pass: prepare_gradients), taking them in turn; it returns
    True once run_ablation and gradient_norms of every one of them would compute nothing.

    A sandbox passes the arrangements its reader's next change may ask for (one switch away, or deeper), so that
    change finds its layers cached instead of computing a whole stack inside one frame.
    """
    waiting = list(configs)

    def step() -> bool:
        config = waiting.pop(0)
        if not prepare_gradients(config, tokens, permuted_tokens, blocks=1):
            waiting.append(config)
        return not waiting

    return step


def _key(config: AblationConfig, tokens: np.ndarray, permuted: np.ndarray) -> tuple:
    return dataclasses.replace(config, depth=max_depth(config)), tokens.tobytes(), permuted.tobytes()


def _stack(config: AblationConfig, tokens: np.ndarray, permuted: np.ndarray) -> _Stack:
    key = _key(config, tokens, permuted)
    stack = _LAYERS_CACHE.pop(key, None)
    if stack is None:
        # (2, T, d): the sentence and its permutation side by side
        h = layers.embed(init_weights(config).embeddings, np.stack([tokens, permuted]), config)
        stack = _Stack([h], [], _rows(h[:1], [], [], math.nan, config))
    _extend(stack, config)
    _LAYERS_CACHE[key] = stack  # most recently used last
    while len(_LAYERS_CACHE) > _LAYERS_CACHE_SIZE:
        del _LAYERS_CACHE[next(iter(_LAYERS_CACHE))]
    return stack


def _extend(stack: _Stack, config: AblationConfig) -> None:
    start = len(stack.states)
    if start > config.depth:
        return
    weights = init_weights(config)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for layer in range(start - 1, config.depth):
            before = stack.states[-1]
            if stack.first_nonfinite is None:
                h, caches = layers.block(before, *(w[layer] for w in weights.for_forward), config)
                if not np.isfinite(h).all():
                    stack.first_nonfinite = layer + 1
                drawn = (getattr(weights, name)[layer] for name in layers.BLOCK_WEIGHTS)
                stack.caches.append(layers.sequence_cache(caches, 0, *drawn))
            else:
                h = before * math.nan
                stack.caches.append(None)
            stack.states.append(h)
        new = np.stack([state[0] for state in stack.states[start - 1:]])  # (k + 1, T, d): the layer before, then new
        rows = _rows(new[1:], new[:-1], stack.caches[start - 1:], stack.rows["residual_rms"][-1], config)
    for name, values in rows.items():
        stack.rows[name].extend(values)


def _rows(h: np.ndarray, before: np.ndarray, caches: list, rms_before: float, config: AblationConfig) -> dict:
    """The diagnostics of k consecutive layers of the first sentence at once: h (k, T, d) after each, `before` the
    stream each one got (empty for the embeddings), their caches, and the RMS of the stream before the first."""
    length, width = h.shape[1:]
    finite = np.isfinite(h).all(axis=(1, 2))  # (k,)
    rms = np.sqrt(np.einsum("ltd,ltd->l", h, h) / (length * width))  # (k,)
    centred = h - h.sum(axis=1, keepdims=True) / length  # (k, T, d) what tells the positions apart
    signal = np.sqrt(np.einsum("ltd,ltd->l", centred, centred) / (length * width))
    rows = {"residual_rms": np.where(finite, rms, math.nan), "token_signal": np.where(finite, signal, math.nan),
            "cosine_similarity": np.where(finite[:, None, None], cosine_similarities(h), math.nan)}
    if len(before):
        change = h - before
        stream_before = np.concatenate([[rms_before], rows["residual_rms"][:-1]])  # (k,)
        ratio = np.sqrt(np.einsum("ltd,ltd->l", change, change) / (length * width)) / stream_before
        rows["update_ratio"] = np.where(finite & (stream_before > 0), ratio, math.nan)
    else:  # the embeddings: no block, no update, no attention
        rows["update_ratio"] = np.full(len(h), math.nan)
    rows.update(_attention_rows(caches, len(h), config))
    return {name: values.tolist() for name, values in rows.items()}


def _attention_rows(caches: list, count: int, config: AblationConfig) -> dict:
    """Per block: the spread and maximum of the first sentence's attention logits (unmasked entries, all heads) and
    the mean entropy of its attention weights; nan for blocks that did not run (past an overflow, or none)."""
    rows = {name: np.full(count, math.nan) for name in ("logit_std", "logit_max", "attention_entropy")}
    ran = [index for index, cache in enumerate(caches) if cache is not None]
    if ran:
        attention = [caches[index][0][2] for index in ran]
        length = attention[0].logits.shape[-1]
        seen = visible(length, config.causal_mask)
        logits = np.stack([a.logits[0] for a in attention])[:, :, seen]  # (k, H, n)
        weights = np.stack([a.weights[0] for a in attention])[:, :, seen]  # masked weights are 0 and add nothing
        mean = logits.sum(axis=(1, 2), keepdims=True) / logits[0].size
        rows["logit_std"][ran] = np.sqrt(((logits - mean) ** 2).sum(axis=(1, 2)) / logits[0].size)
        rows["logit_max"][ran] = logits.max(axis=(1, 2))
        rows["attention_entropy"][ran] = -(weights * np.log(weights)).sum(axis=(1, 2)) / (config.heads * length)
    return rows
