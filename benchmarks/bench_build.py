"""Site build time with static figures, under both engines, as `make build` runs it (`python -m
build_scripts.pipeline build --engine …`):

- MkDocs: cold (empty figure cache) and warm (nothing changed) against a plain `mkdocs build` of the same Markdown
  with the explainer plugin off (our Markdown extensions still run: the blocks need them); for scale, also against
  MkDocs + Material alone (the blocks left as text).
- Zensical: warm against a plain `zensical build` of the same project (our Markdown extensions run inside it; both
  with Zensical's own page cache warm, as any second build has it).
- Parallel vs serial figure rendering.

Every build is a real subprocess of a copy of the project (interpreter start-up included, as a contributor runs it).
Target: warm ≤ 1.2 × plain, for each engine. A warm build takes a second or two, so on a machine others share its
wall time jumps by as much: each pair is measured WARM_REPEATS times, ours and the baseline back to back.
"""

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Ratio
from build_scripts.figures.jobs import all_default_jobs, render_all
from support import copy_project_site_sources, run_mkdocs_build, run_pipeline

REPEATS = 3  # cold builds (each renders every figure)
WARM_REPEATS = 7
PLUGIN_SETTING = "  - explainer:\n      self_host: true\n"


def _timed(build) -> float:
    start = time.perf_counter()
    result = build()
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"build failed:\n{result.stderr}")
    return seconds


def _zensical_alone(config: Path) -> subprocess.CompletedProcess:
    """`zensical build --strict`, nothing around it."""
    return subprocess.run([sys.executable, "-m", "zensical", "build", "--strict"], cwd=config.parent,
                          capture_output=True, text=True)


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


def _ours(cache_dir: Path) -> str:
    return f"  - explainer:\n      self_host: true\n      cache_dir: {cache_dir}\n"


def run() -> list[Ratio]:
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        plain = _project(scratch / "plain", "")
        bare = _project(scratch / "bare", "", extensions=False)
        ours = _project(scratch / "ours", _ours(scratch / "figures"))
        zensical = _project(scratch / "zensical", _ours(scratch / "figures-zensical"))
        # Untimed: Zensical's page cache and this project's figures, as every build after the first finds them.
        _timed(lambda: run_pipeline(zensical, "build", "--engine", "zensical"))
        times = {name: [] for name in ("plain", "bare", "cold", "warm", "zensical alone", "zensical ours")}
        for _ in range(REPEATS):
            shutil.rmtree(scratch / "figures", ignore_errors=True)
            times["cold"].append(_timed(lambda: run_pipeline(ours, "build", "--engine", "mkdocs")))
        for _ in range(WARM_REPEATS):
            times["plain"].append(_timed(lambda: run_mkdocs_build(plain, scratch / "site-plain")))
            times["warm"].append(_timed(lambda: run_pipeline(ours, "build", "--engine", "mkdocs")))
            times["bare"].append(_timed(lambda: run_mkdocs_build(bare, scratch / "site-bare")))
            times["zensical alone"].append(_timed(lambda: _zensical_alone(zensical)))
            times["zensical ours"].append(_timed(lambda: run_pipeline(zensical, "build", "--engine", "zensical")))
        median = {name: statistics.median(values) for name, values in times.items()}
        jobs = all_default_jobs()
        render_all(jobs[:2], scratch / "warm-up", workers=1)  # imports and font cache, so neither side pays them
        serial = render_all(jobs, scratch / "serial", workers=1).seconds
        parallel = render_all(jobs, scratch / "parallel", workers=2).seconds
    return [
        Ratio("mkdocs build, warm figure cache", median["warm"], median["plain"], "plain build, plugin off", 1.2),
        Ratio("mkdocs build, cold figure cache", median["cold"], median["plain"], "plain build, plugin off", None),
        Ratio("mkdocs build, warm figure cache", median["warm"], median["bare"],
              "MkDocs + Material alone (our blocks as text)", None),
        Ratio("zensical build, warm figure cache", median["zensical ours"], median["zensical alone"],
              "plain zensical build (extensions only)", 1.2),
        Ratio(f"render all {len(jobs)} figures on 2 processes", parallel, serial, "the same on 1 process", None),
    ]
