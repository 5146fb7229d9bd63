"""Numbers and tables the lesson "Which ablation hurts most? An experiment" quotes, from the trained grid.

Every configuration is trained once per seed (build_scripts.training_grid.SEEDS), so a number is a mean and a range
over the seeds. A quantity that backs a sentence of the lesson checks that sentence against every seed and stops the
build, naming the claim, when the runs no longer support it: retrain after a model change and the prose either still
holds or the build says which sentence broke.
"""

import dataclasses
import functools
import math

from build_scripts.quantities import number, quantity
from build_scripts.training_grid import SEEDS, Spread, grid, load_or_train, over_seeds
from explainer.training import ABLATIONS, GRID_DEPTHS, init_parameters

SAMPLE_RUNS = (("full", 8), ("no causal mask", 8), ("no positions", 2))  # the generations the page shows
SAMPLE_SEED = SEEDS[0]  # whose generations the samples table shows
CHANCE = math.log(10)  # the loss of a uniform guess among the ten letters
SHALLOW, DEEP = GRID_DEPTHS


@functools.cache
def results() -> dict:
    """The grid's results by (ablation, depth, seed), trained once per build if the cache misses."""
    return load_or_train()


@functools.cache
def spreads(measure: str) -> dict[tuple[str, int], Spread]:
    """`measure` of every configuration over the seeds, by (ablation, depth)."""
    return over_seeds(results(), measure)


def spread(ablation: str, depth: int, measure: str) -> Spread:
    """One configuration's `measure` over the seeds."""
    return spreads(measure)[(ablation, depth)]


def percent(fraction: float) -> str:
    """0.953 -> "95%"."""
    return f"{100 * fraction:.0f}%"


MEASURES = {  # what the lesson reports of a run, and how it prints a value of it
    "val_loss": number, "train_loss": number, "generated_accuracy": percent, "teacher_forced_accuracy": percent,
    "initial_val_loss": lambda value: number(value, 1),
}


def shown_range(values: Spread, shown) -> str:
    """The range as the lesson prints it: "0.416–0.528", "32–43%", or one value when every seed agrees."""
    low, high = shown(values.low), shown(values.high)
    return low if low == high else f"{low.removesuffix('%')}–{high}"


def shown_spread(values: Spread, shown) -> str:
    """A table cell: the mean, and the range over the seeds in brackets when the seeds differ."""
    mean, bounds = shown(values.mean), shown_range(values, shown)
    return mean if mean == bounds else f"{mean} ({bounds})"


def require(claim: bool, sentence: str) -> None:
    """Stop the build when the trained runs no longer support a sentence of the lesson."""
    if not claim:
        raise ValueError(f"the experiment page's claim no longer holds in the trained grid (every seed): {sentence}")


# ---- tables -------------------------------------------------------------------------------------------------------


