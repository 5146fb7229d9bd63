"""Our live update against the usual route: matplotlib inside Pyodide drawing the same figure to SVG.

Both sides run in one headless Debian `chromium`, on the project's own `mkdocs build --strict` served on 127.0.0.1
(as bench_sandboxes does, whose browser helpers this reuses), in the one Pyodide worker of the page:

- OURS: on `sandboxes/`, every enabled control of every sandbox gets bench_sandboxes' changes (sliders by keyboard,
  toggles by click, selects cycled), one render per change; a change's time is the page's own
  `performance.measure("explainer:update:<figure id>")`: input event → worker → Python → JSON → new SVG in the
  DOM.
- BASELINE: after that, the same worker loads Pyodide 0.27.7's own matplotlib 3.8.4 (loadPackage of the wheels'
  URLs, since the site's boot reads a lock without packages; each wheel was checked against the official lock's
  sha256 when it was cached, and they are served by this benchmark's copy of the site only, see
  benchmarks/pyodide_matplotlib.py) through the worker's `run` op (explainer.live, the code cells' route), and for
  every parameter set OURS drew, in the same order, computes the sandbox's figure description and draws it with the
  site's static renderer, build_scripts/figures/description.py (the one matplotlib drawing of a description, sent
  into the worker's file system as source), saved as SVG into memory. Timed in Python inside the worker
  (time.perf_counter), after one untimed warm-up per sandbox: no message round trip and no DOM work, so the
  baseline is timed in its favour.

The target is OURS ÷ BASELINE ≤ 0.1 (at least ten times faster per update), for p50 and for p95 per sandbox.
An info row per sandbox ("python alone") shows where our time goes: after matplotlib's loop, a second loop times
what our worker runs for the same values (explainer.sandbox.render_json: the description, its words and readouts, as
JSON), the same way (back to back, warm), so nothing of the browser is in either side. The rest of an update of ours
is the browser's: the input event, the messages to the worker and back, the frame Chromium draws for the key press
before it delivers the reply, and the drawing; and a call that follows a pause is slower than one in a warm loop.
The time matplotlib takes to load (download, install, import; ~12 MB of wheels) is printed, not compared: the usual
route would pay it before the first figure too.
Runtime: one Chromium, one Pyodide boot, ~375 updates each way: about 3-4 minutes on 2 busy cores.
"""

import ast
import json
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import support
from benchmarks import Ratio, bench_sandboxes, pyodide_matplotlib
from benchmarks.bench_sandboxes import BenchmarkSetupError, FreshBrowser
from build_scripts.site_runtime import PYODIDE_SITE_DIR

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BASELINE_NAME = "matplotlib 3.8.4 → SVG, same Pyodide worker"
PYTHON_ALONE_NAME = "matplotlib → SVG, Python alone; ours: render_json"
TARGET = 0.10
SESSION = "bench-matplotlib"
LOAD_TIMEOUT_MS = 300_000
RUN_TIMEOUT_MS = 300_000
# What the worker needs of build_scripts to draw a description: the renderer, its theme, and the palette file.
RENDERER_FILES = ("build_scripts/__init__.py", "build_scripts/figures/__init__.py", "build_scripts/figures/theme.py",
                  "build_scripts/figures/description.py", "build_scripts/browser/theme.json")
WORKER_ROOT = "/home/pyodide/bench-matplotlib"  # where those files go in the worker's file system

# One request of op "run" (a code cell) through the page's runtime; resolves with the reply's value, or throws.
RUN_JS = """async ([code, session, timeoutMs]) => {
  const {reply} = window.ExplainerRuntime.call(window.ExplainerProtocol.OPS.RUN, {code, session}, {timeoutMs});
  const message = await reply;
  if (!message.ok) throw new Error(`${message.error.message}\\n${message.error.detail || ""}`);
  return message.value.result;
}"""

