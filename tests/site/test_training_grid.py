"""The trained ablation grid: every configuration once per seed, cached and reused, retrained when the code changes,
reported run by run, and quoted faithfully by the lesson (tables, quizzes and the claims its quantities check)."""

import json
import math
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from build_scripts import training_grid
from build_scripts.quantities import evaluate, quantities
from build_scripts.quantities import training_lesson as lesson
from build_scripts.training_grid import SEEDS, Spread, over_seeds

LESSON = Path(__file__).resolve().parents[2] / "docs" / "lessons" / "ablation-experiment.md"
TINY = {"width": 8, "heads": 2, "length": 3, "train_size": 32, "validation_size": 8, "steps": 3, "eval_every": 3}
TINY_SEEDS = (0, 1)
CONFIGURATIONS = 10  # five ablations at two depths


def without_timing(grid):
    return {name: {k: v for k, v in run.items() if k not in ("seconds", "cpu_seconds")} for name, run in grid.items()}


@pytest.fixture
def counted(monkeypatch):
    """The runs actually trained (not read from the cache), in order."""
    trained = []
    train_one = training_grid._train_one

    def counting(name, config):
        trained.append(name)
        return train_one(name, config)

    monkeypatch.setattr(training_grid, "_train_one", counting)
    return trained


def tiny_grid(cache_dir, workers=1, **options):
    return training_grid.load_or_train(cache_dir, workers=workers, seeds=TINY_SEEDS, **TINY, **options)


def test_a_second_load_trains_nothing_and_a_code_change_retrains_everything(tmp_path, monkeypatch, counted):
    runs = CONFIGURATIONS * len(TINY_SEEDS)
    first = tiny_grid(tmp_path)
    assert len(counted) == runs and len(list(tmp_path.glob("*.json"))) == runs
    assert set(first) == {(name, depth, seed) for name, depth, _ in first for seed in TINY_SEEDS}
    again = tiny_grid(tmp_path)
    assert len(counted) == runs and again == first  # read back, number for number
    monkeypatch.setattr(training_grid, "code_digest", lambda: "the model code changed")
    changed = tiny_grid(tmp_path)
    assert len(counted) == 2 * runs and len(list(tmp_path.glob("*.json"))) == 2 * runs
    assert without_timing(changed) == without_timing(first)  # same code really ran: same numbers


def test_each_seed_is_its_own_run_with_its_own_numbers(tmp_path):
    grid = tiny_grid(tmp_path)
    for (name, depth, seed), run in grid.items():
        assert run["seed"] == seed and run["config"]["seed"] == seed and run["depth"] == depth
    losses = {seed: grid[("full", 2, seed)]["initial_val_loss"] for seed in TINY_SEEDS}
    assert losses[0] != losses[1], "two seeds gave the same untrained model: the seed does not reach the run"


def test_parallel_workers_give_the_serial_numbers(tmp_path):
    serial = tiny_grid(tmp_path / "serial")
    parallel = tiny_grid(tmp_path / "parallel", workers=2)
    assert without_timing(parallel) == without_timing(serial)


