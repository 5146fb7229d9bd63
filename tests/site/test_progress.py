"""Long build work says what runs, how far it is and for how long; a warm build says nothing."""

import functools
import logging
import re
import threading

import pytest

from build_scripts import progress
from build_scripts.figures.jobs import render_all, sandbox_jobs
from build_scripts.progress import Progress
from explainer.sandbox import get_sandbox
from support import build_in_process, copy_project_site_sources

PROGRESS_LINE = re.compile(r"^explainer: .+: (\d+ of \d+, )?(\d+\.\d s|done in \d+\.\d s|failed after \d+\.\d s)$")


def test_a_task_that_ends_before_the_threshold_says_nothing():
    lines = []
    with Progress("drawing", total=3, emit=lines.append, after=3600) as task:
        task.advance(3)
    assert lines == []


def test_a_slow_task_reports_while_it_runs_and_when_it_ends():
    lines, spoke = [], threading.Event()

    def emit(line):
        lines.append(line)
        spoke.set()

    with Progress("drawing figures", total=4, emit=emit, after=0, every=3600) as task:
        assert spoke.wait(10), "no line while the task ran past its threshold"
        task.advance(4)
    assert re.fullmatch(r"explainer: drawing figures: 0 of 4, \d+\.\d s", lines[0]), lines
    assert re.fullmatch(r"explainer: drawing figures: 4 of 4, done in \d+\.\d s", lines[-1]), lines
    assert all(PROGRESS_LINE.match(line) for line in lines)


def test_a_failing_task_says_so():
    lines = []
    with pytest.raises(RuntimeError), Progress("building the wheel", emit=lines.append, after=0, every=3600):
        raise RuntimeError("no")
    assert re.fullmatch(r"explainer: building the wheel: failed after \d+\.\d s", lines[-1]), lines


def test_rendering_reports_a_cold_cache_and_not_a_warm_one(tmp_path):
    jobs = sandbox_jobs("recurrence", get_sandbox("recurrence").defaults(), 360)
    lines = []
    eager = functools.partial(Progress, emit=lines.append, after=0, every=3600)
    assert len(render_all(jobs, tmp_path, workers=1, progress=eager).rendered) == 2
    assert re.fullmatch(r"explainer: rendering 2 static figures: 2 of 2, done in \d+\.\d s", lines[-1]), lines
    lines.clear()
    assert render_all(jobs, tmp_path, workers=1, progress=eager).reused
    assert lines == []


@pytest.mark.parametrize("engine", ["mkdocs", "zensical"])
def test_a_build_reports_its_slow_steps_and_a_warm_build_reports_nothing(tmp_path, monkeypatch, caplog, capsys,
                                                                         engine):
    """A one-page site with its own figure cache: the first build renders two figures, the second none."""
    config = copy_project_site_sources(tmp_path)
    for page in (tmp_path / "docs").rglob("*.md"):
        page.unlink()
    (tmp_path / "docs/index.md").write_text("# Home\n\n/// sandbox | recurrence\n///\n")
    text = config.read_text().replace("self_host: true", f"self_host: true\n      cache_dir: {tmp_path / 'figures'}")
    config.write_text(text.split("\nnav:")[0] + "\nnav:\n  - Home: index.md\n")
    monkeypatch.setattr(progress, "AFTER", 0)  # every step counts as slow: the test cannot depend on timing
    caplog.set_level(logging.INFO, logger="mkdocs.plugins.explainer")

    def progress_lines() -> list[str]:
        said = capsys.readouterr().err.splitlines() + [record.getMessage() for record in caplog.records]
        caplog.clear()
        return [line for line in said if PROGRESS_LINE.match(line)]

    build_in_process(engine, config)
    assert any(line.startswith("explainer: rendering 2 static figures: 2 of 2, done in") for line in progress_lines())
    build_in_process(engine, config)
    assert progress_lines() == []
