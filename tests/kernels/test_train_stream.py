"""The training lab's stream (explainer/streams/train.py) under CPython, driven as the browser's worker drives it
(explainer.live: JSON in, JSON out, a step per chunk): the same run as explainer.training's, whatever the chunks;
chunks cut by time; Stop (closing the stream) ends the work; settings checked by name; the figure and results."""

import json
import math

import numpy as np
import pytest

from explainer import layers, live
from explainer.figure import validate_figure
from explainer.sandbox import ParameterError
from explainer.streams import train
from explainer.training import TrainingConfig, run_experiment

SMALL = {"depth": 1, "steps": 60, "seed": 3}  # short, and two validation passes in the middle (eval_every is 40)


def stream_run(settings: dict, reference=None) -> tuple[list[dict], dict]:
    """Every progress item and the final value of one run of the stream, as the worker gets them."""
    handle = json.loads(live.open_stream("train", json.dumps({"settings": settings, "reference": reference})))
    assert "handle" in handle, handle
    items = []
    while True:
        reply = json.loads(live.step_stream(handle["handle"]))
        if "progress" not in reply:
            assert "done" in reply, reply
            return items, reply["done"]
        items.append(reply["progress"])


def window_means(losses: list[float], every: int) -> list[float]:
    """The mean batch loss of each `every` steps (the last window may be shorter), as Training.chunk reports it."""
    return [float(np.mean(losses[start:start + every])) for start in range(0, len(losses), every)]


def test_a_streamed_run_is_the_build_time_run_number_for_number(monkeypatch):
    monkeypatch.setattr(train, "CHUNK_SECONDS", 0.0)  # one unit of work per chunk: how fast this machine is changes nothing
    items, done = stream_run(SMALL)
    config = train.training_config(SMALL)
    expected = run_experiment(config)
    curve = done["curve"]
    assert curve["val_steps"] == [0, *(point["step"] for point in expected["curve"])] == [0, 40, 60]
    assert curve["val_losses"] == [expected["initial_val_loss"], *(p["val_loss"] for p in expected["curve"])]
    assert len(curve["losses"]) == config.steps
    assert window_means(curve["losses"], config.eval_every) == [p["train_loss"] for p in expected["curve"]]
    for measure in ("train_loss", "val_loss", "teacher_forced_accuracy", "generated_accuracy"):
        assert done["result"][measure] == expected[measure], measure
    assert done["result"]["samples"][:3] == expected["samples"]
    assert len(done["result"]["samples"]) == train.SAMPLES and done["result"]["steps"] == 60
    assert [item["step"] for item in items] == sorted(item["step"] for item in items), "steps only go forward"
    assert {item["phase"] for item in items} == {"training", "evaluating"} and done["phase"] == "done"


def test_chunks_are_cut_by_time_and_do_not_change_a_number(monkeypatch):
    monkeypatch.setattr(train, "CHUNK_SECONDS", 0.0)  # every unit of work its own chunk
    fine, fine_done = stream_run(SMALL)
    monkeypatch.setattr(train, "CHUNK_SECONDS", 3600.0)  # the whole run in one chunk
    coarse, coarse_done = stream_run(SMALL)
    units = 1 + 60 + 2 + 1 + 5 + 2  # validation at 0, steps, validations at 40 and 60, evaluation's forward passes
    assert len(fine) == units and len(coarse) == 0  # what is left when the work ends goes with the reply
    assert fine_done["curve"] == coarse_done["curve"] and fine_done["result"] == coarse_done["result"]


