"""The training lab's stream: a reader's own run of explainer.training, a chunk of about CHUNK_SECONDS at a time.

The page (build_scripts/browser/trainer.js) sends the reader's settings (SETTINGS) and, when the build trained the
same configuration, that run's numbers as a reference; every chunk yields the figure so far and the last loss, and
the end returns the final numbers, greedy generations and the whole curve. The figure description and the words
under it are made here, for the live page and (by the `trainer` block, build_scripts/markdown/trainer.py) for the
static view alike.

A run is the same run `explainer.training.run_experiment` makes for that config, number for number: chunks are cut
by time, but the steps, the validation passes (every `eval_every` steps and at the end) and the evaluation are the
same, in the same order. A reference is

    {"settings": {…SETTINGS but steps}, "steps": 600,
     "curve": {"step": [0, 40, …], "train": [null, …], "val": […]},        # the build-time curve, step 0 included
     "final": {"val_loss", "generated_accuracy", "teacher_forced_accuracy"},
     "over_seeds": {"seeds": [0, 1, 2], "val_loss": [mean, low, high], "generated_accuracy": […], …}}
"""

import html
import math
import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field

import numpy as np

from explainer import figure as fig
from explainer.live import stream
from explainer.sandbox import Choice, IntParam, ParameterError, Toggle
from explainer.training import Training, TrainingConfig, evaluation

CHUNK_SECONDS = 0.1  # work per chunk: the page hears from the run ten times a second, and Stop acts within one chunk
TRAIN_BIN = 10  # steps per point of the training curve: a batch's loss is noisy, the mean of ten reads well
SAMPLES = 4  # held-out prompts whose greedy answers the page shows
CHANCE = math.log(10)  # a uniform guess among the ten letters, in nats
HEIGHT = 360  # the figure's height in the 640-wide drawing box

NORMS = (("rmsnorm-pre", "RMSNorm, before each branch (pre)"), ("rmsnorm-post", "RMSNorm, after each add (post)"),
         ("layernorm-pre", "LayerNorm, pre"), ("layernorm-post", "LayerNorm, post"), ("none", "none"))
SETTINGS = (  # what the reader chooses; everything else is TrainingConfig's default, as in the build-time grid
    Choice("positional", "Positional encoding", (("rope", "RoPE"), ("sinusoidal", "sinusoidal"), ("none", "none")),
           "rope"),
    Toggle("residual", "Residual add", True),
    Choice("norm", "Normalization", NORMS, "rmsnorm-pre"),
    Toggle("causal_mask", "Causal mask", True),
    IntParam("depth", "Depth", 1, 8, 2, unit="blocks"),
    IntParam("seed", "Seed", 0, 9, 0),
    IntParam("steps", "Steps", 20, 600, 300, step=20),
)
SETTING_NAMES = tuple(setting.name for setting in SETTINGS)


# ---- settings and config ---------------------------------------------------------------------------------------------


def check_settings(settings: Mapping) -> dict:
    """Every setting checked (missing ones take their default); an unknown or bad one is a ParameterError naming it."""
    if not isinstance(settings, Mapping):
        raise ParameterError("settings", f"must be an object (got {type(settings).__name__})")
    checked = {setting.name: setting.default for setting in SETTINGS}
    declared = {setting.name: setting for setting in SETTINGS}
    for name, value in settings.items():
        if name not in declared:
            raise ParameterError(name, f"is not a training setting; valid: {', '.join(SETTING_NAMES)}")
        setting = declared[name]
        checked[name] = setting.validate(value)
        if setting.kind == "int" and (checked[name] - setting.min) % setting.step:
            raise ParameterError(name, f"must be {setting.min} or more in steps of {setting.step} (got {value})")
    return checked


def training_config(settings: Mapping) -> TrainingConfig:
    """The TrainingConfig of the reader's settings."""
    checked = check_settings(settings)
    norm, _, placement = checked.pop("norm").partition("-")
    return TrainingConfig(norm=norm, placement=placement or "pre", **checked)


def settings_of(config: TrainingConfig) -> dict:
    """The reader's settings that make `config` (inverse of training_config; placement is moot without a norm)."""
    settings = {name: getattr(config, name) for name in SETTING_NAMES if name != "norm"}
    return {**settings, "norm": "none" if config.norm == "none" else f"{config.norm}-{config.placement}"}


def title(settings: Mapping) -> str:
    """The settings in a line: the figure's title."""
    checked = check_settings(settings)
    norm = dict(NORMS)[checked["norm"]].split(",")[0] + ("" if checked["norm"] == "none" else
                                                        f" ({checked['norm'].partition('-')[2]})")
    parts = [f"depth {checked['depth']}", f"positions {dict(SETTINGS[0].options)[checked['positional']]}",
             "residual" if checked["residual"] else "no residual", f"norm {norm}",
             "causal mask" if checked["causal_mask"] else "no mask", f"seed {checked['seed']}"]
    return " · ".join(parts)


