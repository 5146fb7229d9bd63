"""The lab's trained weights: trained once into the cache, copied into the package when it lacks them or holds other
bytes, and refused when the grid's run of the same config reported other numbers."""

import json

import pytest

from build_scripts import trained_weights
from build_scripts.trained_weights import EXPORTED_RUN, ExportMismatch, check_against_grid, export, exported_config
from build_scripts.training_grid import result_path
from explainer.trained import TRAINED_FILE

EVALUATION = {"val_loss": 0.25, "generated_accuracy": 0.5}


@pytest.fixture
def trainings(monkeypatch, tmp_path):
    """The runs `export` trains (a stand-in that returns fixed bytes at once), against an empty grid cache."""
    runs = []

    def train(config, progress):
        runs.append(config)
        return b"weights of run %d" % len(runs), EVALUATION

    monkeypatch.setattr(trained_weights, "train", train)
    monkeypatch.setattr(trained_weights, "check_against_grid", lambda evaluation: check_against_grid(
        evaluation, tmp_path / "grid"))
    return runs


def test_the_export_trains_once_and_copies_into_the_package_when_its_file_differs(tmp_path, trainings):
    cache, package = tmp_path / "cache", tmp_path / "package"
    target = export(cache, package)
    assert target == package / TRAINED_FILE and target.read_bytes() == b"weights of run 1"
    assert trainings == [exported_config()]
    target.write_bytes(b"an older model")
    assert export(cache, package).read_bytes() == b"weights of run 1"
    assert len(trainings) == 1  # the cache answered
    assert [path.name for path in cache.glob("*.npz")] == [trained_weights.cache_path(cache).name]


def test_the_export_must_agree_with_the_grids_run_of_the_same_config(tmp_path):
    grid_dir = tmp_path / "grid"
    check_against_grid(EVALUATION, grid_dir)  # no grid run yet: nothing to compare
    grid_dir.mkdir()
    reported = result_path(grid_dir, EXPORTED_RUN, exported_config())
    reported.write_text(json.dumps(EVALUATION))
    check_against_grid(EVALUATION, grid_dir)
    reported.write_text(json.dumps({**EVALUATION, "val_loss": 0.26}))
    with pytest.raises(ExportMismatch, match=r"val_loss is 0\.25, the grid's run of the same config 0\.26"):
        check_against_grid(EVALUATION, grid_dir)
