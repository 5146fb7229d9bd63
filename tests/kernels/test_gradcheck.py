"""The checker itself: it must pass true Jacobians and catch wrong ones, or every other Jacobian test means nothing."""

import re

import numpy as np
import pytest

from explainer import rmsnorm, rmsnorm_jacobian
from kernels.gradcheck import gradcheck


def idealised_rmsnorm_jacobian(h):
    """(√d/‖h‖)(I − uuᵀ): exact only for ε = 0 and γ = 1."""
    u = h / np.linalg.norm(h)  # (d,)
    return np.sqrt(h.size) / np.linalg.norm(h) * (np.eye(h.size) - np.outer(u, u))  # (d, d)


def test_accepts_a_hand_derived_jacobian_of_a_nonlinear_map(rng):
    W = rng.standard_normal((3, 4))  # (m, n)

    def f(x):
        return np.sin(W @ x) * np.sum(x**2)  # (m,)

    def jacobian(x):
        z = W @ x  # (m,)
        return np.cos(z)[:, None] * W * np.sum(x**2) + np.outer(np.sin(z), 2 * x)  # (m, n)

    gradcheck(f, jacobian, rng.standard_normal(4), rng=rng, name="sin-times-square")


def test_accepts_matrix_inputs_and_outputs(rng):
    A = rng.standard_normal((2, 3))
    # f(X) = A X for X (3, 2): the Jacobian has shape (2, 2, 3, 2), ∂(AX)_ij/∂X_kl = A_ik δ_jl.
    jacobian = np.einsum("ik,jl->ijkl", A, np.eye(2))
    gradcheck(lambda X: A @ X, lambda X: jacobian, rng.standard_normal((3, 2)), rng=rng)


def test_rejects_the_transpose_of_a_non_symmetric_linear_map(rng):
    W = rng.standard_normal((4, 4))  # almost surely not symmetric
    with pytest.raises(AssertionError, match=r"gradcheck\(linear\)"):
        gradcheck(lambda x: W @ x, lambda x: W.T, rng.standard_normal(4), rng=rng, name="linear")


def test_rejects_the_idealised_rmsnorm_jacobian_when_eps_and_gain_matter(rng):
    h, gain, eps = rng.standard_normal(5), rng.uniform(0.5, 2.0, 5), 0.1
    with pytest.raises(AssertionError) as failure:
        gradcheck(lambda x: rmsnorm(x, gain, eps), idealised_rmsnorm_jacobian, h, rng=rng, name="rmsnorm")
    # The message names the function and gives both numbers, so a failure can be read without a debugger.
    found = re.search(r"gradcheck\(rmsnorm\): .*analytic ⟨w, J v⟩ = (\S+) but central difference gives (\S+) ",
                      str(failure.value))
    assert found, str(failure.value)
    analytic, numeric = float(found[1]), float(found[2])
    assert abs(analytic - numeric) > 1e-5 * max(abs(analytic), abs(numeric))


def test_the_idealised_form_is_exact_where_it_claims_to_be(rng):
    h = rng.standard_normal(6)
    gradcheck(lambda x: rmsnorm(x, eps=0.0), idealised_rmsnorm_jacobian, h, rng=rng)
    gradcheck(lambda x: rmsnorm(x, eps=0.0), lambda x: rmsnorm_jacobian(x, eps=0.0), h, rng=rng)


def test_rejects_a_small_but_real_error(rng):
    W = rng.standard_normal((3, 3))
    nudged = W + 1e-3 * rng.standard_normal((3, 3))
    with pytest.raises(AssertionError):
        gradcheck(lambda x: W @ x, lambda x: nudged, rng.standard_normal(3), rng=rng)


def test_rejects_a_jacobian_of_the_wrong_shape(rng):
    with pytest.raises(AssertionError, match="shape"):
        gradcheck(lambda x: 2 * x, lambda x: np.eye(4), np.ones(3), rng=rng, name="double")


def test_default_rng_makes_the_check_reproducible():
    W = np.array([[1.0, 2.0], [0.0, 1.0]])
    messages = []
    for _ in range(2):
        with pytest.raises(AssertionError) as failure:
            gradcheck(lambda x: W @ x, lambda x: W.T, np.ones(2))
        messages.append(str(failure.value))
    assert messages[0] == messages[1]
