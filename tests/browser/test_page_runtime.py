"""The page runtime (build_scripts/browser/sandbox.js) against a fake worker: lazy start, loading stages, live
updates, latest-wins, inline errors, failure and retry, and Material's instant navigation.

No Pyodide here: each test serves a temporary folder holding the real sandbox.js, render.js, protocol.js and
sandbox.css (as the build writes them), a runtime.json, generated pages with containers written to the HTML contract
of build_scripts/browser/README.md, and a FAKE worker.js. The fake speaks protocol.js's messages, answers renders with
views (figure, label, readouts' HTML) that explainer.sandbox made in Python for each angle, reads how to behave
(stage delays, failures, slowness) from fake-config.json at every message, and reports every message it receives on
a BroadcastChannel the page collects as `window.fakeLog`.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from build_scripts._files import write_atomic
from build_scripts.browser_files import site_files
from build_scripts.markdown.sandbox import Placement, sandbox_html
from explainer import figure as fig
from explainer.sandbox import Choice, FloatParam, IntParam, Sandbox, Toggle, registry
from support import StaticSiteServer, wait_until

pytestmark = pytest.mark.browser

ASSETS = "assets/explainer"
TIMEOUT = 10_000  # ms Playwright waits for anything the fake makes happen in well under a second

ANGLE = FloatParam("u_angle", "angle of u", 0, 180, step=1, default=53, unit="°")
SCALE = FloatParam("scale", "scale", 0, 2, step=0.05, default=1.0)
LAYERS = IntParam("layers", "layers", 1, 24, default=6)
POSITIONAL = Toggle("positional", "Positional encoding", True)
FUNCTION = Choice("f", "function", (("sin", "sin x"), ("cos", "cos x")), "sin")
SEED = IntParam("seed", "seed", 0, 9, default=7)  # fixed on the page: its input is disabled
MODE = Choice("mode", "mode", (("demo", "demo"), ("full", "full")), "demo")  # hidden on the page: no control
PARAMS = (ANGLE, SCALE, LAYERS, POSITIONAL, FUNCTION, SEED, MODE)
VALUES = {"u_angle": 53, "scale": 1.0, "layers": 6, "positional": True, "f": "sin", "seed": 7, "mode": "demo"}



def figure_at(u_angle: float, **_) -> dict:
    """What the fake's sandbox draws: the point at x = u_angle, the angle in the readout."""
    return fig.figure(
        axes=fig.axes(xlim=(0, 180), ylim=(0, 1), xlabel="angle", title="Projection"),
        marks=[fig.point(u_angle, 0.5, label="u"), fig.line([0, 180], [0, 1], label="diagonal")],
        readouts=[fig.readout("angle of u", u_angle, unit="°", digits=0)],
        status=fig.status("HEALTHY", "good", "the shadow is shorter than u"),
    )

FAKE_WORKER = """\
"use strict";
importScripts("protocol.js");
const P = self.ExplainerProtocol;
const VIEWS = %(views)s;  // explainer.sandbox's view (figure, label, readouts_html) for every whole angle
const instance = Math.random().toString(36).slice(2);
const log = new BroadcastChannel("fake-worker-log");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function settings() {
  const response = await fetch("fake-config.json", {cache: "no-store"});
  return response.json();
}

async function boot(id, fake) {
  for (const [index, stage] of P.STAGES.entries()) {
    if (fake.boot_fail === stage) {
      postMessage(P.failure(id, {kind: "runtime", stage, detail: "fake traceback",
                                  message: `loading ${P.STAGE_LABELS[stage]} failed: HTTP 404 (fake)`}));
      return;
    }
    postMessage(P.stageProgress(id, stage, "start", index / 3));
    if (fake.boot_hang) return;
    await sleep(fake.stage_ms);
    postMessage(P.stageProgress(id, stage, "done", (index + 1) / 3));
  }
  postMessage(P.success(id, {booted: true}));
}

async function render(id, {params}, fake) {
  await sleep(fake.render_ms);
  // A gate the test opens: how long a render takes is then up to the test, not the clock. true holds every render, a
  // number only the renders of that angle.
  const held = (config) => config.hold_renders === true || config.hold_renders === params.u_angle;
  while (held(fake)) {
    await sleep(20);
    fake = await settings();
  }
  const angle = params.u_angle;
  if (typeof angle !== "number") {
    postMessage(P.failure(id, {kind: "parameter", parameter: "u_angle",
                                message: `u_angle: must be a number (got ${angle})`}));
  } else if (angle >= fake.parameter_error_at) {
    postMessage(P.failure(id, {kind: "parameter", parameter: "u_angle",
                                message: `u_angle: must be below ${fake.parameter_error_at} (got ${angle})`}));
  } else if (angle >= fake.error_at) {
    postMessage(P.failure(id, {kind: "exception", message: "ValueError: fake failure",
                                detail: "Traceback (most recent call last):\\n  File \\"fake.py\\"\\nValueError: fake failure"}));
  } else {
    postMessage(P.success(id, VIEWS[angle]));
  }
}

// Like the real worker: hold a lock named after this worker for its whole life, then say it is ready.
navigator.locks.request(self.name, () => {
  postMessage({event: "ready", lock: self.name});
  return new Promise(() => {});
});

self.onmessage = async ({data}) => {
  const {id, op, args} = data;
  // A boot request carries runtime.json as written and its URL: the fake reports it resolved, as the worker reads it.
  const resolved = op === "boot" ? P.resolveManifest(args.manifest, args.base) : undefined;
  log.postMessage({instance, id, op, args, resolved});
  const fake = await settings();
  if (op === "boot") await boot(id, fake);
  else if (op === "render") await render(id, args, fake);
  else if (op === "cancel") postMessage(P.success(id, {cancelled: false}));
};
"""

