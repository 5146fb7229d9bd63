"""Residual blocks three ways (pre-norm, post-norm, no norm) on one vector h, each beside its exact Jacobian."""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from explainer._checks import as_choice, as_int, as_matrix, as_scalar, as_vector, fail
from explainer.norms import layernorm, layernorm_jacobian, rmsnorm, rmsnorm_jacobian


def _frozen(matrix):
    matrix = matrix.copy()  # the branch must not change when the caller later edits their array
    matrix.flags.writeable = False
    return matrix


@dataclass(frozen=True, eq=False)
class Branch:
    """The update F a residual block adds to the stream, with its Jacobian, on vectors of width d."""

    forward: Callable  # x (d,) -> F(x) (d,)
    derivative: Callable  # x (d,) -> J_F(x) (d, d), the exact Jacobian of forward
    width: int  # d: the stream width the branch reads and writes
    name: str = "branch"  # how error messages refer to it

    def __post_init__(self):
        if not (callable(self.forward) and callable(self.derivative)):
            fail("forward and derivative must both be callables taking a (d,) vector", caller="Branch")
        as_int("width", self.width, caller="Branch", minimum=1)

    def __call__(self, x):
        """F(x) for a 1-D x of the branch's width."""
        x = as_vector("x", x, caller=self.name, length=self.width)  # (d,)
        return self._checked("F(x)", self.forward(x), (self.width,))  # (d,)

    def jacobian(self, x):
        """The (d, d) Jacobian J_F(x) for a 1-D x of the branch's width."""
        x = as_vector("x", x, caller=self.name, length=self.width)  # (d,)
        return self._checked("J_F(x)", self.derivative(x), (self.width, self.width))  # (d, d)

    def _checked(self, what: str, value, shape):
        value = np.asarray(value, dtype=float)
        if value.shape != shape:
            fail(f"{what} must have shape {shape} (got {value.shape})", caller=self.name)
        return value

    @classmethod
    def linear(cls, W):
        """The linear branch F(x) = W x for a square (d, d) matrix W; its Jacobian is W everywhere."""
        W = as_matrix("W", W, caller="Branch.linear")  # (d, d)
        if W.shape[0] != W.shape[1]:
            fail(f"W must be square: the branch writes back into the stream it reads (got {W.shape})",
                 caller="Branch.linear")
        W = _frozen(W)
        return cls(lambda x: W @ x, lambda x: W, W.shape[0], "Branch.linear")

    @classmethod
    def tanh_mlp(cls, W1, W2):
        """The two-layer branch F(x) = W2 tanh(W1 x) with W1 (m, d) and W2 (d, m)."""
        W1 = _frozen(as_matrix("W1", W1, caller="Branch.tanh_mlp"))  # (m, d)
        W2 = _frozen(as_matrix("W2", W2, caller="Branch.tanh_mlp", shape=W1.shape[::-1]))  # (d, m)

        def forward(x):
            return W2 @ np.tanh(W1 @ x)  # (d,)

        def derivative(x):
            slopes = 1 - np.tanh(W1 @ x) ** 2  # (m,) tanh' = 1 − tanh² at each hidden unit
            return W2 @ (slopes[:, None] * W1)  # (d, d)

        return cls(forward, derivative, W1.shape[1], "Branch.tanh_mlp")


def as_branch(branch, *, caller: str) -> Branch:
    """Accept a Branch, or a square matrix W meaning the linear branch F(x) = W x."""
    if isinstance(branch, Branch):
        return branch
    if callable(branch):
        fail("branch must be a Branch or a (d, d) matrix; wrap a function as Branch(forward, derivative, width)",
             caller=caller)
    return Branch.linear(branch)


NORMS = {"rmsnorm": (rmsnorm, rmsnorm_jacobian), "layernorm": (layernorm, layernorm_jacobian)}


def _inside(caller: str, function, **options):
    # A norm refusing its input (all zeros with eps = 0) should say which block handed it over.
    def call(x):
        try:
            return function(x, **options)
        except ValueError as error:
            raise ValueError(f"{caller}: {error}") from error

    return call


def _norm(norm, norm_eps, caller: str):
    # The norm is named by its function or its name; its Jacobian comes with it, so the two can never disagree.
    name = next((key for key, (forward, _) in NORMS.items() if norm is forward), norm)
    forward, jacobian = NORMS[as_choice("norm", name, NORMS, caller=caller)]
    options = {} if norm_eps is None else {"eps": as_scalar("norm_eps", norm_eps, caller=caller, minimum=0.0)}
    return _inside(caller, forward, **options), _inside(caller, jacobian, **options)


def _inputs(h, branch, caller: str):
    branch = as_branch(branch, caller=caller)
    return as_vector("h", h, caller=caller, length=branch.width), branch  # (d,), F


def prenorm_block(h, branch, norm=rmsnorm, norm_eps=None):
    """Pre-norm residual block h + F(N(h)): the branch reads a normalised copy, the stream passes through."""
    h, branch = _inputs(h, branch, "prenorm_block")  # (d,)
    normalise, _ = _norm(norm, norm_eps, "prenorm_block")
    return h + branch(normalise(h))  # (d,)


def prenorm_block_jacobian(h, branch, norm=rmsnorm, norm_eps=None):
    """Jacobian of the pre-norm block: I + J_F(N(h)) J_N(h)."""
    h, branch = _inputs(h, branch, "prenorm_block_jacobian")  # (d,)
    normalise, normalise_jacobian = _norm(norm, norm_eps, "prenorm_block_jacobian")
    return np.eye(h.size) + branch.jacobian(normalise(h)) @ normalise_jacobian(h)  # (d, d)


def postnorm_block(h, branch, norm=rmsnorm, norm_eps=None):
    """Post-norm residual block N(h + F(h)): the sum is normalised, so the stream itself is rescaled every layer."""
    h, branch = _inputs(h, branch, "postnorm_block")  # (d,)
    normalise, _ = _norm(norm, norm_eps, "postnorm_block")
    return normalise(h + branch(h))  # (d,)


def postnorm_block_jacobian(h, branch, norm=rmsnorm, norm_eps=None):
    """Jacobian of the post-norm block: J_N(h + F(h)) (I + J_F(h))."""
    h, branch = _inputs(h, branch, "postnorm_block_jacobian")  # (d,)
    _, normalise_jacobian = _norm(norm, norm_eps, "postnorm_block_jacobian")
    return normalise_jacobian(h + branch(h)) @ (np.eye(h.size) + branch.jacobian(h))  # (d, d)


def nonorm_block(h, branch):
    """Residual block without normalisation, h + F(h)."""
    h, branch = _inputs(h, branch, "nonorm_block")  # (d,)
    return h + branch(h)  # (d,)


def nonorm_block_jacobian(h, branch):
    """Jacobian of the block without normalisation: I + J_F(h)."""
    h, branch = _inputs(h, branch, "nonorm_block_jacobian")  # (d,)
    return np.eye(h.size) + branch.jacobian(h)  # (d, d)
