"""Lighthouse on every page of the built site, and what typesetting math at build time saved.

Lighthouse 12 (npm `lighthouse`, pinned in package.json) drives Debian's `chromium` (CHROME_PATH, with the flags of
tests/support.py) against the project's own `mkdocs build --strict`, served on 127.0.0.1 by tests/support.py's
StaticSiteServer (no compression: transfer sizes are the files' sizes). Desktop preset with throttling off
(`--throttling-method=provided`): the scores and timings are this machine's, over loopback, with nothing simulated.
Categories: performance, accessibility, best practices, SEO; target 100 on each, on every page. One run per page and
variant, the two variants page by page in alternating order: on a busy 2-core machine a page's total blocking time
can double from one run to the next, so compare the variants page by page and read single scores with care.

BASELINE is the same sources built the way the site typeset math before this benchmark's change: pymdownx.arithmatex
in the page and KaTeX in the browser (katex.min.js + auto-render + the small script that ran them on every page), no
theme overrides. (Quiz answers are Markdown rendered by our quiz block, which now typesets its math at build time in
both variants; the prose, where nearly all the math is, differs.) Both are built and measured in the same run.

ZENSICAL is a third variant, the same sources as ours built by Zensical (`make build ENGINE=zensical`, Material's
successor), audited in the same rounds; its rows are information, since the site is MkDocs' build (the day it moves,
they are the ones to hold to the targets).

Rows (benchmarks/__main__ prints every value as "ms"; the unit of rows that are not times is in their name):
- points below 100, per page: the four scores' shortfalls added up, so the target is 0;
- the longest main-thread task during the load (Lighthouse's long-tasks audit), per page: ≤ 50 ms;
- total blocking time, per page, against the baseline's on the same page (information);
- the home page's total transfer (kB), against the baseline's: ≤ 1.05 (pages without sandboxes must not get heavier);
- Pyodide bytes fetched by each page with nothing live (no sandbox, training lab or code cell): 0;
- Zensical's build, per page: its points below 100 and its longest task (information);
- the longest task up to `load` with no DevTools attached, per page (information). Lighthouse, like Playwright,
  drives Chromium through the DevTools protocol, and that costs the page: under Playwright, sending Material's first
  request (sitemap.xml) held the main thread 8-26 ms, against 0.2-2.4 ms with no client attached. Measured while
  writing this row, 6 interleaved loads each, longest task median (ms) under Playwright / with no client: sandboxes/
  84.5 / 0, rmsnorm-calculus 72 / 58.5, try-it-yourself 84 / 81.5 (its code editor's script). So ours is also
  loaded READER_LOADS times by `chromium --headless --dump-dom`, which no protocol client drives: a small script
  (READER_PROBE, served first in every page's <head> of ours after its audits) collects the page's `longtask` entries
  and writes them on <html> at `load`, and the dump carries them out. Median over the loads. The probe holds `load`
  READER_HOLD_SECONDS past DOMContentLoaded (an image it adds then, answered that late), so the row also sees the
  tasks that run after the page's own `load`: the code editor and the cells' editors, and the first figures. Until
  December 2026 it read at the page's own `load`, which the code editor's work had moved past.
A table of every figure (scores, TBT, layout shift, longest task, transfer) for every variant is printed first.
Runtime: 3 builds and 3 × 8 Lighthouse runs of 15 to 60 s each, then 8 × READER_LOADS loads of ~5 s: 8 to 22
minutes on 2 cores.
"""

import html
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import support
from benchmarks import Ratio
from support import CHROMIUM_FLAGS