# A short run of the grid's deepest configuration in a fresh interpreter, with or without keep_freed_memory: what it
# computed and how many pages it faulted in meanwhile.
TRAIN_AND_COUNT_FAULTS = """
import json, resource, sys
from build_scripts import training_grid
from explainer.training import run_experiment
kept = training_grid.keep_freed_memory() if sys.argv[1] == "keep" else None
config = training_grid.grid(seeds=(0,), steps=20, eval_every=20)[("full", 8, 0)]
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
result = run_experiment(config)
print(json.dumps({"kept": kept, "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before,
                  "result": result}))
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="keep_freed_memory changes glibc's malloc only")
def test_a_worker_keeps_freed_memory_and_faults_in_a_tenth_of_the_pages_for_the_same_numbers():
    def train(mode):
        done = subprocess.run([sys.executable, "-c", TRAIN_AND_COUNT_FAULTS, mode], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parents[2], env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
                              check=True)
        return json.loads(done.stdout)

    kept, default = train("keep"), train("default")
    assert kept["kept"] is True
    assert kept["result"] == default["result"]  # where the memory comes from changes no number
    assert kept["faults"] * 5 < default["faults"], (kept["faults"], default["faults"])


def test_progress_gets_one_line_per_trained_run_saying_what_n_of_n_and_elapsed(tmp_path):
    lines = []
    grid = tiny_grid(tmp_path, workers=2, progress=lines.append)
    total = len(grid)
    assert len(lines) == total
    pattern = re.compile(r"\[(\d+)/(\d+), (\d+) s\] (.+), depth (\d+), seed (\d+): [\d.]+ s, val loss ")
    parsed = [pattern.match(line) for line in lines]
    assert all(parsed), lines
    assert [int(match[1]) for match in parsed] == list(range(1, total + 1))
    assert {int(match[2]) for match in parsed} == {total}
    assert [int(match[3]) for match in parsed] == sorted(int(match[3]) for match in parsed)  # elapsed only grows
    assert {(match[4], int(match[5]), int(match[6])) for match in parsed} == set(grid)
    tiny_grid(tmp_path, progress=lines.append)
    assert len(lines) == total, "runs read from the cache are not reported as trained"


def test_the_cli_prints_progress_lines_and_a_summary(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(training_grid, "SEEDS", TINY_SEEDS)
    real_grid = training_grid.grid
    monkeypatch.setattr(training_grid, "grid", lambda *_, **__: real_grid(TINY_SEEDS, **TINY))  # the tiny grid
    training_grid.main(["-v", "--cache-dir", str(tmp_path)])
    out = capsys.readouterr().out.splitlines()
    runs = CONFIGURATIONS * len(TINY_SEEDS)
    assert sum(line.startswith(f"[{n}/{runs}, ") for n in range(1, runs + 1) for line in out) == runs
    assert any(line.strip().startswith("no norm depth 8: val loss") for line in out)
    assert out[-1].startswith(f"grid of {runs} runs")


def test_no_temporary_files_are_left_behind(tmp_path):
    tiny_grid(tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".") and p.name != ".lock"]


def test_a_spread_is_the_mean_and_range_and_a_diverged_seed_is_not_averaged_away():
    assert Spread.of([0.25, 1.0, 0.25]) == Spread(0.5, 0.25, 1.0)  # exact in binary floating point
    diverged = Spread.of([0.1, math.nan])
    assert math.isnan(diverged.mean) and math.isnan(diverged.low) and math.isnan(diverged.high)
    results = {("full", 2, seed): {"val_loss": loss} for seed, loss in enumerate((0.75, 0.25))}
    assert over_seeds(results, "val_loss") == {("full", 2): Spread(0.5, 0.25, 0.75)}


def test_prune_deletes_only_runs_the_current_code_no_longer_makes(tmp_path):
    name, config = next(iter(training_grid.grid().items()))
    current = training_grid.result_path(tmp_path, name, config)
    current.write_text("{}")
    (tmp_path / "full-depth2-0000000000000000.json").write_text("{}")
    assert training_grid.prune(tmp_path) == [tmp_path / "full-depth2-0000000000000000.json"]
    assert [p.name for p in tmp_path.glob("*.json")] == [current.name]


# ---- the lesson reads the cached grid -----------------------------------------------------------------------------


def table_rows(markdown: str) -> tuple[list[str], dict[str, list[str]]]:
    lines = markdown.splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")][1:]
    rows = [line.strip("|").split("|") for line in lines[2:]]
    return header, {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in rows}


def parse_cell(cell: str) -> tuple[float, float, float]:
    """'0.015 (0.008–0.023)' or '100%' -> (mean, low, high) as printed."""
    match = re.fullmatch(r"([\d.]+)%? \(([\d.]+)–([\d.]+)%?\)|([\d.]+)%?", cell)
    assert match, cell
    if match[4]:
        return (float(match[4]),) * 3
    return float(match[1]), float(match[2]), float(match[3])


def test_the_lessons_table_gives_every_configurations_mean_and_range_over_the_seeds():
    assert "\n{{ training.results_table }}\n" in LESSON.read_text()  # on its own line, so it renders as a table
    header, rows = table_rows(evaluate("training.results_table"))
    results = lesson.results()
    assert {seed for _, _, seed in results} == set(SEEDS) and len(SEEDS) >= 3
    for column, title in enumerate(header):
        measure = {"val loss": "val_loss", "generated": "generated_accuracy"}[title.split(",")[0]]
        depth = int(title.rsplit(" ", 1)[1])
        scale, tolerance = (100, 0.5) if measure == "generated_accuracy" else (1, 5e-4)
        for name, cells in rows.items():
            values = [results[(name, depth, seed)][measure] * scale for seed in SEEDS]
            shown = parse_cell(cells[column])
            assert shown == pytest.approx((sum(values) / len(values), min(values), max(values)), abs=tolerance), \
                (name, title, cells[column], values)


def quiz(question_start: str) -> list[tuple[str, bool]]:
    """(answer text, marked correct) of the lesson's quiz whose question starts so."""
    block = LESSON.read_text().split(f"/// quiz | {question_start}")[1].split("\n///")[0]
    answers = re.findall(r"- text: ([^\n]+)\n((?:\s+correct: true\n)?)", block)
    return [(text, bool(correct)) for text, correct in answers]


QUIZ_ANSWERS = {"Positional encoding.": "no positions", "The residual add.": "no residual",
                "Normalization.": "no norm", "The causal mask.": "no causal mask"}


def test_the_shallow_against_deep_quiz_marks_exactly_what_every_seed_shows():
    answers = quiz("Which switches, turned off, cost next to nothing in the two-block model")
    marked = {QUIZ_ANSWERS[text] for text, correct in answers if correct}
    results = lesson.results()
    shown = set()
    for name in QUIZ_ANSWERS.values():
        shallow = [results[(name, 2, seed)]["generated_accuracy"] for seed in SEEDS]
        deep = [results[(name, 8, seed)]["generated_accuracy"] for seed in SEEDS]
        if min(shallow) >= 0.95 and max(deep) < 0.01:
            shown.add(name)
    assert marked == shown == {"no residual", "no norm"}


