"""Residual blocks: every Jacobian against finite differences, the radial direction, and refusals of bad input."""

import numpy as np
import pytest

from explainer import (
    Branch,
    layernorm,
    nonorm_block,
    nonorm_block_jacobian,
    postnorm_block,
    postnorm_block_jacobian,
    prenorm_block,
    prenorm_block_jacobian,
    rmsnorm,
)
from kernels.gradcheck import gradcheck

WIDTH = 5


def make_branch(kind: str, rng) -> Branch:
    if kind == "linear":
        return Branch.linear(rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH))
    return Branch.tanh_mlp(rng.standard_normal((7, WIDTH)), rng.standard_normal((WIDTH, 7)) / np.sqrt(7))


BLOCKS = {
    "prenorm": (prenorm_block, prenorm_block_jacobian),
    "postnorm": (postnorm_block, postnorm_block_jacobian),
}


@pytest.mark.parametrize("kind", ["linear", "tanh_mlp"])
def test_branch_jacobian_matches_finite_differences(rng, kind):
    branch = make_branch(kind, rng)
    gradcheck(branch, branch.jacobian, rng.standard_normal(WIDTH), rng=rng, name=f"Branch.{kind}")


@pytest.mark.parametrize("block", sorted(BLOCKS))
@pytest.mark.parametrize("kind", ["linear", "tanh_mlp"])
@pytest.mark.parametrize("norm", [rmsnorm, layernorm])
@pytest.mark.parametrize("norm_eps", [None, 0.0, 0.3])
def test_normalised_block_jacobians_match_finite_differences(rng, block, kind, norm, norm_eps):
    forward, jacobian = BLOCKS[block]
    branch, h = make_branch(kind, rng), rng.standard_normal(WIDTH)
    gradcheck(
        lambda x: forward(x, branch, norm, norm_eps), lambda x: jacobian(x, branch, norm, norm_eps), h, rng=rng,
        name=f"{block}_block({kind}, {norm.__name__}, eps={norm_eps})",
    )


@pytest.mark.parametrize("kind", ["linear", "tanh_mlp"])
def test_unnormalised_block_jacobian_matches_finite_differences(rng, kind):
    branch = make_branch(kind, rng)
    gradcheck(
        lambda x: nonorm_block(x, branch), lambda x: nonorm_block_jacobian(x, branch), rng.standard_normal(WIDTH),
        rng=rng, name=f"nonorm_block({kind})",
    )


@pytest.mark.parametrize("kind", ["linear", "tanh_mlp"])
@pytest.mark.parametrize("norm", [rmsnorm, layernorm])
def test_prenorm_jacobian_passes_the_radial_direction_through_unchanged(rng, kind, norm):
    # J_N(h) u = 0 for u = h/‖h‖ (scaling h along itself leaves N(h) alone), so (I + J_F J_N) u = u.
    branch, h = make_branch(kind, rng), rng.standard_normal(WIDTH)
    u = h / np.linalg.norm(h)
    np.testing.assert_allclose(prenorm_block_jacobian(h, branch, norm, norm_eps=0.0) @ u, u, atol=1e-12)


def test_a_matrix_means_the_linear_branch(rng):
    W, h = rng.standard_normal((WIDTH, WIDTH)), rng.standard_normal(WIDTH)
    np.testing.assert_allclose(nonorm_block(h, W), h + W @ h, rtol=1e-14)
    np.testing.assert_array_equal(prenorm_block(h, W), prenorm_block(h, Branch.linear(W)))
    np.testing.assert_array_equal(postnorm_block_jacobian(h, W), postnorm_block_jacobian(h, Branch.linear(W)))
    np.testing.assert_array_equal(Branch.linear(W).jacobian(h), W)


def test_blocks_follow_their_formulas(rng):
    branch, h = make_branch("tanh_mlp", rng), rng.standard_normal(WIDTH)
    np.testing.assert_allclose(prenorm_block(h, branch), h + branch(rmsnorm(h)), rtol=1e-14)
    np.testing.assert_allclose(prenorm_block(h, branch, layernorm, 0.1), h + branch(layernorm(h, eps=0.1)))
    np.testing.assert_allclose(postnorm_block(h, branch, "layernorm"), layernorm(h + branch(h)), rtol=1e-14)
    np.testing.assert_allclose(nonorm_block(h, branch), h + branch(h), rtol=1e-14)