PROJECT_ROOT = Path(__file__).resolve().parent.parent
LIGHTHOUSE = PROJECT_ROOT / "node_modules/lighthouse/cli/index.js"
KATEX_DIST = PROJECT_ROOT / "node_modules/katex/dist"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
LONG_TASK_BUDGET_SECONDS = 0.050
TRANSFER_TARGET = 1.05
PYODIDE_PATH = "/assets/pyodide/"
# What makes a page live (a sandbox, a training lab, a code cell): it loads Pyodide; no other page may.
LIVE_ELEMENTS = (("figure", "sandbox"), ("figure", "trainer"), ("div", "cell"))
LIGHTHOUSE_TIMEOUT_SECONDS = 240
READER_LOADS = 5
READER_TIMEOUT_SECONDS = 60
READER_PROBE_FILE = "bench-reader-probe.js"
# `load` is held this long by an image that the probe adds at DOMContentLoaded and the server answers late, so the row
# also sees what runs after the page's own load: the code editor's stages, the cells' editors, the first figures.
READER_HOLD_SECONDS = 3.0
READER_HOLD_FILE = "bench-reader-hold.gif"
READER_HOLD_GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")
READER_PROBE = """{
  const tasks = [];
  const observer = new PerformanceObserver((list) => tasks.push(...list.getEntries()));
  observer.observe({type: "longtask", buffered: true});
  document.addEventListener("DOMContentLoaded", () => {
    const hold = document.createElement("img");
    Object.assign(hold, {src: "/HOLD_FILE", alt: "", hidden: true});
    document.body.append(hold);
  });
  addEventListener("load", () => {
    tasks.push(...observer.takeRecords());
    document.documentElement.dataset.benchLongTasks = JSON.stringify(tasks.map((task) => task.duration));
  });
}
""".replace("HOLD_FILE", READER_HOLD_FILE)

# ---- the baseline: math typeset in the reader's browser, as the site did it before ---------------------------------

BUILD_TIME_MATH = "  - build_scripts.markdown.math\n"
BROWSER_MATH = "  - pymdownx.arithmatex:\n      generic: true\n"
THEME_OVERRIDES = "  custom_dir: overrides\n"
BROWSER_MATH_SCRIPTS = ("assets/vendor/katex/katex.min.js", "assets/vendor/katex/contrib/auto-render.min.js",
                        "javascripts/math.js")
# The script the site ran on every page to typeset what arithmatex had marked.
TYPESET_IN_THE_BROWSER = """\
document$.subscribe(({ body }) => {
  for (const element of body.querySelectorAll(".arithmatex")) {
    renderMathInElement(element, {
      delimiters: [
        { left: "\\\\(", right: "\\\\)", display: false },
        { left: "\\\\[", right: "\\\\]", display: true },
      ],
      throwOnError: false,
    });
  }
});
"""


def _browser_math_variant(config: Path) -> None:
    """Turn a copy of the project (copy_project_site_sources) into the baseline: KaTeX in the reader's browser."""
    text = config.read_text()
    for needed in (BUILD_TIME_MATH, THEME_OVERRIDES):
        if needed not in text:
            raise RuntimeError(f"bench_lighthouse: mkdocs.yml no longer has {needed.strip()!r}; update the baseline")
    text = text.replace(BUILD_TIME_MATH, BROWSER_MATH).replace(THEME_OVERRIDES, "")
    if text.count("\nextra_javascript:\n") != 1:
        raise RuntimeError("bench_lighthouse: mkdocs.yml no longer has one extra_javascript list; update the baseline")
    # Into the site's own list (a second extra_javascript key would replace it, and the build wants ours listed).
    scripts = "".join(f"  - {script}\n" for script in BROWSER_MATH_SCRIPTS)
    config.write_text(text.replace("\nextra_javascript:\n", "\nextra_javascript:\n" + scripts))
    docs = config.parent / "docs"
    (docs / "assets/vendor/katex/contrib").mkdir(parents=True, exist_ok=True)
    shutil.copy2(KATEX_DIST / "katex.min.js", docs / "assets/vendor/katex/katex.min.js")
    shutil.copy2(KATEX_DIST / "contrib/auto-render.min.js", docs / "assets/vendor/katex/contrib/auto-render.min.js")
    (docs / "javascripts").mkdir(exist_ok=True)
    (docs / "javascripts/math.js").write_text(TYPESET_IN_THE_BROWSER)


