"""The ablation lab's model: its claims hold for real, at depths 1, 8 and 24, its gradient is the loss's derivative,
its cosine matrices show collapse, its cache of layers changes no number, and bad input is named."""

import contextlib
import dataclasses
import math
import re

import numpy as np
import pytest

from explainer import ablation, layernorm, layers, rmsnorm, trained as trained_module
from explainer.ablation import (
    EXPLODING_GROWTH,
    VANISHING_TOKEN_SIGNAL,
    AblationConfig,
    cosine_similarities,
    gradient_norms,
    init_weights,
    loss_gradients,
    next_word_loss,
    normalise,
    prepare,
    run_ablation,
    tokenize,
)
from kernels.gradcheck import gradcheck

PER_LAYER = ("residual_rms", "token_signal", "update_ratio", "logit_std", "logit_max", "attention_entropy",
             "cosine_similarity")
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


@contextlib.contextmanager
def overflowing(config):
    """`config`'s model with its embeddings scaled far up: without a norm it overflows within a few layers."""
    weights = init_weights(config)
    ablation._WEIGHTS_CACHE[(config.seed, config.width)] = dataclasses.replace(weights,
                                                                                embeddings=weights.embeddings * 1e150)
    ablation.clear_cache()  # computed layers belong to the real weights
    try:
        yield
    finally:
        ablation._WEIGHTS_CACHE[(config.seed, config.width)] = weights
        ablation.clear_cache()


def test_overflow_is_reported_as_nan_status_never_raised():
    config = AblationConfig(depth=24, norm="none")
    with overflowing(config):
        result = run_ablation(config, SENTENCE, SWAPPED)
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
    for switches in ({}, {"norm": "none"}, {"residual": False, "positional": "none"}):
        ablation.clear_cache()
        fresh = {depth: run(depth, **switches) for depth in (3, 11)}
        ablation.clear_cache()
        run(24, **switches)
        for depth in (11, 3):
            again = run(depth, **switches)
            for name in PER_LAYER:  # nan where the other has nan, every other number equal to the last bit
                np.testing.assert_array_equal(getattr(again, name), getattr(fresh[depth], name), err_msg=name)
            assert again.word_order_sensitivity == fresh[depth].word_order_sensitivity
            assert (again.status, again.reason) == (fresh[depth].status, fresh[depth].reason)


# ---- the gradient view ------------------------------------------------------------------------------------------


def loss_from_layer(config, layer, tokens=SENTENCE):
    """The lab's loss as a function of the first sentence's stream at `layer`: the remaining blocks, then the loss."""
    weights = init_weights(config)

    def loss(h):
        for block in range(layer, config.depth):
            h = layers.block(h, *(getattr(weights, name)[block] for name in layers.BLOCK_WEIGHTS), config)[0]
        return next_word_loss(h, weights, tokens, config)[0]

    return loss


def stream_at(config, layer, tokens=SENTENCE):
    """The first sentence's stream (1, T, d) after `layer` blocks, computed here without the lab's cache."""
    weights = init_weights(config)
    h = layers.embed(weights.embeddings, tokens[None], config)
    for block in range(layer):
        h = layers.block(h, *(getattr(weights, name)[block] for name in layers.BLOCK_WEIGHTS), config)[0]
    return h


GRADIENT_SWITCHES = [{}, {"residual": False}, {"norm": "none"}, {"positional": "sinusoidal", "causal_mask": False},
                     {"placement": "post", "norm": "layernorm"}]


@pytest.mark.parametrize("switches", GRADIENT_SWITCHES,
                         ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "full")
def test_the_gradient_at_every_layer_is_the_losss_derivative(switches, rng):
    config = AblationConfig(depth=3, width=16, heads=2, **switches)
    loss, gradients = loss_gradients(config, SENTENCE, SWAPPED)
    assert loss == pytest.approx(loss_from_layer(config, config.depth)(stream_at(config, config.depth)), rel=1e-12)
    for layer in range(config.depth + 1):
        gradcheck(loss_from_layer(config, layer), lambda h, g=gradients[layer]: g, stream_at(config, layer), rng=rng,
                  name=f"d loss / d h_{layer} {switches}")


