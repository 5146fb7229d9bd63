"""The ablation experiment's figure: validation loss while training, for every ablation at depths 2 and 8.

The numbers come from the trained grid (build_scripts/training_grid.py, cached in .cache/training/; trained first if
missing), so the curves, the lesson's table and its quoted numbers all read the same runs. Every configuration is
trained once per seed: its line is the mean over the seeds and a band spans their lowest and highest loss.
"""

import math

import numpy as np
from matplotlib.ticker import NullFormatter

from build_scripts.figures.registry import illustration
from build_scripts.figures.theme import Theme, new_figure
from build_scripts.training_grid import SEEDS, load_or_train
from explainer.training import ABLATIONS, GRID_DEPTHS

# One colour per ablation, the same in both panels; the no-mask run is dashed: its low loss is not what it seems.
ROLES = {"full": "ink", "no positions": "accent", "no residual": "secondary", "no norm": "warn",
         "no causal mask": "good"}
LOSS_RANGE = (1e-4, 1e3)  # validation cross-entropy in nats, log scale: from solved to far worse than chance
BAND_OPACITY = 0.18  # the seeds' range behind each mean line: the lines stay readable where bands overlap


def _power_of_ten(exponent: int) -> str:
    """10⁻³ as plain Unicode text, in the page's font (mathtext would pin its own)."""
    return "10" + str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def seed_curves(results: dict, ablation: str, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The steps (P,) and the validation loss of every seed at them (S, P), step 0 included; NaN after a divergence."""
    runs = [results[(ablation, depth, seed)] for seed in SEEDS]
    steps = max(([0] + [point["step"] for point in run["curve"]] for run in runs), key=len)
    losses = np.full((len(runs), len(steps)), np.nan)  # (S, P)
    for row, run in zip(losses, runs):
        values = [run["initial_val_loss"]] + [point["val_loss"] for point in run["curve"]]
        row[:len(values)] = values
    return np.array(steps), losses


def _loss_panel(figure, theme: Theme, results: dict, depth: int, left: float):
    width, height = figure.get_size_inches() * figure.dpi
    axes = figure.add_axes([left / width, 70 / height, 250 / width, (height - 110) / height])
    chance = math.log(10)  # a uniform guess among the ten letters
    axes.axhline(chance, color=theme.color("muted"), linewidth=theme.width(1), linestyle=":")
    axes.annotate("chance", (0, chance), xytext=(theme.width(4), theme.width(3)), textcoords="offset points",
                  color=theme.color("muted"), fontsize=theme.font("tick"), va="bottom")
    for name in ABLATIONS:
        steps, losses = seed_curves(results, name, depth)
        shown = np.clip(losses, *LOSS_RANGE)  # (S, P) on the chart: past the edge is drawn at the edge
        color = theme.color(ROLES[name])
        axes.fill_between(steps, shown.min(axis=0), shown.max(axis=0), color=color, alpha=BAND_OPACITY, linewidth=0)
        axes.plot(steps, np.clip(losses.mean(axis=0), *LOSS_RANGE), color=color, linewidth=theme.width(2),
                  linestyle="--" if name == "no causal mask" else "-", label=name)
    axes.set_yscale("log")
    axes.set_ylim(*LOSS_RANGE)
    exponents = range(round(math.log10(LOSS_RANGE[0])), round(math.log10(LOSS_RANGE[1])) + 1)
    axes.set_yticks([10.0**e for e in exponents], [_power_of_ten(e) for e in exponents])  # plain text, no mathtext
    axes.yaxis.set_minor_formatter(NullFormatter())
    axes.set_xlim(0, steps[-1])
    axes.spines[["top", "right"]].set_visible(False)
    axes.set_title(f"depth {depth}", fontsize=theme.font("title"), color=theme.color("ink"), pad=6)
    axes.set_xlabel("Adam step", fontsize=theme.font("label"))
    return axes


@illustration("ablation_training_curves", alt=(
    "Two panels of validation loss (log scale) against training step, depth 2 on the left and depth 8 on the "
    "right. One line per configuration, the mean over three seeds, with a shaded band from the lowest to the "
    "highest seed: the full model, no positions, no residual, no norm, and no causal mask (dashed). A dotted line "
    "marks chance, ln 10. The table below the figure gives each configuration's final numbers."))
def ablation_training_curves(theme: Theme):
    """Validation loss against step for the full model and each ablation at depth 2 and 8: mean and range of seeds."""
    results = load_or_train()
    figure = new_figure(theme, height=380)
    panels = [_loss_panel(figure, theme, results, depth, left) for depth, left in zip(GRID_DEPTHS, (70, 370))]
    panels[0].set_ylabel("validation loss (nats)", fontsize=theme.font("label"))
    handles, labels = panels[0].get_legend_handles_labels()
    legend = figure.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False,
                           fontsize=theme.font("legend"), handlelength=1.8, labelcolor=theme.color("ink"),
                           columnspacing=1.2)
    legend.set_zorder(7)
    return figure
