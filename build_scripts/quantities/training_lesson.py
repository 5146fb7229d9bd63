"""Numbers and tables the lesson "Which ablation hurts most? An experiment" quotes, from the trained grid."""

import functools
import math

from build_scripts.quantities import number, quantity
from build_scripts.training_grid import load_or_train
from explainer.training import ABLATIONS, GRID_DEPTHS, TrainingConfig, init_parameters

SAMPLE_RUNS = (("full", 8), ("no causal mask", 8), ("no positions", 2))  # the generations the page shows


@functools.cache
def results() -> dict:
    """The grid's results by (ablation, depth), trained once per build if the cache misses."""
    return load_or_train()


def percent(fraction: float) -> str:
    """0.953 -> "95%"."""
    return f"{100 * fraction:.0f}%"


def results_table(grid: dict) -> str:
    """The final numbers of every run as a Markdown table: one row per ablation, the two depths side by side."""
    header = "| run | " + " | ".join(f"depth {d}: train loss | depth {d}: val loss | depth {d}: generated"
                                      for d in GRID_DEPTHS) + " |"
    rows = [header, "|---|" + "---:|" * 3 * len(GRID_DEPTHS)]
    for name in ABLATIONS:
        cells = []
        for depth in GRID_DEPTHS:
            run = grid[(name, depth)]
            cells += [number(run["train_loss"]), number(run["val_loss"]), percent(run["generated_accuracy"])]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def samples_table(grid: dict) -> str:
    """Validation prompts, the right answer, and what each of SAMPLE_RUNS wrote, as a Markdown table."""
    rows = ["| prompt | answer | " + " | ".join(f"{name}, depth {depth}" for name, depth in SAMPLE_RUNS) + " |",
            "|---|---|" + "---|" * len(SAMPLE_RUNS)]
    first = grid[SAMPLE_RUNS[0]]["samples"]
    for index, sample in enumerate(first):
        written = [grid[run]["samples"][index]["generated"] for run in SAMPLE_RUNS]
        marks = [f"`{text}` {'✓' if text == sample['expected'] else '✗'}" for text in written]
        letters = sample["prompt"].rstrip("|")  # the separator would read as a table's column break
        rows.append(f"| `{letters}` | `{sample['expected']}` | " + " | ".join(marks) + " |")
    return "\n".join(rows)


def worst_at(grid: dict, depth: int) -> str:
    """The ablation with the highest final validation loss at `depth`."""
    return max((name for name in ABLATIONS if name != "full"), key=lambda name: grid[(name, depth)]["val_loss"])


@quantity("training.results_table")
def _():
    return results_table(results())


@quantity("training.samples_table")
def _():
    return samples_table(results())


@quantity("training.worst_at_depth_8")
def _():
    return worst_at(results(), 8)


@quantity("training.worst_at_depth_2")
def _():
    return worst_at(results(), 2)


@quantity("training.steps")
def _():
    return str(TrainingConfig().steps)


@quantity("training.parameters_2")
def _():
    return f"{sum(p.size for p in init_parameters(TrainingConfig(depth=2)).values()):,}".replace(",", " ")


@quantity("training.parameters_8")
def _():
    return f"{sum(p.size for p in init_parameters(TrainingConfig(depth=8)).values()):,}".replace(",", " ")


@quantity("training.chance")
def _():
    return number(math.log(10), 2)


def _run_quantities():
    """training.<ablation>_<depth>.<measure> for every run: val_loss, train_loss (3 decimals), generated, forced."""
    for name in ABLATIONS:
        for depth in GRID_DEPTHS:
            prefix = f"training.{name.replace(' ', '_')}_{depth}"
            for key, shown in (("val_loss", number), ("train_loss", number), ("generated_accuracy", percent),
                               ("teacher_forced_accuracy", percent), ("initial_val_loss", lambda v: number(v, 1))):
                short = key.replace("_accuracy", "")
                quantity(f"{prefix}.{short}")(
                    lambda run=(name, depth), key=key, shown=shown: shown(results()[run][key]))


_run_quantities()


def _config_quantities():
    """training.config.<field>: the experiment's settings, as TrainingConfig's defaults."""
    import dataclasses

    for field in dataclasses.fields(TrainingConfig):
        quantity(f"training.config.{field.name}")(lambda value=field.default: str(value))


_config_quantities()


LAB_SENTENCE = "the hungry cat chases the small grey dog"  # the first lesson's example sentence


@quantity("training.lab_no_residual_distinct_8")
def _():
    """How much the tokens still differ at depth 8 in the lab's random model without the residual, in percent."""
    from explainer.ablation import AblationConfig, run_ablation, tokenize

    result = run_ablation(AblationConfig(depth=8, residual=False), tokenize(LAB_SENTENCE))
    return f"{100 * result.token_signal[-1] / result.residual_rms[-1]:.1g}%"


@quantity("training.lab_no_norm_growth_8")
def _():
    """How many times the lab's random model without a norm grows its stream over 8 blocks."""
    from explainer.ablation import AblationConfig, run_ablation, tokenize

    result = run_ablation(AblationConfig(depth=8, norm="none"), tokenize(LAB_SENTENCE))
    return f"{result.residual_rms[-1] / result.residual_rms[0]:.0f}"
