"""Compounding versus adding: the recurrences against their closed forms, and refusals of bad input."""

import warnings

import numpy as np
import pytest

from explainer import constant_recurrence, proportional_recurrence


@pytest.mark.parametrize(("h0", "alpha", "layers"), [(1.0, 0.1, 16), (2.0, -0.5, 10), (-3.0, 0.0, 4), (1.0, 1.0, 0)])
def test_proportional_recurrence_is_compound_growth(h0, alpha, layers):
    history = proportional_recurrence(h0, alpha, layers)
    assert history.shape == (layers + 1,) and history.dtype == np.float64
    np.testing.assert_allclose(history, h0 * (1 + alpha) ** np.arange(layers + 1), rtol=1e-13)


@pytest.mark.parametrize(("h0", "c", "layers"), [(1.0, 0.1, 16), (0.0, -2.0, 5), (4.0, 0.0, 3), (1.0, 1.0, 0)])
def test_constant_recurrence_is_linear_growth(h0, c, layers):
    history = constant_recurrence(h0, c, layers)
    assert history.shape == (layers + 1,) and history.dtype == np.float64
    np.testing.assert_allclose(history, h0 + c * np.arange(layers + 1), rtol=1e-13, atol=1e-15)


def test_vector_start_values_run_side_by_side(rng):
    h0 = rng.standard_normal(3)
    history = proportional_recurrence(h0, 0.2, 5)
    assert history.shape == (6, 3)
    for i in range(3):
        np.testing.assert_array_equal(history[:, i], proportional_recurrence(h0[i], 0.2, 5))
    np.testing.assert_allclose(constant_recurrence(h0, 0.5, 4)[-1], h0 + 2.0)


def test_compounding_past_float64_becomes_inf_quietly():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = proportional_recurrence(1.0, 1.0, 1100)  # 2¹¹⁰⁰ > 1.8e308
    first_infinite = int(np.argmax(np.isinf(history)))
    assert first_infinite == 1024 and np.all(np.isfinite(history[:1024]))


def test_constant_growth_is_far_smaller_than_compound_growth_at_depth():
    assert constant_recurrence(1.0, 0.1, 48)[-1] < proportional_recurrence(1.0, 0.1, 48)[-1] / 10


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda: proportional_recurrence(1.0, 0.1, -1), r"proportional_recurrence: layers must be an integer ≥ 0 \(got -"),
        (lambda: constant_recurrence(1.0, 0.1, -3), r"constant_recurrence: layers must be an integer ≥ 0 \(got -"),
        (lambda: proportional_recurrence(1.0, 0.1, 2.5), r"proportional_recurrence: layers must be an integer"),
        (lambda: proportional_recurrence(1.0, 0.1, True), r"proportional_recurrence: layers must be an integer"),
        (lambda: proportional_recurrence(1.0, np.nan, 3), r"proportional_recurrence: alpha must be finite"),
        (lambda: constant_recurrence(1.0, [0.1, 0.2], 3), r"constant_recurrence: c must be a real number"),
        (lambda: constant_recurrence(np.inf, 0.1, 3), r"constant_recurrence: h0 must be finite"),
    ],
)
def test_bad_input_is_refused_with_the_argument_named(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()