# ---- building, serving and auditing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Audit:
    """What Lighthouse found on one page."""

    scores: dict  # category -> 0..100
    total_blocking_ms: float
    layout_shift: float
    longest_task_ms: float  # 0 when no task reached 50 ms (Lighthouse lists long tasks only)
    transfer_bytes: int
    pyodide_bytes: int
    is_live: bool  # the page has a sandbox, a training lab or a code cell (it loads Pyodide)
    warnings: tuple

    @property
    def points_below_100(self) -> int:
        return sum(100 - score for score in self.scores.values())


def _site_pages(site: Path) -> list[str]:
    pages = [html.parent.relative_to(site).as_posix() for html in sorted(site.rglob("index.html"))]
    return ["" if page == "." else page + "/" for page in pages if not page.startswith(("assets", "search"))]


def _lighthouse(url: str, chromium: str, report: Path) -> dict:
    command = ["node", str(LIGHTHOUSE), url, "--preset=desktop", "--throttling-method=provided",
               f"--only-categories={','.join(CATEGORIES)}", "--output=json", f"--output-path={report}", "--quiet",
               "--disable-full-page-screenshot", f"--chrome-flags={' '.join(['--headless=new', *CHROMIUM_FLAGS])}"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=LIGHTHOUSE_TIMEOUT_SECONDS,
                            env={**os.environ, "CHROME_PATH": chromium}, cwd=PROJECT_ROOT)
    if result.returncode or not report.is_file():
        raise RuntimeError(f"bench_lighthouse: lighthouse failed on {url}:\n{result.stderr[-3000:]}")
    return json.loads(report.read_text())


def _audit(report: dict, is_live: bool) -> Audit:
    audits = report["audits"]
    scores = {name: round(100 * (report["categories"][name]["score"] or 0)) for name in CATEGORIES}
    long_tasks = (audits["long-tasks"].get("details") or {}).get("items", [])
    requests = (audits["network-requests"].get("details") or {}).get("items", [])
    return Audit(
        scores,
        audits["total-blocking-time"]["numericValue"],
        audits["cumulative-layout-shift"]["numericValue"],
        max((task["duration"] for task in long_tasks), default=0.0),
        int(audits["total-byte-weight"]["numericValue"]),
        sum(int(r.get("transferSize") or 0) for r in requests if PYODIDE_PATH in r["url"]),
        is_live,
        tuple(report.get("runWarnings", [])),
    )


def _failed_audits(report: dict) -> list[str]:
    """What keeps a category below 100: its scored audits that did not pass, with their weight."""
    failed = []
    for name in CATEGORIES:
        for ref in report["categories"][name]["auditRefs"]:
            audit = report["audits"][ref["id"]]
            if ref["weight"] and audit["score"] is not None and audit["score"] < 1:
                failed.append(f"{name}: {ref['id']} (score {audit['score']:.2f}, weight {ref['weight']})"
                              f" {audit.get('displayValue', '')}".rstrip())
    return failed


@dataclass
class Site:
    """One variant, built and served."""

    root: Path
    server: support.StaticSiteServer
    live_pages: set  # pages (as _site_pages names them) with something live: LIVE_ELEMENTS

    def audit(self, page: str, chromium: str) -> tuple[Audit, dict]:
        report = _lighthouse(self.server.url + page, chromium, self.root / "report.json")
        return _audit(report, page in self.live_pages), report


# The variants, in the table's order: ours first (the site as it is built), then what it is compared with.
OURS, BROWSER_MATH_VARIANT, ZENSICAL = "build math", "browser math", "zensical"