def test_a_zero_branch_leaves_prenorm_as_the_identity_and_postnorm_as_the_norm(rng):
    h = 3 * rng.standard_normal(WIDTH)
    zero = np.zeros((WIDTH, WIDTH))
    np.testing.assert_array_equal(prenorm_block(h, zero), h)
    np.testing.assert_allclose(prenorm_block_jacobian(h, zero), np.eye(WIDTH))
    np.testing.assert_allclose(postnorm_block(h, zero, norm_eps=0.0), rmsnorm(h, eps=0.0), rtol=1e-15)


def test_a_custom_branch_is_checked_and_immune_to_later_edits(rng):
    W = rng.standard_normal((WIDTH, WIDTH))
    branch, before = Branch.linear(W), Branch.linear(W)(np.ones(WIDTH))
    W[:] = 0.0  # editing the caller's array must not reach inside the branch
    np.testing.assert_array_equal(branch(np.ones(WIDTH)), before)
    cubic = Branch(lambda x: x**3, lambda x: np.diag(3 * x**2), WIDTH, name="cubic")
    gradcheck(cubic, cubic.jacobian, rng.standard_normal(WIDTH), rng=rng, name="cubic")
    with pytest.raises(ValueError, match=r"wrong: F\(x\) must have shape \(5,\) \(got \(4,\)\)"):
        Branch(lambda x: x[:4], lambda x: np.eye(WIDTH), WIDTH, name="wrong")(np.ones(WIDTH))


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda: prenorm_block(np.ones(4), np.eye(5)), r"prenorm_block: h must have length 5 \(got 4\)"),
        (lambda: postnorm_block(np.ones((2, 5)), np.eye(5)), r"postnorm_block: h must be a non-empty 1-D vector"),
        (lambda: nonorm_block([1.0, np.nan], np.eye(2)), r"nonorm_block: h must be finite"),
        (lambda: prenorm_block(np.ones(2), np.eye(2), norm="rmsnrom"),
         r"prenorm_block: norm must be one of layernorm, rmsnorm \(got 'rmsnrom'; did you mean 'rmsnorm'\?\)"),
        (lambda: prenorm_block(np.ones(2), np.eye(2), norm=np.tanh), r"prenorm_block: norm must be one of"),
        (lambda: postnorm_block_jacobian(np.ones(2), np.eye(2), norm_eps=-1.0),
         r"postnorm_block_jacobian: norm_eps must be ≥ 0"),
        (lambda: prenorm_block_jacobian(np.zeros(2), np.eye(2), norm_eps=0.0),
         r"prenorm_block_jacobian: rmsnorm: h must not be an all-zero vector when eps = 0"),
        (lambda: postnorm_block(np.ones(2), -np.eye(2), norm="layernorm", norm_eps=0.0),
         r"postnorm_block: layernorm: h must not be a constant vector when eps = 0"),
        (lambda: nonorm_block(np.ones(2), np.ones((2, 3))), r"Branch.linear: W must be square"),
        (lambda: nonorm_block(np.ones(2), np.tanh), r"nonorm_block: branch must be a Branch or a \(d, d\) matrix"),
        (lambda: Branch.tanh_mlp(np.ones((3, 2)), np.ones((3, 2))), r"Branch.tanh_mlp: W2 must be a 2×3 matrix"),
        (lambda: Branch.linear([[np.inf]]), r"Branch.linear: W must be finite"),
        (lambda: Branch(np.tanh, np.tanh, 0), r"Branch: width must be an integer ≥ 1"),
        (lambda: Branch.linear(np.eye(2))(np.ones(3)), r"Branch.linear: x must have length 2 \(got 3\)"),
    ],
)
def test_bad_input_is_refused_with_the_argument_named(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()
