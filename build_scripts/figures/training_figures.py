"""The ablation experiment's figure: validation loss while training, for every ablation at depths 2 and 8.

The numbers come from the trained grid (build_scripts/training_grid.py, cached in build/cache/training/; trained
first if missing), so the curves, the lesson's table and its quoted numbers all read the same runs.
"""

import math

from matplotlib.ticker import NullFormatter

from build_scripts.figures.registry import illustration
from build_scripts.figures.theme import Theme, new_figure
from build_scripts.training_grid import load_or_train
from explainer.training import ABLATIONS, GRID_DEPTHS

# One colour per ablation, the same in both panels; the no-mask run is dashed: its low loss is not what it seems.
ROLES = {"full": "ink", "no positions": "accent", "no residual": "secondary", "no norm": "warn",
         "no causal mask": "good"}
LOSS_RANGE = (1e-4, 1e3)  # validation cross-entropy in nats, log scale: from solved to far worse than chance


def _power_of_ten(exponent: int) -> str:
    """10⁻³ as plain Unicode text, in the page's font (mathtext would pin its own)."""
    return "10" + str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _loss_panel(figure, theme: Theme, results: dict, depth: int, left: float):
    width, height = figure.get_size_inches() * figure.dpi
    axes = figure.add_axes([left / width, 70 / height, 250 / width, (height - 110) / height])
    chance = math.log(10)  # a uniform guess among the ten letters
    axes.axhline(chance, color=theme.color("muted"), linewidth=theme.width(1), linestyle=":")
    axes.annotate("chance", (0, chance), xytext=(theme.width(4), theme.width(3)), textcoords="offset points",
                  color=theme.color("muted"), fontsize=theme.font("tick"), va="bottom")
    for name in ABLATIONS:
        curve = results[(name, depth)]["curve"]
        steps = [0] + [point["step"] for point in curve]
        losses = [results[(name, depth)]["initial_val_loss"]] + [point["val_loss"] for point in curve]
        axes.plot(steps, [min(max(v, LOSS_RANGE[0]), LOSS_RANGE[1]) for v in losses], color=theme.color(ROLES[name]),
                  linewidth=theme.width(2), linestyle="--" if name == "no causal mask" else "-", label=name)
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
    "right, one line per run: the full model, no positions, no residual, no norm, and no causal mask (dashed). "
    "A dotted line marks chance, ln 10. The table below the figure gives each run's final numbers."))
def ablation_training_curves(theme: Theme):
    """Validation loss against step for the full model and each ablation, at depth 2 and depth 8."""
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
