"""Named numbers the lessons quote, computed from `explainer` at build time.

A quantity is a function returning the text to print, declared with @quantity("name") in a module of this package
(a new module is found without being listed). Lessons write `{{ name }}` and the build puts the computed text there,
so no number in the prose is typed by hand: change a kernel and the prose follows, or the build says what broke.

    @quantity("recurrence.compound_16")
    def _():
        return number(proportional_recurrence(1, 0.1, 16)[-1], 3)    # "4.595"
"""

import difflib
import importlib
import pkgutil
from collections.abc import Callable, Sequence

_QUANTITIES: dict[str, Callable[[], str]] = {}


def quantity(name: str) -> Callable:
    """Declare the decorated function (no arguments, returns text) the quantity called `name`."""

    def register(function: Callable[[], str]) -> Callable[[], str]:
        known = _QUANTITIES.get(name)
        if known and known.__module__ != function.__module__:
            raise ValueError(f"quantity {name!r} is declared twice")
        _QUANTITIES[name] = function
        return function

    return register


def quantities() -> dict[str, Callable[[], str]]:
    """Every declared quantity by name (imports every module of this package)."""
    for module in pkgutil.iter_modules(__path__, prefix=f"{__name__}."):
        importlib.import_module(module.name)
    return dict(sorted(_QUANTITIES.items()))


def evaluate(name: str) -> str:
    """The text of quantity `name`, or ValueError naming the closest one."""
    known = quantities()
    if name not in known:
        match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
        raise ValueError(f"unknown quantity '{name}'" + (f" (did you mean '{match[0]}'?)" if match else ""))
    text = known[name]()
    if not isinstance(text, str) or not text:
        raise ValueError(f"quantity '{name}' must return non-empty text (got {text!r})")
    return text


def number(value: float, digits: int = 3) -> str:
    """A number with `digits` decimals and a true minus sign (−), as the lessons print numbers."""
    text = f"{float(value):.{digits}f}"
    return "0" + text[2:] if text.startswith("-0") and float(text) == 0 else text.replace("-", "−")


def vector(values: Sequence[float], digits: int = 3) -> str:
    """A vector as [a, b, …], each entry through `number` with trailing zeros dropped."""
    def short(value):
        text = number(value, digits)
        return text.rstrip("0").rstrip(".") if "." in text else text
    return "[" + ", ".join(short(v) for v in values) + "]"
