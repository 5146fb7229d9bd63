"""The trained ablation grid: cached and reused, retrained when the code changes, and quoted faithfully by the lesson."""

import math
import re
from pathlib import Path

import pytest

from build_scripts import training_grid
from build_scripts.quantities import evaluate
from build_scripts.quantities.training_lesson import results, worst_at

LESSON = Path(__file__).resolve().parents[2] / "docs" / "lessons" / "ablation-experiment.md"
TINY = {"width": 8, "heads": 2, "length": 3, "train_size": 32, "validation_size": 8, "steps": 3, "eval_every": 3}
CHANCE = math.log(10)


def without_timing(grid):
    return {name: {k: v for k, v in run.items() if k != "seconds"} for name, run in grid.items()}


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


def test_a_second_load_trains_nothing_and_a_code_change_retrains_everything(tmp_path, monkeypatch, counted):
    first = training_grid.load_or_train(tmp_path, workers=1, **TINY)
    assert len(counted) == 10 and len(list(tmp_path.glob("*.json"))) == 10
    again = training_grid.load_or_train(tmp_path, workers=1, **TINY)
    assert len(counted) == 10 and again == first  # read back, number for number
    monkeypatch.setattr(training_grid, "code_digest", lambda: "the model code changed")
    changed = training_grid.load_or_train(tmp_path, workers=1, **TINY)
    assert len(counted) == 20 and len(list(tmp_path.glob("*.json"))) == 20
    assert without_timing(changed) == without_timing(first)  # same code really ran: same numbers


def test_parallel_workers_give_the_serial_numbers(tmp_path):
    serial = training_grid.load_or_train(tmp_path / "serial", workers=1, **TINY)
    parallel = training_grid.load_or_train(tmp_path / "parallel", workers=2, **TINY)
    assert without_timing(parallel) == without_timing(serial)


def test_no_temporary_files_are_left_behind(tmp_path):
    training_grid.load_or_train(tmp_path, workers=1, **TINY)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".") and p.name != ".lock"]


def table_rows(markdown: str) -> dict[str, list[str]]:
    rows = [line.strip("|").split("|") for line in markdown.splitlines()[2:]]
    return {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in rows}


def test_the_lessons_table_matches_the_results_files():
    assert "\n{{ training.results_table }}\n" in LESSON.read_text()  # on its own line, so it renders as a table
    rows = table_rows(evaluate("training.results_table"))
    grid = results()
    for (name, depth), run in grid.items():
        offset = 0 if depth == 2 else 3
        train, val, generated = rows[name][offset:offset + 3]
        assert float(train) == pytest.approx(run["train_loss"], abs=5e-4), (name, depth)
        assert float(val) == pytest.approx(run["val_loss"], abs=5e-4), (name, depth)
        assert generated == f"{100 * run['generated_accuracy']:.0f}%", (name, depth)


QUIZ_ANSWERS = {"no norm": "Normalization", "no residual": "The residual add", "no positions": "Positional encoding",
                "no causal mask": "The causal mask"}


def test_the_quizs_right_answer_is_what_the_runs_show():
    quiz = LESSON.read_text().split("/// quiz | Which switch")[1].split("\n///")[0]
    correct = re.search(r"- text: ([^\n]+)\n\s+correct: true", quiz)[1]
    assert correct.startswith(QUIZ_ANSWERS[worst_at(results(), 8)]), correct


def test_the_lessons_prose_follows_the_runs():
    grid = results()

    def full(depth):
        return grid[("full", depth)]

    def no_pe(depth):
        return grid[("no positions", depth)]

    def no_mask(depth):
        return grid[("no causal mask", depth)]

    # No positions: fails at depth 2; at depth 8 the causal mask lets it learn (the page reports the disagreement).
    assert no_pe(2)["generated_accuracy"] < full(2)["generated_accuracy"] - 0.3
    assert no_pe(8)["generated_accuracy"] > 0.8
    # No causal mask: a loss as low as the full model's, perfect with the answer in view, useless when generating.
    for depth in (2, 8):
        assert no_mask(depth)["val_loss"] <= 2 * full(depth)["val_loss"] + 1e-3
        assert no_mask(depth)["teacher_forced_accuracy"] > 0.95 and no_mask(depth)["generated_accuracy"] < 0.05
    # No residual and no norm: fine at depth 2, near chance at depth 8.
    assert grid[("no residual", 2)]["val_loss"] < 0.1 and grid[("no residual", 8)]["val_loss"] > 0.8 * CHANCE
    assert grid[("no norm", 2)]["val_loss"] <= 2 * full(2)["val_loss"] + 0.01  # "keeps up with the full model"
    assert grid[("no norm", 8)]["val_loss"] > 0.8 * CHANCE
    assert grid[("no norm", 8)]["initial_val_loss"] > 10 * full(8)["initial_val_loss"]
    assert worst_at(grid, 2) == "no positions"


def test_prune_deletes_only_runs_the_current_code_no_longer_makes(tmp_path):
    from explainer.training import ablation_grid

    name, config = next(iter(ablation_grid().items()))
    current = training_grid.result_path(tmp_path, name, config)
    current.write_text("{}")
    (tmp_path / "full-depth2-0000000000000000.json").write_text("{}")
    assert training_grid.prune(tmp_path) == [tmp_path / "full-depth2-0000000000000000.json"]
    assert [p.name for p in tmp_path.glob("*.json")] == [current.name]
