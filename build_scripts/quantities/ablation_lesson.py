"""Numbers the lesson "Break the model" quotes.

Every run uses the lab's own sentences and model (explainer.sandboxes.ablation_lab), so the prose and the sandbox agree.
A quantity that backs a qualitative claim of the lesson ("stays finite", "exactly zero only when ...") checks the
claim too and stops the build if the model no longer supports it.
"""

import functools
import math

import numpy as np

from build_scripts import trained_weights
from build_scripts.quantities import number, quantity
from explainer.ablation import (EXPLODING_GROWTH, MAX_DEPTH, VANISHING_GROWTH, VANISHING_TOKEN_SIGNAL, AblationConfig,
                                AblationResult, gradient_norms, run_ablation, tokenize)
from explainer.sandboxes.ablation_lab import INPUTS, lab_config, mean_cosine
from explainer.sandboxes.ablation_lab import SENTENCE as LAB_SENTENCE
from explainer.sandboxes.ablation_lab import SWAPPED as LAB_SWAPPED

SENTENCE, SWAPPED = tokenize(LAB_SENTENCE), tokenize(LAB_SWAPPED)
LAB_DEPTH = 12  # the lab's starting depth
SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


@functools.cache
def lab(depth: int = LAB_DEPTH, positional: bool = True, residual: bool = True, rmsnorm: bool = True,
        causal_mask: bool = True, weights: str = "random") -> AblationResult:
    """The lab's model with its switches set as the sandbox sets them, on its input for those weights."""
    if weights == "trained":
        trained_weights.export()  # the package holds them once a build has begun; a lone evaluation makes sure
    config = lab_config(depth, weights, positional=positional, residual=residual, rmsnorm=rmsnorm,
                        causal_mask=causal_mask)
    return run_ablation(config, *INPUTS[weights])


def growth(result: AblationResult) -> float:
    """How many times the stream's RMS grew from the embeddings to the last layer."""
    return result.residual_rms[-1] / result.residual_rms[0]


def distinct(result: AblationResult) -> float:
    """The token-distinct signal as a fraction of the stream at the last layer (the lab's '% still distinct')."""
    return result.token_signal[-1] / result.residual_rms[-1]


def first_depth(status: str, **switches) -> int:
    """The smallest depth at which the lab's status is `status`."""
    for depth in range(1, MAX_DEPTH + 1):
        if lab(depth, **switches).status == status:
            return depth
    raise ValueError(f"the lab never reaches {status} with {switches}, though the lesson says it does")


def scientific(value: float, digits: int = 0) -> str:
    """A value as 'm × 10ⁿ' with `digits` decimals on m, e.g. 1.06 × 10⁶ (the lessons' way of writing powers)."""
    exponent = math.floor(math.log10(abs(value)))
    mantissa = round(value / 10.0**exponent, digits)
    if abs(mantissa) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    head = "" if digits == 0 and mantissa == 1 else f"{number(mantissa, digits)} × "
    return f"{head}10{str(exponent).translate(SUPERSCRIPTS)}"


def percent(fraction: float, digits: int = 0) -> str:
    """A fraction as a percentage, without the % sign."""
    return number(100 * fraction, digits)


def require(claim: bool, message: str) -> None:
    """Stop the build when the model no longer supports a sentence of the lesson."""
    if not claim:
        raise ValueError(f"the lesson's claim no longer holds in explainer.ablation: {message}")


# ---- the thresholds behind the status badge ------------------------------------------------------------------------


@quantity("ablation.exploding_growth")
def _():
    return f"{EXPLODING_GROWTH:,.0f}"


@quantity("ablation.vanishing_growth")
def _():
    return f"1/{1 / VANISHING_GROWTH:,.0f}"


@quantity("ablation.vanishing_token_signal")
def _():
    return percent(VANISHING_TOKEN_SIGNAL)


# ---- the full model -----------------------------------------------------------------------------------------------


@quantity("ablation.sensitivity_full_24")
def _():
    return number(lab(24).word_order_sensitivity, 3)


@quantity("ablation.sensitivity_full_12")
def _():
    return number(lab().word_order_sensitivity, 3)


@quantity("ablation.growth_full_12")
def _():
    return number(growth(lab()), 1)


@quantity("ablation.growth_full_24")
def _():
    result = lab(24)
    require(result.status == "HEALTHY", "the full model is HEALTHY at depth 24")
    return number(growth(result), 1)


