"""Projections onto a direction and away from it, and the second-order length change of a sideways nudge."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from explainer import (
    perpendicular_length_change,
    perpendicular_length_change_approx,
    projection,
    projection_matrix,
    rejection_matrix,
)

seeded = settings(derandomize=True, database=None, deadline=None, max_examples=60)
directions = arrays(float, st.integers(1, 6), elements=st.floats(-1e3, 1e3, allow_subnormal=False)).filter(
    lambda u: np.linalg.norm(u) > 1e-3
)


@seeded
@given(directions)
def test_projection_matrix_is_a_symmetric_idempotent_of_rank_one(u):
    P = projection_matrix(u)
    np.testing.assert_allclose(P @ P, P, atol=1e-12)
    np.testing.assert_allclose(P, P.T, atol=1e-15)
    np.testing.assert_allclose(np.trace(P), 1.0, rtol=1e-12)
    np.testing.assert_allclose(P @ u, u, rtol=1e-12, atol=1e-12 * np.abs(u).max())


@seeded
@given(directions)
def test_rejection_matrix_removes_u_and_is_itself_a_projection(u):
    R = rejection_matrix(u)
    np.testing.assert_allclose(R @ u, 0.0, atol=1e-12 * np.abs(u).max())
    np.testing.assert_allclose(R @ R, R, atol=1e-12)
    np.testing.assert_allclose(R + projection_matrix(u), np.eye(u.size), atol=1e-15)


@seeded
@given(directions, st.floats(-1e3, 1e3))
def test_parts_add_up_are_orthogonal_and_do_not_depend_on_the_scale_of_u(u, c):
    assume(abs(c) > 1e-3)
    v = np.linspace(-2.0, 3.0, u.size)
    parallel, perpendicular = projection(v, u)
    np.testing.assert_allclose(parallel + perpendicular, v, atol=1e-12)
    assert abs(perpendicular @ u) <= 1e-11 * np.linalg.norm(u) * (1 + np.linalg.norm(v))
    np.testing.assert_allclose(parallel, projection_matrix(u) @ v, atol=1e-12)
    np.testing.assert_allclose(projection(v, c * u)[0], parallel, atol=1e-12)


def test_a_batch_of_vectors_matches_a_loop(rng):
    u, v = rng.standard_normal(4), rng.standard_normal((3, 5, 4))
    parallel, perpendicular = projection(v, u)
    for index in np.ndindex(3, 5):
        expected = projection(v[index], u)
        np.testing.assert_allclose(parallel[index], expected[0], rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(perpendicular[index], expected[1], rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_tiny_and_huge_directions_still_give_a_unit_projection(scale):
    np.testing.assert_allclose(projection_matrix(scale * np.array([3.0, 4.0])), [[0.36, 0.48], [0.48, 0.64]])


def test_the_stable_length_change_survives_where_the_naive_one_cancels_to_zero():
    r, eps = 1.0, 1e-9
    assert np.sqrt(r**2 + eps**2) - r == 0.0  # the subtraction loses everything
    np.testing.assert_allclose(perpendicular_length_change(r, eps), 5e-19, rtol=1e-12)


def test_the_exact_change_agrees_with_pythagoras_where_there_is_no_cancellation():
    r, eps = 3.0, np.array([4.0, 1.0, 0.5])
    np.testing.assert_allclose(perpendicular_length_change(r, eps), np.hypot(r, eps) - r, rtol=1e-14)
    assert perpendicular_length_change(3.0, 4.0) == pytest.approx(2.0, rel=1e-15)


def test_the_approximation_is_second_order_with_a_fourth_order_error():
    r, eps = 5.0, np.array([0.4, 0.2, 0.1, 0.05])
    exact, approx = perpendicular_length_change(r, eps), perpendicular_length_change_approx(r, eps)
    # √(r²+ε²) − r = ε²/2r − ε⁴/8r³ + …: halving ε quarters the change and divides the error by 16.
    np.testing.assert_allclose(exact[:-1] / exact[1:], 4.0, rtol=1e-2)
    error = approx - exact
    np.testing.assert_allclose(error, eps**4 / (8 * r**3), rtol=1e-2)
    np.testing.assert_allclose(error[:-1] / error[1:], 16.0, rtol=1e-2)


def test_length_change_is_vectorised_and_even_in_eps():
    eps = np.linspace(0.0, 1.0, 6)
    change = perpendicular_length_change(2.0, eps)
    assert change.shape == (6,) and change[0] == 0.0
    np.testing.assert_array_equal(perpendicular_length_change(2.0, -eps), change)


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda: projection([1.0, 2.0], [0.0, 0.0]), r"projection: u must be a non-zero vector \(got norm 0\)"),
        (lambda: projection_matrix([0.0, 0.0, 0.0]), r"projection_matrix: u must be a non-zero vector"),
        (lambda: rejection_matrix([0.0]), r"rejection_matrix: u must be a non-zero vector"),
        (lambda: projection([1.0, 2.0, 3.0], [1.0, 0.0]), r"projection: v must have u's length 2"),
        (lambda: projection([1.0, 2.0], [[1.0, 0.0]]), r"projection: u must be a non-empty 1-D vector"),
        (lambda: projection([np.nan, 2.0], [1.0, 0.0]), r"projection: v must be finite"),
        (lambda: projection_matrix([np.inf, 1.0]), r"projection_matrix: u must be finite"),
        (lambda: perpendicular_length_change(0.0, 0.1), r"perpendicular_length_change: r must be a positive length"),
        (lambda: perpendicular_length_change_approx(-1.0, 0.1), r"_approx: r must be a positive length"),
        (lambda: perpendicular_length_change(1.0, [0.1, np.nan]), r"perpendicular_length_change: eps must be finite"),
    ],
)
def test_bad_input_is_refused_with_the_argument_named(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()
