"""The `trainer` block: a training lab on the page, where readers train the ablated models themselves.

    /// trainer
    depth: 1                    # any setting (explainer.streams.train.SETTINGS): its starting value
    steps: 100
    caption: Train the model with one part switched off, and watch its loss.
    height: 360                 # figure height in the 640-wide drawing box
    ///

The page gets a <figure class="trainer"> holding native controls for the settings, Train and Stop buttons (shown by
build_scripts/browser/trainer.js), the static view and one JSON config in its data-config attribute. The static
view is the build-time run of the starting settings (from the training grid, build_scripts/training_grid.py), drawn
from the same description the live page draws (explainer.streams.train.curve_figure), with its final numbers; the
config carries every build-time run as a reference, so the page can draw the one that matches the reader's settings
behind their own run. The contract is in build_scripts/browser/README.md ("Training lab").

The build stops with `file:line: message` on an argument after `|`, an unknown key, a bad value or a bad option.
"""

import functools
import hashlib
import html
import json
from collections.abc import Callable
from dataclasses import dataclass

from markdown import Extension

from build_scripts.figures.jobs import FigureJob, theme_digest
from build_scripts.markdown import _page
from build_scripts.markdown._blocks import Block, BlockPreprocessor, MarkdownSourceError, static_images_html
from build_scripts.markdown.sandbox import OPTIONS as SANDBOX_OPTIONS
from build_scripts.markdown.sandbox import control_html
from explainer.figure import FIGURE_WIDTH
from explainer.sandbox import ParameterError, closest
from explainer.streams import train

OPTIONS = {name: SANDBOX_OPTIONS[name] for name in ("caption", "height")}  # (default, validator), as sandboxes'
OPTIONS["height"] = (train.HEIGHT, OPTIONS["height"][1])
MEASURES = ("val_loss", "generated_accuracy", "teacher_forced_accuracy")  # the final numbers the page compares
CURVE_DIGITS = 4  # significant digits of the reference curves the page gets: more than a figure can show
# What the status line says until trainer.js takes over: true for a reader without JavaScript.
NO_SCRIPT_STATUS = ("Static view: the run trained when this site was built, for the settings above. With JavaScript "
                    "on, choose settings and press Train to run it in your browser.")


# ---- the block ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trainer:
    """A trainer as a page places it: the settings it starts from, its caption and height."""

    settings: dict
    caption: str  # HTML: plain text with its formulas typeset
    height: int
    line: int = 0

    def figure_jobs(self) -> list[FigureJob]:
        """The static view: the build-time run of the starting settings, light and dark."""
        description = train.curve_figure(self.settings, None, reference_for(self.settings))
        return description_jobs(description, self.height, f"{_page.PAGE.get().source_path}:{self.line}")


def _error(block: Block, message: str, option: str | None = None) -> MarkdownSourceError:
    return MarkdownSourceError(block.option_lines.get(option, block.line), f"trainer: {message}")


def read_trainer(block: Block) -> Trainer:
    """Check a trainer block: options and starting settings; errors name the line."""
    if block.argument:
        raise _error(block, f"takes nothing after '|' (got {block.argument!r}); put settings and options in its body")
    options, settings = {name: default for name, (default, _) in OPTIONS.items()}, {}
    for key, value in block.options.items():
        if key in OPTIONS:
            try:
                options[key] = OPTIONS[key][1](value, key)
            except ValueError as error:
                raise _error(block, str(error), key) from None
        elif key in train.SETTING_NAMES:
            settings[key] = value
        else:
            valid = f"options: {', '.join(OPTIONS)}; settings: {', '.join(train.SETTING_NAMES)}"
            raise _error(block, f"unknown key '{key}'{closest(str(key), [*OPTIONS, *train.SETTING_NAMES])}; {valid}",
                         key)
    try:
        settings = train.check_settings(settings)
    except ParameterError as error:
        raise _error(block, str(error), error.parameter) from None
    return Trainer(settings, options["caption"], options["height"], block.line)


# ---- the build-time runs, as references -----------------------------------------------------------------------------


def _rounded(value):
    return None if value is None or value != value else float(f"{value:.{CURVE_DIGITS}g}")


def reference_entry(result: dict, spreads: dict) -> dict | None:
    """A build-time run as the page gets it (explainer.streams.train's reference), or None when the reader's settings
    cannot make its config (the grid then trained something else than the lab offers)."""
    config = train.TrainingConfig(**result["config"])
    settings = train.settings_of(config)
    if train.training_config(settings) != config:
        return None
    curve = {"step": [0] + [point["step"] for point in result["curve"]],
             "train": [None] + [_rounded(point["train_loss"]) for point in result["curve"]],
             "val": [_rounded(result["initial_val_loss"])] + [_rounded(point["val_loss"]) for point in result["curve"]]}
    configuration = (result["ablation"], result["depth"])
    over_seeds = {measure: [getattr(spreads[measure][configuration], part) for part in ("mean", "low", "high")]
                  for measure in MEASURES}
    return {"settings": {name: value for name, value in settings.items() if name != "steps"}, "steps": config.steps,
            "curve": curve, "final": {measure: result[measure] for measure in MEASURES},
            "over_seeds": {"seeds": list(spreads["seeds"]), **over_seeds}}


