"""The sandboxes of the RMSNorm lesson: they render, they react to every parameter, they show the essay's numbers,
and they refuse bad values by name. One test also covers every sandbox in the registry, whoever wrote it."""

import json
import math
import time

import numpy as np
import pytest

from explainer.figure import validate_figure
from explainer.sandbox import Choice, IntParam, ParameterError, Toggle, registry

LESSON_SANDBOXES = ("tangent_zoom", "rmsnorm_sphere", "attention_scale", "recurrence", "perpendicular_length",
                    "jacobian_tangent")


def render(name: str, **values) -> dict:
    return registry()[name].render(values)


def readouts(description: dict) -> dict[str, dict]:
    """The figure's readouts by label."""
    return {item["label"]: item for item in description["readouts"]}


def shown(name: str, label: str, **values) -> str:
    """The text a readout shows under the figure."""
    return readouts(render(name, **values))[label]["text"]


def value(name: str, label: str, **values) -> float:
    """The number behind a readout."""
    return readouts(render(name, **values))[label]["value"]


def another_value(param):
    """A valid value for `param` other than its default."""
    if isinstance(param, Toggle):
        return not param.default
    if isinstance(param, Choice):
        return next(v for v in param.values if v != param.default)
    return param.max if param.default != param.max else param.min


def random_values(sandbox, rng) -> dict:
    """A valid value for every parameter of `sandbox`, drawn from `rng`."""
    values = {}
    for param in sandbox.params:
        if isinstance(param, Toggle):
            values[param.name] = bool(rng.integers(2))
        elif isinstance(param, Choice):
            values[param.name] = str(rng.choice(param.values))
        elif isinstance(param, IntParam):
            values[param.name] = int(rng.integers(param.min, param.max + 1))
        else:
            values[param.name] = float(rng.uniform(param.min, param.max))
    return values


def assert_drawable(description: dict, where: str) -> None:
    validate_figure(description)
    try:
        json.dumps(description, allow_nan=False)
    except ValueError as error:
        pytest.fail(f"{where}: the figure does not serialise as strict JSON: {error}")


# ---- every sandbox in the registry -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(registry()))
def test_every_sandbox_renders_its_defaults_to_strict_json(name):
    assert_drawable(registry()[name].render(), f"{name} at its defaults")


@pytest.mark.parametrize("name", list(registry()))
def test_every_declared_default_lies_within_its_range(name):
    for spec in registry()[name].to_json()["params"]:
        where = f"{name}.{spec['name']}"
        if spec["kind"] in ("float", "int"):
            assert spec["min"] <= spec["default"] <= spec["max"], f"{where}: default outside [min, max]"
        elif spec["kind"] == "choice":
            assert spec["default"] in [option for option, _ in spec["options"]], f"{where}: default not an option"
        else:
            assert isinstance(spec["default"], bool), f"{where}: a toggle's default must be true or false"


def test_the_lesson_sandboxes_are_registered():
    assert set(LESSON_SANDBOXES) <= set(registry())


# ---- the lesson's sandboxes: rendering and reacting --------------------------------------------------------------


@pytest.mark.parametrize("name", LESSON_SANDBOXES)
def test_random_valid_values_render_to_strict_json(name, rng):
    sandbox = registry()[name]
    for _ in range(25):
        values = random_values(sandbox, rng)
        assert_drawable(sandbox.render(values), f"{name} at {values}")


@pytest.mark.parametrize("name", LESSON_SANDBOXES)
def test_the_summary_is_the_docstrings_first_line(name):
    sandbox = registry()[name]
    assert sandbox.summary and sandbox.summary == sandbox.function.__doc__.splitlines()[0]


@pytest.mark.parametrize(("name", "param"), [(name, p) for name in LESSON_SANDBOXES for p in registry()[name].params],
                         ids=lambda x: x if isinstance(x, str) else x.name)
def test_changing_any_one_parameter_changes_the_figure(name, param):
    sandbox = registry()[name]
    changed = sandbox.render({param.name: another_value(param)})
    assert changed != sandbox.render(), f"{name}: moving {param.name} changed nothing"


# ---- the lesson's sandboxes: the essay's numbers ------------------------------------------------------------------