def test_the_checker_rejects_a_gradient_that_skips_the_identity(rng):
    # Backpropagating as if the residual were off drops the I of I + J_F·J_N: central differences must notice.
    config = AblationConfig(depth=2, width=16, heads=2)
    wrong = loss_gradients(dataclasses.replace(config, residual=False), SENTENCE, SWAPPED)[1][0]
    with pytest.raises(AssertionError, match=r"gradcheck\(d loss / d h_0\)"):
        gradcheck(loss_from_layer(config, 0), lambda h: wrong, stream_at(config, 0), rng=rng, name="d loss / d h_0")


def test_gradient_norms_are_the_norms_of_the_gradients_and_cached_per_depth():
    config = AblationConfig(depth=8)
    report = gradient_norms(config, SENTENCE, SWAPPED)
    loss, gradients = loss_gradients(config, SENTENCE, SWAPPED)
    assert report.loss == loss and len(report.gradient_norm) == config.depth + 1
    np.testing.assert_allclose(report.gradient_norm, [np.linalg.norm(g) for g in gradients], rtol=1e-12)
    assert gradient_norms(dataclasses.replace(config, depth=5), SENTENCE, SWAPPED).gradient_norm != report.gradient_norm
    assert gradient_norms(config, SENTENCE, SWAPPED).gradient_norm == report.gradient_norm


def test_through_the_residual_the_gradient_reaches_the_embeddings_at_the_size_it_left():
    # Every block adds its branch's gradient to the one the identity carries: at depth 24 the embeddings get a
    # gradient within a small factor of the last layer's, although 24 Jacobians lie between them.
    norms = gradient_norms(AblationConfig(depth=24), SENTENCE, SWAPPED).gradient_norm
    assert all(math.isfinite(n) and n > 0 for n in norms)
    assert 0.1 < norms[0] / norms[-1] < 10


def test_without_the_norm_the_gradient_compounds_on_the_way_down():
    norms = gradient_norms(AblationConfig(depth=24, norm="none"), SENTENCE, SWAPPED).gradient_norm
    assert norms[0] / norms[-1] > 1e3  # (1 + α) per layer going back as well as forward
    assert all(later < earlier for earlier, later in zip(norms[:-1], norms[1:]))


def test_an_overflowed_stream_has_nan_gradients_not_an_error():
    config = AblationConfig(depth=24, norm="none")
    with overflowing(config):
        report = gradient_norms(config, SENTENCE, SWAPPED)
    assert math.isnan(report.loss) and all(math.isnan(n) for n in report.gradient_norm)


# ---- the collapse view ------------------------------------------------------------------------------------------


def test_cosine_matrices_are_symmetric_with_a_unit_diagonal_and_bounded():
    result = run(12)
    assert len(result.cosine_similarity) == 13
    for layer, matrix in enumerate(np.array(result.cosine_similarity)):
        assert matrix.shape == (len(SENTENCE), len(SENTENCE))
        np.testing.assert_allclose(matrix, matrix.T, atol=1e-15, err_msg=f"layer {layer}")
        np.testing.assert_allclose(np.diag(matrix), 1.0, atol=1e-15, err_msg=f"layer {layer}")
        assert np.all(np.abs(matrix) <= 1.0)


def test_cosine_matrices_are_the_streams_cosines():
    result = run(4)
    h = stream_at(AblationConfig(depth=4), 4)[0]  # (T, d)
    unit = h / np.linalg.norm(h, axis=1, keepdims=True)
    np.testing.assert_allclose(result.cosine_similarity[4], unit @ unit.T, atol=1e-12)


def test_the_same_word_twice_is_the_same_vector_at_the_embeddings():
    first, second = np.flatnonzero(SENTENCE == tokenize("the")[0])  # "the" at positions 0 and 4
    assert run(1).cosine_similarity[0][first][second] == pytest.approx(1.0, abs=1e-15)


def test_without_the_residual_the_positions_collapse_to_one_direction():
    collapsed = np.array(run(24, residual=False).cosine_similarity[-1])
    assert collapsed.min() > 0.999  # all ones: rank collapse
    kept = np.array(run(24).cosine_similarity[-1])
    assert kept.min() < 0.9  # with the residual the positions still point different ways


