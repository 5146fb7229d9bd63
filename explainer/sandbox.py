"""Sandboxes: a Python function plus the declaration of its parameters, found by name in one registry.

Adding a sandbox is writing one decorated function in a module under `explainer/sandboxes/`:

    @sandbox(FloatParam("u_angle", "angle of u", 0, 180, step=1, default=53, unit="°"), title="Projection")
    def projection_shadow(u_angle: float) -> dict:
        return figure(...)

The declaration drives everything else: the Markdown block checks a page's overrides against it, the page builds
its controls from it, and `render_json` (what the browser's worker calls) validates every value against it before
the function runs.
"""

import difflib
import importlib
import inspect
import json
import math
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from explainer.figure import describe, readouts_html, validate_figure


class ParameterError(ValueError):
    """A value for a sandbox parameter was wrong; `parameter` names it."""

    def __init__(self, parameter: str, message: str):
        super().__init__(f"{parameter}: {message}")
        self.parameter = parameter


def closest(name: str, valid) -> str:
    """' (did you mean 'x'?)' for the valid name closest to `name`, or '' when none is close or `name` is valid (its
    value was the mistake)."""
    valid = list(valid)
    if name in valid:
        return ""
    match = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


# ---- parameter kinds ------------------------------------------------------------------------------------------------


def format_value(value, rule: Mapping) -> str:
    """A slider value as the page shows it: `rule` is the control's "format", {"decimals", "suffix"}.

    The page (build_scripts/browser/sandbox.js formatValue) applies the same rule, read from the same JSON, on every
    input: fixed decimals, no minus on a zero, a true minus sign (−), then the suffix (the unit and its space).
    """
    if not math.isfinite(value):
        return "—"
    text = f"{value:.{rule['decimals']}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", "−") + rule["suffix"]


def _real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterError(name, f"must be a number (got {value!r})")
    if not math.isfinite(value):
        raise ParameterError(name, f"must be a finite number (got {value!r})")
    return float(value)


class _Slider:
    """What float and int sliders share: range checks, the shown value, the JSON the page reads."""

    def __post_init__(self):
        if not self.min <= self.default <= self.max or self.step <= 0:
            raise ValueError(f"{self.name}: need min ≤ default ≤ max and step > 0")

    @property
    def decimals(self) -> int:
        """How many decimals show a value on this slider's grid (0 for a step of 1 or more)."""
        return max(0, -math.floor(math.log10(self.step) + 1e-9))

    @property
    def value_format(self) -> dict:
        """The rule that writes a value of this slider (its grid's decimals, then the unit), as the page reads it."""
        gap = "" if self.unit in ("", "°", "%") else " "
        return {"decimals": self.decimals, "suffix": f"{gap}{self.unit}"}

    def format(self, value) -> str:
        """The value as the page shows it beside the slider, unit included."""
        return format_value(value, self.value_format)

    def _in_range(self, value) -> float:
        value = _real(self.name, value)
        slack = 1e-9 * (self.max - self.min)
        if not self.min - slack <= value <= self.max + slack:
            raise ParameterError(self.name, f"must be between {self.min:g} and {self.max:g} (got {value:g})")
        return min(max(value, self.min), self.max)

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "label": self.label, "min": self.min, "max": self.max,
                "step": self.step, "default": self.default, "unit": self.unit, "format": self.value_format}


@dataclass(frozen=True)
class FloatParam(_Slider):
    """A real number chosen with a slider: min ≤ value ≤ max in steps of `step`."""

    name: str
    label: str
    min: float
    max: float
    step: float
    default: float
    unit: str = ""
    kind = "float"

    def validate(self, value) -> float:
        """The value as a float, or ParameterError naming this parameter."""
        return self._in_range(value)


@dataclass(frozen=True)
class IntParam(_Slider):
    """A whole number chosen with a slider: min ≤ value ≤ max."""

    name: str
    label: str
    min: int
    max: int
    default: int
    unit: str = ""
    step: int = 1
    kind = "int"

    def validate(self, value) -> int:
        """The value as an int, or ParameterError naming this parameter."""
        value = self._in_range(value)
        if value != round(value):
            raise ParameterError(self.name, f"must be a whole number (got {value:g})")
        return int(round(value))


@dataclass(frozen=True)
class Toggle:
    """A switch: on (True) or off (False)."""

    name: str
    label: str
    default: bool
    unit = ""
    kind = "toggle"

    def validate(self, value) -> bool:
        """The value as a bool, or ParameterError naming this parameter."""
        if not isinstance(value, bool):
            raise ParameterError(self.name, f"must be true or false (got {value!r})")
        return value

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "label": self.label, "default": self.default}


@dataclass(frozen=True)
class Choice:
    """One option out of a few, each a (value, label) pair."""

    name: str
    label: str
    options: tuple[tuple[str, str], ...]
    default: str
    unit = ""
    kind = "choice"

    def __post_init__(self):
        if self.default not in self.values:
            raise ValueError(f"{self.name}: default {self.default!r} is not one of {self.values}")

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(value for value, _ in self.options)

    def validate(self, value) -> str:
        """The value if it is one of the options, or ParameterError naming this parameter and the options."""
        if value not in self.values:
            valid = ", ".join(repr(v) for v in self.values)
            hint = closest(value, self.values) if isinstance(value, str) else ""
            raise ParameterError(self.name, f"must be one of {valid} (got {value!r}){hint}")
        return value

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "label": self.label, "default": self.default,
                "options": [list(pair) for pair in self.options]}