def test_tangent_zoom_gap_over_w_squared_is_half_the_curvature():
    assert shown("tangent_zoom", "half-width w") == "2.0000"
    assert shown("tangent_zoom", "max gap") == "4.000"  # x² parts from its tangent at 1 by exactly (x − 1)²
    assert shown("tangent_zoom", "max gap / w²") == "1.000"
    settled = value("tangent_zoom", "max gap / w²", function="sin", zoom=8)
    assert settled == pytest.approx(math.sin(1) / 2, rel=1e-2)


def test_tangent_zoom_each_step_quarters_the_gap():
    gaps = [value("tangent_zoom", "max gap", function="exp", x0=0.5, zoom=zoom) for zoom in (6, 7)]
    assert gaps[1] / gaps[0] == pytest.approx(0.25, rel=2e-2)


def test_rmsnorm_sphere_doubling_h_3_4_changes_nothing():
    figure = readouts(render("rmsnorm_sphere", scale=2))
    assert figure["‖h‖"]["text"] == "5.000"
    assert figure["‖c·h‖"]["text"] == "10.000"
    assert figure["‖N(c·h)‖"]["text"] == "1.414"  # √d with d = 2
    assert figure["‖N(c·h) − N(h)‖"]["value"] == 0.0
    assert render("rmsnorm_sphere", scale=2)["status"]["tone"] == "good"


def test_rmsnorm_sphere_eps_lets_the_scale_of_a_short_vector_through():
    moved = value("rmsnorm_sphere", "‖N(c·h) − N(h)‖", h_length=0.5, scale=4, eps=0.5)
    assert moved > 0.1
    assert render("rmsnorm_sphere", h_length=0.5, scale=4, eps=0.5)["status"]["tone"] == "info"


def test_rmsnorm_sphere_says_when_c_h_is_drawn_cut_short():
    notes = [mark["text"] for mark in render("rmsnorm_sphere", scale=4)["marks"] if mark["type"] == "text"]
    assert any("cut short" in note for note in notes)


def test_attention_scale_at_s_1_mixes_the_two_tokens():
    figure = readouts(render("attention_scale"))
    assert figure["weight on token 1"]["text"] == "0.268941"
    assert figure["weight on token 2"]["text"] == "0.731059"
    assert render("attention_scale")["status"]["label"] == "MIXING"


def test_attention_scale_at_scores_10_20_all_but_picks_token_2():
    figure = render("attention_scale", qk_scale=math.sqrt(10))  # s² = 10: scores [10, 20]
    assert readouts(figure)["score multiplier s²"]["text"] == "10.000"
    assert readouts(figure)["weight on token 1"]["text"] == "0.000045"
    assert readouts(figure)["weight on token 2"]["text"] == "0.999955"
    assert (figure["status"]["label"], figure["status"]["tone"]) == ("SATURATED", "warn")


def test_attention_scale_q_k_times_10_scores_times_100():
    assert value("attention_scale", "score multiplier s²", qk_scale=10) == 100.0


def test_recurrence_sixteen_layers_at_ten_percent_and_at_0_1():
    figure = readouts(render("recurrence"))
    assert figure["(1 + α)ᴸ · h₀"]["text"] == "4.595"
    assert figure["h₀ + L · c"]["text"] == "2.600"


def test_recurrence_keeps_its_axes_while_the_sliders_move():
    axes = {json.dumps(render("recurrence", alpha=a, c=c, layers=n)["axes"]) for a, c, n in
            [(0.1, 0.1, 16), (0.3, 0.0, 32), (0.0, 0.3, 1)]}
    assert len(axes) == 1
    assert render("recurrence", alpha=0.3, layers=32)["status"]["label"] == "OFF THE PLOT"
    assert render("recurrence", alpha=0.3, layers=32, log_scale=True)["status"] is None


def test_perpendicular_length_r_5_eps_0_1_and_0_05():
    at_tenth = readouts(render("perpendicular_length", r=5, eps=0.1))
    assert at_tenth["new length √(r² + ε²)"]["text"].startswith("5.001")
    assert at_tenth["exact Δr"]["value"] == pytest.approx(0.001, rel=1e-3)
    at_twentieth = readouts(render("perpendicular_length", r=5, eps=0.05))
    assert at_twentieth["exact Δr"]["value"] == pytest.approx(0.00025, rel=1e-3)
    assert at_twentieth["exact Δr"]["value"] / at_tenth["exact Δr"]["value"] == pytest.approx(0.25, rel=1e-3)


