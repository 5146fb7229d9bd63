"""Small typed checks for kernel inputs: each converts or rejects, and a rejection says what, where and what is valid.

Every check takes the argument's `name` and, optionally, the public function it guards (`caller`), so a message
reads "projection: u must be a non-zero vector (got norm 0)". They raise ValueError, never return a bad value.
"""

import difflib
import math
import numbers
from collections.abc import Iterable
from typing import NoReturn

import numpy as np


def _prefix(caller: str | None) -> str:
    return f"{caller}: " if caller else ""


def fail(message: str, *, caller: str | None = None) -> NoReturn:
    """Raise the ValueError every check raises, prefixed with the public function's name."""
    raise ValueError(_prefix(caller) + message)


def as_float_array(name: str, x, *, caller: str | None = None, min_ndim: int = 0, allow_neg_inf: bool = False):
    """Convert x to a float64 array with at least `min_ndim` axes and only finite entries."""
    try:
        array = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        fail(f"{name} must be real numbers (got {type(x).__name__})", caller=caller)
    if array.ndim < min_ndim:
        axes = "axis" if min_ndim == 1 else "axes"
        fail(f"{name} must have at least {min_ndim} {axes} (got shape {array.shape})", caller=caller)
    if min_ndim >= 1 and array.shape[-1] == 0:
        fail(f"{name} must have at least one feature on its last axis (got shape {array.shape})", caller=caller)
    require_finite(name, array, caller=caller, allow_neg_inf=allow_neg_inf)
    return array


def require_finite(name: str, x, *, caller: str | None = None, allow_neg_inf: bool = False) -> None:
    """Reject NaN and ±inf entries (-inf is let through where it means 'masked out')."""
    array = np.asarray(x, dtype=float)
    bad = np.isnan(array) | (np.isposinf(array) if allow_neg_inf else np.isinf(array))
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f" at index {first if len(first) > 1 else first[0]}" if first else ""
        allowed = "finite or -inf" if allow_neg_inf else "finite"
        fail(f"{name} must be {allowed} (got {array[first]}{where})", caller=caller)


def as_vector(name: str, x, *, caller: str | None = None, length: int | None = None):
    """Convert x to a finite 1-D float64 array, optionally of a required length."""
    vector = as_float_array(name, x, caller=caller)
    if vector.ndim != 1 or vector.size == 0:
        fail(f"{name} must be a non-empty 1-D vector (got shape {vector.shape})", caller=caller)
    if length is not None and vector.size != length:
        fail(f"{name} must have length {length} (got {vector.size})", caller=caller)
    return vector


def as_matrix(name: str, x, *, caller: str | None = None, shape: tuple[int | None, int | None] = (None, None)):
    """Convert x to a finite 2-D float64 array; a `None` in `shape` leaves that axis free."""
    matrix = as_float_array(name, x, caller=caller)
    wanted = "×".join("any" if n is None else str(n) for n in shape)
    if matrix.ndim != 2 or any(n is not None and n != m for n, m in zip(shape, matrix.shape)):
        fail(f"{name} must be a {wanted} matrix (got shape {matrix.shape})", caller=caller)
    return matrix


def as_nonzero_vector(name: str, x, *, caller: str | None = None):
    """Convert x to a finite 1-D vector with a non-zero length, for directions and normalisation."""
    vector = as_vector(name, x, caller=caller)
    if not np.any(vector):  # not ‖x‖ == 0, which underflows for x ≈ 1e-200 although x has a direction
        fail(f"{name} must be a non-zero vector (got norm 0)", caller=caller)
    return vector


def as_scalar(name: str, x, *, caller: str | None = None, minimum: float | None = None, strict: bool = False) -> float:
    """Convert x to a finite Python float, optionally ≥ `minimum` (or > it when `strict`)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real | np.ndarray) or np.ndim(x) != 0:
        fail(f"{name} must be a real number (got {x!r})", caller=caller)
    value = float(x)
    if not math.isfinite(value):
        fail(f"{name} must be finite (got {value})", caller=caller)
    if minimum is not None and (value <= minimum if strict else value < minimum):
        relation = ">" if strict else "≥"
        fail(f"{name} must be {relation} {minimum:g} (got {value:g})", caller=caller)
    return value


def as_int(name: str, x, *, caller: str | None = None, minimum: int = 0, maximum: int | None = None) -> int:
    """Convert x to an int in minimum..maximum (bounds included); bools and floats with fractions are refused."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        fail(f"{name} must be an integer (got {x!r})", caller=caller)
    value = int(x)
    if value < minimum or (maximum is not None and value > maximum):
        valid = f"in {minimum}..{maximum}" if maximum is not None else f"≥ {minimum}"
        fail(f"{name} must be an integer {valid} (got {value})", caller=caller)
    return value


def as_choice(name: str, x, choices: Iterable[str], *, caller: str | None = None) -> str:
    """Accept one of `choices`, else name them all and suggest the closest spelling."""
    valid = sorted(choices)
    if isinstance(x, str) and x in valid:
        return x
    close = difflib.get_close_matches(str(x), valid, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    fail(f"{name} must be one of {', '.join(valid)} (got {x!r}{hint})", caller=caller)