def _build(root: Path, variant: str) -> Site:
    root.mkdir()
    config = support.copy_project_site_sources(root)
    if variant == BROWSER_MATH_VARIANT:
        _browser_math_variant(config)
    server = support.StaticSiteServer(root / "site")  # first: the build needs its address (canonical URLs, navigation)
    try:
        if variant == ZENSICAL:
            with mock.patch.dict(os.environ, {"SITE_URL": server.url}):
                support.build_in_process("zensical", config)
        else:
            build = support.run_mkdocs_build(config, root / "site", site_url=server.url)
            if build.returncode:
                raise RuntimeError(f"bench_lighthouse: `mkdocs build --strict` failed:\n{build.stderr[-3000:]}")
    except Exception:
        server.close()
        raise
    live_pages = {page.lstrip("/") for tag, css_class in LIVE_ELEMENTS
                  for page in support.elements_by_page(root / "site", tag, css_class, "id")}
    return Site(root, server, live_pages)


def _audit_all(sites: dict[str, Site], chromium: str) -> dict[str, dict[str, Audit]]:
    """Every page of every variant (by name), page by page, the variants' order turned by one from a page to the
    next, so all share the machine's moods."""
    audits = {name: {} for name in sites}
    names = list(sites)
    for index, page in enumerate(_site_pages(sites[OURS].root / "site")):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            audit, report = sites[name].audit(page, chromium)
            audits[name][page] = audit
            if name != BROWSER_MATH_VARIANT:
                for problem in _failed_audits(report):
                    print(f"bench_lighthouse: /{page} ({name}): {problem}")
    return audits


# ---- a reader's view: no DevTools protocol attached ----------------------------------------------------------------


def _serve_reader_probe(site: Site, pages: list[str]) -> None:
    """READER_PROBE as the first script of every page, served in place of the built files (the build is left as it
    is)."""
    site.server.replaced["/" + READER_PROBE_FILE] = READER_PROBE.encode()
    site.server.replaced["/" + READER_HOLD_FILE] = READER_HOLD_GIF
    site.server.delays["/" + READER_HOLD_FILE] = READER_HOLD_SECONDS
    for page in pages:
        page_file = site.root / "site" / page / "index.html"
        text = page_file.read_text(encoding="utf-8")
        if "<head>" not in text:
            raise RuntimeError(f"bench_lighthouse: {page_file} has no <head> to put the long-task probe in")
        probed = text.replace("<head>", f'<head><script src="/{READER_PROBE_FILE}"></script>', 1)
        site.server.replaced["/" + page] = probed.encode()


def _reader_longest_tasks(site: Site, pages: list[str], chromium: str) -> dict[str, list[float]]:
    """Per page, the longest task (ms, 0 when none reached 50) up to `load`, held READER_HOLD_SECONDS past
    DOMContentLoaded, in each of READER_LOADS fresh loads by `chromium --headless --dump-dom` (READER_PROBE reports
    them), the pages taken in turn."""
    _serve_reader_probe(site, pages)
    longest = {page: [] for page in pages}
    for _ in range(READER_LOADS):
        for page in pages:
            with tempfile.TemporaryDirectory(prefix="bench-reader-") as profile:
                command = [chromium, "--headless=new", *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                           "--window-size=1350,940", "--dump-dom", site.server.url + page]
                result = subprocess.run(command, capture_output=True, text=True, timeout=READER_TIMEOUT_SECONDS)
            found = re.search(r'data-bench-long-tasks="([^"]*)"', result.stdout)
            if found is None:
                raise RuntimeError(f"bench_lighthouse: no long-task report from /{page} in chromium --dump-dom "
                                   f"(exit {result.returncode}):\n{result.stderr[-2000:]}")
            longest[page].append(max(json.loads(html.unescape(found.group(1))), default=0.0))
    return longest


# ---- the report -----------------------------------------------------------------------------------------------------


