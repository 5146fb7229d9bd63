"""The essay's worked numbers, recomputed by the kernels: if a lesson quotes a number, this file checks it."""

import numpy as np
import pytest

from explainer import (
    attention_scores,
    constant_recurrence,
    perpendicular_length_change,
    projection,
    proportional_recurrence,
    rmsnorm,
    softmax,
)


def test_ten_percent_compounded_over_sixteen_layers_is_about_4_595():
    assert proportional_recurrence(1.0, 0.1, 16)[-1] == pytest.approx(1.1**16, rel=1e-14)
    assert proportional_recurrence(1.0, 0.1, 16)[-1] == pytest.approx(4.595, abs=5e-4)


def test_adding_0_1_for_sixteen_layers_from_1_gives_2_6():
    assert constant_recurrence(1.0, 0.1, 16)[-1] == pytest.approx(2.6, rel=1e-14)


def test_softmax_of_1_2_and_of_10_20():
    np.testing.assert_allclose(softmax([1.0, 2.0]), [0.269, 0.731], atol=5e-4)
    np.testing.assert_allclose(softmax([10.0, 20.0]), [0.000045, 0.999955], atol=5e-7)


def test_scaling_queries_and_keys_by_10_scales_scores_by_100(rng):
    q, k = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    np.testing.assert_allclose(attention_scores(10 * q, 10 * k), 100 * attention_scores(q, k), rtol=1e-14)
    assert attention_scores([[1.0, 1.0]], [[2.0, 0.0]])[0, 0] == pytest.approx(2 / np.sqrt(2), rel=1e-15)


def test_a_sideways_nudge_to_a_length_5_vector():
    assert np.hypot(5.0, 0.1) == pytest.approx(5.001, abs=5e-4)
    assert 5.0 + perpendicular_length_change(5.0, 0.1) == pytest.approx(5.001, abs=5e-4)
    small, large = perpendicular_length_change(5.0, [0.05, 0.1])
    assert small == pytest.approx(0.00025, rel=1e-3)
    assert small / large == pytest.approx(0.25, rel=1e-3)


def test_splitting_v_5_0_along_u_0_6_0_8():
    u, v = np.array([0.6, 0.8]), np.array([5.0, 0.0])
    assert u @ v == pytest.approx(3.0, rel=1e-15)
    parallel, perpendicular = projection(v, u)
    np.testing.assert_allclose(parallel, [1.8, 2.4], rtol=1e-14)
    np.testing.assert_allclose(perpendicular, [3.2, -2.4], rtol=1e-14)
    assert u @ perpendicular == pytest.approx(0.0, abs=1e-15)


def test_h_3_4_has_length_5_and_direction_0_6_0_8():
    h = np.array([3.0, 4.0])
    assert np.linalg.norm(h) == 5.0
    np.testing.assert_allclose(h / np.linalg.norm(h), [0.6, 0.8], rtol=1e-15)


def test_doubling_h_leaves_rmsnorm_unchanged():
    h = np.array([3.0, 4.0])
    np.testing.assert_allclose(rmsnorm(2 * h, eps=0.0), rmsnorm(h, eps=0.0), rtol=1e-15)
    # RMS of [3, 4] is 5/√2, so the normalised vector is √2·[0.6, 0.8].
    np.testing.assert_allclose(rmsnorm(h, eps=0.0), np.sqrt(2) * np.array([0.6, 0.8]), rtol=1e-15)