# Start loadPackage(the wheels' URLs, _matplotlib_urls) from Python and return at once; the promise settles between
# later requests. (By name it would need the official lock; the site's boot reads the build's lock, which lists none.)
START_LOADING = """
import pyodide_js
from pyodide.ffi import create_proxy, to_js
import js

_matplotlib = {"done": False, "problems": []}

def _loaded(_value):
    _matplotlib["done"] = True

def _failed(error):
    _matplotlib["problems"].append(str(error))
    _matplotlib["done"] = True

_options = to_js({"messageCallback": create_proxy(lambda message: None),
                  "errorCallback": create_proxy(_matplotlib["problems"].append)}, dict_converter=js.Object.fromEntries)
_loading = pyodide_js.loadPackage(to_js(_matplotlib_urls), _options).then(create_proxy(_loaded), create_proxy(_failed))
"""
LOADING_STATE = "(_matplotlib['done'], _matplotlib['problems'])"

INSTALL_RENDERER = """
import importlib, json, os, sys
for _path, _text in json.loads({files!r}).items():
    _target = os.path.join({root!r}, _path)
    os.makedirs(os.path.dirname(_target), exist_ok=True)
    with open(_target, "w", encoding="utf-8") as _file:
        _file.write(_text)
sys.path.insert(0, {root!r})
importlib.invalidate_caches()
import matplotlib
import build_scripts.figures.description as _description
import build_scripts.figures.theme as _theme_module
from build_scripts.figures.description import draw_description
from build_scripts.figures.theme import load_theme, svg_bytes
from explainer.sandbox import get_sandbox, render_json

# The site builds with a newer matplotlib; 3.8.4 lacks some settings the theme gives (svg.id, new in 3.9, only fixes
# the ids written into the SVG): leave out what this version does not know, keep everything else.
_site_rc_params = _theme_module.rc_params
def _rc_params(theme):
    return {{key: value for key, value in _site_rc_params(theme).items() if key in matplotlib.rcParams}}
_theme_module.rc_params = _description.rc_params = _rc_params
_theme = load_theme("light")
matplotlib.__version__
"""

TIME_UPDATES = """
import json, time
_sandbox, _height = get_sandbox({name!r}), {height!r}

def _draw(params):
    return svg_bytes(draw_description(_sandbox.render(params), _theme, _height), _theme)

_params = json.loads({params!r})
_draw(_params[0])  # warm-up: first drawing of this figure (fonts, caches)
_seconds, _ours = [], []
for _values in _params:
    _start = time.perf_counter()
    _svg = _draw(_values)
    _seconds.append(time.perf_counter() - _start)
    assert _svg.lstrip().startswith(b"<?xml") and b"<svg" in _svg, _svg[:200]
# Ours in a loop of its own, after, so the baseline's loop is exactly what it was before these rows were added.
for _request in [json.dumps(_values) for _values in _params]:
    _start = time.perf_counter()
    _reply = render_json({name!r}, _request)  # what the worker runs for a render request
    _ours.append(time.perf_counter() - _start)
    assert _reply.startswith('{{"ok": true'), _reply[:300]
json.dumps([_seconds, _ours])
"""


def _check_prerequisites() -> str:
    executable = bench_sandboxes._check_prerequisites()
    absent = pyodide_matplotlib.missing()
    if absent:
        raise BenchmarkSetupError(f"bench_matplotlib_pyodide: {len(absent)} Pyodide wheels of matplotlib are not in "
                                  f"{pyodide_matplotlib.CACHE_DIR}: run `make bench` (or "
                                  "`python -m benchmarks.pyodide_matplotlib prepare`)")
    return executable


def _run(page, code: str, timeout_ms: int = RUN_TIMEOUT_MS):
    """Run Python in the page's worker (op "run"); the value of the code's last expression, as a Python value."""
    result = page.evaluate(RUN_JS, [code, SESSION, timeout_ms])
    return None if result is None else ast.literal_eval(result)


def _load_matplotlib(page, urls: list[str]) -> float:
    """loadPackage of matplotlib's wheels in the page's worker, then install the static renderer; returns the seconds
    taken."""
    start = time.perf_counter()
    _run(page, f"_matplotlib_urls = {urls!r}")
    _run(page, START_LOADING)
    deadline = start + LOAD_TIMEOUT_MS / 1e3
    while True:
        done, problems = _run(page, LOADING_STATE)
        if done:
            break
        if time.perf_counter() > deadline:
            raise RuntimeError(f"bench_matplotlib_pyodide: matplotlib did not load within {LOAD_TIMEOUT_MS} ms")
        page.wait_for_timeout(100)  # the worker settles loadPackage's promise between our requests
    if problems:
        raise RuntimeError(f"bench_matplotlib_pyodide: loading matplotlib in Pyodide failed: {'; '.join(problems)}")
    files = {path: (PROJECT_ROOT / path).read_text(encoding="utf-8") for path in RENDERER_FILES}
    version = _run(page, INSTALL_RENDERER.format(files=json.dumps(files), root=WORKER_ROOT))
    seconds = time.perf_counter() - start
    print(f"bench_matplotlib_pyodide: matplotlib {version} loaded in the worker in {seconds:.1f} s "
          "(download, install, import)")
    return seconds


