"""Sandbox declarations: parameters validate what the page sends, the registry finds sandboxes, render_json never raises."""

import json
import math
import subprocess
import sys

import pytest

from explainer import figure as fig
from explainer.sandbox import (
    Choice,
    FloatParam,
    IntParam,
    ParameterError,
    Toggle,
    format_value,
    get_sandbox,
    registry,
    render_json,
    sandbox,
)

ANGLE = FloatParam("angle", "Angle", 0, 180, step=0.5, default=53, unit="°")
DEPTH = IntParam("depth", "Depth", 1, 24, default=12, unit="layers")
SWITCH = Toggle("residual", "Residual add", True)
FUNCTION = Choice("f", "Function", (("sin", "sin x"), ("exp", "eˣ")), "sin")


@pytest.mark.parametrize(
    ("param", "value", "message"),
    [
        (ANGLE, math.nan, "angle: must be a finite number"),
        (ANGLE, math.inf, "angle: must be a finite number"),
        (ANGLE, None, "angle: must be a number (got None)"),
        (ANGLE, "53", "angle: must be a number (got '53')"),
        (ANGLE, True, "angle: must be a number (got True)"),
        (ANGLE, 181, "angle: must be between 0 and 180 (got 181)"),
        (DEPTH, 2.5, "depth: must be a whole number (got 2.5)"),
        (DEPTH, 0, "depth: must be between 1 and 24 (got 0)"),
        (SWITCH, 1, "residual: must be true or false (got 1)"),
        (FUNCTION, "sine", "f: must be one of 'sin', 'exp' (got 'sine') (did you mean 'sin'?)"),
        (FUNCTION, 3, "f: must be one of 'sin', 'exp' (got 3)"),
    ],
)
def test_a_bad_value_is_refused_naming_the_parameter(param, value, message):
    with pytest.raises(ParameterError) as caught:
        param.validate(value)
    assert str(caught.value) == message or str(caught.value).startswith(message)
    assert caught.value.parameter == param.name


def test_good_values_come_back_typed():
    assert ANGLE.validate(53) == 53.0 and isinstance(ANGLE.validate(53), float)
    assert DEPTH.validate(7.0) == 7 and isinstance(DEPTH.validate(7.0), int)
    assert SWITCH.validate(False) is False and FUNCTION.validate("exp") == "exp"


def test_sliders_show_their_value_with_the_grid_and_unit():
    assert ANGLE.format(53) == "53.0°" and DEPTH.format(3) == "3 layers"
    fine = FloatParam("x", "x", -1, 1, step=0.01, default=0)
    assert fine.format(-0.5) == "−0.50" and fine.format(-0.001) == "0.00", "no minus on a value shown as zero"
    assert FloatParam("s", "s", 0.5, 10, step=0.05, default=1).format(3.15) == "3.15"


def test_the_page_gets_the_formatting_rule_as_data_and_the_build_applies_that_same_rule():
    # sandbox.js formats every input with the control's "format" (tests/browser/test_page_runtime.py checks it
    # against Python on every slider value); Python's own format is that rule applied, nothing else.
    assert ANGLE.to_json()["format"] == {"decimals": 1, "suffix": "°"}
    assert DEPTH.to_json()["format"] == {"decimals": 0, "suffix": " layers"}
    assert "decimals" not in ANGLE.to_json(), "one place for the decimals: inside the format rule"
    for param in (ANGLE, DEPTH):
        rule = param.to_json()["format"]
        for value in (param.min, param.default, param.max):
            assert param.format(value) == format_value(value, rule)
    assert format_value(math.nan, {"decimals": 2, "suffix": "°"}) == "—"


def test_a_declaration_must_be_self_consistent():
    with pytest.raises(ValueError, match="min ≤ default ≤ max"):
        FloatParam("x", "x", 0, 1, step=0.1, default=2)
    with pytest.raises(ValueError, match="default 'tan' is not one of"):
        Choice("f", "f", (("sin", "sin"),), "tan")
    with pytest.raises(TypeError, match=r"parameters \['b'\] must match the declared \['a'\]"):

        @sandbox(FloatParam("a", "a", 0, 1, step=0.1, default=0), title="Broken")
        def broken(b):
            return {}