def references() -> list[dict]:
    """Every run of the build-time grid as a reference (the grid is trained first if the cache misses it)."""
    from build_scripts.training_grid import SEEDS, load_or_train, over_seeds

    results = load_or_train()
    spreads = {"seeds": SEEDS, **{measure: over_seeds(results, measure) for measure in MEASURES}}
    entries = (reference_entry(result, spreads) for _, result in sorted(results.items()))
    return [entry for entry in entries if entry]


def reference_for(settings: dict, entries: list[dict] | None = None) -> dict | None:
    """The build-time run with these settings (the step count aside), if the grid has one."""
    wanted = {name: value for name, value in settings.items() if name != "steps"}
    return next((entry for entry in (references() if entries is None else entries) if entry["settings"] == wanted),
                None)


# ---- the static view: a description drawn like a sandbox's --------------------------------------------------------


@dataclass(frozen=True)
class DescriptionJob(FigureJob):
    """A figure description drawn by the static renderer, like a sandbox's view; the description is the input."""

    description: str = ""  # the description as JSON

    @functools.cached_property
    def key(self) -> str:
        """The description, the palette and the static renderer."""
        parameters = json.dumps([self.kind, self.name, self.scheme, self.height, theme_digest(True)])
        return hashlib.sha256((parameters + self.description).encode()).hexdigest()

    @functools.cached_property
    def draws_description(self) -> bool:
        return True

    def render(self) -> bytes:
        """Draw the description and return its SVG bytes."""
        import matplotlib

        from build_scripts.figures.description import draw_description
        from build_scripts.figures.theme import load_theme, rc_params, svg_bytes

        theme = load_theme(self.scheme)
        with matplotlib.rc_context(rc_params(theme)):
            figure = draw_description(json.loads(self.description), theme, self.height)
        return svg_bytes(figure, theme)


def description_jobs(description: dict, height: int, used_at: str = "") -> list[FigureJob]:
    """The light and dark static views of a figure description."""
    text = json.dumps(description, sort_keys=True, allow_nan=False)
    return [DescriptionJob("description", "trainer", scheme, (), height, (used_at,) if used_at else (),
                           description=text) for scheme in ("light", "dark")]


# ---- HTML -----------------------------------------------------------------------------------------------------------


def _config_json(trainer: Trainer, entries: list[dict]) -> str:
    config = {"stream": "train", "height": trainer.height, "settings": trainer.settings,
              "controls": [setting.to_json() for setting in train.SETTINGS], "references": entries}
    return json.dumps(config, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def trainer_html(trainer: Trainer, element_id: str) -> str:
    """The <figure> the page gets: controls, actions, static view, readouts, results, status line and caption."""
    entries = references()
    reference = reference_for(trainer.settings, entries)
    view = train.view(trainer.settings, None, reference)
    controls = "".join(control_html(setting, trainer.settings[setting.name], f"{element_id}-{setting.name}", False)
                       for setting in train.SETTINGS)
    light, dark = (job.file_name for job in trainer.figure_jobs())
    static = static_images_html(light, dark, view["label"], "trainer__image")
    caption = f"<figcaption>{trainer.caption}</figcaption>" if trainer.caption else ""  # HTML, math typeset
    return (
        f'<figure class="trainer" id="{element_id}" data-state="static" '
        f'data-config="{html.escape(_config_json(trainer, entries))}">'
        f'<form class="sandbox__controls trainer__controls" aria-label="Training settings">{controls}</form>'
        f'<div class="trainer__actions" hidden>'
        f'<button type="button" class="trainer__train">Train</button>'
        f'<button type="button" class="trainer__stop" disabled>Stop</button>'
        f'<progress class="trainer__progress" max="{trainer.settings["steps"]}" value="0" '
        f'aria-label="Training progress"></progress>'
        f'<p class="trainer__counter"></p></div>'
        f'<div class="sandbox__figure trainer__figure" style="aspect-ratio: {FIGURE_WIDTH} / {trainer.height}">'
        f'<div class="sandbox__static trainer__static">{static}</div></div>'
        f'<div class="sandbox__readouts trainer__readouts">{view["readouts_html"]}</div>'
        f'<div class="trainer__results">{view["results_html"]}</div>'
        f'<p class="trainer__status" role="status">{NO_SCRIPT_STATUS}</p>'
        f"{caption}</figure>"
    )


# ---- the extension --------------------------------------------------------------------------------------------------


class TrainerExtension(Extension):
    """Adds the `/// trainer` block."""

    def extendMarkdown(self, md):
        self.md, self.count = md, 0
        md.registerExtension(self)
        handlers: dict[str, Callable[[Block], str]] = {"trainer": self.place}
        md.preprocessors.register(BlockPreprocessor(md, handlers), "explainer-trainer", 29.3)

    def reset(self):
        self.count = 0

    def place(self, block: Block) -> str:
        trainer = read_trainer(block)
        if _page.PREVIEW:
            _page.PREVIEW.figures_needed(trainer.figure_jobs())
        self.count += 1
        return trainer_html(trainer, f"trainer-{self.count}")


def makeExtension(**kwargs):  # noqa: N802 (the name Python-Markdown looks for)
    return TrainerExtension(**kwargs)
