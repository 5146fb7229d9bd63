"""The `/// trainer` block: Markdown in, the page's training lab out (controls, static view of the build-time run, its
config with every build-time run as a reference), and every authoring mistake named by file:line."""

import json
import textwrap

import markdown
import pytest

from build_scripts.markdown import trainer as block
from build_scripts.training_grid import SEEDS, grid
from explainer.streams import train
from support import copy_project_site_sources, markdown_error, run_mkdocs_build
from test_sandbox_block import Elements

EXTENSIONS = ["build_scripts.markdown.trainer", "build_scripts.markdown.sandbox", "pymdownx.superfences"]


def convert(text: str) -> str:
    return markdown.markdown(textwrap.dedent(text), extensions=EXTENSIONS)


def test_a_block_becomes_a_lab_with_labelled_controls_the_static_build_time_run_and_its_config():
    html = convert("""
        /// trainer
        depth: 8
        norm: none
        steps: 100
        caption: Train it.
        ///
        """)
    page = Elements(html)
    [figure] = page.find("figure")
    assert figure["class"] == "trainer" and figure["id"] == "trainer-1" and figure["data-state"] == "static"
    for control in [*page.find("input"), *page.find("select")]:
        assert page.find("label", for_=control["id"]), f"no label for {control['id']}"
    [depth] = page.find("input", name="depth")
    assert (depth["min"], depth["max"], depth["value"]) == ("1", "8", "8")
    assert [a["value"] for tag, a in page.tags if tag == "option" and "selected" in a] == ["rope", "none"]
    assert "8 blocks" in page.texts["output"] and page.texts["figcaption"] == ["Train it."]
    # Train and Stop wait for the script: a reader without JavaScript is told what the static view is.
    [actions] = page.find("div", class_="trainer__actions")
    assert "hidden" in actions and block.NO_SCRIPT_STATUS in html
    [light, dark] = page.find("img")
    job_light, job_dark = block.Trainer(train.check_settings({"depth": 8, "norm": "none", "steps": 100}), "", 360
                                        ).figure_jobs()
    assert light["src"] == f"/assets/figures/{job_light.file_name}#only-light" and dark["src"].endswith(
        f"{job_dark.file_name}#only-dark")
    assert light["alt"].startswith("Loss while training, depth 8") and "build time, validation loss at step" in light[
        "alt"]

    config = json.loads(figure["data-config"])
    assert config["settings"] == {**train.check_settings({}), "depth": 8, "norm": "none", "steps": 100}
    assert [c["name"] for c in config["controls"]] == list(train.SETTING_NAMES)
    assert len(config["references"]) == len(grid()), "every run of the build-time grid is a reference"
    assert {tuple(sorted(r["settings"].items())) for r in config["references"]}.__len__() == len(grid())
    assert "build time, seed 0 (600 steps)" in html and f"seeds {SEEDS[0]}–{SEEDS[-1]}" in html


def test_a_reference_is_the_build_time_run_of_the_same_settings():
    from build_scripts.training_grid import load_or_train

    results = load_or_train()
    result = results[("no residual", 8, 1)]
    reference = block.reference_for({**train.check_settings({}), "residual": False, "depth": 8, "seed": 1})
    assert reference["steps"] == result["config"]["steps"]
    assert reference["curve"]["step"] == [0] + [p["step"] for p in result["curve"]]
    assert reference["curve"]["val"][-1] == pytest.approx(result["val_loss"], rel=1e-3)
    assert reference["final"]["generated_accuracy"] == result["generated_accuracy"]
    seeds = [results[("no residual", 8, seed)]["val_loss"] for seed in SEEDS]
    assert reference["over_seeds"]["val_loss"] == pytest.approx([sum(seeds) / len(seeds), min(seeds), max(seeds)])
    assert block.reference_for({**train.check_settings({}), "positional": "sinusoidal"}) is None, "not in the grid"


def test_the_static_view_is_the_description_the_worker_draws_for_the_same_settings():
    settings = train.check_settings({"causal_mask": False})
    [job, _] = block.Trainer(settings, "", 360).figure_jobs()
    worker = train.view(settings, None, block.reference_for(settings))
    assert json.loads(job.description) == worker["figure"]
    assert block.Trainer(settings, "", 360).figure_jobs()[0].key == job.key, "the same description, the same file"
    assert block.Trainer(train.check_settings({}), "", 360).figure_jobs()[0].key != job.key


def test_two_labs_on_a_page_get_distinct_ids():
    html = convert("/// trainer\n///\n\n/// trainer\ndepth: 1\n///\n")
    assert [f["id"] for f in Elements(html).find("figure")] == ["trainer-1", "trainer-2"]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("\n/// trainer | reverse\n///\n", 2, "trainer: takes nothing after '|' (got 'reverse')"),
        ("/// trainer\ndepth: 2\ndpeth: 3\n///\n", 3, "trainer: unknown key 'dpeth' (did you mean 'depth'?); options: "
         "caption, height; settings: positional, residual, norm, causal_mask, depth, seed, steps"),
        ("/// trainer\n\ndepth: 12\n///\n", 3, "trainer: depth: must be between 1 and 8 (got 12)"),
        ("/// trainer\nnorm: rmsnorm\n///\n", 2, "trainer: norm: must be one of 'rmsnorm-pre'"),
        ("/// trainer\nsteps: 30\n///\n", 2, "trainer: steps: must be 20 or more in steps of 20 (got 30)"),
        ("/// trainer\nresidual: 1\n///\n", 2, "trainer: residual: must be true or false (got 1)"),
        ("/// trainer\nheight: 5000\n///\n", 2, "trainer: height must be a whole number from 160 to 960"),
        ("/// trainer\ncaption: ''\n///\n", 2, "trainer: caption must be non-empty text"),
        ("/// trainer\ndepth: [2\n///\n", 2, "malformed YAML"),
        ("text\n\n/// trainer\ndepth: 2\n", 3, "'trainer' block is never closed"),
        ("/// traner\n///\n", 1, "unknown block 'traner' (did you mean 'trainer'?)"),
    ],
)
def test_a_mistake_is_an_error_naming_file_line_and_what_is_valid(text, line, message):
    error = markdown_error(convert, text)
    assert str(error).startswith(f"docs/page.md:{line}: "), str(error)
    assert message in str(error)


def test_a_mistake_fails_the_real_strict_build_with_the_authors_line_number(tmp_path):
    config = copy_project_site_sources(tmp_path)
    page = tmp_path / "docs/lessons/ablation-experiment.md"
    page.write_text(page.read_text() + "\n/// trainer\nseed: -1\n///\n")
    line = page.read_text().count("\n") - 1
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode != 0
    assert f"docs/lessons/ablation-experiment.md:{line}: trainer: seed: must be between 0 and 9 (got -1)" in (
        result.stderr), result.stderr
    assert "Traceback" not in result.stderr
