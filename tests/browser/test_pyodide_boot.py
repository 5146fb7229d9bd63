"""The offline Pyodide 0.27.7 boots in a Web Worker in headless Chromium, loads numpy and installs our wheel.

A tiny page from a temporary folder (the prepared runtime, the explainer wheel, the page and its classic worker) is
served on 127.0.0.1; the `browser` fixture's guard aborts and records any request to another origin.
"""

import json
import shutil
from urllib.parse import quote

import pytest

from build_scripts.pyodide_runtime import DEFAULT_RUNTIME_DIR, describe_wheel
from build_scripts.wheel import build_wheel
from support import BOOT_TIMEOUT_MS, StaticSiteServer

pytestmark = pytest.mark.browser


PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Pyodide boot</title></head>
<body>
<pre id="result">booting</pre>
<script>
  const params = new URLSearchParams(location.search);
  const started = performance.now();
  const worker = new Worker("boot-worker.js");
  function report(result) {
    result.pageMs = Math.round(performance.now() - started);
    window.__bootResult = result;
    document.getElementById("result").textContent = JSON.stringify(result);
  }
  worker.onmessage = (event) => report(event.data);
  worker.onerror = (event) => report({ok: false, error: "worker error: " + event.message});
  worker.postMessage({
    indexURL: new URL("pyodide/", location.href).href,
    wheelURL: new URL(params.get("wheel"), location.href).href,
    integrity: params.get("integrity"),
    timeoutMs: Number(params.get("timeout")),
  });
</script>
</body>
</html>
"""

# A classic worker: importScripts the loader, boot with a timeout, numpy from the lock, our wheel by fetch + SRI.
WORKER = """\
"use strict";

function withTimeout(promise, ms, what) {
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

self.onmessage = async (event) => {
  const {indexURL, wheelURL, integrity, timeoutMs} = event.data;
  const started = performance.now();
  const stages = {};
  const mark = (stage) => { stages[stage] = Math.round(performance.now() - started); };
  try {
    importScripts(indexURL + "pyodide.js");
    const pyodide = await withTimeout(loadPyodide({indexURL}), timeoutMs, "loadPyodide");
    mark("runtime");

    // loadPackage reports a failed download through errorCallback and resolves anyway: collect and throw.
    const packageErrors = [];
    await withTimeout(
      pyodide.loadPackage("numpy", {messageCallback: () => {}, errorCallback: (m) => packageErrors.push(m)}),
      timeoutMs, "loadPackage(numpy)");
    if (packageErrors.length) throw new Error(packageErrors.join("\\n"));
    mark("numpy");

    const response = await withTimeout(fetch(wheelURL, {integrity}), timeoutMs, "fetch(wheel)");
    if (!response.ok) throw new Error(`${wheelURL}: HTTP ${response.status}`);
    const buffer = await response.arrayBuffer();
    // Without extractDir, unpackArchive unpacks into the working directory, not site-packages.
    const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
    pyodide.unpackArchive(buffer, "wheel", {extractDir: sitePackages});
    mark("explainer");

    const value = pyodide.runPython(`
import importlib, importlib.metadata, json
importlib.invalidate_caches()
import numpy, explainer
json.dumps({"numpy": numpy.__version__, "explainer": explainer.__version__,
            "explainer_file": explainer.__file__, "metadata": importlib.metadata.version("explainer")})
`);
    mark("import");
    self.postMessage({ok: true, value: JSON.parse(value), stages});
  } catch (error) {
    self.postMessage({ok: false, error: String(error && error.stack || error), stages});
  }
};
"""


@pytest.fixture(scope="module")
def boot_site(tmp_path_factory):
    """A served folder: the prepared runtime under pyodide/, the explainer wheel, the page and its worker."""
    assert (DEFAULT_RUNTIME_DIR / "pyodide.asm.wasm").is_file(), "runtime missing: run `make build/pyodide/.stamp`"
    wheels = [build_wheel()]
    root = tmp_path_factory.mktemp("pyodide-boot")
    shutil.copytree(DEFAULT_RUNTIME_DIR, root / "pyodide")
    shutil.copy2(wheels[0], root / wheels[0].name)
    (root / "index.html").write_text(PAGE, encoding="utf-8")
    (root / "boot-worker.js").write_text(WORKER, encoding="utf-8")
    server = StaticSiteServer(root)
    yield server, describe_wheel(wheels[0])
    server.close()


@pytest.fixture(scope="module")
def site_url(boot_site):
    """Point the shared `browser` fixture (its off-origin guard) at the boot page's server instead of the site."""
    return boot_site[0].url


def boot(browser, site_url, wheel_name: str, integrity: str) -> tuple[dict, list[str]]:
    """Open the page, wait for the worker's report; return it and every failed or non-2xx request."""
    problems = []
    context = browser.page.context
    context.on("requestfailed", lambda request: problems.append(f"failed {request.url}: {request.failure}"))
    context.on("response", lambda response: response.status >= 400 and problems.append(f"{response.status} {response.url}"))
    query = f"?wheel={quote(wheel_name)}&integrity={quote(integrity)}&timeout={BOOT_TIMEOUT_MS}"
    browser.page.goto(site_url + "index.html" + query)
    browser.page.wait_for_function("window.__bootResult !== undefined", timeout=2 * BOOT_TIMEOUT_MS)
    return browser.page.evaluate("window.__bootResult"), problems


def test_worker_boots_pyodide_loads_numpy_and_imports_explainer_offline(browser, site_url, boot_site, capsys):
    _, wheel = boot_site
    result, problems = boot(browser, site_url, wheel.file_name, wheel.integrity)
    assert result["ok"], result["error"]
    value = result["value"]
    assert value["numpy"] == "2.0.2"
    assert value["explainer"] == value["metadata"] == wheel.version
    assert value["explainer_file"].startswith("/lib/python3.12/site-packages/explainer/")
    assert not problems, problems
    browser.assert_clean()
    with capsys.disabled():
        print(f"\nPyodide boot: {result['pageMs']} ms page to import; worker stages (ms since start): "
              + json.dumps(result["stages"]))


def test_a_wrong_integrity_makes_the_wheel_fetch_fail_and_the_page_says_so(browser, site_url, boot_site):
    _, wheel = boot_site
    wrong = "sha256-" + "A" * 43 + "="
    result, _ = boot(browser, site_url, wheel.file_name, wrong)
    assert not result["ok"]
    assert "fetch" in result["error"].lower(), result["error"]
    assert set(result["stages"]) == {"runtime", "numpy"}, "the failure must come from the wheel fetch"
    assert not browser.off_origin_requests