# ---- the run, a unit of work at a time -------------------------------------------------------------------------------


@dataclass
class Curve:
    """The run so far: every step's batch loss and the validation passes."""

    losses: list[float] = field(default_factory=list)  # batch loss of step 1, 2, …
    val_steps: list[int] = field(default_factory=list)
    val_losses: list[float] = field(default_factory=list)

    def training_points(self, final: bool = False) -> tuple[list[int], list[float]]:
        """The training curve: the mean batch loss of every TRAIN_BIN steps (and, at the end, of a shorter last bin)."""
        ends = list(range(TRAIN_BIN, len(self.losses) + 1, TRAIN_BIN))
        if final and self.losses and (not ends or ends[-1] != len(self.losses)):
            ends.append(len(self.losses))
        return ends, [float(np.mean(self.losses[max(0, end - TRAIN_BIN):end])) for end in ends]

    def to_json(self) -> dict:
        return {"losses": self.losses, "val_steps": self.val_steps, "val_losses": self.val_losses}


def _units(run: Training, curve: Curve) -> Generator[tuple[str, str], None, dict]:
    """The run as units of work: a train step, or a pass over the held-out strings (a validation, or one forward
    pass of the evaluation). After each it yields the phase and what the next unit is ("step" or "pass"), and it
    returns `evaluation`'s numbers: the same work run_experiment does, in the same order."""
    config = run.config

    def validate():
        curve.val_steps.append(run.step)
        curve.val_losses.append(run.validation_loss())

    validate()
    yield "training", "pass" if run.done else "step"
    while not run.done:
        curve.losses.append(run.train_step())
        due = run.done or run.step % config.eval_every == 0
        yield "training", "pass" if due else "step"
        if due:
            validate()
            yield "training", "pass" if run.done else "step"
    results = evaluation(run, SAMPLES)
    while True:
        try:
            next(results)
        except StopIteration as stop:
            return stop.value
        yield "evaluating", "pass"


def _chunks(units: Generator, seconds: float) -> Generator[str, None, dict]:
    """Group units of work into chunks of about `seconds`: a chunk ends before a unit that, judged by the last unit of
    its kind, would overrun it (a chunk holds at least one unit); yields the phase after each chunk and returns what
    `units` returns."""
    took, kind = {}, "pass"  # the last duration of each kind of unit; the run starts with a validation pass
    while True:
        start = time.monotonic()
        while True:
            began = time.monotonic()
            try:
                phase, following = next(units)
            except StopIteration as stop:
                return stop.value
            now = time.monotonic()
            took[kind], kind = now - began, following
            if now - start + took.get(kind, 0.0) > seconds:
                break
        yield phase


# ---- what the page shows ---------------------------------------------------------------------------------------------


def _loss_limits(values) -> tuple[float, float]:
    """Log-scale limits at powers of ten that hold every finite loss and chance, from at most 10⁻⁵ to 10³."""
    finite = [v for v in values if v is not None and math.isfinite(v) and v > 0] + [CHANCE]
    low = 10.0 ** max(-5, min(-1, math.floor(math.log10(min(finite)))))
    high = 10.0 ** min(3, max(1, math.ceil(math.log10(max(finite)))))
    return low, high


def curve_figure(settings: Mapping, curve: Curve | None, reference: Mapping | None, final: bool = False) -> dict:
    """The run so far (training and validation loss, log scale) over the build-time run of the same configuration,
    drawn to its end (a longer run than the reader's shows where more steps lead)."""
    steps = max(check_settings(settings)["steps"], reference["steps"] if reference else 0)
    marks, readouts, shown = [], [], [CHANCE]
    marks.append(fig.line([0, steps], [CHANCE, CHANCE], color="muted", width=1, dash=True, label="chance (ln 10)"))
    if reference:
        points = reference["curve"]
        marks.append(fig.line(points["step"], points["train"], color="muted", width=1, label="build time: training"))
        marks.append(fig.line(points["step"], points["val"], color="muted", width=2.5, label="build time: validation"))
        shown += [v for v in points["train"] + points["val"] if v is not None]
        readouts.append(fig.readout(f"build time, validation loss at step {points['step'][-1]}", points["val"][-1]))
    if curve and curve.val_steps:
        train_steps, train_losses = curve.training_points(final)
        marks.append(fig.line(train_steps, train_losses, color="primary", width=1.5, label="training"))
        marks.append(fig.line(curve.val_steps, curve.val_losses, color="accent", width=2.5, label="validation"))
        shown += train_losses + curve.val_losses
        if train_losses:
            readouts.append(fig.readout("training loss", train_losses[-1]))
        readouts.append(fig.readout("validation loss", curve.val_losses[-1]))
    status = None
    if curve and curve.losses and not math.isfinite(curve.losses[-1]):
        status = fig.status("DIVERGED", "bad", f"the loss stopped being finite at step {len(curve.losses)}, and "
                                               "training stopped there")
    axes = fig.axes(xlim=(0, steps), ylim=_loss_limits(shown), yscale="log", xlabel="Adam step",
                    ylabel="loss (nats)", title=title(settings))
    return fig.figure(axes=axes, marks=marks, readouts=readouts, status=status)


