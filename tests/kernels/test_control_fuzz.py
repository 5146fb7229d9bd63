"""Control values as the page may send them, fuzzed: `render_json` (what the worker calls on every change) answers
every request with strict JSON, draws every combination of valid values (extremes included), and refuses anything
else as a parameter error that names the parameter, never as a crash of the sandbox."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explainer.figure import validate_figure
from explainer.sandbox import Choice, FloatParam, IntParam, ParameterError, Toggle, registry, render_json

SANDBOXES = registry()
seeded = settings(derandomize=True, database=None, deadline=None, max_examples=40)


def valid_values(param) -> st.SearchStrategy:
    """Values a reader can reach with the control: every grid point of a slider (ends included), every option."""
    if isinstance(param, Toggle):
        return st.booleans()
    if isinstance(param, Choice):
        return st.sampled_from(param.values)
    steps = round((param.max - param.min) / param.step)
    grid = st.integers(0, steps).map(lambda k: min(param.max, param.min + k * param.step))
    if isinstance(param, IntParam):
        grid = grid.map(int)
    return st.one_of(st.sampled_from([param.min, param.max]), grid)


def valid_params(sandbox) -> st.SearchStrategy:
    return st.fixed_dictionaries({}, optional={p.name: valid_values(p) for p in sandbox.params})


JUNK = st.one_of(
    st.none(), st.booleans(), st.text(max_size=12), st.integers(-10**30, 10**30),
    st.floats(allow_nan=False, allow_infinity=False), st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def strict_json(text: str):
    """Parse JSON as a browser does: NaN and Infinity are not JSON."""
    def refuse(constant):
        raise AssertionError(f"reply contains {constant}, which JSON.parse rejects")
    return json.loads(text, parse_constant=refuse)


def finite_numbers(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite_numbers(v) for v in value.values())
    if isinstance(value, list):
        return all(finite_numbers(v) for v in value)
    return True


@pytest.mark.parametrize("name", SANDBOXES)
def test_every_reachable_combination_of_values_draws(name):
    sandbox = SANDBOXES[name]

    @seeded
    @given(valid_params(sandbox))
    def draws(params):
        reply = strict_json(render_json(name, json.dumps(params)))
        assert reply["ok"], f"{name}({params}) failed: {reply.get('error')}"
        validate_figure(reply["value"]["figure"])  # the view: figure, label, readouts_html
        assert finite_numbers(reply["value"]["figure"])

    draws()


def expected_error(sandbox, params: dict) -> str | None:
    """The parameter a request must be refused for, or None if it is fine (checked the way the declaration does)."""
    names = {p.name for p in sandbox.params}
    for key, value in params.items():
        if key not in names:
            return key
        try:
            sandbox.param(key).validate(value)
        except ParameterError:
            return key
    return None


@pytest.mark.parametrize("name", SANDBOXES)
def test_any_other_value_is_a_parameter_error_that_names_the_parameter(name):
    sandbox = SANDBOXES[name]
    keys = st.sampled_from([p.name for p in sandbox.params] + ["bogus", ""])

    @seeded
    @given(st.dictionaries(keys, st.one_of(JUNK, *(valid_values(p) for p in sandbox.params)), max_size=4))
    def refuses(params):
        reply = strict_json(render_json(name, json.dumps(params)))
        culprit = expected_error(sandbox, params)
        if culprit is None:
            assert reply["ok"], reply
            return
        assert not reply["ok"] and reply["error"]["kind"] == "parameter", reply
        assert reply["error"]["parameter"] in params, reply
        assert reply["error"]["message"].startswith(f"{reply['error']['parameter']}: ")

    refuses()


@seeded
@given(st.text(max_size=40))
def test_a_request_body_that_is_not_a_json_object_is_refused_not_raised(body):
    reply = strict_json(render_json("projection_shadow", body))
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and not parsed:
        assert reply["ok"]
    elif not isinstance(parsed, dict):
        assert not reply["ok"] and reply["error"]["kind"] == "parameter" and reply["error"]["parameter"] == "params"
        assert reply["error"]["message"].startswith("params: must be a JSON object")


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers_in_the_request_text_are_parameter_errors(token):
    param = next(p for p in SANDBOXES["projection_shadow"].params if isinstance(p, FloatParam))
    reply = strict_json(render_json("projection_shadow", f'{{"{param.name}": {token}}}'))
    assert not reply["ok"] and reply["error"]["kind"] == "parameter" and reply["error"]["parameter"] == param.name