def test_cosine_similarities_of_given_vectors():
    h = np.array([[3.0, 0.0], [0.0, 2.0], [-1.0, 0.0], [5.0, 5.0]])
    np.testing.assert_allclose(cosine_similarities(h), [[1, 0, -1, 2**-0.5], [0, 1, 0, 2**-0.5], [-1, 0, 1, -2**-0.5],
                                                        [2**-0.5, 2**-0.5, -2**-0.5, 1]], atol=1e-15)
    np.testing.assert_array_equal(cosine_similarities(np.ones((3, 4)) * 7.5), np.ones((3, 3)))
    with_zero = cosine_similarities(np.array([[1.0, 0.0], [0.0, 0.0]]))
    assert with_zero[0, 0] == 1 and np.isnan(with_zero[1]).all() and np.isnan(with_zero[:, 1]).all()


def test_past_an_overflow_the_cosines_are_nan():
    config = AblationConfig(depth=24, norm="none")
    with overflowing(config):
        result = run_ablation(config, SENTENCE, SWAPPED)
    assert not np.isnan(result.cosine_similarity[0]).any()
    assert np.isnan(result.cosine_similarity[result.first_nonfinite_layer]).all()


# ---- the cache of layers and the layout for Pyodide -------------------------------------------------------------


def test_prepare_computes_layers_ahead_without_changing_a_number():
    config = AblationConfig(depth=10, residual=False)
    ablation.clear_cache()
    fresh = run_ablation(config, SENTENCE, SWAPPED)
    ablation.clear_cache()
    done = [prepare(config, SENTENCE, SWAPPED, blocks=4) for _ in range(3)]
    assert done == [False, False, True]  # 4, 8, then the last 2 of 10 blocks
    prepared = run_ablation(config, SENTENCE, SWAPPED)
    for name in PER_LAYER:
        np.testing.assert_array_equal(getattr(prepared, name), getattr(fresh, name), err_msg=name)
    assert prepared.word_order_sensitivity == fresh.word_order_sensitivity


def test_the_column_major_layout_for_pyodide_gives_the_same_numbers(monkeypatch):
    # Pyodide's numpy (no BLAS) sums every product in the same order whatever the layout, so there the numbers are
    # identical; under CPython's BLAS the layout may move the last bits, hence the tolerance here.
    configs = [AblationConfig(depth=12, **switches) for switches in ({}, {"norm": "none"}, {"residual": False})]
    expected = [(run_ablation(c, SENTENCE, SWAPPED), gradient_norms(c, SENTENCE, SWAPPED)) for c in configs]
    monkeypatch.setattr(layers, "WITHOUT_BLAS", True)
    monkeypatch.setattr(ablation, "_WEIGHTS_CACHE", {})
    ablation.clear_cache()
    try:
        forward = init_weights(configs[0]).for_forward
        assert all(w[0].flags.f_contiguous and not w[0].flags.c_contiguous for w in forward)
        for config, (result, gradients) in zip(configs, expected):
            again = run_ablation(config, SENTENCE, SWAPPED)
            for name in PER_LAYER:
                np.testing.assert_allclose(getattr(again, name), getattr(result, name), rtol=1e-12, atol=1e-14,
                                           err_msg=name)  # atol: token_signal is a difference of near-equals
            assert again.word_order_sensitivity == pytest.approx(result.word_order_sensitivity, rel=1e-9)
            np.testing.assert_allclose(gradient_norms(config, SENTENCE, SWAPPED).gradient_norm,
                                       gradients.gradient_norm, rtol=1e-12)
    finally:
        ablation.clear_cache()


# ---- the trained weights ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained():
    """The build-time trained model in the package (made by the build: trained once into the cache, then copied)."""
    from build_scripts.trained_weights import export

    export()
    return ablation.trained_config()


def letters(text: str) -> np.ndarray:
    from explainer.tasks import ALPHABET

    return np.array([ALPHABET.index(c) for c in text])


def test_the_trained_weights_are_the_experiments_full_run_and_it_reverses_strings(trained):
    from build_scripts.trained_weights import exported_config
    from explainer.tasks import decode
    from explainer.training import TrainingConfig, generate

    saved, weights = trained_module.trained_model()
    assert saved == dataclasses.asdict(exported_config())
    config = TrainingConfig(**saved)
    assert (config.depth, config.positional, config.residual, config.norm, config.causal_mask) == (
        8, "rope", True, "rmsnorm", True)
    prompts = np.stack([letters("badge|"), letters("egdab|")])  # the lab's strings, neither trained on
    assert [decode(row) for row in generate(weights, prompts, 5, config)] == ["egdab", "badge"]