@quantity("ablation.distinct_full_12")
def _():
    return percent(distinct(lab()))


@quantity("ablation.distinct_full_24")
def _():
    return percent(distinct(lab(24)))


# ---- the trained weights --------------------------------------------------------------------------------------------


@quantity("ablation.trained_depth")
def _():
    return str(lab(MAX_DEPTH, weights="trained").config.depth)


@quantity("ablation.trained_sensitivity")
def _():
    trained, random = lab(MAX_DEPTH, weights="trained"), lab()
    require(trained.status == "HEALTHY", "the trained model is HEALTHY with every part in place")
    require(trained.word_order_sensitivity > 2 * random.word_order_sensitivity,
            "the trained model's sensitivity is more than twice the random model's")
    return number(trained.word_order_sensitivity, 3)


@quantity("ablation.trained_sensitivity_no_pe")
def _():
    without, full = lab(MAX_DEPTH, positional=False, weights="trained"), lab(MAX_DEPTH, weights="trained")
    require(without.word_order_sensitivity < 0.6 * full.word_order_sensitivity,
            "without RoPE the trained model loses a large part of its word-order sensitivity")
    return number(without.word_order_sensitivity, 3)


@quantity("ablation.trained_sensitivity_no_pe_no_mask")
def _():
    result = lab(MAX_DEPTH, positional=False, causal_mask=False, weights="trained")
    require(result.word_order_sensitivity < 1e-12, "without positions and mask even the trained model sees no order")
    return number(result.word_order_sensitivity, 3)


# ---- experiment 1: positions ----------------------------------------------------------------------------------------


@quantity("ablation.sensitivity_no_pe_12")
def _():
    result = lab(positional=False)
    require(result.word_order_sensitivity > 0.05, "with the causal mask on, word order still shows without positions")
    return number(result.word_order_sensitivity, 3)


@quantity("ablation.mask_share_12")
def _():
    share = lab(positional=False).word_order_sensitivity / lab().word_order_sensitivity
    require(share > 0.5, "the causal mask alone keeps most of the full model's word-order sensitivity")
    return percent(share)


@quantity("ablation.sensitivity_rope_no_mask_12")
def _():
    return number(lab(causal_mask=False).word_order_sensitivity, 3)


@quantity("ablation.no_mask_healthy_depth")
def _():
    require(all(lab(depth, causal_mask=False).status == "HEALTHY" for depth in range(1, MAX_DEPTH + 1)),
            "without the mask (and with everything else on) the status stays HEALTHY at every depth")
    return str(MAX_DEPTH)


@quantity("ablation.sensitivity_no_pe_no_mask_12")
def _():
    sensitivity = lab(positional=False, causal_mask=False).word_order_sensitivity
    require(sensitivity < 1e-12, "without positions and mask the pooled outputs agree up to rounding")
    return scientific(sensitivity)


@quantity("ablation.sensitivity_no_pe_no_mask_max")
def _():
    worst = max(lab(depth, positional=False, causal_mask=False).word_order_sensitivity
                for depth in range(1, MAX_DEPTH + 1))
    require(worst < 1e-12, "without positions and mask the pooled outputs agree up to rounding at every depth")
    return scientific(worst, 2)  # "the largest it gets": the value itself, not a rounder bound below it


@quantity("ablation.sensitivity_cat_dog_bag")
def _():
    config = AblationConfig(depth=LAB_DEPTH, positional="none", causal_mask=False)
    sensitivity = run_ablation(config, tokenize("cat chases dog"), tokenize("dog chases cat")).word_order_sensitivity
    require(sensitivity < 1e-12, "'cat chases dog' and 'dog chases cat' pool to the same vector")
    return scientific(sensitivity)


# ---- experiment 2: the residual add -------------------------------------------------------------------------------


@quantity("ablation.no_residual_vanishing_depth")
def _():
    return str(first_depth("VANISHING", residual=False))


@quantity("ablation.no_residual_rms_min_24")
def _():
    return number(min(lab(24, residual=False).residual_rms), 2)


@quantity("ablation.no_residual_rms_max_24")
def _():
    result = lab(24, residual=False)
    require(growth(result) > VANISHING_GROWTH, "without the residual the stream's RMS itself does not vanish")
    return number(max(result.residual_rms), 2)


@quantity("ablation.no_residual_distinct_1")
def _():
    return percent(distinct(lab(1, residual=False)))