def _python_seconds(page, name: str, height: int, params: list[dict]) -> tuple[list[float], list[float]]:
    """Per parameter set, in the worker: matplotlib's drawing, and our render_json of the same values."""
    matplotlib_seconds, ours = json.loads(_run(page, TIME_UPDATES.format(name=name, height=height,
                                                                       params=json.dumps(params))))
    return matplotlib_seconds, ours


def _site_with_matplotlib(site_dir: Path, site_url: str) -> list[str]:
    """Build the site and serve matplotlib's wheels beside its Pyodide; returns their URLs, numpy's left out (the
    worker has it)."""
    build = support.run_mkdocs_build(PROJECT_ROOT / "mkdocs.yml", site_dir, site_url=site_url)
    if build.returncode:
        raise RuntimeError(f"bench_matplotlib_pyodide: `mkdocs build --strict` failed:\n{build.stderr[-3000:]}")
    runtime = site_dir / PYODIDE_SITE_DIR
    if not (runtime / "pyodide-lock.json").is_file():
        raise RuntimeError(f"bench_matplotlib_pyodide: the built site has no {PYODIDE_SITE_DIR} "
                           "(mkdocs.yml must keep `self_host: true`)")
    names = pyodide_matplotlib.install_into(runtime)  # this temporary copy only: the real site never carries them
    return [f"{site_url}{PYODIDE_SITE_DIR}/{name}" for name in names if not name.startswith("numpy-")]


def _rows(name: str, ours: list[float], baseline: list[float], ours_python: list[float]) -> list[Ratio]:
    rows = []
    for q in (50, 95):
        mine, theirs = bench_sandboxes._percentile(ours, q), bench_sandboxes._percentile(baseline, q)
        rows.append(Ratio(f"update p{q} vs matplotlib · {name}", mine, theirs, BASELINE_NAME, TARGET))
    python = bench_sandboxes._percentile(ours_python, 50)
    rows.append(Ratio(f"python alone p50 · {name}", python, rows[0].baseline, PYTHON_ALONE_NAME, None))
    print(f"bench_matplotlib_pyodide: {name}: {len(ours)} updates; ours p50 {rows[0].ours * 1e3:.1f} ms, "
          f"p95 {rows[1].ours * 1e3:.1f} ms (its Python alone p50 {python * 1e3:.2f} ms); matplotlib p50 "
          f"{rows[0].baseline * 1e3:.1f} ms, p95 {rows[1].baseline * 1e3:.1f} ms", file=sys.stderr)
    return rows


def run() -> list[Ratio]:
    from playwright.sync_api import sync_playwright

    executable = _check_prerequisites()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-matplotlib-site-") as temp:
        site_dir = Path(temp) / "site"
        server = support.StaticSiteServer(site_dir)  # first: the build needs its address (instant navigation)
        try:
            urls = _site_with_matplotlib(site_dir, server.url)
            with sync_playwright() as playwright, FreshBrowser(playwright, executable,
                                                               urlsplit(server.url).netloc) as browser:
                updates = bench_sandboxes._measure_updates(browser, server.url)
                _load_matplotlib(browser.page, urls)
                for name, result in updates.items():
                    baseline, python = _python_seconds(browser.page, result["sandbox"], result["height"],
                                                       result["params"])
                    rows.extend(_rows(name, result["seconds"], baseline, python))
                browser.check("the matplotlib run")
        finally:
            server.close()
    return rows


if __name__ == "__main__":  # one module alone: python -m benchmarks.bench_matplotlib_pyodide
    for row in run():
        print(f"{row.name:<48} ours {row.ours * 1e3:8.1f} ms  baseline {row.baseline * 1e3:8.1f} ms  "
              f"ratio {row.ratio:6.3f}  {({True: 'met', False: 'MISSED', None: '(info)'})[row.met]}")