DEFAULT_FAKE = {"stage_ms": 20, "render_ms": 0, "boot_fail": None, "boot_hang": False, "error_at": 1000,
                "parameter_error_at": 1000, "hold_renders": False}

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8"><link rel="icon" href="data:,"><title>%(title)s</title>
<link rel="stylesheet" href="%(assets)s/sandbox.css">
<script>
  // Test harness, not part of the runtime: collect what the fake worker reports and how the sandboxes change.
  window.fakeLog = [];
  window.fakeChannel = new BroadcastChannel("fake-worker-log");
  window.fakeChannel.onmessage = (event) => window.fakeLog.push(event.data);
  window.statusLog = [];
  window.stateLog = [];
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.attributeName === "data-state") window.stateLog.push(record.target.dataset.state);
    }
    for (const status of document.querySelectorAll(".sandbox__status")) {
      if (window.statusLog[window.statusLog.length - 1] !== status.textContent) window.statusLog.push(status.textContent);
    }
  }).observe(document, {subtree: true, childList: true, characterData: true, attributes: true,
                        attributeFilter: ["data-state"]});
  %(head_script)s
</script>
</head>
<body>
<main>%(body)s</main>
<script src="%(assets)s/render.js"></script>
<script src="%(assets)s/protocol.js"></script>
<script src="%(assets)s/runtime.js"></script>
<script src="%(assets)s/page.js"></script>
<script src="%(assets)s/sandbox.js"></script>
</body>
</html>
"""

# A stand-in for Material's global `document$`: emits the document on subscribe and whenever the test calls next().
FAKE_DOCUMENT_SUBJECT = """
  window.document$ = {
    observers: [],
    subscribe(observer) { this.observers.push(observer); observer(document); return {unsubscribe() {}}; },
    next() { for (const observer of this.observers) observer(document); },
  };
"""


# ---- the served folder -------------------------------------------------------------------------------------------


SANDBOX = Sandbox("projection_shadow", "Projection", "The shadow of v on u.", PARAMS, function=figure_at)
VIEWS = {angle: SANDBOX.view({"u_angle": angle}) for angle in range(181)}


def container_html(number: int = 1, height: int = 300, fixed_input_value: int = 3) -> str:
    """A container exactly as the sandbox block writes it (build_scripts.markdown.sandbox), config included."""
    element_id = f"sandbox-projection_shadow-{number}"
    placement = Placement(SANDBOX, VALUES, fixed=frozenset({"seed"}), hidden=frozenset({"mode"}),
                          caption="The shadow of v on u.", alt="Static projection figure", height=height)
    built = sandbox_html(placement, element_id)
    # The fixed parameter's input shows a different value than its config, to tell which one the runtime sends.
    seed_input = f'id="{element_id}-seed" name="seed" min="0" max="9" step="1" value="7"'
    assert seed_input in built
    return built.replace(seed_input, seed_input.replace('value="7"', f'value="{fixed_input_value}"'))


STAND_IN_SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 640 300"><rect width="640" height="300"/></svg>'


@dataclass
class Site:
    root: Path
    server: StaticSiteServer

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def assets(self) -> Path:
        return self.root / ASSETS

    def fake(self, **settings) -> None:
        """Tell the fake worker how to behave from its next message on.

        Written to a temporary file and renamed: the fake fetches this file at every message, and the threaded server
        may be reading it while a test changes it; an in-place rewrite can be served empty or cut short (content
        length taken before the truncation), which the fake then fails to parse as JSON.
        """
        write_atomic(self.assets / "fake-config.json", json.dumps({**DEFAULT_FAKE, **settings}))

    def manifest(self, timeout_ms: int = 5000) -> None:
        """Write runtime.json (atomically: the page may be fetching it)."""
        manifest = {"pyodide": {"version": "0.27.7", "indexURL": "../pyodide/0.27.7"},
                    "numpy": {"url": "../pyodide/0.27.7/numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl",
                              "integrity": "sha256-AA=="},
                    "wheel": {"url": "wheels/explainer-0.1.0-py3-none-any.whl", "integrity": "sha256-AA=="},
                    "stdlib": None, "lock": None, "timeout_ms": timeout_ms}
        write_atomic(self.assets / "runtime.json", json.dumps(manifest))

    def page(self, name: str, body: str, head_script: str = "") -> str:
        """Write a page (and a stand-in for each static figure it shows) and return its URL."""
        for figure in re.findall(r'src="/(assets/figures/[^"#]+)', body):
            (self.root / figure).parent.mkdir(parents=True, exist_ok=True)
            (self.root / figure).write_text(STAND_IN_SVG, encoding="utf-8")
        (self.root / name).write_text(PAGE % {"title": name, "assets": ASSETS, "body": body,
                                              "head_script": head_script}, encoding="utf-8")
        return self.url + name


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    (root / ASSETS).mkdir(parents=True)
    served = site_files()
    for name in ("runtime.js", "page.js", "sandbox.js", "render.js", "protocol.js", "sandbox.css"):
        (root / ASSETS / name).write_text(served[name], encoding="utf-8")
    (root / ASSETS / "worker.js").write_text(FAKE_WORKER % {"views": json.dumps(VIEWS)}, encoding="utf-8")
    server = StaticSiteServer(root)
    served = Site(root, server)
    served.manifest()
    served.fake()
    yield served
    server.close()


@pytest.fixture
def site_url(site):
    """Point the shared `browser` fixture (its off-origin guard) at this test's server instead of the site."""
    return site.url