@quantity("ablation.no_residual_distinct_24")
def _():
    return scientific(100 * distinct(lab(24, residual=False)))


@quantity("ablation.no_residual_sensitivity_24")
def _():
    return scientific(lab(24, residual=False).word_order_sensitivity)


# ---- experiment 2, seen: how alike the positions are, and the gradient going down -------------------------------


def similarity(layer: int, depth: int = MAX_DEPTH, **switches) -> float:
    """The lab's "mean cosine between positions" at `layer` of a run `depth` blocks deep."""
    return mean_cosine(np.array(lab(depth, **switches).cosine_similarity[layer]))


def gradient_kept(depth: int = MAX_DEPTH, **switches) -> float:
    """The lab's "gradient at the embeddings ÷ at the last layer"."""
    result = lab(depth, **switches)
    norms = gradient_norms(result.config, *INPUTS[result.config.weights]).gradient_norm
    return norms[0] / norms[-1]


@quantity("ablation.similarity_no_residual_4")
def _():
    value = similarity(4, residual=False)
    require(value > 0.99, "without the residual the positions point the same way by layer 4")
    return number(value, 3)


@quantity("ablation.similarity_full_4")
def _():
    value = similarity(4)
    require(value < similarity(4, residual=False) - 0.3,
            "with the residual the positions are far less alike at layer 4")
    return number(value, 2)


@quantity("ablation.similarity_full_24")
def _():
    return number(similarity(MAX_DEPTH), 2)


@quantity("ablation.similarity_trained")
def _():
    depth = lab(MAX_DEPTH, weights="trained").config.depth
    value = similarity(depth, weights="trained")
    require(value < 0.5 * similarity(MAX_DEPTH), "the trained model keeps its positions far apart")
    return number(value, 2)


@quantity("ablation.gradient_kept_full_24")
def _():
    value = gradient_kept()
    require(value > 1, "with the residual the gradient reaches the embeddings no smaller than it left the top")
    return number(value, 1)


@quantity("ablation.gradient_kept_no_residual_24")
def _():
    value = gradient_kept(residual=False)
    require(value < 0.5, "without the residual the gradient reaches the embeddings smaller than it left the top")
    return number(value, 2)


# ---- experiment 3: normalization ------------------------------------------------------------------------------------


@quantity("ablation.no_norm_growth_1")
def _():
    result = lab(1, rmsnorm=False)
    require(result.status == "HEALTHY", "without the norm the model is HEALTHY at depth 1")
    return number(growth(result), 2)


@quantity("ablation.no_norm_exploding_depth")
def _():
    return str(first_depth("EXPLODING", rmsnorm=False))


@quantity("ablation.no_norm_growth_24")
def _():
    result = lab(24, rmsnorm=False)
    require(result.status == "EXPLODING" and result.first_nonfinite_layer is None,
            "without the norm the stream EXPLODES by depth 24 but stays finite")
    return scientific(growth(result), 2)


@quantity("ablation.no_norm_per_layer")
def _():
    return number(growth(lab(24, rmsnorm=False)) ** (1 / 24), 2)


def bfloat16_max() -> float:
    """The largest finite bfloat16: float32's largest with the 16 low bits of its significand cut off."""
    bits = np.array(np.finfo(np.float32).max, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    return float(bits.view(np.float32))


def _no_norm_stream_24() -> float:
    """The RMS of the stream after 24 blocks without a norm."""
    return float(lab(24, rmsnorm=False).residual_rms[-1])


@quantity("ablation.float16_max")
def _():
    largest = float(np.finfo(np.float16).max)
    # An RMS above a format's largest value means some entry is above it too: max |x| >= RMS(x).
    require(_no_norm_stream_24() > largest, "the depth-24 stream without a norm would overflow float16")
    return f"{largest:,.0f}"


@quantity("ablation.bfloat16_max")
def _():
    entries = len(SENTENCE) * AblationConfig().width  # the stream's T × d values
    largest_entry_bound = _no_norm_stream_24() * math.sqrt(entries)  # no entry exceeds √(T·d) times the RMS
    require(largest_entry_bound < bfloat16_max(), "the depth-24 stream without a norm fits in bfloat16")
    return scientific(bfloat16_max(), 1)


@quantity("ablation.float32_max")
def _():
    return scientific(float(np.finfo(np.float32).max), 1)


@quantity("ablation.float64_max")
def _():
    return scientific(float(np.finfo(np.float64).max), 1)
