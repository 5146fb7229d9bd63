"""The worker's memory stays flat while a reader plays: 200 control changes on the ablation lab at depth 24.

The project's own site (`mkdocs build --strict`, self-hosted Pyodide) is served on 127.0.0.1 and opened in headless
Debian Chromium. On the "All figures" page the ablation lab is brought live and set to depth 24; after 20 warm-up
changes (caches filled, every arrangement seen once) we read the memory, make 200 more changes the way a reader would
(each of the four switches in turn, the depth between 23 and 24), waiting for every one to be drawn, and read again.

What is read, through the page's public runtime (a code cell's `run` request, no test-only API):
- the WebAssembly heap of the worker's Pyodide (`pyodide_js._module.HEAP8.length`): it only ever grows, so any leak
  in numpy buffers or in objects handed between JavaScript and Python shows here as growth;
- the number of objects Python's garbage collector tracks (`len(gc.get_objects())` after `gc.collect()`; Pyodide's
  Python has no pymalloc, so `sys.getallocatedblocks()` reads 0 there): Python objects that outlive their render (a
  leaked cache entry, a proxy never destroyed).
Each row is "after ÷ before", target ≤ 1.05 (5 % slack for allocator rounding).
"""

import shutil
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import support
from benchmarks import Ratio
from benchmarks.bench_sandboxes import FreshBrowser

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PAGE = "sandboxes/"
SANDBOX = "ablation_lab"
WARM_UP_CHANGES = 20
MEASURED_CHANGES = 200
TIMEOUT_MS = 90_000

MEMORY_CODE = """\
import gc
import pyodide_js
gc.collect()
{"heap_bytes": pyodide_js._module.HEAP8.length, "python_objects": len(gc.get_objects())}"""

READ_MEMORY_JS = """async (code) => {
  const message = await ExplainerRuntime.call("run", {code, session: "bench-memory"}).reply;
  if (!message.ok) throw new Error(message.error.message);
  return message.value.result;
}"""


def _memory(page) -> dict:
    import ast

    return ast.literal_eval(page.evaluate(READ_MEMORY_JS, MEMORY_CODE))


def _change(page, figure: str, index: int) -> None:
    """One change a reader makes: a switch in turn, and every fifth change the depth between 23 and 24."""
    before = int(page.locator(figure).get_attribute("data-renders"))
    if index % 5 == 4:
        depth = page.locator(f"{figure} .sandbox__control[data-param=depth] input")
        depth.focus()
        depth.press("ArrowLeft" if index % 10 == 4 else "ArrowRight")
    else:
        toggles = page.locator(f"{figure} .sandbox__control[data-kind=toggle] input")
        toggles.nth(index % toggles.count()).click()
    page.wait_for_function("([s, n]) => Number(document.querySelector(s).dataset.renders) > n", arg=[figure, before],
                           timeout=TIMEOUT_MS)


def run() -> list[Ratio]:
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if not executable:
        raise RuntimeError("bench_memory: Debian chromium is not installed: run `make chromium`")
    with tempfile.TemporaryDirectory(prefix="bench-memory-site-") as temp:
        site_dir = Path(temp) / "site"
        server = support.StaticSiteServer(site_dir)
        try:
            build = support.run_mkdocs_build(PROJECT_ROOT / "mkdocs.yml", site_dir, site_url=server.url)
            if build.returncode:
                raise RuntimeError(f"bench_memory: `mkdocs build --strict` failed:\n{build.stderr[-3000:]}")
            with sync_playwright() as playwright, \
                    FreshBrowser(playwright, executable, urlsplit(server.url).netloc) as browser:
                page = browser.page
                page.goto(server.url + PAGE)
                figure = f"figure.sandbox[data-sandbox={SANDBOX}]"
                page.locator(figure).first.scroll_into_view_if_needed()
                figure = "#" + page.locator(figure).first.get_attribute("id")
                page.wait_for_function("(s) => document.querySelector(s).dataset.state === 'live'", arg=figure,
                                       timeout=TIMEOUT_MS)
                depth = page.locator(f"{figure} .sandbox__control[data-param=depth] input")
                depth.focus()
                depth.press("End")
                for index in range(WARM_UP_CHANGES):
                    _change(page, figure, index)
                before = _memory(page)
                for index in range(MEASURED_CHANGES):
                    _change(page, figure, index)
                after = _memory(page)
                browser.check("bench_memory")
        finally:
            server.close()
    print(f"bench_memory: {MEASURED_CHANGES} changes of {SANDBOX} at depth 23-24: wasm heap "
          f"{before['heap_bytes'] / 1e6:.1f} → {after['heap_bytes'] / 1e6:.1f} MB, Python objects "
          f"{before['python_objects']} → {after['python_objects']}", file=sys.stderr)
    return [
        Ratio(f"worker wasm heap after {MEASURED_CHANGES} changes", after["heap_bytes"], before["heap_bytes"],
              "the same heap before them", 1.05, unit="B"),
        Ratio(f"Python objects after {MEASURED_CHANGES} changes", after["python_objects"], before["python_objects"],
              "the same count before them", 1.05, unit="n"),
    ]
