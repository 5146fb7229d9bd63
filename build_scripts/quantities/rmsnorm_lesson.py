"""Numbers the lesson "Normalize what the branch reads" and its second page, "The calculus behind RMSNorm", quote."""

import math

import numpy as np

from build_scripts.quantities import number, quantity, vector
from build_scripts.quantities.ablation_lesson import require
from explainer import (
    Branch,
    constant_recurrence,
    perpendicular_length_change,
    postnorm_block_jacobian,
    prenorm_block_jacobian,
    projection,
    projection_matrix,
    proportional_recurrence,
    rejection_matrix,
    rmsnorm,
    rmsnorm_jacobian,
    softmax,
    softmax_jacobian,
    tangent_zoom,
    taylor_approx,
)
from explainer.ablation import AblationConfig, run_ablation, tokenize

H = np.array([3.0, 4.0])  # (2,) the essay's h
LONG_H = np.array([9.0, 12.0])  # (2,) the same direction, three times longer
V = np.array([5.0, 0.0])  # (2,) the vector the projection section splits
GAINS = np.array([2.0, 0.5])  # (2,) unequal gains, to show what γ does and does not change
SHORT_H = 0.1 * H  # (2,) a short vector, for which ε is no longer negligible
LARGE_EPS = 0.1  # ε far above real settings (1e-6 to 1e-5), so its effect is visible at d = 2
R, NUDGES = 5.0, (0.1, 0.05)  # the essay's length and its two sideways nudges
X0, DX = 3.0, 0.1  # where the Taylor example of x² is taken, and the step
ZOOM_HALF_WIDTHS = (1.0, 0.25, 0.0625)  # the tangent_zoom illustration's windows around x₀ = 1
PRACTICAL_DEPTH, LONG_DEPTH = 6, 24  # the lab model's depths quoted in the practical test
LAB_SENTENCE = tokenize("the hungry cat chases the small grey dog")
LAB_SWAPPED = tokenize("the small grey dog chases the hungry cat")


def _unit(h: np.ndarray) -> np.ndarray:
    return h / np.linalg.norm(h)