def test_jacobian_tangent_drops_a_step_along_h():
    figure = readouts(render("jacobian_tangent", step_angle=0))
    assert figure["‖J·dh‖"]["value"] == 0.0
    assert figure["part of dh along h"]["text"] == "0.1000"


def test_jacobian_tangent_scales_a_sideways_step_by_root_d_over_length(rng):
    figure = readouts(render("jacobian_tangent", step_angle=90))
    assert figure["‖J·dh‖"]["value"] == pytest.approx(math.sqrt(2) / 5 * 0.1, rel=1e-5)
    for angle, length in zip(rng.uniform(-180, 180, 10), rng.uniform(0.5, 5, 10)):
        figure = readouts(render("jacobian_tangent", step_angle=float(angle), h_length=float(length)))
        assert figure["‖J·dh‖"]["text"] == figure["(√d/‖h‖)·|sideways part|"]["text"], (angle, length)


# ---- the lesson's sandboxes: refusing bad values ------------------------------------------------------------------


def out_of_range_values(param) -> list:
    if isinstance(param, Toggle):
        return []  # a switch has no range: anything but true or false is a wrong type
    if isinstance(param, Choice):
        return [f"not-{param.default}"]
    span = param.max - param.min
    return [param.min - span, param.max + span]


def wrong_type_values(param) -> list:
    if isinstance(param, Toggle):
        return [1, "true", None]
    if isinstance(param, Choice):
        return [3, None]
    return ["1", None, True, math.nan] + ([param.min + 0.5] if isinstance(param, IntParam) else [])


@pytest.mark.parametrize(("name", "param"), [(name, p) for name in LESSON_SANDBOXES for p in registry()[name].params],
                         ids=lambda x: x if isinstance(x, str) else x.name)
def test_bad_values_raise_a_parameter_error_naming_the_parameter(name, param):
    for bad in out_of_range_values(param) + wrong_type_values(param):
        with pytest.raises(ParameterError) as caught:
            registry()[name].render({param.name: bad})
        assert caught.value.parameter == param.name, f"{name}: {bad!r} blamed {caught.value.parameter!r}"
        assert param.name in str(caught.value)


def test_an_unknown_parameter_is_refused_with_a_suggestion():
    with pytest.raises(ParameterError, match="did you mean 'qk_scale'"):
        render("attention_scale", qk_scal=2)


# ---- speed --------------------------------------------------------------------------------------------------------


def test_default_render_times(capsys):
    """Print how long each lesson sandbox takes to render its defaults (the browser re-renders on every drag)."""
    lines = []
    for name in LESSON_SANDBOXES:
        sandbox = registry()[name]
        sandbox.render()  # warm: imports and first-call caches
        runs = []
        for _ in range(50):
            start = time.perf_counter()
            sandbox.render()
            runs.append(time.perf_counter() - start)
        lines.append(f"{name:>22}: {1000 * sorted(runs)[len(runs) // 2]:.2f} ms (median of {len(runs)})")
    with capsys.disabled():
        print("\ndefault render times:\n" + "\n".join(lines))


# ---- the ablation lab: layers computed in idle time ---------------------------------------------------------------


def test_the_ablation_lab_computes_the_arrangements_one_switch_away_in_idle_time(monkeypatch):
    from explainer import ablation, idle
    from explainer.ablation import MAX_DEPTH

    tasks = []  # what the browser's event loop would run after the reply, in order
    monkeypatch.setattr(idle, "_call_soon", tasks.append)
    ablation.clear_cache()
    shown = render("ablation_lab", depth=6, residual=False)
    assert len(ablation._LAYERS_CACHE) == 1 and not tasks  # outside the browser nothing is left for later
    monkeypatch.setattr(idle, "IN_BROWSER", True)
    ablation.clear_cache()
    assert render("ablation_lab", depth=6, residual=False) == shown
    assert len(ablation._LAYERS_CACHE) == 1 and len(tasks) == 1  # the render itself computed only what it shows
    steps = 0
    while tasks:
        tasks.pop(0)()
        steps += 1
    depths = sorted(len(stack.states) - 1 for stack in ablation._LAYERS_CACHE.values())
    assert depths == [6, 6, 6, 6, MAX_DEPTH]  # 4 arrangements one switch away, and this one as deep as it goes
    assert steps == 4 * (6 + 7) + (MAX_DEPTH - 6) + (MAX_DEPTH + 1)  # a block per task: forward, then loss and backward
    assert {key[0].residual for key in ablation._LAYERS_CACHE} == {True, False}
    ablation.clear_cache()