def test_a_chunk_ends_before_a_unit_that_would_overrun_it(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(train.time, "monotonic", lambda: clock[0])

    def units(work):
        for duration, following in work:
            clock[0] += duration
            yield "training", following
        return "result"

    # A pass (0.06), steps of 0.02, a pass, steps: each unit is judged by the last one of its kind.
    work = [(0.06, "step"), (0.02, "step"), (0.02, "pass"), (0.06, "step"), (0.02, "step"), (0.02, "step"),
            (0.02, "step"), (0.02, "step"), (0.02, "step"), (0.02, "pass"), (0.2, "step"), (0.02, "step")]
    chunks = train._chunks(units(work), 0.1)
    sizes, start = [], 0.0
    while True:
        try:
            next(chunks)
        except StopIteration as stop:
            assert stop.value == "result"
            break
        sizes.append(round(clock[0] - start, 3))
        start = clock[0]
    # 0.06 + 0.02 + 0.02 = 0.1, and the next pass is judged to take 0.06 more: the chunk ends at 0.1. The pass and
    # two steps make 0.1 again; steps fill the next chunk until a pass would overrun it. A unit longer than a chunk
    # (0.2, judged by the last pass, 0.06) overruns by what the judgement missed; the rest goes with the result.
    assert sizes == [0.1, 0.1, 0.08, 0.2]


def test_closing_the_stream_stops_the_run_before_its_next_chunk():
    handle = json.loads(live.open_stream("train", json.dumps({"settings": {"depth": 1, "steps": 600}})))["handle"]
    first = json.loads(live.step_stream(handle))["progress"]
    assert first["phase"] == "training" and first["step"] < 600
    assert live.close_stream(handle) is True
    assert "no open stream" in json.loads(live.step_stream(handle))["error"]["message"]


@pytest.mark.parametrize(("settings", "parameter"), [
    ({"depth": 9}, "depth"), ({"depth": 1.5}, "depth"), ({"norm": "batchnorm"}, "norm"), ({"steps": "many"}, "steps"),
    ({"steps": 30}, "steps"),
    ({"residual": 1}, "residual"), ({"sped": 3}, "sped"),
])
def test_bad_settings_are_parameter_errors_naming_the_setting(settings, parameter):
    handle = json.loads(live.open_stream("train", json.dumps({"settings": settings})))["handle"]
    error = json.loads(live.step_stream(handle))["error"]
    assert error["kind"] == "parameter" and error["parameter"] == parameter, error
    with pytest.raises(ParameterError):
        train.training_config(settings)


@pytest.mark.parametrize("norm", [value for value, _ in train.NORMS])
def test_settings_and_configs_map_both_ways(norm):
    settings = {**train.check_settings({}), "norm": norm, "positional": "none", "causal_mask": False}
    config = train.training_config(settings)
    assert train.settings_of(config) == settings
    assert (config.norm, config.placement) == (("none", "pre") if norm == "none" else tuple(norm.split("-")))
    assert train.training_config({}) == TrainingConfig(steps=300), "defaults: the grid's model, 300 steps"


REFERENCE = {"settings": {}, "steps": 600,
             "curve": {"step": [0, 40, 80], "train": [None, 1.5, 0.5], "val": [2.5, 1.2, 0.02]},
             "final": {"val_loss": 0.02, "generated_accuracy": 0.875, "teacher_forced_accuracy": 0.9},
             "over_seeds": {"seeds": [0, 1, 2], "val_loss": [0.03, 0.02, 0.05], "generated_accuracy": [0.8, 0.7, 0.9],
                            "teacher_forced_accuracy": [0.9, 0.85, 0.95]}}


def test_without_run_the_stream_returns_the_reference_view_and_trains_nothing():
    handle = json.loads(live.open_stream("train", json.dumps({"settings": {}, "reference": REFERENCE,
                                                               "run": False})))["handle"]
    done = json.loads(live.step_stream(handle))["done"]
    assert done["phase"] == "reference" and done["step"] == 0 and done["steps"] == 300
    labels = [mark["label"] for mark in done["figure"]["marks"]]
    assert labels == ["chance (ln 10)", "build time: training", "build time: validation"]
    assert "build time, validation loss at step 80" in done["readouts_html"]
    assert "build time, seed 0 (600 steps)" in done["results_html"] and "your run" not in done["results_html"]
    assert "88%" in done["results_html"] and "80% (70%–90%)" in done["results_html"]


def test_the_figure_holds_the_run_and_the_reference_on_a_log_scale_that_fits_them():
    curve = train.Curve(losses=[2.0] * 25, val_steps=[0, 20], val_losses=[2.4, 1e-3])
    figure = train.curve_figure({"steps": 100}, curve, REFERENCE)
    validate_figure(figure)
    marks = {mark["label"]: mark for mark in figure["marks"]}
    assert marks["training"]["x"] == [10, 20] and marks["validation"]["y"] == [2.4, 0.001]
    assert figure["axes"]["yscale"] == "log" and figure["axes"]["ylim"] == [1e-3, 10.0]
    assert figure["axes"]["xlim"] == [0, 600], "to the end of the build-time run"
    assert train.curve_figure({"steps": 100}, curve, None)["axes"]["xlim"] == [0, 100]
    assert train.curve_figure({"steps": 100}, curve, REFERENCE, final=True)["marks"][-2]["x"] == [10, 20, 25]
    diverged = train.Curve(losses=[2.0, math.nan], val_steps=[0, 1], val_losses=[2.4, math.nan])
    assert train.curve_figure({}, diverged, None)["status"]["label"] == "DIVERGED"


def test_the_results_mark_every_letter_and_escape_what_they_show():
    result = {"steps": 60, "val_loss": 0.5, "generated_accuracy": 0.25, "teacher_forced_accuracy": 0.5,
              "samples": [{"prompt": "abc<|", "expected": "cba", "generated": "cxa"}]}
    shown = train.results_html({}, result, None)
    assert shown.count("trainer__letter--right") == 2 and shown.count("trainer__letter--wrong") == 1
    assert "abc&lt;|" in shown and "2 of 3 letters right; the answer is cba" in shown
    assert "your run (60 steps)" in shown and "25%" in shown
    assert train.results_html({}, None, None) == ""


def test_the_layout_numpy_without_blas_gets_gives_the_same_run(monkeypatch):
    # In Pyodide (no BLAS) the weights' gradients are summed from copies laid out for numpy's own loop, in the same
    # order as before; under CPython's BLAS a layout may move the last bits, hence the tolerance: the browser's runs
    # reproduce CPython's losses to it (tests/browser/test_trainer.py checks it in Pyodide itself).
    expected = run_experiment(TrainingConfig(depth=2, steps=40, eval_every=20))
    monkeypatch.setattr(layers, "WITHOUT_BLAS", True)
    again = run_experiment(TrainingConfig(depth=2, steps=40, eval_every=20))
    np.testing.assert_allclose([p["val_loss"] for p in again["curve"]], [p["val_loss"] for p in expected["curve"]],
                               rtol=1e-9)
    assert again["generated_accuracy"] == expected["generated_accuracy"]