def test_the_lab_reads_the_trained_weights_at_their_own_size(trained):
    _, weights = trained_module.trained_model()
    used = init_weights(trained)
    assert (trained.width, trained.heads, trained.depth) == (32, 4, 8)
    for name in ("embeddings", "qkv", "out", "up", "down", "unembedding"):
        np.testing.assert_array_equal(getattr(used, name), weights[name])
    assert not np.array_equal(init_weights(AblationConfig(width=32, heads=4)).qkv[:8], used.qkv)


def test_on_the_trained_model_the_switches_still_do_what_the_architecture_says(trained):
    reversal, swapped = letters("badge|egdab"), letters("egdab|badge")
    full = run_ablation(trained, reversal, swapped)
    assert full.status == "HEALTHY"
    bag = run_ablation(dataclasses.replace(trained, positional="none", causal_mask=False), reversal, swapped)
    assert bag.word_order_sensitivity < 1e-12 < full.word_order_sensitivity
    assert run_ablation(dataclasses.replace(trained, residual=False), reversal, swapped).status == "VANISHING"
    assert run_ablation(dataclasses.replace(trained, norm="none"), reversal, swapped).status == "EXPLODING"


def test_a_shallower_trained_run_is_the_first_blocks_of_the_deeper_one(trained):
    reversal, swapped = letters("badge|egdab"), letters("egdab|badge")
    deep = run_ablation(trained, reversal, swapped)
    ablation.clear_cache()
    shallow = run_ablation(dataclasses.replace(trained, depth=3), reversal, swapped)
    assert shallow.residual_rms == deep.residual_rms[:4]


@pytest.mark.parametrize(("changes", "message"), [
    ({"weights": "learned"}, "weights must be one of"),
    ({"width": 64}, "width must be 32 with the trained weights (got 64)"),
    ({"heads": 2}, "heads must be 4 with the trained weights (got 2)"),
    ({"depth": 9}, "depth must be at most 8 with the trained weights"),
])
def test_bad_trained_configs_name_the_argument(trained, changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        dataclasses.replace(trained, **changes)


def test_the_trained_model_takes_letters_not_the_random_models_words(trained):
    with pytest.raises(ValueError, match=re.escape("tokens must be word ids from 0 to 10")):
        run_ablation(trained, SENTENCE, SWAPPED)


def test_preparing_steps_through_every_arrangement_a_block_at_a_time():
    configs = [AblationConfig(depth=3), AblationConfig(depth=2, norm="layernorm", placement="post")]
    ablation.clear_cache()
    fresh = [(run_ablation(c, SENTENCE, SWAPPED), gradient_norms(c, SENTENCE, SWAPPED)) for c in configs]
    ablation.clear_cache()
    step = ablation.preparing(configs, SENTENCE, SWAPPED)
    done = [step() for _ in range(12)]
    # Each arrangement: its blocks forward, then the loss and its blocks backward; the two arrangements in turn.
    assert done == [False] * 11 + [True]
    stacks = sorted(ablation._LAYERS_CACHE.values(), key=lambda stack: len(stack.states))
    assert [(len(stack.states) - 1, list(stack.gradient_norms), stack.backward) for stack in stacks] == [
        (2, [2], {}), (3, [3], {})]
    for config, (result, gradients) in zip(configs, fresh):
        np.testing.assert_array_equal(run_ablation(config, SENTENCE, SWAPPED).residual_rms, result.residual_rms)
        np.testing.assert_array_equal(gradient_norms(config, SENTENCE, SWAPPED).gradient_norm, gradients.gradient_norm)


def test_a_backward_pass_computed_in_parts_gives_the_same_numbers_as_in_one_go():
    for config in (AblationConfig(depth=6), AblationConfig(depth=6, residual=False, norm="none")):
        ablation.clear_cache()
        whole = gradient_norms(config, SENTENCE, SWAPPED)
        ablation.clear_cache()
        calls = 1
        while not ablation.prepare_gradients(config, SENTENCE, SWAPPED, blocks=2):
            calls += 1
        assert calls == 7  # 6 blocks forward in 3 calls, then the loss and 6 blocks backward in 4
        parts = gradient_norms(config, SENTENCE, SWAPPED)
        assert parts.loss == whole.loss or (np.isnan(parts.loss) and np.isnan(whole.loss))
        np.testing.assert_array_equal(parts.gradient_norm, whole.gradient_norm)
    ablation.clear_cache()