def test_the_loss_against_generation_quiz_marks_what_every_seed_shows():
    answers = dict(quiz("The model trained without the causal mask reaches a validation loss"))
    assert answers == {"About as many as the full model.": False, "Almost none.": True,
                       "About half, because the loss only counts the answer's positions.": False}
    results = lesson.results()
    for depth in (2, 8):
        for seed in SEEDS:
            masked, full = results[("no causal mask", depth, seed)], results[("full", depth, seed)]
            assert masked["val_loss"] <= 2 * full["val_loss"] + 0.01 and masked["generated_accuracy"] < 0.05


def test_every_claim_the_lesson_makes_holds_in_every_seed():
    """Each configuration's quantities check what the page says about it; every one must evaluate."""
    text = LESSON.read_text() + (LESSON.parent / "rmsnorm-calculus.md").read_text()
    used = set(re.findall(r"\{\{ (training\.[\w.]+) \}\}", text))
    assert used <= set(quantities()), sorted(used - set(quantities()))
    for name in sorted(used):
        assert evaluate(name).strip(), name
    quoted = {tuple(re.fullmatch(r"training\.(\w+?)_(\d+)\.\w+", name).groups()) for name in used
              if re.fullmatch(r"training\.\w+_\d+\.\w+", name)}
    claimed = {(ablation.replace(" ", "_"), str(depth)) for ablation, depth in lesson.CLAIMS}
    assert claimed <= quoted, f"configurations with claims the page never quotes: {sorted(claimed - quoted)}"


def test_a_claim_the_runs_stop_supporting_stops_the_build(monkeypatch):
    """Swap two configurations' results, as a changed model might, and the page's quantities refuse to print."""
    real = lesson.results()
    swapped = dict(real)
    for seed in SEEDS:
        swapped[("no norm", 8, seed)], swapped[("full", 8, seed)] = real[("full", 8, seed)], real[("no norm", 8, seed)]
    monkeypatch.setattr(lesson, "results", lambda: swapped)
    lesson.spreads.cache_clear()
    try:
        with pytest.raises(ValueError, match="claim no longer holds.*without the norm, depth 8"):
            evaluate("training.no_norm_8.val_loss_range")
        with pytest.raises(ValueError, match="claim no longer holds"):
            evaluate("training.shallow_cheap_deep_fatal")
    finally:
        lesson.spreads.cache_clear()


def test_two_runs_near_chance_that_swap_places_are_named_together_as_the_bottom_of_the_table(monkeypatch):
    """Which of two diverged runs ends higher depends on the last bits of the arithmetic (this machine's CPU trained
    one seed of depth 8 the other way round): the page names the pair, or one ablation when it is last in every seed,
    and refuses to name more than two."""
    real = lesson.results()
    by_seed = {seed: {"no norm": 2.3, "no residual": 2.2, "no positions": 0.5} for seed in SEEDS}

    def with_losses(losses):
        changed = dict(real)
        for seed in SEEDS:
            for name in lesson.ABLATIONS:
                value = losses[seed].get(name, 0.01)
                changed[(name, 8, seed)] = {**real[(name, 8, seed)], "val_loss": value}
        return changed

    try:
        monkeypatch.setattr(lesson, "results", lambda: with_losses(by_seed))
        assert evaluate("training.worst_at_depth_8") == "**no norm**"
        swapped = {**by_seed, SEEDS[-1]: {"no norm": 2.2, "no residual": 2.3, "no positions": 0.5}}
        monkeypatch.setattr(lesson, "results", lambda: with_losses(swapped))
        assert lesson.bottom_in_every_seed(8) == ["no norm", "no residual"]
        assert evaluate("training.worst_at_depth_8") == "**no norm** and **no residual**"
        tangled = {seed: {"no norm": 2.0 + 0.1 * ((seed + i) % 3), "no residual": 2.0 + 0.1 * ((seed + i + 1) % 3),
                          "no positions": 2.0 + 0.1 * ((seed + i + 2) % 3)} for i, seed in enumerate(SEEDS)}
        monkeypatch.setattr(lesson, "results", lambda: with_losses(tangled))
        with pytest.raises(ValueError, match="claim no longer holds.*at most 2 ablations"):
            evaluate("training.worst_at_depth_8")
    finally:
        lesson.spreads.cache_clear()


def test_a_build_that_trains_says_so_like_every_slow_build_step(tmp_path, monkeypatch, capsys):
    from build_scripts import progress

    monkeypatch.setattr(progress, "AFTER", 0.0)  # report at once: the tiny grid trains in seconds, a real one minutes
    tiny_grid(tmp_path)
    lines = capsys.readouterr().err.splitlines()
    runs = CONFIGURATIONS * len(TINY_SEEDS)
    assert f"explainer: training {runs} runs of the ablation grid: {runs} of {runs}, done in" in "\n".join(lines)
    tiny_grid(tmp_path)
    assert "training" not in capsys.readouterr().err, "a grid read from the cache trains nothing and says nothing"