# ---- helpers -------------------------------------------------------------------------------------------------------

FIRST = "#sandbox-projection_shadow-1"


def record_requests(page) -> list[str]:
    urls = []
    page.context.on("request", lambda request: urls.append(request.url))
    return urls


def runtime_requests(urls: list[str]) -> list[str]:
    return [url for url in urls if url.endswith(("/worker.js", "/runtime.json"))]


def wait_state(page, selector: str, state: str) -> None:
    page.wait_for_function("([s, state]) => document.querySelector(s).dataset.state === state", arg=[selector, state],
                           timeout=TIMEOUT)


def wait_renders(page, selector: str, count: int) -> None:
    page.wait_for_function("([s, n]) => Number(document.querySelector(s).dataset.renders) >= n", arg=[selector, count],
                           timeout=TIMEOUT)


def fake_log(page, op: str | None = None) -> list[dict]:
    return [entry for entry in page.evaluate("window.fakeLog") if op is None or entry["op"] == op]


def point_x(page, selector: str = FIRST) -> float:
    return float(page.locator(f"{selector} svg g[data-mark=point]").get_attribute("data-x"))


def go_live(page, url: str, selector: str = FIRST) -> None:
    """Open the page and wait until its sandbox is live and the worker has answered for the starting values (they are
    drawn from the build's view first), so that no render of the starting values is in flight any more."""
    page.goto(url)
    wait_state(page, selector, "live")
    page.wait_for_function("s => document.querySelector(s).dataset.computed === 'browser'", arg=selector,
                           timeout=TIMEOUT)


# ---- lazy start ----------------------------------------------------------------------------------------------------


def test_a_page_without_sandboxes_never_fetches_the_manifest_or_starts_a_worker(browser, site):
    page = browser.page
    requests = record_requests(page)
    page.goto(site.page("plain.html", "<h1>No sandbox here</h1><p>Just prose.</p>"))
    page.wait_for_load_state("networkidle")
    page.mouse.wheel(0, 2000)
    page.wait_for_timeout(300)
    assert runtime_requests(requests) == []
    assert page.workers == []
    browser.assert_clean()


def test_the_runtime_starts_only_when_a_sandbox_comes_within_about_300px_of_the_viewport(browser, site):
    page = browser.page
    requests = record_requests(page)
    page.goto(site.page("far.html", '<div style="height: 3000px">prose</div>' + container_html()))
    page.wait_for_load_state("networkidle")
    top = page.evaluate(f"document.querySelector('{FIRST}').getBoundingClientRect().top + scrollY")

    page.evaluate(f"scrollTo(0, {top} - innerHeight - 600)")  # 600 px below the fold: too far
    page.wait_for_timeout(400)
    assert runtime_requests(requests) == [] and page.workers == []
    assert page.locator(FIRST).get_attribute("data-state") == "static"

    page.evaluate(f"scrollTo(0, {top} - innerHeight - 150)")  # still out of sight, but near
    wait_state(page, FIRST, "live")
    assert page.locator(FIRST).is_visible() and not page.evaluate(
        f"document.querySelector('{FIRST}').getBoundingClientRect().top < innerHeight")
    assert len(fake_log(page, "boot")) == 1
    browser.assert_clean()


def test_the_first_focus_on_a_control_starts_the_runtime_even_far_from_the_viewport(browser, site):
    page = browser.page
    page.goto(site.page("focus.html", '<div style="height: 3000px">prose</div>' + container_html()))
    page.wait_for_timeout(300)
    assert page.locator(FIRST).get_attribute("data-state") == "static"
    page.evaluate(f"document.querySelector('{FIRST}-u_angle').focus({{preventScroll: true}})")
    assert page.evaluate("scrollY") == 0
    wait_state(page, FIRST, "live")
    browser.assert_clean()