Param = FloatParam | IntParam | Toggle | Choice


# ---- the sandbox and its registry -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sandbox:
    """A declared sandbox: its name, its parameters in display order, and the function that draws it."""

    name: str
    title: str
    summary: str
    params: tuple[Param, ...]
    function: Callable[..., dict] = field(repr=False)

    def param(self, name: str) -> Param:
        """The declared parameter called `name`, or ParameterError listing the valid names."""
        for param in self.params:
            if param.name == name:
                return param
        valid = ", ".join(p.name for p in self.params)
        hint = closest(name, [p.name for p in self.params])
        raise ParameterError(name, f"is not a parameter of sandbox {self.name!r}{hint}; valid: {valid}")

    def defaults(self) -> dict:
        """Every parameter's declared default."""
        return {p.name: p.default for p in self.params}

    def validate(self, values: Mapping) -> dict:
        """All parameters, checked: missing ones take their default, unknown ones are an error."""
        checked = self.defaults()
        for name, value in values.items():
            checked[name] = self.param(name).validate(value)
        return checked

    def render(self, values: Mapping | None = None) -> dict:
        """The figure description for `values` (validated; defaults fill the rest)."""
        description = self.function(**self.validate(values or {}))
        validate_figure(description)
        return description

    def view(self, values: Mapping | None = None) -> dict:
        """What the page shows for `values`: the figure description, the figure in words, the readouts' HTML."""
        figure = self.render(values)
        return {"figure": figure, "label": describe(self.title, figure), "readouts_html": readouts_html(figure)}

    def to_json(self) -> dict:
        return {"name": self.name, "title": self.title, "summary": self.summary,
                "params": [p.to_json() for p in self.params]}


_REGISTRY: dict[str, Sandbox] = {}


def sandbox(*params: Param, title: str) -> Callable:
    """Declare the decorated function a sandbox with these parameters (in display order)."""

    def register(function: Callable[..., dict]) -> Callable[..., dict]:
        name = function.__name__
        declared = [p.name for p in params]
        accepted = list(inspect.signature(function).parameters)
        if declared != accepted:
            raise TypeError(f"sandbox {name!r}: parameters {accepted} must match the declared {declared}, in order")
        known = _REGISTRY.get(name)
        if known and known.function.__module__ != function.__module__:
            raise ValueError(f"sandbox {name!r} is declared twice")  # (a reloaded module may declare it again)
        summary = (inspect.getdoc(function) or "").split("\n")[0]
        _REGISTRY[name] = Sandbox(name, title, summary, tuple(params), function)
        return function

    return register


def registry() -> dict[str, Sandbox]:
    """Every declared sandbox by name (all modules of explainer.sandboxes are imported)."""
    importlib.import_module("explainer.sandboxes").declare_all()
    return dict(sorted(_REGISTRY.items()))


def get_sandbox(name: str) -> Sandbox:
    """The sandbox called `name`, or ParameterError naming the closest valid one."""
    if name not in _REGISTRY and name.isidentifier():
        # A sandbox usually lives in the module of its own name: load just that one (the browser's first figure
        # then waits for one module, not all of them).
        try:
            importlib.import_module(f"explainer.sandboxes.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"explainer.sandboxes.{name}":
                raise
    if name in _REGISTRY:
        return _REGISTRY[name]
    sandboxes = registry()
    if name not in sandboxes:
        raise ParameterError("sandbox", f"unknown sandbox {name!r}{closest(name, sandboxes)}; "
                                        f"valid: {', '.join(sandboxes)}")
    return sandboxes[name]


# ---- the entry point the browser's worker calls ---------------------------------------------------------------------


def render_json(name: str, params_json: str) -> str:
    """Render a sandbox from JSON parameters; the reply is JSON, never a raise: {ok: true, value: the sandbox's view
    (figure, label, readouts_html)} or {ok: false, error}."""
    try:
        try:
            values = json.loads(params_json)
        except ValueError as error:
            raise ParameterError("params", f"must be a JSON object ({error})") from None
        if not isinstance(values, dict):
            raise ParameterError("params", f"must be a JSON object (got {type(values).__name__})")
        value = get_sandbox(name).view(values)
        return json.dumps({"ok": True, "value": value}, allow_nan=False)
    except ParameterError as error:
        return json.dumps({"ok": False, "error": {"kind": "parameter", "parameter": error.parameter,
                                                  "message": str(error), "detail": ""}})
    except Exception as error:  # a bug in a sandbox must reach the page as a message, not kill the worker
        message = f"{type(error).__name__}: {error}"
        return json.dumps({"ok": False, "error": {"kind": "exception", "parameter": None, "message": message,
                                                  "detail": traceback.format_exc()}})