def _print_table(audits: dict[str, dict[str, Audit]]) -> None:
    print(f"{'page':<32} {'variant':<13} {'perf':>4} {'a11y':>4} {'b.p.':>4} {'seo':>4} {'TBT ms':>7} {'CLS':>6} "
          f"{'longest ms':>10} {'transfer kB':>11} {'pyodide kB':>10}")
    for page in audits[OURS]:
        for variant, by_page in audits.items():
            audit = by_page.get(page)
            if audit is None:
                continue
            scores = " ".join(f"{audit.scores[name]:>4}" for name in CATEGORIES)
            print(f"{'/' + page:<32} {variant:<13} {scores} {audit.total_blocking_ms:>7.0f} "
                  f"{audit.layout_shift:>6.3f} {audit.longest_task_ms:>10.0f} {audit.transfer_bytes / 1e3:>11.1f} "
                  f"{audit.pyodide_bytes / 1e3:>10.1f}")
            for warning in audit.warnings:
                print(f"{'':<32} warning: {warning}")


def run() -> list[Ratio]:
    chromium = shutil.which("chromium")
    if chromium is None:
        raise RuntimeError("bench_lighthouse: Debian chromium is not installed (make chromium)")
    if not LIGHTHOUSE.is_file():
        raise RuntimeError(f"bench_lighthouse: {LIGHTHOUSE.relative_to(PROJECT_ROOT)} is missing: run `make setup`")
    with tempfile.TemporaryDirectory(prefix="bench-lighthouse-") as temp:
        sites = {}
        try:
            for index, variant in enumerate((OURS, BROWSER_MATH_VARIANT, ZENSICAL)):
                sites[variant] = _build(Path(temp) / f"variant-{index}", variant)
            audits = _audit_all(sites, chromium)
            reader = _reader_longest_tasks(sites[OURS], list(audits[OURS]), chromium)
        finally:
            for site in sites.values():
                site.server.close()
    _print_table(audits)
    ours, baseline = audits[OURS], audits[BROWSER_MATH_VARIANT]

    rows = []
    for page, audit in ours.items():
        scores = ", ".join(f"{name} {score}" for name, score in audit.scores.items())
        rows.append(Ratio(f"lighthouse points below 100 · /{page} ({scores})", audit.points_below_100 / 1e3, 1e-3,
                          "1 point (ours: points short of 100, four categories)", 0.0))
        rows.append(Ratio(f"longest main-thread task · /{page}", audit.longest_task_ms / 1e3,
                          LONG_TASK_BUDGET_SECONDS, "50 ms budget (a constant)", 1.0))
        rows.append(Ratio(f"longest task, no DevTools attached (median of {READER_LOADS}: "
                          f"{', '.join(f'{ms:.0f}' for ms in reader[page])}) · /{page}",
                          statistics.median(reader[page]) / 1e3, LONG_TASK_BUDGET_SECONDS,
                          "50 ms budget (a constant)", None))
        if page in baseline and baseline[page].total_blocking_ms > 0:
            rows.append(Ratio(f"total blocking time · /{page}", audit.total_blocking_ms / 1e3,
                              baseline[page].total_blocking_ms / 1e3, "the same page, KaTeX in the browser", None))
        if not audit.is_live:
            rows.append(Ratio(f"Pyodide bytes · /{page} (nothing live)", audit.pyodide_bytes / 1e6, 1e-6,
                              "1 byte (ours: bytes of Pyodide fetched)", 0.0))
    for page, audit in audits[ZENSICAL].items():
        scores = ", ".join(f"{name} {score}" for name, score in audit.scores.items())
        rows.append(Ratio(f"zensical build: points below 100 · /{page} ({scores})", audit.points_below_100 / 1e3,
                          1e-3, "1 point (Zensical's build: points short of 100)", None))
        rows.append(Ratio(f"zensical build: longest main-thread task · /{page}", audit.longest_task_ms / 1e3,
                          LONG_TASK_BUDGET_SECONDS, "50 ms budget (a constant)", None))
    home_ours, home_baseline = ours[""].transfer_bytes, baseline[""].transfer_bytes
    rows.append(Ratio(f"home page transfer, kB ({home_ours / 1e3:.1f} vs {home_baseline / 1e3:.1f})", home_ours / 1e6,
                      home_baseline / 1e6, "the same page, KaTeX in the browser", TRANSFER_TARGET))
    return rows