# ---- loading and live ------------------------------------------------------------------------------------------------


def test_loading_shows_each_stage_then_the_live_figure_replaces_the_static_one(browser, site):
    page = browser.page
    site.fake(stage_ms=150)
    go_live(page, site.page("one.html", container_html()))
    statuses = page.evaluate("window.statusLog")
    stages = [next(i for i, text in enumerate(statuses) if word in text) for word in ("runtime", "numpy", "explainer")]
    assert stages == sorted(stages), statuses
    assert "step 1 of 3" in statuses[stages[0]] and "step 3 of 3" in statuses[stages[2]]
    assert page.evaluate("window.stateLog") == ["loading", "live"]

    figure = page.locator(FIRST)
    assert figure.get_attribute("data-renders") == "1"
    assert figure.locator(".sandbox__static").count() == 1 and not figure.locator(".sandbox__static").is_visible()
    svg = figure.locator(".sandbox__live svg")
    assert svg.is_visible() and svg.get_attribute("role") == "img"
    label = svg.get_attribute("aria-label")
    assert label.startswith("Projection") and "angle of u 53°" in label and "HEALTHY" in label
    assert svg.get_attribute("viewBox") == "0 0 640 300"
    assert figure.locator(".sandbox__readout dt").all_inner_texts() == ["angle of u"]
    assert figure.locator(".sandbox__readout dd").all_inner_texts() == ["53°"]
    badge = figure.locator(".sandbox__badge")
    assert "sandbox__badge--good" in badge.get_attribute("class") and "HEALTHY" in badge.inner_text()
    assert "Live" in figure.locator(".sandbox__status").inner_text()
    assert figure.locator(".sandbox__status progress").count() == 0
    assert page.evaluate("performance.getEntriesByName('explainer:first-live').length") == 1

    (boot,) = fake_log(page, "boot")
    assert boot["args"]["base"] == site.url + ASSETS + "/runtime.json"
    assert boot["resolved"]["pyodide"]["indexURL"] == site.url + "assets/pyodide/0.27.7/", "a trailing / is added"
    assert boot["resolved"]["wheel"]["url"] == site.url + ASSETS + "/wheels/explainer-0.1.0-py3-none-any.whl"
    assert boot["resolved"]["numpy"]["url"] == (site.url + "assets/pyodide/0.27.7/"
                                                "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl")
    (render,) = fake_log(page, "render")
    # The page names its reply channel; this fake worker answers by postMessage, which the page reads too.
    assert render["args"].pop("channel") == page.evaluate("ExplainerRuntime.replies.name")
    assert render["args"] == {"sandbox": "projection_shadow", "params": {**VALUES, "seed": 7}}
    browser.assert_clean()


def test_each_control_updates_its_output_and_sends_its_value_with_the_right_type(browser, site):
    page = browser.page
    go_live(page, site.page("one.html", container_html()))
    figure = page.locator(FIRST)

    slider = page.locator(f"{FIRST}-u_angle")
    slider.focus()
    slider.press("ArrowRight")
    assert figure.locator("output[for$=u_angle]").inner_text() == ANGLE.format(54) == "54°"
    wait_renders(page, FIRST, 2)
    assert point_x(page) == 54
    assert figure.locator(".sandbox__readout dd").inner_text() == "54°"
    measures = page.evaluate("performance.getEntriesByName('explainer:update:sandbox-projection_shadow-1')"
                             ".map((m) => m.duration)")
    assert len(measures) == 1 and measures[0] >= 0

    page.locator(f"{FIRST}-scale").focus()
    page.locator(f"{FIRST}-scale").press("ArrowLeft")
    assert figure.locator("output[for$=scale]").inner_text() == SCALE.format(0.95) == "0.95"
    page.locator(f"{FIRST}-layers").focus()
    page.locator(f"{FIRST}-layers").press("End")
    assert figure.locator("output[for$=layers]").inner_text() == "24"
    page.locator(f"{FIRST}-positional").click()
    page.locator(f"{FIRST}-f").select_option("cos")
    page.wait_for_function("() => window.fakeLog.filter((e) => e.op === 'render').pop().args.params.f === 'cos'",
                           timeout=TIMEOUT)
    wait_state(page, FIRST, "live")
    last = fake_log(page, "render")[-1]["args"]["params"]
    assert last == {"u_angle": 54, "scale": 0.95, "layers": 24, "positional": False, "f": "cos", "seed": 7,
                    "mode": "demo"}, "fixed and hidden parameters keep their configured values"
    assert isinstance(last["layers"], int) and isinstance(last["positional"], bool)
    browser.assert_clean()


