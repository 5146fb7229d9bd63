"""Taylor polynomials: estimating f(x0 + dx) from derivatives at x0, and zooming in until a curve looks straight."""

import math
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from explainer._checks import as_choice, as_float_array, as_int, as_scalar, as_vector, fail

MAX_TAYLOR_ORDER = 20  # past this, k! and dxᵏ lose more to rounding than the lessons could ever show


@dataclass(frozen=True)
class TaylorExample:
    """A smooth function of one variable that knows every derivative, for the Taylor lessons."""

    formula: str  # how the lessons write it, e.g. "sin x"
    derivative: Callable  # (x, n) -> the n-th derivative at x, elementwise over an array x
    domain_start: float = -math.inf  # exclusive lower end of the domain: log needs x > 0

    def __call__(self, x, order=0):
        """Return f(x), f'(x), ..., f⁽ⁿ⁾(x) for n = order, stacked on a new first axis."""
        x = np.asarray(x, dtype=float)  # (...)
        order = as_int("order", order, caller="TaylorExample", minimum=0, maximum=MAX_TAYLOR_ORDER)
        return np.stack([self.derivative(x, n) for n in range(order + 1)])  # (n+1, ...)


def _power(p: int):
    def derivative(x, n):
        # math.perm(p, n) = p!/(p−n)!, and it is 0 once n > p, which is where the derivatives of xᵖ run out.
        return math.perm(p, n) * x ** max(p - n, 0)

    return derivative


def _log_derivative(x, n):
    return np.log(x) if n == 0 else (-1) ** (n - 1) * math.factorial(n - 1) / x**n


TAYLOR_EXAMPLES = MappingProxyType({
    "square": TaylorExample("x²", _power(2)),
    "cube": TaylorExample("x³", _power(3)),
    "sin": TaylorExample("sin x", lambda x, n: np.sin(x + n * np.pi / 2)),
    "exp": TaylorExample("eˣ", lambda x, n: np.exp(x)),
    "log": TaylorExample("ln x", _log_derivative, domain_start=0.0),
})


def _example(f, caller: str) -> TaylorExample:
    return f if isinstance(f, TaylorExample) else TAYLOR_EXAMPLES[as_choice("f", f, TAYLOR_EXAMPLES, caller=caller)]


def _require_in_domain(example: TaylorExample, lowest: float, caller: str) -> None:
    if lowest <= example.domain_start:
        fail(f"{example.formula} is only defined for x > {example.domain_start:g} (the window reaches {lowest:g})",
             caller=caller)


def _derivatives_at(f, x0, order, caller: str):
    x0 = as_scalar("x0", x0, caller=caller)
    if isinstance(f, str | TaylorExample):
        example = _example(f, caller)
        order = as_int("order", order, caller=caller, minimum=0, maximum=MAX_TAYLOR_ORDER)
        _require_in_domain(example, x0, caller)
        return example(x0, order)  # (n+1,)
    values = as_vector("f", f, caller=caller)  # (len,) f(x0), f'(x0), f''(x0), ...
    order = as_int("order", order, caller=caller, minimum=0, maximum=values.size - 1)
    return values[: order + 1]  # (n+1,)


def taylor_approx(f, x0, dx, order):
    """Order-n Taylor estimate Σₖ f⁽ᵏ⁾(x0) dxᵏ/k! of f(x0 + dx); f names an example or lists f(x0), f'(x0), …"""
    derivatives = _derivatives_at(f, x0, order, "taylor_approx")  # (n+1,)
    dx = as_float_array("dx", dx, caller="taylor_approx")  # (...)
    return sum(value * dx**k / math.factorial(k) for k, value in enumerate(derivatives))  # (...)


@dataclass(frozen=True, eq=False)
class TangentZoom:
    """A window around x0 with a curve, its tangent line there, and the largest gap between the two."""

    xs: np.ndarray  # (samples,) evenly spaced over [x0 − half_width, x0 + half_width]
    curve: np.ndarray  # (samples,) f(xs)
    tangent: np.ndarray  # (samples,) f(x0) + f'(x0)(xs − x0)
    max_gap: float  # max |curve − tangent|; shrinks like half_width² wherever f''(x0) ≠ 0


def tangent_zoom(f, x0, half_width, samples=101):
    """Sample a built-in example and its tangent at x0 over x0 ± half_width, and measure how far they part."""
    example = _example(f, "tangent_zoom")
    x0 = as_scalar("x0", x0, caller="tangent_zoom")
    half_width = as_scalar("half_width", half_width, caller="tangent_zoom", minimum=0.0, strict=True)
    samples = as_int("samples", samples, caller="tangent_zoom", minimum=2, maximum=100_001)
    _require_in_domain(example, x0 - half_width, "tangent_zoom")
    xs = np.linspace(x0 - half_width, x0 + half_width, samples)  # (samples,)
    value, slope = example(x0, order=1)
    curve, tangent = example(xs)[0], value + slope * (xs - x0)  # (samples,), (samples,)
    for array in (xs, curve, tangent):
        array.flags.writeable = False  # frozen means frozen: a figure cannot edit the numbers it was given
    return TangentZoom(xs, curve, tangent, float(np.max(np.abs(curve - tangent))))
