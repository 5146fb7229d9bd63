"""RMSNorm and LayerNorm: Jacobians against finite differences, invariances, batching, and refusals of bad input."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from explainer import layernorm, layernorm_jacobian, rmsnorm, rmsnorm_jacobian
from kernels.gradcheck import gradcheck

# Derandomised and without a database: hypothesis runs the same examples on every machine and writes no files.
seeded = settings(derandomize=True, database=None, deadline=None, max_examples=60)
vectors = arrays(float, st.integers(1, 8), elements=st.floats(-1e3, 1e3, allow_subnormal=False))


@pytest.mark.parametrize("width", [1, 2, 5, 16])
@pytest.mark.parametrize("with_gain", [False, True])
@pytest.mark.parametrize("eps", [0.0, 1e-6, 0.5])
def test_rmsnorm_jacobian_matches_finite_differences(rng, width, with_gain, eps):
    h = rng.standard_normal(width)
    gain = rng.uniform(0.5, 2.0, width) if with_gain else None
    gradcheck(lambda x: rmsnorm(x, gain, eps), lambda x: rmsnorm_jacobian(x, gain, eps), h, rng=rng, name="rmsnorm")


@pytest.mark.parametrize("width", [2, 5, 16])
@pytest.mark.parametrize("with_affine", [False, True])
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.5])
def test_layernorm_jacobian_matches_finite_differences(rng, width, with_affine, eps):
    h = rng.standard_normal(width)
    gain, bias = (rng.uniform(0.5, 2.0, width), rng.standard_normal(width)) if with_affine else (None, None)
    gradcheck(
        lambda x: layernorm(x, gain, bias, eps), lambda x: layernorm_jacobian(x, gain, bias, eps), h, rng=rng,
        name="layernorm",
    )


def test_rmsnorm_jacobian_reduces_to_the_idealised_form(rng):
    h = rng.standard_normal(7)
    u = h / np.linalg.norm(h)
    idealised = np.sqrt(h.size) / np.linalg.norm(h) * (np.eye(h.size) - np.outer(u, u))
    np.testing.assert_allclose(rmsnorm_jacobian(h, eps=0.0), idealised, rtol=1e-12, atol=1e-14)


@seeded
@given(vectors, st.floats(1e-3, 1e3))
def test_rmsnorm_ignores_positive_scale(h, c):
    assume(np.linalg.norm(h) > 1e-3)
    np.testing.assert_allclose(rmsnorm(c * h, eps=0.0), rmsnorm(h, eps=0.0), rtol=1e-12, atol=1e-12)


@seeded
@given(vectors.filter(lambda h: h.size >= 2), st.floats(1e-3, 1e3), st.floats(-1e3, 1e3))
def test_layernorm_ignores_positive_scale_and_shift(h, c, shift):
    assume(np.std(h) > 1e-2)
    np.testing.assert_allclose(layernorm(c * h + shift, eps=0.0), layernorm(h, eps=0.0), rtol=1e-9, atol=1e-9)


@seeded
@given(vectors)
def test_rmsnorm_jacobian_kills_the_radial_direction(h):
    assume(np.linalg.norm(h) > 1e-3)
    # Scaling h along itself cannot change the output, so the derivative along h is zero.
    jacobian_times_h = rmsnorm_jacobian(h, eps=0.0) @ h
    assert np.linalg.norm(jacobian_times_h) <= 1e-12 * np.sqrt(h.size)


def test_layernorm_jacobian_kills_the_radial_and_constant_directions(rng):
    h = rng.standard_normal(6)
    J = layernorm_jacobian(h, eps=0.0)
    np.testing.assert_allclose(J @ h, 0.0, atol=1e-12)
    np.testing.assert_allclose(J @ np.ones(6), 0.0, atol=1e-12)


@pytest.mark.parametrize("jacobian", [rmsnorm_jacobian, layernorm_jacobian])
def test_jacobians_without_gain_are_symmetric(rng, jacobian):
    J = jacobian(rng.standard_normal(5))
    np.testing.assert_allclose(J, J.T, atol=1e-14)


def test_rmsnorm_output_has_unit_rms_and_layernorm_zero_mean_unit_variance(rng):
    h = rng.standard_normal((4, 9)) * 5 + 3
    np.testing.assert_allclose(np.sqrt(np.mean(rmsnorm(h, eps=0.0) ** 2, axis=-1)), 1.0, rtol=1e-12)
    normalised = layernorm(h, eps=0.0)
    np.testing.assert_allclose(normalised.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(normalised.var(axis=-1), 1.0, rtol=1e-12)


def test_layernorm_is_rmsnorm_of_the_centred_vector(rng):
    h, gain, bias = rng.standard_normal(8), rng.uniform(0.5, 2, 8), rng.standard_normal(8)
    expected = rmsnorm(h - h.mean(), gain, eps=1e-3) + bias
    np.testing.assert_allclose(layernorm(h, gain, bias, eps=1e-3), expected, rtol=1e-13)


def test_eps_keeps_the_zero_vector_finite():
    np.testing.assert_array_equal(rmsnorm(np.zeros(4)), np.zeros(4))
    np.testing.assert_array_equal(layernorm(np.full(4, 2.0)), np.zeros(4))


@pytest.mark.parametrize("norm", [rmsnorm, layernorm])
def test_batches_match_a_loop_over_rows(rng, norm):
    h, gain = rng.standard_normal((2, 3, 6)), rng.uniform(0.5, 2.0, 6)
    batched = norm(h, gain)
    for index in np.ndindex(h.shape[:-1]):
        np.testing.assert_allclose(batched[index], norm(h[index], gain), rtol=1e-14, atol=1e-15)


def test_outputs_are_float64_even_for_integer_input():
    assert rmsnorm([3, 4]).dtype == np.float64
    assert layernorm_jacobian([1, 2, 4]).dtype == np.float64


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda: rmsnorm_jacobian(np.zeros(3), eps=0.0), r"rmsnorm_jacobian: h must not be the zero vector"),
        (lambda: rmsnorm(np.zeros((2, 3)), eps=0.0), r"rmsnorm: h must not be an all-zero vector"),
        (lambda: layernorm(np.ones(3), eps=0.0), r"layernorm: h must not be a constant vector"),
        (lambda: layernorm_jacobian(np.ones(3), eps=0.0), r"layernorm_jacobian: h must not be a constant"),
        (lambda: rmsnorm(np.ones(3), eps=-1e-6), r"rmsnorm: eps must be ≥ 0"),
        (lambda: layernorm_jacobian(np.ones(3), eps=-1.0), r"layernorm_jacobian: eps must be ≥ 0"),
        (lambda: rmsnorm(np.ones(3), eps=np.nan), r"eps must be finite"),
        (lambda: rmsnorm([1.0, np.nan]), r"rmsnorm: h must be finite \(got nan at index 1\)"),
        (lambda: layernorm([1.0, np.inf]), r"layernorm: h must be finite"),
        (lambda: rmsnorm_jacobian(np.ones((2, 3))), r"rmsnorm_jacobian: h must be a non-empty 1-D vector"),
        (lambda: layernorm_jacobian(np.ones((2, 3))), r"layernorm_jacobian: h must be a non-empty 1-D vector"),
        (lambda: rmsnorm(3.0), r"rmsnorm: h must have at least 1 axis"),
        (lambda: rmsnorm(np.ones(3), gain=np.ones(4)), r"rmsnorm: gain must have length 3 \(got 4\)"),
        (lambda: layernorm(np.ones((2, 3)), bias=np.ones(2)), r"layernorm: bias must have length 3"),
        (lambda: rmsnorm(["a", "b"]), r"rmsnorm: h must be real numbers"),
    ],
)
def test_bad_input_is_refused_with_the_argument_named(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()