def test_registry_finds_sandboxes_and_suggests_the_closest_name():
    sandboxes = registry()
    assert {"ablation_lab", "projection_shadow"} <= set(sandboxes)
    with pytest.raises(ParameterError, match="unknown sandbox 'projection_shadw' \\(did you mean 'projection_shadow'"):
        get_sandbox("projection_shadw")


def test_every_sandbox_of_the_lessons_lives_in_the_module_named_after_it():
    # README's rule: explainer/sandboxes/<name>.py declares sandbox <name>, so the browser imports just that module.
    modules = {name: box.function.__module__ for name, box in registry().items()
               if box.function.__module__.startswith("explainer.sandboxes.")}
    assert modules and all(module == f"explainer.sandboxes.{name}" for name, module in modules.items()), modules


def test_every_sandbox_renders_its_defaults_to_a_json_figure():
    for name, box in registry().items():
        description = box.render()
        fig.validate_figure(description)
        json.dumps(description, allow_nan=False)
        assert box.summary, f"{name} needs a one-line docstring: it is the figure's fallback description"


def test_render_json_answers_every_request_with_ok_or_a_named_error():
    good = json.loads(render_json("projection_shadow", json.dumps({"u_angle": 90})))
    assert good["ok"] and good["value"]["figure"]["axes"]["aspect"] == "equal"
    for params, parameter in [('{"u_angle": NaN}', "u_angle"), ('{"u_angel": 1}', "u_angel"), ("[1]", "params"),
                              ('{"u_angle": 1e400}', "u_angle")]:
        reply = json.loads(render_json("projection_shadow", params))
        assert reply["ok"] is False and reply["error"]["kind"] == "parameter", reply
        assert reply["error"]["parameter"] == parameter
    reply = json.loads(render_json("no_such", "{}"))
    assert reply["error"]["parameter"] == "sandbox"
    reply = json.loads(render_json("projection_shadow", "{not json"))
    assert reply["ok"] is False and reply["error"]["kind"] == "parameter" and reply["error"]["parameter"] == "params"
    assert reply["error"]["message"].startswith("params: must be a JSON object (Expecting property name")


def test_an_exception_inside_a_sandbox_reaches_the_page_with_its_traceback():
    @sandbox(Toggle("fail", "Fail", False), title="Fragile")
    def fragile_for_test(fail):
        """A sandbox that breaks on request."""
        if fail:
            raise ZeroDivisionError("division by zero")
        return fig.figure(axes=fig.axes(xlim=(0, 1), ylim=(0, 1)), marks=[])

    try:
        reply = json.loads(render_json("fragile_for_test", '{"fail": true}'))
        assert reply["error"] == {"kind": "exception", "parameter": None, "message": "ZeroDivisionError: division by zero",
                                  "detail": reply["error"]["detail"]}
        assert "Traceback" in reply["error"]["detail"] and "fragile_for_test" in reply["error"]["detail"]
        assert json.loads(render_json("fragile_for_test", '{"fail": false}'))["ok"]
    finally:
        from explainer import sandbox as module

        module._REGISTRY.pop("fragile_for_test")


def test_the_worker_gets_the_words_the_build_writes():
    # One source for the figure's text: the live page shows what the built page shows, both made by explainer.
    box = get_sandbox("rmsnorm_sphere")
    values = {"scale": 3.0, "eps": 0.5}
    view = json.loads(render_json("rmsnorm_sphere", json.dumps(values)))["value"]
    figure = box.render(values)
    assert view == {"figure": json.loads(json.dumps(figure)), "label": fig.describe(box.title, figure),
                    "readouts_html": fig.readouts_html(figure)}
    assert view["label"].startswith(f"{box.title}: ‖h‖ 5.000; ") and "ε AT WORK: " in view["label"]
    assert view["readouts_html"].count('<div class="sandbox__readout">') == len(figure["readouts"])
    assert 'data-tone="info"' in view["readouts_html"]


def test_drawing_one_sandbox_loads_only_its_own_module():
    # The browser's first figure should not wait for every sandbox module (and the kernels they pull in).
    code = (
        "import sys, json; from explainer.sandbox import render_json; "
        "reply = json.loads(render_json('projection_shadow', '{}')); "
        "print(reply['ok'], 'explainer.ablation' in sys.modules, 'explainer.sandboxes.ablation_lab' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["True", "False", "False"]