def test_the_starting_values_go_live_from_the_builds_view_while_the_worker_renders_them(browser, site):
    page = browser.page
    site.fake(hold_renders=True)  # the worker's render of the starting values stays in flight until the gate opens
    page.goto(site.page("one.html", container_html()))
    wait_state(page, FIRST, "live")
    figure = page.locator(FIRST)
    assert figure.get_attribute("data-computed") == "build" and figure.get_attribute("data-renders") == "1"
    assert point_x(page) == 53 and figure.locator(".sandbox__readout dd").inner_text() == "53°"
    assert page.evaluate("performance.getEntriesByName('explainer:first-live').length") == 1
    assert page.evaluate("performance.getEntriesByName('explainer:first-computed').length") == 0
    page.wait_for_function("() => window.fakeLog.some((e) => e.op === 'render')", timeout=TIMEOUT)
    assert [entry["args"]["params"]["u_angle"] for entry in fake_log(page, "render")] == [53]

    site.fake()  # the worker answers for the same values: confirmed, not drawn again
    page.wait_for_function(f"() => document.querySelector('{FIRST}').dataset.computed === 'browser'", timeout=TIMEOUT)
    assert figure.get_attribute("data-renders") == "1" and figure.get_attribute("data-state") == "live"
    assert page.evaluate("performance.getEntriesByName('explainer:first-computed').length") == 1
    set_slider(page, f"{FIRST}-u_angle", 30)
    wait_renders(page, FIRST, 2)
    assert point_x(page) == 30 and figure.get_attribute("data-computed") == "browser"
    browser.assert_clean()


def test_latest_wins_a_dragged_slider_sends_at_most_a_few_renders_and_ends_on_the_last_value(browser, site):
    page = browser.page
    go_live(page, site.page("one.html", container_html()))
    site.fake(hold_renders=True)  # the first render stays in flight until every key has been pressed
    before = len(fake_log(page, "render"))
    renders_before = int(page.locator(FIRST).get_attribute("data-renders"))
    slider = page.locator(f"{FIRST}-u_angle")
    slider.focus()
    for _ in range(20):
        slider.press("ArrowRight")
    assert page.locator(f"{FIRST} output[for$=u_angle]").inner_text() == "73°", "outputs follow every input at once"
    page.wait_for_function("() => window.fakeLog.some((e) => e.op === 'render' && e.args.params.u_angle === 54)",
                           timeout=TIMEOUT)
    site.fake()
    page.wait_for_function(f"() => document.querySelector('{FIRST} g[data-mark=point]').dataset.x === '73'",
                           timeout=TIMEOUT)
    sent = [entry["args"]["params"]["u_angle"] for entry in fake_log(page, "render")[before:]]
    assert sent == [54, 73], sent
    assert int(page.locator(FIRST).get_attribute("data-renders")) == renders_before + len(sent)
    assert page.locator(FIRST).get_attribute("data-state") == "live"
    browser.assert_clean()


# ---- errors ----------------------------------------------------------------------------------------------------------


def set_slider(page, selector: str, value: float) -> None:
    page.evaluate("([s, v]) => { const input = document.querySelector(s); input.value = v;"
                  " input.dispatchEvent(new Event('input', {bubbles: true})); }", [selector, value])


def test_a_python_error_shows_inline_keeps_the_last_figure_and_the_next_good_render_clears_it(browser, site):
    page = browser.page
    site.fake(error_at=100, parameter_error_at=170)
    go_live(page, site.page("one.html", container_html()))
    figure, error = page.locator(FIRST), page.locator(f"{FIRST} .sandbox__error")
    assert error.count() == 1 and not error.is_visible() and error.get_attribute("role") == "alert"

    set_slider(page, f"{FIRST}-u_angle", 120)
    wait_state(page, FIRST, "error")
    assert error.is_visible()
    assert "ValueError: fake failure" in error.locator(".sandbox__error-message").inner_text()
    assert error.locator("details summary").inner_text() == "Details"
    assert "Traceback (most recent call last)" in error.locator("details pre").text_content()
    assert point_x(page) == 53 and figure.get_attribute("data-renders") == "1", "the last good figure stays"

    set_slider(page, f"{FIRST}-u_angle", 175)
    page.wait_for_function(f"() => document.querySelector('{FIRST} .sandbox__error').textContent.includes('below 170')",
                           timeout=TIMEOUT)
    assert error.locator("details").count() == 0, "a parameter error has no traceback to show"
    assert page.locator(f"{FIRST}-u_angle").get_attribute("aria-invalid") == "true"

    set_slider(page, f"{FIRST}-u_angle", 20)
    wait_state(page, FIRST, "live")
    assert not error.is_visible() and error.inner_text() == ""
    assert page.locator(f"{FIRST}-u_angle").get_attribute("aria-invalid") is None
    assert point_x(page) == 20 and figure.get_attribute("data-renders") == "2"
    browser.assert_clean()


def opacity(page, selector: str) -> float:
    return float(page.evaluate("(s) => getComputedStyle(document.querySelector(s)).opacity", selector))