# ---- the ablation lab on trained weights --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained_weights():
    from build_scripts.trained_weights import export

    export()


def test_the_lab_on_trained_weights_reads_a_reversal_it_never_trained_on(trained_weights):
    from explainer.sandboxes.ablation_lab import REVERSAL, REVERSAL_SWAPPED
    from explainer.tasks import decode, make_task
    from explainer.trained import trained_model
    from explainer.training import TrainingConfig

    config = TrainingConfig(**trained_model()[0])
    data = make_task(config.task, config.length, config.train_size, config.validation_size, config.seed)
    trained_on = {decode(row) for row in data.train}
    assert REVERSAL not in trained_on and REVERSAL_SWAPPED not in trained_on
    prompt, answer = REVERSAL.split("|")
    assert answer == prompt[::-1] and REVERSAL_SWAPPED == f"{answer}|{prompt}"


def test_the_lab_on_trained_weights_shows_its_eight_blocks_and_says_so_when_asked_for_more(trained_weights):
    deep = render("ablation_lab", weights="trained", depth=20)
    eight = render("ablation_lab", weights="trained", depth=8)
    assert deep["marks"] == eight["marks"] and deep["readouts"] == eight["readouts"]
    assert "the trained model has 8 blocks" in deep["status"]["detail"]
    assert "blocks" not in eight["status"]["detail"]
    assert render("ablation_lab", weights="trained", depth=3)["readouts"] != eight["readouts"]


# ---- the ablation lab's views: the gradient going down, and how alike the positions are ---------------------------


def test_the_gradient_view_draws_the_gradient_reaching_every_layer():
    from explainer.ablation import gradient_norms
    from explainer.sandboxes.ablation_lab import GRADIENT_LIMITS, INPUTS, lab_config

    for residual in (True, False):
        shown = render("ablation_lab", view="gradients", depth=24, residual=residual)
        norms = gradient_norms(lab_config(24, "random", True, residual, True, True), *INPUTS["random"]).gradient_norm
        (bars,) = shown["marks"]
        assert bars["type"] == "bars" and len(bars["heights"]) == 25
        assert bars["heights"] == pytest.approx(list(np.clip(norms, *GRADIENT_LIMITS)), rel=1e-5)  # 6 digits kept
        assert shown["readouts"][3]["value"] == pytest.approx(norms[0] / norms[-1], rel=1e-5)
    kept = {residual: render("ablation_lab", view="gradients", depth=24, residual=residual)["readouts"][3]["value"]
            for residual in (True, False)}
    assert kept[True] > 1 > 2 * kept[False]  # through the identity it arrives whole; without, it shrinks


def test_the_similarity_view_draws_the_cosine_squares_of_evenly_spaced_layers():
    from explainer.ablation import run_ablation
    from explainer.sandboxes.ablation_lab import INPUTS, lab_config, similarity_layers

    assert similarity_layers(3) == [0, 1, 2, 3]
    assert similarity_layers(24) == [0, 4, 8, 12, 16, 20, 24]
    assert similarity_layers(13)[0] == 0 and similarity_layers(13)[-1] == 13 and len(similarity_layers(13)) == 7
    result = run_ablation(lab_config(12, "random", True, False, True, True), *INPUTS["random"])
    shown = render("ablation_lab", view="similarity", depth=12, residual=False)
    [squares] = shown["marks"]  # one heat map: the squares side by side, an empty column between two
    assert squares["type"] == "heatmap"
    values = np.array(squares["values"], dtype=float)  # (T, 7 (T + 1) - 1); None (empty) is read as nan
    length = len(result.cosine_similarity[0])
    assert values.shape == (length, 7 * (length + 1) - 1) and squares["x"] == list(range(values.shape[1] + 1))
    opacities = np.array(squares["opacity"], dtype=object)
    for panel, layer in enumerate(similarity_layers(12)):
        left = panel * (length + 1)
        assert values[:, left:left + length][::-1] == pytest.approx(np.array(result.cosine_similarity[layer]), abs=1e-6)
        if panel:  # the column before a square is empty: nothing is drawn there
            assert np.isnan(values[:, left - 1]).all() and all(opacity is None for opacity in opacities[:, left - 1])
    assert shown["readouts"][3]["value"] > 0.999  # collapsed: every two positions point the same way