def _power_of_ten(value: float, digits: int = 1) -> str:
    """A tiny or huge number as mantissa × 10 with a superscript exponent: 3.7 × 10⁻⁴⁴."""
    mantissa, exponent = f"{value:.{digits}e}".split("e")
    superscript = str(int(exponent)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{number(float(mantissa), digits)} × 10{superscript}"


def _latex_matrix(matrix: np.ndarray, digits: int) -> str:
    rows = [" & ".join(number(entry, digits) for entry in row) for row in matrix]
    return r"\begin{bmatrix} " + r" \\ ".join(rows) + r" \end{bmatrix}"


def _lab(norm: str, depth: int):
    return run_ablation(AblationConfig(depth=depth, norm=norm), LAB_SENTENCE, LAB_SWAPPED)


# ---- length and direction -------------------------------------------------------------------------------------------


@quantity("geometry.length_3_4")
def _():
    return number(np.linalg.norm(H), 0)


@quantity("geometry.unit_3_4")
def _():
    return vector(_unit(H), 3)


@quantity("geometry.double_3_4")
def _():
    return vector(2 * H, 0)


@quantity("geometry.length_9_12")
def _():
    return number(np.linalg.norm(LONG_H), 0)


@quantity("geometry.ratio_9_12")
def _():
    return number(np.linalg.norm(LONG_H) / np.linalg.norm(H), 0)


# ---- RMSNorm and what γ and ε change -------------------------------------------------------------------------------


@quantity("rmsnorm.radius_2d")
def _():
    return number(np.linalg.norm(rmsnorm(H, eps=0)), 3)


@quantity("rmsnorm.normalized_3_4")
def _():
    return vector(rmsnorm(H, eps=0), 3)


@quantity("rmsnorm.gains_3_4")
def _():
    return vector(rmsnorm(H, gain=GAINS, eps=0), 3)


@quantity("rmsnorm.gains_direction_3_4")
def _():
    return vector(_unit(rmsnorm(H, gain=GAINS, eps=0)), 3)


@quantity("rmsnorm.short_rms")
def _():
    return number(np.sqrt(np.mean(SHORT_H**2)), 3)


@quantity("rmsnorm.eps_short_length")
def _():
    return number(np.linalg.norm(rmsnorm(SHORT_H, eps=LARGE_EPS)), 3)


@quantity("rmsnorm.eps_long_length")
def _():
    return number(np.linalg.norm(rmsnorm(H, eps=LARGE_EPS)), 3)


# ---- attention and scale --------------------------------------------------------------------------------------------


@quantity("attention.softmax_1_2")
def _():
    return vector(softmax(np.array([1.0, 2.0])), 3)


@quantity("attention.score_multiplier_10")
def _():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal(4), rng.standard_normal(4)  # (4,), (4,)
    return number((10 * q) @ (10 * k) / (q @ k), 0)


@quantity("attention.score_multiplier_3")
def _():
    q, k = np.array([1.0, 2.0]), np.array([3.0, -1.0])  # (2,), (2,) any query and key with a nonzero product
    return number((3 * q) @ (3 * k) / (q @ k), 0)


@quantity("attention.scores_times_100")
def _():
    return vector(100 * np.array([1.0, 2.0]), 0)


@quantity("attention.softmax_10_20")
def _():
    return vector(softmax(np.array([10.0, 20.0])), 6)


@quantity("attention.softmax_slope_1_2")
def _():
    return number(softmax_jacobian(np.array([1.0, 2.0]))[0, 0], 3)


@quantity("attention.softmax_slope_10_20")
def _():
    return number(softmax_jacobian(np.array([10.0, 20.0]))[0, 0], 6)


@quantity("attention.scale_for_tenfold_scores")
def _():
    return number(math.sqrt(10), 2)


@quantity("attention.saturation_scale")
def _():
    """The scale s of q and k past which scores s²·[1, 2] give the second key over 99% of the weight."""
    gap = math.log(0.99 / 0.01)  # the score gap at which softmax of two scores splits 1% / 99%
    return number(math.sqrt(gap), 2)


@quantity("attention.softmax_100_200_first")
def _():
    return _power_of_ten(softmax(100 * np.array([1.0, 2.0]))[0], 1)


# ---- the two recurrences --------------------------------------------------------------------------------------------


@quantity("recurrence.compound_16")
def _():
    return number(proportional_recurrence(1.0, 0.1, 16)[-1], 3)


@quantity("recurrence.constant_gain_16")
def _():
    history = constant_recurrence(0.0, 0.1, 16)
    return number(history[-1] - history[0], 1)


@quantity("recurrence.constant_16")
def _():
    return number(constant_recurrence(1.0, 0.1, 16)[-1], 1)


# ---- the practical test, on the lab's untrained model ---------------------------------------------------------------


@quantity("practical.rms_embeddings")
def _():
    return number(_lab("none", PRACTICAL_DEPTH).residual_rms[0], 2)


@quantity("practical.rms_last_nonorm")
def _():
    return number(_lab("none", PRACTICAL_DEPTH).residual_rms[-1], 1)


@quantity("practical.rms_last_rmsnorm")
def _():
    return number(_lab("rmsnorm", PRACTICAL_DEPTH).residual_rms[-1], 1)


@quantity("practical.logit_spread_nonorm")
def _():
    return number(_lab("none", PRACTICAL_DEPTH).logit_std[-1], 0)


@quantity("practical.logit_spread_rmsnorm")
def _():
    return number(_lab("rmsnorm", PRACTICAL_DEPTH).logit_std[-1], 2)


@quantity("practical.rms_growth_rmsnorm_24")
def _():
    rms = _lab("rmsnorm", LONG_DEPTH).residual_rms
    return number(rms[-1] / rms[0], 1)


# ---- PreNorm or PostNorm, in the lab's model (the norm_placement sandbox's own readouts) ----------------------------


def _placement(placement: str, norm: str = "rmsnorm", depth: int = LONG_DEPTH) -> dict:
    """The norm_placement sandbox at these settings: its readouts' values by label, and its status under "status"."""
    from explainer.sandbox import get_sandbox

    shown = get_sandbox("norm_placement").render({"placement": placement, "norm": norm, "depth": depth})
    return {**{item["label"]: item["value"] for item in shown["readouts"]}, "status": shown["status"]["label"]}


KEPT = "gradient at the embeddings ÷ at the top"


@quantity("placement.kept_pre_24")
def _():
    value = _placement("pre")[KEPT]
    require(value > 1, "in PreNorm the gradient reaches the embeddings larger than it left the top")
    return number(value, 1)


@quantity("placement.kept_post_24")
def _():
    value = _placement("post")[KEPT]
    require(value < 0.5, "in PostNorm the gradient reaches the embeddings at under half its size at the top")
    return number(value, 2)


@quantity("placement.kept_post_24_layernorm")
def _():
    value = _placement("post", "layernorm")[KEPT]
    require(value < 0.5, "with LayerNorm too, PostNorm's gradient arrives at under half its size")
    return number(value, 2)


@quantity("placement.rms_pre_24")
def _():
    return number(_placement("pre")["stream RMS, last layer"], 1)


@quantity("placement.rms_post_24")
def _():
    values = [_placement("post", norm, depth)["stream RMS, last layer"] for norm in ("rmsnorm", "layernorm")
              for depth in (1, 12, LONG_DEPTH)]
    require(max(abs(value - 1) for value in values) < 1e-3, "in PostNorm the stream's RMS is 1 after every block")
    return number(values[-1], 2)


@quantity("placement.distinct_post_24")
def _():
    post, pre = _placement("post"), _placement("pre")
    require(post["status"] == "VANISHING" and pre["status"] == "HEALTHY",
                  "at depth 24 PostNorm reads VANISHING and PreNorm HEALTHY")
    return number(post["tokens still distinct"], 1)


@quantity("placement.distinct_pre_24")
def _():
    return number(_placement("pre")["tokens still distinct"], 0)


# ---- derivatives as local linear maps -------------------------------------------------------------------------------


@quantity("taylor.exact_3")
def _():
    return number(taylor_approx("square", X0, DX, 2), 2)


@quantity("taylor.linear_3")
def _():
    return number(taylor_approx("square", X0, DX, 1), 1)


@quantity("taylor.error_3")
def _():
    return number(taylor_approx("square", X0, DX, 2) - taylor_approx("square", X0, DX, 1), 2)


@quantity("taylor.zoom_gaps")
def _():
    gaps = [tangent_zoom("square", 1.0, w).max_gap for w in ZOOM_HALF_WIDTHS]
    return ", ".join(number(gap, digits) for gap, digits in zip(gaps, (0, 4, 5)))


@quantity("taylor.zoom_shrink")
def _():
    wide, narrow = (tangent_zoom("square", 1.0, w).max_gap for w in ZOOM_HALF_WIDTHS[:2])
    return number(wide / narrow, 0)


@quantity("taylor.zoom_factor")
def _():
    return number(ZOOM_HALF_WIDTHS[0] / ZOOM_HALF_WIDTHS[1], 0)


# ---- a sideways nudge -----------------------------------------------------------------------------------------------


@quantity("length.new_0_1")
def _():
    return number(R + perpendicular_length_change(R, NUDGES[0]), 3)


@quantity("length.new_0_1_long")
def _():
    return number(R + perpendicular_length_change(R, NUDGES[0]), 7)


@quantity("length.change_0_1")
def _():
    return number(perpendicular_length_change(R, NUDGES[0]), 3)


@quantity("length.new_0_05")
def _():
    return number(R + perpendicular_length_change(R, NUDGES[1]), 5)


@quantity("length.change_0_05")
def _():
    return number(perpendicular_length_change(R, NUDGES[1]), 5)


@quantity("length.halving_ratio")
def _():
    return number(perpendicular_length_change(R, NUDGES[0]) / perpendicular_length_change(R, NUDGES[1]), 4)


@quantity("length.tenfold_ratio")
def _():
    return number(perpendicular_length_change(R, 0.1) / perpendicular_length_change(R, 0.01), 2)


@quantity("length.curvature_5")
def _():
    """The second derivative of √(r² + ε²) in ε at ε = 0, by central differences: 1/r."""
    step = 1e-3
    nudged = perpendicular_length_change(R, np.array([-step, 0.0, step]))  # (3,) Δr at −step, 0, +step
    return number((nudged[0] - 2 * nudged[1] + nudged[2]) / step**2, 1)


# ---- projection -----------------------------------------------------------------------------------------------------


@quantity("projection.dot")
def _():
    return number(_unit(H) @ V, 0)


@quantity("projection.parallel")
def _():
    return vector(projection(V, H)[0], 3)


@quantity("projection.perpendicular")
def _():
    return vector(projection(V, H)[1], 3)


@quantity("projection.check_term")
def _():
    return number(_unit(H)[0] * projection(V, H)[1][0], 2)


@quantity("projection.check")
def _():
    return number(_unit(H) @ projection(V, H)[1], 0)


@quantity("projection.along_matrix")
def _():
    return _latex_matrix(projection_matrix(H), 2)


@quantity("projection.across_matrix")
def _():
    return _latex_matrix(rejection_matrix(H), 2)


# ---- the Jacobian of RMSNorm ----------------------------------------------------------------------------------------


@quantity("jacobian.scale_3_4")
def _():
    return number(np.sqrt(H.size) / np.linalg.norm(H), 3)


@quantity("jacobian.matrix_3_4")
def _():
    return _latex_matrix(rmsnorm_jacobian(H, eps=0), 3)


@quantity("jacobian.radial_3_4")
def _():
    return vector(rmsnorm_jacobian(H, eps=0) @ _unit(H), 3)


@quantity("jacobian.radial_eps")
def _():
    return number(np.linalg.norm(rmsnorm_jacobian(H, eps=LARGE_EPS) @ _unit(H)), 4)


@quantity("jacobian.sideways_eps")
def _():
    sideways = np.array([-0.8, 0.6])  # (2,) u turned a quarter turn
    return number(np.linalg.norm(rmsnorm_jacobian(H, eps=LARGE_EPS) @ sideways), 3)


# ---- back to PreNorm ------------------------------------------------------------------------------------------------


def _branches():
    rng = np.random.default_rng(0)
    linear = Branch.linear(rng.standard_normal((2, 2)))
    mlp = Branch.tanh_mlp(rng.standard_normal((8, 2)), rng.standard_normal((2, 8)))
    return linear, mlp


@quantity("block.prenorm_radial_linear")
def _():
    return vector(prenorm_block_jacobian(H, _branches()[0], norm_eps=0) @ _unit(H), 3)


@quantity("block.prenorm_radial_mlp")
def _():
    return vector(prenorm_block_jacobian(H, _branches()[1], norm_eps=0) @ _unit(H), 3)


@quantity("block.postnorm_radial_linear")
def _():
    return vector(postnorm_block_jacobian(H, _branches()[0], norm_eps=0) @ _unit(H), 3)