def results_table(measures=("val_loss", "generated_accuracy")) -> str:
    """Mean (range over seeds) of `measures` for every configuration, one row per ablation, depths side by side."""
    titles = {"val_loss": "val loss", "train_loss": "train loss", "generated_accuracy": "generated"}
    header = "| run | " + " | ".join(f"{titles[m]}, depth {d}" for m in measures for d in GRID_DEPTHS) + " |"
    rows = [header, "|---|" + "---:|" * len(measures) * len(GRID_DEPTHS)]
    for ablation in ABLATIONS:
        cells = [shown_spread(spread(ablation, depth, m), MEASURES[m]) for m in measures for depth in GRID_DEPTHS]
        rows.append(f"| {ablation} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def samples_table() -> str:
    """Validation prompts of SAMPLE_SEED, the right answer, and what each of SAMPLE_RUNS wrote, as a Markdown table."""
    runs = [results()[(ablation, depth, SAMPLE_SEED)] for ablation, depth in SAMPLE_RUNS]
    rows = ["| prompt | answer | " + " | ".join(f"{name}, depth {depth}" for name, depth in SAMPLE_RUNS) + " |",
            "|---|---|" + "---|" * len(SAMPLE_RUNS)]
    for index, sample in enumerate(runs[0]["samples"]):
        written = [run["samples"][index]["generated"] for run in runs]
        marks = [f"`{text}` {'✓' if text == sample['expected'] else '✗'}" for text in written]
        letters = sample["prompt"].rstrip("|")  # the separator would read as a table's column break
        rows.append(f"| `{letters}` | `{sample['expected']}` | " + " | ".join(marks) + " |")
    return "\n".join(rows)


@quantity("training.results_table")
def _():
    return results_table()


@quantity("training.samples_table")
def _():
    return samples_table()


# ---- what the page says about each configuration, checked in every seed -----------------------------------------------


def per_seed(ablation: str, depth: int, measure: str) -> list[float]:
    """`measure` of one configuration, seed by seed (in SEEDS order)."""
    return [results()[(ablation, depth, seed)][measure] for seed in SEEDS]


def unsolved(ablation: str, depth: int) -> bool:
    """Every seed ends above half of chance and writes fewer than 1 answer in 100 right."""
    return (spread(ablation, depth, "val_loss").low > 0.5 * CHANCE
            and spread(ablation, depth, "generated_accuracy").high < 0.01)


def near_chance(ablation: str, depth: int) -> bool:
    """Every seed ends within a tenth of chance: the model has learned next to nothing."""
    return spread(ablation, depth, "val_loss").low > 0.9 * CHANCE


def keeps_up(ablation: str, depth: int) -> bool:
    """Every seed writes at least 95% of the answers right, and so does every seed of the full model."""
    return min(spread(name, depth, "generated_accuracy").low for name in (ablation, "full")) >= 0.95


def behind_full(ablation: str, depth: int, measure: str) -> bool:
    """In every seed the ablation does worse than the full model by `measure` (higher loss, lower accuracy)."""
    sign = 1 if "loss" in measure else -1
    return all(sign * (a - b) > 0 for a, b in zip(per_seed(ablation, depth, measure), per_seed("full", depth, measure)))


def mask_gap(depth: int) -> bool:
    """Without the mask: a loss as low as the full model's, near-perfect with the answer in view, almost no answers."""
    return (spread("no causal mask", depth, "val_loss").high <= 2 * spread("full", depth, "val_loss").high + 1e-3
            and spread("no causal mask", depth, "teacher_forced_accuracy").low > 0.95
            and spread("no causal mask", depth, "generated_accuracy").high < 0.05)


# What the lesson says about a configuration; every quantity of that configuration checks it before printing a number,
# so each sentence that quotes a configuration's numbers is checked against every seed.
CLAIMS = {
    ("full", SHALLOW): [(lambda: keeps_up("full", SHALLOW), "the full model solves the task at depth 2")],
    ("full", DEEP): [(lambda: keeps_up("full", DEEP), "the full model solves the task at depth 8")],
    ("no positions", SHALLOW): [
        (lambda: spread("no positions", SHALLOW, "generated_accuracy").high
         < spread("full", SHALLOW, "generated_accuracy").low - 0.3,
         "without positions, depth 2 writes far fewer answers right than the full model"),
        (lambda: spread("no positions", SHALLOW, "generated_accuracy").low > 1000 * 10.0 ** -setting("length"),
         "without positions, depth 2 still beats guessing a whole answer by orders of magnitude"),
        (lambda: spread("no positions", SHALLOW, "val_loss").high < 0.5 * CHANCE,
         "without positions, depth 2 learns much of the task: its loss ends far below chance")],
    ("no positions", DEEP): [
        (lambda: spread("no positions", DEEP, "generated_accuracy").low > 0.8,
         "without positions, depth 8 writes most answers right"),
        (lambda: spread("no positions", DEEP, "generated_accuracy").low
         > spread("no positions", SHALLOW, "generated_accuracy").high,
         "without positions, depth 8 does better than depth 2 in every seed"),
        (lambda: behind_full("no positions", DEEP, "val_loss") and behind_full("no positions", DEEP,
                                                                                "generated_accuracy"),
         "without positions, depth 8 stays behind the full model in loss and answers, seed by seed")],
    ("no residual", SHALLOW): [(lambda: keeps_up("no residual", SHALLOW),
                                "without the residual, depth 2 keeps up with the full model")],
    ("no residual", DEEP): [(lambda: unsolved("no residual", DEEP),
                             "without the residual, depth 8 ends far from solved, with almost no answer right")],
    ("no norm", SHALLOW): [(lambda: keeps_up("no norm", SHALLOW),
                            "without the norm, depth 2 keeps up with the full model")],
    ("no norm", DEEP): [
        (lambda: unsolved("no norm", DEEP) and near_chance("no norm", DEEP),
         "without the norm, depth 8 ends near chance, with almost no answer right"),
        (lambda: spread("no norm", DEEP, "initial_val_loss").low > 10 * spread("full", DEEP, "initial_val_loss").high,
         "without the norm, the untrained depth-8 model starts far above the full model's loss")],
    ("no causal mask", SHALLOW): [(lambda: mask_gap(SHALLOW), "without the mask, a low loss and almost no answers")],
    ("no causal mask", DEEP): [(lambda: mask_gap(DEEP), "without the mask, a low loss and almost no answers")],
}


def checked_spread(ablation: str, depth: int, measure: str) -> Spread:
    """A configuration's `measure` over the seeds, after checking everything the lesson says about it."""
    for holds, sentence in CLAIMS.get((ablation, depth), []):
        require(holds(), sentence)
    return spread(ablation, depth, measure)


def _run_quantities():
    """training.<ablation>_<depth>.<measure> (the mean over seeds) and .<measure>_range for every configuration."""
    for ablation in ABLATIONS:
        for depth in GRID_DEPTHS:
            prefix = f"training.{ablation.replace(' ', '_')}_{depth}"
            for measure, shown in MEASURES.items():
                short = measure.replace("_accuracy", "")
                quantity(f"{prefix}.{short}")(
                    lambda run=(ablation, depth), m=measure, s=shown: s(checked_spread(*run, m).mean))
                quantity(f"{prefix}.{short}_range")(
                    lambda run=(ablation, depth), m=measure, s=shown: shown_range(checked_spread(*run, m), s))


_run_quantities()


# ---- the set-up -----------------------------------------------------------------------------------------------------


def setting(field: str):
    """A training setting shared by every run of the grid (its value in the grid's configs), or ValueError."""
    values = {getattr(config, field) for config in grid().values()}
    if len(values) != 1:
        raise ValueError(f"the runs of the grid differ in {field} ({sorted(values)}): the page quotes one value")
    return values.pop()


def _config_quantities():
    """training.config.<field>: the settings every run of the grid shares (not depth, seed or the switches)."""
    varying = {"depth", "seed", *(field for switches in ABLATIONS.values() for field in switches)}
    for field in dataclasses.fields(grid()[next(iter(grid()))]):
        if field.name not in varying:
            quantity(f"training.config.{field.name}")(lambda name=field.name: str(setting(name)))


_config_quantities()


@quantity("training.seeds")
def _():
    return ", ".join(str(seed) for seed in SEEDS[:-1]) + f" and {SEEDS[-1]}"


@quantity("training.seed_count")
def _():
    words = {2: "two", 3: "three", 4: "four", 5: "five"}
    return words.get(len(SEEDS), str(len(SEEDS)))


@quantity("training.configurations")
def _():
    return str(len(ABLATIONS) * len(GRID_DEPTHS))


@quantity("training.runs")
def _():
    return str(len(results()))


@quantity("training.sample_seed")
def _():
    return str(SAMPLE_SEED)


@quantity("training.chance")
def _():
    return number(CHANCE, 2)


@quantity("training.guess_one_answer")
def _():
    """The chance of writing a whole answer right by guessing each letter uniformly: 1 in 10^length."""
    return f"1 in {10 ** setting('length'):,}".replace(",", " ")


@quantity("training.parameters_2")
def _():
    return f"{sum(p.size for p in init_parameters(grid()[('full', SHALLOW, SEEDS[0])]).values()):,}".replace(",", " ")


@quantity("training.parameters_8")
def _():
    return f"{sum(p.size for p in init_parameters(grid()[('full', DEEP, SEEDS[0])]).values()):,}".replace(",", " ")


# ---- the page's summary ---------------------------------------------------------------------------------------------


BOTTOM_MOST = 2  # the most ablations the page names as the bottom of a depth's table


def bottom_in_every_seed(depth: int) -> list[str]:
    """The fewest ablations whose final validation loss is above every other ablation's in every seed, highest mean
    first. Two runs that both end near chance can swap places with the last bits of the arithmetic (another CPU's
    BLAS kernels train them apart), so the page names the pair then, never one of them alone."""
    losses = {name: per_seed(name, depth, "val_loss") for name in ABLATIONS if name != "full"}
    names = sorted(losses, key=lambda name: -math.fsum(losses[name]))
    for size in range(1, len(names)):
        bottom, rest = names[:size], names[size:]
        if all(min(losses[name][seed] for name in bottom) > max(losses[name][seed] for name in rest)
               for seed in range(len(SEEDS))):
            return bottom
    return names


def bottom_of_the_table(depth: int) -> str:
    """The page's words for bottom_in_every_seed at `depth`, names in bold; more than BOTTOM_MOST stops the build."""
    bottom = bottom_in_every_seed(depth)
    require(len(bottom) <= BOTTOM_MOST, f"at most {BOTTOM_MOST} ablations have the highest validation loss at depth "
            f"{depth} in every seed (the runs say: {', '.join(bottom)})")
    return " and ".join(f"**{name}**" for name in bottom)


@quantity("training.worst_at_depth_8")
def _():
    return bottom_of_the_table(DEEP)


@quantity("training.worst_at_depth_2")
def _():
    return bottom_of_the_table(SHALLOW)


def shallow_cheap_deep_fatal() -> list[str]:
    """The ablations that keep up with the full model at depth 2 and leave depth 8 unsolved, in every seed."""
    return [name for name in ABLATIONS if name != "full" and keeps_up(name, SHALLOW) and unsolved(name, DEEP)]


@quantity("training.shallow_cheap_deep_fatal")
def _():
    found = shallow_cheap_deep_fatal()
    require(found == ["no residual", "no norm"], "exactly no residual and no norm cost little at depth 2 and "
            f"everything at depth 8 (the runs say: {found or 'none'})")
    return " and ".join(f"*{name}*" for name in found)


@quantity("training.train_val_gap")
def _():
    """The largest gap between train and validation loss in any run: the models learn the rule, not the strings."""
    gap = max(abs(run["val_loss"] - run["train_loss"]) for run in results().values())
    require(gap < 0.1, "train and validation losses agree within a tenth of a nat in every run")
    return number(gap, 2)


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
