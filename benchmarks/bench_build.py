"""Site build time with static figures: cold (empty figure cache) and warm (nothing changed) against a plain
`mkdocs build` of the same Markdown with the explainer plugin off (our Markdown extensions still run: the blocks
need them); for scale, also against MkDocs + Material alone (the blocks left as text); and parallel vs serial
figure rendering.

Every build is a real `mkdocs build` subprocess of a copy of the project (interpreter start-up included, as a
contributor runs it). Target: warm ≤ 1.2 × plain.
"""

import shutil
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks import Ratio
from build_scripts.figures.jobs import all_default_jobs, render_all
from support import copy_project_site_sources, run_mkdocs_build

REPEATS = 3
PLUGIN_SETTING = "  - explainer:\n      self_host: true\n"


def _timed_build(config: Path, site: Path) -> float:
    start = time.perf_counter()
    result = run_mkdocs_build(config, site)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"mkdocs build failed:\n{result.stderr}")
    return seconds


def _project(root: Path, plugin: str, extensions: bool = True) -> Path:
    root.mkdir()
    config = copy_project_site_sources(root)
    text = config.read_text()
    assert PLUGIN_SETTING in text, "mkdocs.yml's explainer plugin setting changed; update benchmarks/bench_build.py"
    text = text.replace(PLUGIN_SETTING, plugin)
    if not extensions:  # the blocks stay as plain text: what MkDocs + Material cost alone
        text = "".join(line for line in text.splitlines(keepends=True) if "- build_scripts.markdown." not in line)
    config.write_text(text)
    return config


def run() -> list[Ratio]:
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        plain = _project(scratch / "plain", "")
        bare = _project(scratch / "bare", "", extensions=False)
        ours = _project(scratch / "ours", f"  - explainer:\n      self_host: true\n      cache_dir: {scratch}/figures\n")
        plain_times, bare_times, cold_times, warm_times = [], [], [], []
        for repeat in range(REPEATS):
            plain_times.append(_timed_build(plain, scratch / f"site-plain-{repeat}"))
            bare_times.append(_timed_build(bare, scratch / f"site-bare-{repeat}"))
            shutil.rmtree(scratch / "figures", ignore_errors=True)
            cold_times.append(_timed_build(ours, scratch / f"site-cold-{repeat}"))
            warm_times.append(_timed_build(ours, scratch / f"site-warm-{repeat}"))
        plain_s = statistics.median(plain_times)
        jobs = all_default_jobs()
        render_all(jobs[:2], scratch / "warm-up", workers=1)  # imports and font cache, so neither side pays them
        serial = render_all(jobs, scratch / "serial", workers=1).seconds
        parallel = render_all(jobs, scratch / "parallel", workers=2).seconds
    return [
        Ratio("mkdocs build, warm figure cache", statistics.median(warm_times), plain_s, "plain build, plugin off", 1.2),
        Ratio("mkdocs build, cold figure cache", statistics.median(cold_times), plain_s, "plain build, plugin off",
              None),
        Ratio("mkdocs build, warm figure cache", statistics.median(warm_times), statistics.median(bare_times),
              "MkDocs + Material alone (our blocks as text)", None),
        Ratio(f"render all {len(jobs)} figures on 2 processes", parallel, serial, "the same on 1 process", None),
    ]
