"""Taylor estimates: exact where they should be, errors shrinking like dx^(n+1), and the tangent zoom's w² gap."""

import dataclasses
import math

import numpy as np
import pytest

from explainer import TAYLOR_EXAMPLES, TangentZoom, taylor_approx, tangent_zoom
from kernels.gradcheck import gradcheck

# A point for each example where no derivative up to the fourth vanishes, so every error order is visible.
GENERIC_POINTS = {"square": 1.5, "cube": 1.5, "sin": 0.7, "exp": 0.3, "log": 2.0}
EXACT = {"square": lambda x: x**2, "cube": lambda x: x**3, "sin": np.sin, "exp": np.exp, "log": np.log}


@pytest.mark.parametrize("name", sorted(TAYLOR_EXAMPLES))
@pytest.mark.parametrize("n", range(5))
def test_each_listed_derivative_is_the_derivative_of_the_one_before(rng, name, n):
    example, points = TAYLOR_EXAMPLES[name], np.array([0.5, 1.0, 2.5])

    def nth(x):
        return example(x, n)[n]  # (points,)

    def jacobian(x):
        return np.diag(example(x, n + 1)[n + 1])  # (points, points): elementwise, so diagonal

    gradcheck(nth, jacobian, points, rng=rng, name=f"{name} derivative {n}")


@pytest.mark.parametrize("name", sorted(TAYLOR_EXAMPLES))
def test_order_zero_is_the_value_and_values_match_numpy(name):
    x0 = GENERIC_POINTS[name]
    assert taylor_approx(name, x0, 0.3, 0) == pytest.approx(EXACT[name](x0), rel=1e-15)
    np.testing.assert_allclose(TAYLOR_EXAMPLES[name](np.array([1.0, 2.0]))[0], EXACT[name](np.array([1.0, 2.0])))


@pytest.mark.parametrize(("name", "order"), [("square", 2), ("square", 5), ("cube", 3)])
def test_polynomials_are_exact_once_the_order_reaches_their_degree(name, order):
    dx = np.array([-2.0, 0.1, 3.0])
    np.testing.assert_allclose(taylor_approx(name, 1.5, dx, order), EXACT[name](1.5 + dx), rtol=1e-14)


# The cube's order-3 estimate is exact, so it has no error order to measure.
INEXACT = [(name, order) for name in ("sin", "exp", "log", "cube") for order in range(4) if (name, order) != ("cube", 3)]


@pytest.mark.parametrize(("name", "order"), INEXACT)
def test_error_of_order_n_shrinks_like_dx_to_the_n_plus_one(name, order):
    x0, dx = GENERIC_POINTS[name], np.array([0.04, 0.02, 0.01, 0.005])
    errors = np.abs(taylor_approx(name, x0, dx, order) - EXACT[name](x0 + dx))
    slope = np.polyfit(np.log(dx), np.log(errors), 1)[0]
    assert slope == pytest.approx(order + 1, abs=0.05)
    # And the leading error term is the first one left out, f⁽ⁿ⁺¹⁾(x0) dxⁿ⁺¹/(n+1)!.
    leading = abs(TAYLOR_EXAMPLES[name](x0, order + 1)[-1]) * dx ** (order + 1) / math.factorial(order + 1)
    np.testing.assert_allclose(errors[-1], leading[-1], rtol=0.05)


def test_a_list_of_derivatives_is_used_as_given():
    # f(x) = x² at x0 = 1: f = 1, f' = 2, f'' = 2, so f(1.1) = 1 + 0.2 + 0.01.
    assert taylor_approx([1.0, 2.0, 2.0], 1.0, 0.1, 2) == pytest.approx(1.21, rel=1e-15)
    assert taylor_approx([1.0, 2.0, 2.0], 1.0, 0.1, 1) == pytest.approx(1.2, rel=1e-15)
    assert taylor_approx(np.array([5.0]), 0.0, 0.1, 0) == 5.0


def test_tangent_zoom_returns_a_frozen_window_with_the_tangent_through_x0():
    zoom = tangent_zoom("exp", 0.0, 0.5, samples=11)
    assert isinstance(zoom, TangentZoom)
    assert zoom.xs.shape == zoom.curve.shape == zoom.tangent.shape == (11,)
    np.testing.assert_allclose(zoom.xs[[0, 5, -1]], [-0.5, 0.0, 0.5])
    np.testing.assert_allclose(zoom.curve, np.exp(zoom.xs), rtol=1e-15)
    np.testing.assert_allclose(zoom.tangent, 1.0 + zoom.xs, rtol=1e-15)
    assert zoom.max_gap == pytest.approx(np.exp(0.5) - 1.5, rel=1e-14)
    with pytest.raises(dataclasses.FrozenInstanceError):
        zoom.max_gap = 0.0
    with pytest.raises(ValueError, match="read-only"):
        zoom.curve[0] = 1.0


@pytest.mark.parametrize(("name", "x0"), [("square", -3.0), ("sin", 1.0), ("exp", 0.0), ("log", 2.0), ("cube", 1.0)])
def test_tangent_gap_quarters_when_the_window_halves(name, x0):
    ratio = tangent_zoom(name, x0, 0.02).max_gap / tangent_zoom(name, x0, 0.01).max_gap
    assert ratio == pytest.approx(4.0, rel=0.02)


def test_where_the_curvature_vanishes_the_gap_shrinks_faster():
    # sin'' (0) = 0: the tangent at an inflection point is a second-order match, the gap goes like w³.
    ratio = tangent_zoom("sin", 0.0, 0.02).max_gap / tangent_zoom("sin", 0.0, 0.01).max_gap
    assert ratio == pytest.approx(8.0, rel=0.02)


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda: taylor_approx("sine", 0.0, 0.1, 1), r"taylor_approx: f must be one of cube, exp, log, sin, square "
                                                     r"\(got 'sine'; did you mean 'sin'\?\)"),
        (lambda: tangent_zoom("expp", 0.0, 0.1), r"tangent_zoom: f must be one of .*did you mean 'exp'"),
        (lambda: taylor_approx("sin", 0.0, 0.1, -1), r"taylor_approx: order must be an integer in 0\.\.20 \(got -1\)"),
        (lambda: taylor_approx("sin", 0.0, 0.1, 21), r"taylor_approx: order must be an integer in 0\.\.20"),
        (lambda: taylor_approx("sin", 0.0, 0.1, 1.5), r"taylor_approx: order must be an integer \(got 1\.5\)"),
        (lambda: taylor_approx([1.0, 2.0], 0.0, 0.1, 2), r"taylor_approx: order must be an integer in 0\.\.1"),
        (lambda: taylor_approx([], 0.0, 0.1, 0), r"taylor_approx: f must be a non-empty 1-D vector"),
        (lambda: taylor_approx("log", 0.0, 0.1, 1), r"taylor_approx: ln x is only defined for x > 0"),
        (lambda: taylor_approx("sin", np.nan, 0.1, 1), r"taylor_approx: x0 must be finite"),
        (lambda: taylor_approx("sin", 0.0, [0.1, np.inf], 1), r"taylor_approx: dx must be finite"),
        (lambda: tangent_zoom("sin", 0.0, 0.0), r"tangent_zoom: half_width must be > 0"),
        (lambda: tangent_zoom("sin", 0.0, 0.1, samples=1), r"tangent_zoom: samples must be an integer in 2\.\."),
        (lambda: tangent_zoom("log", 0.5, 1.0), r"tangent_zoom: ln x is only defined for x > 0"),
    ],
)
def test_bad_input_is_refused_with_the_argument_named(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()