def test_the_similarity_view_shows_the_residual_keeping_positions_apart_and_training_more_so(trained_weights):
    def mean(**values):
        return render("ablation_lab", view="similarity", depth=4, **values)["readouts"][3]["value"]

    assert mean(residual=True) < mean(residual=False) - 0.3
    assert mean(weights="trained") < mean(residual=True)
    values = render("ablation_lab", view="similarity", depth=1)["marks"][0]["values"]
    cosines = np.array(values)[::-1]  # rows were drawn with position 1 on top
    assert np.diag(cosines) == pytest.approx(1.0)
    assert cosines[0, 4] == pytest.approx(1.0)  # "the" at positions 1 and 5: one word, one embedding


def test_every_view_keeps_the_labs_three_readouts_so_a_quiz_can_quote_them():
    names = {view: [r["label"] for r in render("ablation_lab", view=view)["readouts"][:3]]
             for view in ("stream", "gradients", "similarity")}
    assert names["stream"] == names["gradients"] == names["similarity"] == [
        "word-order sensitivity", "stream RMS, last layer", "tokens still distinct"]


# ---- PreNorm or PostNorm -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm", ["rmsnorm", "layernorm"])
def test_norm_placement_draws_the_labs_model_with_the_norm_before_the_branch_or_after_the_add(norm):
    from explainer.ablation import AblationConfig, gradient_norms, run_ablation
    from explainer.sandboxes.ablation_lab import SENTENCE_IDS, SWAPPED_IDS

    for placement in ("pre", "post"):
        config = AblationConfig(depth=24, norm=norm, placement=placement)
        result = run_ablation(config, SENTENCE_IDS, SWAPPED_IDS)
        norms = gradient_norms(config, SENTENCE_IDS, SWAPPED_IDS).gradient_norm
        shown = render("norm_placement", placement=placement, norm=norm, depth=24)
        bars, line = shown["marks"][:2]
        assert bars["heights"] == pytest.approx(result.residual_rms, rel=1e-5)
        assert line["y"] == pytest.approx(norms, rel=1e-5)
        values = {item["label"]: item["value"] for item in shown["readouts"]}
        assert values["gradient at the embeddings ÷ at the top"] == pytest.approx(norms[0] / norms[-1], rel=1e-5)
        assert shown["status"]["label"] == result.status


def test_norm_placement_prepares_in_idle_time_each_choice_flipped_and_its_full_depth():
    from explainer import ablation
    from explainer.sandboxes import norm_placement

    ablation.clear_cache()
    step = norm_placement._preparing(ablation.AblationConfig(depth=2, norm="rmsnorm", placement="pre"))
    steps = 1
    while not step():
        steps += 1
    computed = {(key[0].placement, key[0].norm): (len(stack.states) - 1, list(stack.gradient_norms))
                for key, stack in ablation._LAYERS_CACHE.items()}
    assert computed == {("post", "rmsnorm"): (2, [2]), ("pre", "layernorm"): (2, [2]),
                        ("pre", "rmsnorm"): (ablation.MAX_DEPTH, [1, 3, ablation.MAX_DEPTH])}
    # A block per step: the flips' 2 forward and 3 back (with the loss); this arrangement's 24 forward, shared by
    # depths 1, 3 and 24, and the backward pass at each of them.
    assert steps == 2 * 5 + ablation.MAX_DEPTH + sum(depth + 1 for depth in (1, 3, ablation.MAX_DEPTH))
    ablation.clear_cache()


def test_postnorm_pins_the_stream_and_shrinks_the_gradient_prenorm_hands_it_down():
    pre, post = (render("norm_placement", placement=placement, depth=24) for placement in ("pre", "post"))
    assert post["marks"][0]["heights"][1:] == pytest.approx([1.0] * 24, abs=1e-4)  # the norm comes last in a block
    assert pre["marks"][0]["heights"][-1] > 3  # nothing rescales a PreNorm stream
    kept = {name: shown["readouts"][1]["value"] for name, shown in (("pre", pre), ("post", post))}
    assert kept["pre"] > 1 > 2 * kept["post"]
    assert (pre["status"]["label"], post["status"]["label"]) == ("HEALTHY", "VANISHING")