def test_a_failed_change_marks_the_figure_and_readouts_stale_until_the_next_good_render(browser, site):
    page = browser.page
    site.fake(error_at=100)
    go_live(page, site.page("one.html", container_html()))
    figure, status = page.locator(FIRST), page.locator(f"{FIRST} .sandbox__status")
    assert figure.get_attribute("data-stale") is None and opacity(page, f"{FIRST} .sandbox__figure") == 1

    set_slider(page, f"{FIRST}-u_angle", 120)
    wait_state(page, FIRST, "error")
    assert figure.get_attribute("data-stale") == "true"
    said = status.inner_text()
    assert "last change failed" in said and "values before it" in said and "Live" not in said, said
    for part in (".sandbox__figure", ".sandbox__readouts"):
        assert opacity(page, f"{FIRST} {part}") < 0.5, f"{part} must look out of date"
    assert point_x(page) == 53 and figure.locator(".sandbox__readout dd").inner_text() == "53°", (
        "the figure and readouts on show are still the last good ones")
    assert page.locator(f"{FIRST}-u_angle").input_value() == "120", "the reader's value is kept"

    set_slider(page, f"{FIRST}-u_angle", 30)
    wait_state(page, FIRST, "live")
    assert figure.get_attribute("data-stale") is None and "Live" in status.inner_text()
    assert opacity(page, f"{FIRST} .sandbox__figure") == 1 and opacity(page, f"{FIRST} .sandbox__readouts") == 1
    assert point_x(page) == 30 and figure.locator(".sandbox__readout dd").inner_text() == "30°"
    browser.assert_clean()


def test_starting_values_that_fail_leave_the_static_figure_current_and_a_change_that_fails_makes_it_stale(
        browser, site):
    page = browser.page
    site.fake(error_at=50)  # the starting value, 53, already fails
    page.goto(site.page("one.html", container_html()))
    wait_state(page, FIRST, "error")
    figure = page.locator(FIRST)
    assert figure.get_attribute("data-stale") is None, "the static figure shows exactly the values that failed"
    assert "static figure stays" in figure.locator(".sandbox__status").inner_text()

    set_slider(page, f"{FIRST}-u_angle", 120)
    page.wait_for_function(f"() => document.querySelector('{FIRST}').dataset.stale === 'true'", timeout=TIMEOUT)
    assert "last change failed" in figure.locator(".sandbox__status").inner_text()
    assert opacity(page, f"{FIRST} .sandbox__figure") < 0.5 and figure.locator(".sandbox__static").is_visible()

    set_slider(page, f"{FIRST}-u_angle", 20)
    wait_state(page, FIRST, "live")
    assert figure.get_attribute("data-stale") is None and point_x(page) == 20
    browser.assert_clean()


def test_a_failed_boot_keeps_the_static_figure_says_what_failed_and_retry_starts_a_fresh_worker(browser, site):
    page = browser.page
    site.fake(boot_fail="numpy")
    page.goto(site.page("one.html", container_html()))
    wait_state(page, FIRST, "error")
    figure = page.locator(FIRST)
    status = figure.locator(".sandbox__status").inner_text()
    assert "could not start" in status and "numpy" in status and "static figure stays" in status, status
    assert figure.locator(".sandbox__static").is_visible() and figure.locator("svg").count() == 0
    retry = figure.get_by_role("button", name="Retry")
    assert retry.is_visible()
    retry.focus()
    assert page.evaluate("document.activeElement.className") == "sandbox__retry"

    site.fake()
    retry.press("Enter")
    wait_state(page, FIRST, "live")
    assert not retry.is_visible()
    boots = fake_log(page, "boot")
    assert len(boots) == 2 and boots[0]["instance"] != boots[1]["instance"], "Retry must start a fresh worker"
    browser.assert_clean()


def test_a_boot_past_the_manifest_timeout_stops_the_worker_and_retry_recovers(browser, site):
    page = browser.page
    site.manifest(timeout_ms=800)
    site.fake(boot_hang=True)
    page.goto(site.page("one.html", container_html()))
    wait_state(page, FIRST, "loading")
    wait_state(page, FIRST, "error")
    status = page.locator(f"{FIRST} .sandbox__status").inner_text()
    assert "took longer than 0.8 s" in status, status
    wait_until(lambda: page.workers == [], page, "a timed-out worker is terminated", TIMEOUT)

    site.fake()
    page.get_by_role("button", name="Retry").click()
    wait_state(page, FIRST, "live")
    assert len(page.workers) == 1
    browser.assert_clean()


def test_a_missing_manifest_is_reported_and_no_worker_starts(browser, site):
    page = browser.page
    (site.assets / "runtime.json").unlink()
    page.goto(site.page("one.html", container_html()))
    wait_state(page, FIRST, "error")
    status = page.locator(f"{FIRST} .sandbox__status").inner_text()
    assert "manifest" in status and "404" in status, status
    assert page.workers == []
    assert all("404" in error for error in browser.console_errors), browser.console_errors


# ---- the words on the page ---------------------------------------------------------------------------------------------


