"""The ablation lab's model: its claims hold for real, at depths 1, 8 and 24, and bad input is named."""

import dataclasses
import math

import numpy as np
import pytest

from explainer import layernorm, rmsnorm
from explainer.ablation import (
    EXPLODING_GROWTH,
    VANISHING_TOKEN_SIGNAL,
    AblationConfig,
    normalise,
    run_ablation,
    tokenize,
)

SENTENCE = tokenize("the hungry cat chases the small grey dog")
SWAPPED = tokenize("the small grey dog chases the hungry cat")


def run(depth, **switches):
    return run_ablation(AblationConfig(depth=depth, **switches), SENTENCE, SWAPPED)


@pytest.mark.parametrize("depth", [1, 8, 24])
@pytest.mark.parametrize("norm", ["rmsnorm", "layernorm"])
def test_the_full_model_is_healthy_at_every_depth(depth, norm):
    result = run(depth, norm=norm)
    assert result.status == "HEALTHY", result.reason
    assert len(result.residual_rms) == depth + 1 and result.first_nonfinite_layer is None


@pytest.mark.parametrize("depth", [1, 8, 24])
def test_without_positions_and_mask_word_order_is_invisible_exactly(depth):
    # Permutation-equivariant blocks and a mean over positions: equal up to float64 rounding, by construction.
    assert run(depth, positional="none", causal_mask=False).word_order_sensitivity < 1e-12


@pytest.mark.parametrize("depth", [1, 8, 24])
@pytest.mark.parametrize("positional", ["rope", "sinusoidal"])
def test_with_positions_word_order_is_clearly_visible(depth, positional):
    assert run(depth, positional=positional, causal_mask=False).word_order_sensitivity > 0.02


def test_the_causal_mask_alone_also_reveals_order():
    # A position reads only its prefix, and prefixes differ when the words move: the mask is itself positional.
    assert run(8, positional="none", causal_mask=True).word_order_sensitivity > 0.02


@pytest.mark.parametrize("depth", [8, 24])
def test_no_residual_deep_is_vanishing_the_tokens_become_indistinguishable(depth):
    result = run(depth, residual=False)
    assert result.status == "VANISHING", result.reason
    distinct = result.token_signal[-1] / result.residual_rms[-1]
    assert distinct < VANISHING_TOKEN_SIGNAL
    # With pre-norm the stream itself does not shrink much: the loss is in what tells tokens apart.
    assert result.residual_rms[-1] > 0.1


def test_no_residual_is_fine_for_one_layer():
    assert run(1, residual=False).status == "HEALTHY"


def test_no_norm_deep_explodes_and_the_growth_compounds():
    result = run(24, norm="none")
    assert result.status in ("EXPLODING", "NAN"), result.reason
    assert result.residual_rms[-1] / result.residual_rms[0] > EXPLODING_GROWTH
    growth = np.array(result.residual_rms[1:]) / np.array(result.residual_rms[:-1])
    assert np.all(growth[4:] > 1.2)  # every layer multiplies the stream: (1 + α)^L, not + c
    assert run(1, norm="none").status == "HEALTHY"


def test_overflow_is_reported_as_nan_status_never_raised():
    # Scaling the embeddings far up makes the no-norm model overflow within a few layers.
    config = AblationConfig(depth=24, norm="none")
    from explainer import ablation

    weights = ablation.init_weights(config)
    huge = dataclasses.replace(weights, embeddings=weights.embeddings * 1e150)
    ablation._WEIGHTS_CACHE[(config.seed, config.width)] = huge
    ablation.clear_cache()  # computed layers belong to the real weights
    try:
        result = run_ablation(config, SENTENCE, SWAPPED)
    finally:
        ablation._WEIGHTS_CACHE[(config.seed, config.width)] = weights
        ablation.clear_cache()
    assert result.status == "NAN" and result.first_nonfinite_layer is not None
    assert f"layer {result.first_nonfinite_layer}" in result.reason
    assert math.isnan(result.residual_rms[-1]) and math.isnan(result.word_order_sensitivity)


def test_the_same_seed_gives_the_same_numbers_and_another_seed_others():
    first, again = run(8), run(8)
    assert first.residual_rms == again.residual_rms and first.logit_max == again.logit_max
    assert first.word_order_sensitivity == again.word_order_sensitivity
    other = run_ablation(AblationConfig(depth=8, seed=1), SENTENCE, SWAPPED)
    assert other.residual_rms != run(8).residual_rms


def test_diagnostics_are_consistent():
    result = run(6)
    assert all(0 <= e <= math.log(len(SENTENCE)) + 1e-9 for e in result.attention_entropy[1:])
    assert all(s > 0 for s in result.logit_std[1:])
    assert all(r > 0 for r in result.update_ratio[1:]) and math.isnan(result.update_ratio[0])
    assert 0 <= result.word_order_sensitivity <= 1


def test_the_models_norms_are_the_kernels_norms(rng):
    h = rng.standard_normal((2, 5, 16))
    np.testing.assert_allclose(normalise(h, "rmsnorm"), rmsnorm(h), rtol=1e-12)
    np.testing.assert_allclose(normalise(h, "layernorm"), layernorm(h), rtol=1e-12)


@pytest.mark.parametrize(
    ("switches", "message"),
    [
        ({"depth": 0}, "depth"),
        ({"depth": 25}, "depth"),
        ({"positional": "alibi"}, "positional"),
        ({"norm": "rms"}, "did you mean 'rmsnorm'"),
        ({"placement": "middle"}, "placement"),
        ({"residual": "yes"}, "residual must be True or False"),
        ({"width": 64, "heads": 3}, "heads"),
    ],
)
def test_bad_configs_name_the_argument(switches, message):
    with pytest.raises(ValueError, match=message):
        AblationConfig(**switches)


def test_bad_tokens_are_named():
    with pytest.raises(ValueError, match="tokens must be"):
        run_ablation(AblationConfig(), [3])
    with pytest.raises(ValueError, match="word ids from 0"):
        run_ablation(AblationConfig(), [0, 999])
    with pytest.raises(ValueError, match="same words"):
        run_ablation(AblationConfig(), SENTENCE, SENTENCE[:-1].tolist() + [0])
    with pytest.raises(ValueError, match="'zebra' is not in the lab's vocabulary"):
        tokenize("the zebra")


def test_a_shallower_run_after_a_deeper_one_gives_exactly_what_a_fresh_run_gives():
    # The lab keeps computed layers (depth d is the first d blocks of 24): reuse must not change a single number.
    from explainer import ablation

    for switches in ({}, {"norm": "none"}, {"residual": False, "positional": "none"}):
        ablation.clear_cache()
        fresh = {depth: run(depth, **switches) for depth in (3, 11)}
        ablation.clear_cache()
        run(24, **switches)
        for depth in (11, 3):
            again = run(depth, **switches)
            assert again.residual_rms == fresh[depth].residual_rms and again.logit_max == fresh[depth].logit_max
            assert again.word_order_sensitivity == fresh[depth].word_order_sensitivity
            assert (again.status, again.reason) == (fresh[depth].status, fresh[depth].reason)