def _percent(fraction) -> str:
    return "—" if fraction is None else f"{100 * fraction:.0f}%"


def _loss(value) -> str:
    return fig.readout("", value)["text"]


def _spread(values, shown) -> str:
    mean, low, high = values
    return f"{shown(mean)} ({shown(low)}–{shown(high)})"


ROWS = (("val_loss", "validation loss (nats)", _loss), ("generated_accuracy", "answers right, written by the model",
        _percent), ("teacher_forced_accuracy", "answers right, reading the true answer (teacher-forced)", _percent))


def results_html(settings: Mapping, result: Mapping | None, reference: Mapping | None) -> str:
    """The final numbers beside the build-time run's (this seed, and the mean and range over the seeds), and the
    greedy generations with each letter marked right or wrong; an empty string when there is nothing to show."""
    checked = check_settings(settings)
    columns = []  # (heading, {row key: text})
    if result:
        columns.append((f"your run ({result['steps']} steps)", {k: shown(result[k]) for k, _, shown in ROWS}))
    if reference:
        columns.append((f"build time, seed {checked['seed']} ({reference['steps']} steps)",
                        {k: shown(reference["final"][k]) for k, _, shown in ROWS}))
        seeds = reference["over_seeds"]["seeds"]
        columns.append((f"build time, seeds {seeds[0]}–{seeds[-1]}: mean (range)",
                        {k: _spread(reference["over_seeds"][k], shown) for k, _, shown in ROWS}))
    if not columns:
        return ""
    head = "".join(f'<th scope="col">{html.escape(heading)}</th>' for heading, _ in columns)
    body = "".join(f'<tr><th scope="row">{html.escape(label)}</th>'
                   + "".join(f"<td>{html.escape(cells[key])}</td>" for _, cells in columns) + "</tr>"
                   for key, label, _ in ROWS)
    table = (f'<table class="trainer__table"><caption>Final numbers on the held-out strings</caption>'
             f'<thead><tr><td></td>{head}</tr></thead><tbody>{body}</tbody></table>')
    return table + (_samples_html(result["samples"]) if result and result.get("samples") else "")


def _samples_html(samples) -> str:
    """Greedy answers to held-out prompts, each letter marked right or wrong (in words, too, for screen readers)."""
    items = []
    for sample in samples:
        letters = "".join(
            f'<span class="trainer__letter trainer__letter--{"right" if got == want else "wrong"}">'
            f"{html.escape(got)}</span>" for got, want in zip(sample["generated"], sample["expected"]))
        right = sum(got == want for got, want in zip(sample["generated"], sample["expected"]))
        verdict = f"{right} of {len(sample['expected'])} letters right"
        if right < len(sample["expected"]):
            verdict += f"; the answer is {sample['expected']}"
        items.append(f'<li><code>{html.escape(sample["prompt"])}</code> → <code class="trainer__answer">{letters}'
                     f'</code> <span class="trainer__verdict">{html.escape(verdict)}</span></li>')
    return ('<div class="trainer__samples"><p>What the model writes for held-out prompts, a letter at a time '
            '(wrong letters are struck through):</p>'
            f'<ul class="trainer__sample-list">{"".join(items)}</ul></div>')


def view(settings: Mapping, curve: Curve | None, reference: Mapping | None, result: Mapping | None = None,
         final: bool = False) -> dict:
    """What the page shows: the figure, its words (label, readouts) and the results' HTML."""
    figure = curve_figure(settings, curve, reference, final)
    return {"figure": figure, "label": fig.describe(f"Loss while training, {title(settings)}", figure),
            "readouts_html": fig.readouts_html(figure), "results_html": results_html(settings, result, reference)}


# ---- the stream ------------------------------------------------------------------------------------------------------


@stream("train")
def train(settings: dict, reference: dict | None = None, run: bool = True):
    """Train with the reader's settings, yielding {phase, step, steps, figure, label, readouts_html} about every
    CHUNK_SECONDS; return that with phase "done", the results' HTML, the final numbers and the whole curve. With
    `run` false, return the view of the reference alone (phase "reference"), training nothing."""
    config = training_config(settings)
    if not run:
        return {"phase": "reference", "step": 0, "steps": config.steps, **view(settings, None, reference)}
    training, curve = Training(config), Curve()
    work = _chunks(_units(training, curve), CHUNK_SECONDS)
    while True:
        try:
            phase = next(work)
        except StopIteration as stop:
            numbers = stop.value
            break
        yield {"phase": phase, "step": training.step, "steps": config.steps, **view(settings, curve, reference)}
    result = {**numbers, "steps": training.step, "diverged": training.diverged}
    return {"phase": "done", "step": training.step, "steps": config.steps, "result": result, "curve": curve.to_json(),
            **view(settings, curve, reference, result, final=True)}