def test_the_live_figure_shows_the_label_and_readouts_python_made_for_its_values(browser, site):
    page = browser.page
    go_live(page, site.page("one.html", container_html()))
    set_slider(page, f"{FIRST}-u_angle", 77)
    page.wait_for_function(f"() => document.querySelector('{FIRST} g[data-mark=point]').dataset.x === '77'",
                           timeout=TIMEOUT)
    view = VIEWS[77]
    assert page.locator(f"{FIRST} .sandbox__live svg").get_attribute("aria-label") == view["label"]
    shown = page.evaluate(f"() => document.querySelector('{FIRST} .sandbox__readouts').innerHTML")
    parsed = page.evaluate("(html) => { const t = document.createElement('template'); t.innerHTML = html;"
                           " return t.innerHTML; }", view["readouts_html"])
    assert shown == parsed and "77°" in shown
    browser.assert_clean()


def test_every_slider_shows_each_of_its_values_as_python_formats_it(browser, site):
    # One rule, two places it runs: explainer.sandbox.format_value writes the built page, sandbox.js applies the
    # control's "format" on every input. Every value on every declared slider's grid must come out the same.
    sandboxes = registry()
    body = "".join(sandbox_html(Placement(box, box.defaults(), frozenset(), frozenset(), "", "", 360),
                                f"sandbox-{name}-1") for name, box in sandboxes.items())
    page = browser.page
    page.goto(site.page("all.html", body))
    shown = page.evaluate("""() => [...document.querySelectorAll(
        '.sandbox__control[data-kind=float], .sandbox__control[data-kind=int]')].map((control) => {
      const [input, output] = [control.querySelector("input"), control.querySelector("output")];
      const [min, max, step] = [Number(input.min), Number(input.max), Number(input.step)];
      const pairs = [];
      for (let k = 0; min + k * step <= max + step / 2; k += 1) {
        input.value = String(min + k * step);
        input.dispatchEvent(new Event("input", {bubbles: true}));
        pairs.push([input.valueAsNumber, output.textContent]);
      }
      return [control.closest("figure").dataset.sandbox, control.dataset.param, pairs];
    })""")
    sliders = {(name, p.name) for name, box in sandboxes.items() for p in box.params if p.kind in ("float", "int")}
    assert {(name, param) for name, param, _ in shown} == sliders
    for name, param_name, pairs in shown:
        param = sandboxes[name].param(param_name)
        assert len(pairs) == round((param.max - param.min) / param.step) + 1, f"{name}.{param_name}"
        wrong = [(value, text, param.format(value)) for value, text in pairs if text != param.format(value)]
        assert not wrong, f"{name}.{param_name}: page vs Python {wrong[:5]}"
    assert sum(len(pairs) for _, _, pairs in shown) > 20_000


# ---- one worker per visit ---------------------------------------------------------------------------------------------


def test_two_sandboxes_share_one_worker_and_instant_navigation_mounts_the_new_page_without_a_new_boot(browser, site):
    page = browser.page
    url = site.page("nav.html", container_html(1) + container_html(2), head_script=FAKE_DOCUMENT_SUBJECT)
    go_live(page, url)
    wait_state(page, "#sandbox-projection_shadow-2", "live")
    assert len(fake_log(page, "boot")) == 1 and len(page.workers) == 1

    # A render in flight when its page goes away is cancelled. It stays in flight until the test opens the gate, so
    # the navigation below comes while it is (a render timed by the clock could end first on a busy machine).
    site.fake(hold_renders=True)
    set_slider(page, f"{FIRST}-u_angle", 90)
    page.wait_for_function("() => window.fakeLog.some((e) => e.op === 'render' && e.args.params.u_angle === 90)",
                           timeout=TIMEOUT)
    in_flight = fake_log(page, "render")[-1]["id"]
    # Material's instant navigation swaps the content and announces the new document on document$.
    page.evaluate("([html]) => { document.querySelector('main').innerHTML = html; document$.next(); }",
                  [container_html(3)])
    page.wait_for_function("(id) => window.fakeLog.some((e) => e.op === 'cancel' && e.args.target === id)",
                           arg=in_flight, timeout=TIMEOUT)
    site.fake()  # the gate opens: the new page's render is answered
    third = "#sandbox-projection_shadow-3"
    wait_state(page, third, "live")
    assert len(fake_log(page, "boot")) == 1 and len(page.workers) == 1, "navigation must not boot again"
    assert page.evaluate("performance.getEntriesByName('explainer:first-live').length") == 2, "one mark per page"

    page.locator(f"{third}-u_angle").focus()
    page.locator(f"{third}-u_angle").press("Home")
    page.wait_for_function(f"() => document.querySelector('{third} g[data-mark=point]').dataset.x === '0'",
                           timeout=TIMEOUT)
    browser.assert_clean()


# ---- faults the runtime survives --------------------------------------------------------------------------------------

SECOND = "#sandbox-projection_shadow-2"


def boot_instances(page) -> list[str]:
    return [entry["instance"] for entry in fake_log(page, "boot")]


