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
  benchmarks/pyodide_matplotlib.py) through the worker's `run` op (explainer.live, the code cells' route). For every
  parameter set OURS drew, in the same order, it computes the sandbox's figure description and draws it to SVG with
  the site's static renderer, build_scripts/figures/description.py (the one matplotlib drawing of a description,
  sent into the worker's file system as source). It is timed end to end, as OURS is: the page asks the worker (a
  `run` request whose code draws the figure), the worker posts the SVG text back on a BroadcastChannel, the page puts
  it in the sandbox's live view (innerHTML); from the request to the SVG in the DOM, by the page's clock, the updates
  paced as OURS' are (CHANGE_INTERVAL_SECONDS from start to start), after one untimed warm-up per sandbox. Still in
  its favour: its time starts at the request, where OURS' starts at the input event (0.7-1 ms earlier), and no
  frame for an input is drawn before its reply is delivered.

The target is OURS ÷ BASELINE ≤ 0.1 (at least ten times faster per update), for p50 and for p95 per sandbox.
Two info rows per sandbox show where the time goes:
- "vs matplotlib, Python alone": the baseline's drawing timed in Python inside the worker, back to back, warm (no
  messages, no DOM; what this benchmark compared against before it timed the usual route end to end).
- "python alone": in a loop of its own after that one, what our worker runs for the same values
  (explainer.sandbox.render_json: the description, its words and readouts, as JSON), timed the same way; so nothing
  of the browser is in either side. The rest of an update of ours is the browser's: the input event, the messages to
  the worker and back, the frame Chromium draws for the key press before it delivers the reply, and the drawing; and
  a call that follows a pause is slower than one in a warm loop.
The time matplotlib takes to load (download, install, import; ~12 MB of wheels) is printed, not compared: the usual
route would pay it before the first figure too.
Runtime: one Chromium, one Pyodide boot, ~375 updates by ours and twice as many by matplotlib: about 4 minutes with
the build, on 2 cores.
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
BASELINE_NAME = "matplotlib 3.8.4 → SVG in the page, same Pyodide worker"
MATPLOTLIB_ALONE_NAME = "matplotlib 3.8.4 → SVG, Python alone in the worker"
PYTHON_ALONE_NAME = "matplotlib → SVG, Python alone; ours: render_json"
SVG_CHANNEL = "bench-matplotlib-svg"  # the BroadcastChannel the worker posts matplotlib's SVG text on
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

# The usual route's worker side, defined once with the renderer: draw the figure of the values at `index` of the
# sandbox TIME_UPDATES last timed and post its SVG text to the page.
SEND_SVG = """
import js
_svg_channel = js.BroadcastChannel.new({channel!r})

def _send(index):
    _svg_channel.postMessage(_draw(_params[index]).decode())
"""

# The usual route's page side, per parameter set: ask the worker, put the SVG it posts in the sandbox's live view;
# the time (ms) from the request to the SVG in the DOM. The changes start intervalMs apart (or at once, if later).
END_TO_END_JS = """async ([figureId, count, intervalMs, channelName, session, timeoutMs]) => {
  const view = document.querySelector(`#${figureId} .sandbox__live`);
  const channel = new BroadcastChannel(channelName);
  const {RUN} = window.ExplainerProtocol.OPS;
  const update = async (index) => {
    const start = performance.now();
    const shown = new Promise((resolve) => {
      channel.onmessage = ({data}) => {
        view.innerHTML = data;
        resolve(performance.now());
      };
    });
    const {reply} = window.ExplainerRuntime.call(RUN, {code: `_send(${index})`, session}, {timeoutMs});
    const message = await reply;
    if (!message.ok) throw new Error(`${message.error.message}\n${message.error.detail || ""}`);
    const end = await shown;
    if (!view.querySelector("svg path, svg use")) throw new Error(`${figureId}: no drawing in matplotlib's SVG`);
    return end - start;
  };
  try {
    await update(0);  // warm-up
    const times = [];
    let started = performance.now();
    for (let index = 0; index < count; index++) {
      const wait = Math.max(0, started + intervalMs - performance.now());
      if (index) await new Promise((resolve) => setTimeout(resolve, wait));
      started = performance.now();
      times.push(await update(index));
    }
    return times;
  } finally {
    channel.close();
  }
}"""


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
    _run(page, SEND_SVG.format(channel=SVG_CHANNEL))
    seconds = time.perf_counter() - start
    print(f"bench_matplotlib_pyodide: matplotlib {version} loaded in the worker in {seconds:.1f} s "
          "(download, install, import)")
    return seconds


def _python_seconds(page, name: str, height: int, params: list[dict]) -> tuple[list[float], list[float]]:
    """Per parameter set, in the worker: matplotlib's drawing, and our render_json of the same values."""
    matplotlib_seconds, ours = json.loads(_run(page, TIME_UPDATES.format(name=name, height=height,
                                                                       params=json.dumps(params))))
    return matplotlib_seconds, ours


def _end_to_end_seconds(page, figure_id: str, count: int) -> list[float]:
    """Per parameter set of the last _python_seconds call, the usual route from the page: request → matplotlib in the
    worker → SVG text posted back → in the DOM."""
    milliseconds = page.evaluate(END_TO_END_JS, [figure_id, count, bench_sandboxes.CHANGE_INTERVAL_SECONDS * 1e3,
                                                 SVG_CHANNEL, SESSION, RUN_TIMEOUT_MS])
    return [value / 1e3 for value in milliseconds]


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


def _rows(name: str, ours: list[float], baseline: list[float], matplotlib_python: list[float],
          ours_python: list[float]) -> list[Ratio]:
    percentile = bench_sandboxes._percentile
    rows = [Ratio(f"update p{q} vs matplotlib · {name}", percentile(ours, q), percentile(baseline, q), BASELINE_NAME,
                  TARGET) for q in (50, 95)]
    python, theirs = percentile(ours_python, 50), percentile(matplotlib_python, 50)
    rows.append(Ratio(f"p50 vs matplotlib, Python alone · {name}", rows[0].ours, theirs, MATPLOTLIB_ALONE_NAME, None))
    rows.append(Ratio(f"python alone p50 · {name}", python, theirs, PYTHON_ALONE_NAME, None))
    print(f"bench_matplotlib_pyodide: {name}: {len(ours)} updates; ours p50 {rows[0].ours * 1e3:.1f} ms, "
          f"p95 {rows[1].ours * 1e3:.1f} ms (its Python alone p50 {python * 1e3:.2f} ms); matplotlib in the page "
          f"p50 {rows[0].baseline * 1e3:.1f} ms, p95 {rows[1].baseline * 1e3:.1f} ms (its Python alone p50 "
          f"{theirs * 1e3:.1f} ms)", file=sys.stderr)
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
                    matplotlib_python, python = _python_seconds(browser.page, result["sandbox"], result["height"],
                                                                result["params"])
                    baseline = _end_to_end_seconds(browser.page, result["figure_id"], len(result["params"]))
                    rows.extend(_rows(name, result["seconds"], baseline, matplotlib_python, python))
                browser.check("the matplotlib run")
        finally:
            server.close()
    return rows


if __name__ == "__main__":  # one module alone: python -m benchmarks.bench_matplotlib_pyodide
    for row in run():
        print(f"{row.name:<48} ours {row.ours * 1e3:8.1f} ms  baseline {row.baseline * 1e3:8.1f} ms  "
              f"ratio {row.ratio:6.3f}  {({True: 'met', False: 'MISSED', None: '(info)'})[row.met]}")
