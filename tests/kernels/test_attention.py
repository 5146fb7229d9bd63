"""Softmax and attention: stability at large scores, the causal mask, batching, and symmetry under reordering."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from explainer import attention, attention_scores, softmax, softmax_jacobian
from kernels.gradcheck import gradcheck

seeded = settings(derandomize=True, database=None, deadline=None, max_examples=60)
score_rows = arrays(float, st.tuples(st.integers(1, 4), st.integers(1, 8)), elements=st.floats(-1e4, 1e4))


def reference_attention(q, k, v, causal=False):
    """Attention for one unbatched sequence, one query and one key at a time."""
    T, S = len(q), len(k)
    weights = np.zeros((T, S))
    for i in range(T):
        visible = range(i + 1) if causal else range(S)
        scores = [q[i] @ k[j] / np.sqrt(q.shape[1]) for j in visible]
        top = max(scores)
        for j, score in zip(visible, scores):
            weights[i, j] = np.exp(score - top)
        weights[i] /= weights[i].sum()
    return weights @ v, weights


@seeded
@given(score_rows, st.floats(-1e3, 1e3))
def test_softmax_rows_are_positive_sum_to_one_and_ignore_a_shift(x, shift):
    p = softmax(x)
    assert np.all(p >= 0) and np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(softmax(x + shift), p, atol=1e-9)


def test_softmax_does_not_overflow_at_a_thousand():
    np.testing.assert_allclose(softmax([1000.0, 1001.0]), softmax([0.0, 1.0]), rtol=1e-15)
    np.testing.assert_allclose(softmax([-1000.0, -1001.0]), softmax([1.0, 0.0]), rtol=1e-15)


def test_softmax_gives_masked_entries_zero_weight_and_respects_axis():
    np.testing.assert_array_equal(softmax([0.0, -np.inf, 0.0]), [0.5, 0.0, 0.5])
    x = np.array([[0.0, 1.0], [2.0, 3.0]])
    np.testing.assert_allclose(softmax(x, axis=0), softmax(x.T).T, rtol=1e-15)


def test_softmax_jacobian_matches_finite_differences(rng):
    gradcheck(softmax, softmax_jacobian, 3 * rng.standard_normal(6), rng=rng, name="softmax")


def test_attention_matches_a_query_by_query_reference(rng):
    q, k, v = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    output, weights = attention(q, k, v)
    expected_output, expected_weights = reference_attention(q, k, v)
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-13)
    np.testing.assert_allclose(output, expected_output, rtol=1e-12, atol=1e-14)


def test_causal_attention_never_looks_ahead(rng):
    q, k, v = (rng.standard_normal((5, 4)) for _ in range(3))
    output, weights = attention(q, k, v, causal=True)
    assert np.all(weights[np.triu_indices(5, k=1)] == 0.0)
    np.testing.assert_array_equal(weights[0], [1, 0, 0, 0, 0])
    np.testing.assert_allclose(output, reference_attention(q, k, v, causal=True)[0], rtol=1e-12, atol=1e-14)
    # Changing a later value cannot change an earlier output.
    later_changed = v.copy()
    later_changed[3:] += 100.0
    np.testing.assert_array_equal(attention(q, k, later_changed, causal=True)[0][:3], output[:3])


def test_scores_are_scaled_by_root_key_width_and_masked_with_minus_infinity(rng):
    q, k = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    np.testing.assert_allclose(attention_scores(q, k), q @ k.T / 2.0, rtol=1e-15)
    masked = attention_scores(q, k, causal=True)
    assert np.all(np.isneginf(masked[np.triu_indices(3, k=1)]))
    np.testing.assert_array_equal(masked[np.tril_indices(3)], (q @ k.T / 2.0)[np.tril_indices(3)])


@pytest.mark.parametrize("causal", [False, True])
def test_batches_match_a_loop_over_sequences(rng, causal):
    q, k, v = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 4, 6))
    output, weights = attention(q, k, v, causal=causal)
    assert output.shape == (2, 3, 4, 6) and weights.shape == (2, 3, 4, 4)
    for index in np.ndindex(2, 3):
        single_output, single_weights = attention(q[index], k[index], v[index], causal=causal)
        np.testing.assert_allclose(output[index], single_output, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(weights[index], single_weights, rtol=1e-13, atol=1e-15)


def test_keys_and_values_broadcast_across_a_batch_of_queries(rng):
    q, k, v = rng.standard_normal((3, 2, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    output, _ = attention(q, k, v)
    for b in range(3):
        np.testing.assert_allclose(output[b], attention(q[b], k, v)[0], rtol=1e-13)


def test_softmax_batches_match_a_loop_over_rows(rng):
    x = rng.standard_normal((3, 4, 5))
    for index in np.ndindex(3, 4):
        np.testing.assert_allclose(softmax(x)[index], softmax(x[index]), rtol=1e-15)


def test_without_a_mask_attention_is_permutation_equivariant(rng):
    q, k, v = rng.standard_normal((5, 3)), rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    order = rng.permutation(5)
    output, _ = attention(q, k, v)
    np.testing.assert_allclose(attention(q[order], k, v)[0], output[order], rtol=1e-13)
    np.testing.assert_allclose(attention(q, k[order], v[order])[0], output, rtol=1e-13)


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda: softmax([1.0, np.nan]), r"softmax: x must be finite or -inf"),
        (lambda: softmax([1.0, np.inf]), r"softmax: x must be finite or -inf"),
        (lambda: softmax([-np.inf, -np.inf]), r"softmax: x must have at least one entry above -inf"),
        (lambda: softmax(np.ones(3), axis=1), r"softmax: axis must be an integer in -1\.\.0"),
        (lambda: softmax_jacobian(np.ones((2, 2))), r"softmax_jacobian: x must be a non-empty 1-D vector"),
        (lambda: attention(np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 1))), r"attention: q and k must share"),
        (lambda: attention(np.ones((2, 3)), np.ones((2, 3)), np.ones((3, 1))), r"attention: k and v must have"),
        (lambda: attention(np.ones(3), np.ones((2, 3)), np.ones((2, 1))), r"attention: q must have at least 2"),
        (lambda: attention(np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 1)), causal=True),
         r"attention: causal=True needs as many queries as keys \(got T=2, S=4\)"),
        (lambda: attention(np.ones((2, 2, 3)), np.ones((3, 2, 3)), np.ones((3, 2, 1))),
         r"attention: the leading \(batch\) axes"),
        (lambda: attention(np.ones((2, 3)), [[np.nan] * 3] * 2, np.ones((2, 1))), r"attention: k must be finite"),
        (lambda: attention_scores(np.ones((2, 3)), np.ones((2, 2))), r"attention_scores: q and k must share"),
    ],
)
def test_bad_input_is_refused_with_the_argument_named(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()