def hold_a_render(page, site, selector: str, angle: int) -> None:
    """Move a slider and keep the render it sends in flight (the fake holds it until told otherwise). Only renders of
    that angle are held: once the worker is replaced, the other sandbox renders on the fresh one at once, maybe before
    the test opens the gate (under load, that render was held too, past its limit, and a third worker booted)."""
    site.fake(hold_renders=angle)
    set_slider(page, f"{selector}-u_angle", angle)
    page.wait_for_function("(a) => window.fakeLog.some((e) => e.op === 'render' && e.args.params.u_angle === a)",
                           arg=angle, timeout=TIMEOUT)


def test_a_worker_that_dies_mid_render_is_reported_and_a_fresh_one_takes_over_without_a_reload(browser, site):
    page = browser.page
    go_live(page, site.page("crash.html", container_html(1) + container_html(2)))
    wait_state(page, SECOND, "live")
    page.evaluate("window.__sameDocument = true")
    hold_a_render(page, site, FIRST, 90)

    page.workers[0].evaluate("self.close()")  # the worker ends mid-render, as a crash or an out-of-memory kill would
    wait_state(page, FIRST, "error")
    status = page.locator(f"{FIRST} .sandbox__status").inner_text()
    assert "stopped unexpectedly" in status and "Change a control" in status, status
    assert point_x(page) == 53, "the last good figure stays"
    assert page.get_by_role("button", name="Retry").first.is_visible()

    site.fake()
    # The other sandbox had nothing in flight: it draws its current values again on a fresh worker, by itself.
    wait_renders(page, SECOND, 2)
    assert page.locator(SECOND).get_attribute("data-state") == "live"
    assert len(set(boot_instances(page))) == 2, "a fresh worker was booted"
    # The sandbox whose render was in flight waits for the reader; the next change draws it.
    assert page.locator(FIRST).get_attribute("data-state") == "error"
    set_slider(page, f"{FIRST}-u_angle", 100)
    page.wait_for_function(f"() => document.querySelector('{FIRST} g[data-mark=point]').dataset.x === '100'",
                           timeout=TIMEOUT)
    wait_state(page, FIRST, "live")
    assert page.evaluate("window.__sameDocument") is True, "no page reload"
    wait_until(lambda: len(page.workers) == 1, page, "exactly one worker remains", TIMEOUT)
    browser.assert_clean()


def test_a_render_past_its_time_limit_stops_the_worker_and_only_that_sandbox_waits_for_the_reader(browser, site):
    page = browser.page
    site.manifest(timeout_ms=1500)
    go_live(page, site.page("slow.html", container_html(1) + container_html(2)))
    wait_state(page, SECOND, "live")
    hold_a_render(page, site, FIRST, 90)
    wait_state(page, FIRST, "error")
    status = page.locator(f"{FIRST} .sandbox__status").inner_text()
    assert "took longer than 1.5 s" in status, status

    site.fake()
    wait_renders(page, SECOND, 2)
    assert len(set(boot_instances(page))) == 2, (  # if not, what each worker was asked and what the page said
        [(entry["instance"], entry["op"], (entry["args"] or {}).get("params")) for entry in fake_log(page)],
        page.evaluate("window.statusLog"))
    page.get_by_role("button", name="Retry").first.click()  # Retry is an interaction too
    page.wait_for_function(f"() => document.querySelector('{FIRST} g[data-mark=point]').dataset.x === '90'",
                           timeout=TIMEOUT)
    wait_state(page, FIRST, "live")
    browser.assert_clean()


@pytest.mark.parametrize(("manifest", "sentence"), [
    ('{"pyodide": {"version": "0.27.7", "index', "not valid JSON (the file may be cut short)"),
    ("[1, 2, 3]", "not a JSON object"),
    ('{"pyodide": {"version": "0.27.7"}, "numpy": {}, "wheel": {}}', "has no pyodide.indexURL"),
], ids=["truncated", "not-an-object", "missing-field"])
def test_a_broken_manifest_is_one_sentence_and_retry_fetches_it_once_per_press(browser, site, manifest, sentence):
    page = browser.page
    requests = record_requests(page)
    # Cached for ten minutes, as GitHub Pages answers: only a retry that asks the server again sees the fixed file.
    site.server.path_headers[f"/{ASSETS}/runtime.json"] = {"Cache-Control": "max-age=600"}
    write_atomic(site.assets / "runtime.json", manifest)
    page.goto(site.page("one.html", container_html()))
    wait_state(page, FIRST, "error")
    status = page.locator(f"{FIRST} .sandbox__status").inner_text()
    assert status.startswith("The live version could not start: the runtime manifest ") and sentence in status, status
    assert page.workers == [] and page.locator(f"{FIRST} .sandbox__static").is_visible()

    page.get_by_role("button", name="Retry").click()  # still broken: one more fetch, the same sentence, no loop
    page.wait_for_function("() => performance.getEntriesByType('resource')"
                           ".filter((e) => e.name.endsWith('/runtime.json')).length === 2", timeout=TIMEOUT)
    wait_state(page, FIRST, "error")
    site.manifest()
    page.get_by_role("button", name="Retry").click()
    wait_state(page, FIRST, "live")
    assert len([url for url in requests if url.endswith("/runtime.json")]) == 3
    browser.assert_clean()
