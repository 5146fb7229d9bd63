"""`make serve` under both engines, for real on 127.0.0.1: a broken block never stops the preview. MkDocs keeps serving
with a banner on every page naming the error, prints it on every rebuild that meets it, and drops the banner with the
fix; Zensical shows the error above the broken page's last good version. Under Zensical also: our files are in the
served site, and a sandbox placed while serving has its static figure when its page is rebuilt."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import urljoin

import pytest
from pathlib import Path

from build_scripts._files import write_atomic
from support import copy_project_site_sources

WAIT_SECONDS = 90  # a loaded machine may take long; each wait ends as soon as its condition holds


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, ""
    except OSError:
        return 0, ""


def wait_for(condition, what: str, server: subprocess.Popen):
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        assert server.poll() is None, f"the server stopped while waiting for {what}"
        if result := condition():
            return result
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


def said(log) -> str:
    """Everything the server printed so far."""
    log.seek(0)
    return log.read()


@pytest.fixture
def project(tmp_path) -> Path:
    """A copy of the project's site sources; its mkdocs.yml."""
    return copy_project_site_sources(tmp_path)


@pytest.fixture
def served(project, tmp_path, request):
    """The copy served by `python -m build_scripts.pipeline serve --engine ENGINE` (what `make serve` runs), ENGINE
    the test's parameter; stopped after the test."""
    engine = request.param
    config = project
    port = free_port()
    log = open(tmp_path / "serve.log", "w+")
    server = subprocess.Popen([sys.executable, "-m", "build_scripts.pipeline", "serve", "--engine", engine,
                               "--dev-addr", f"127.0.0.1:{port}"], cwd=tmp_path, stdout=log,
                              stderr=subprocess.STDOUT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    url = f"http://127.0.0.1:{port}/"
    try:
        yield config, url, server, log
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def pages_saying(url: str, words: str, paths=("sandboxes/", "")) -> str:
    """The first page's HTML when every page is served and says `words` (else '')."""
    pages = [fetch(url + path) for path in paths]
    return pages[0][1] if all(status == 200 and words in html for status, html in pages) else ""


def pages_without_banner(url: str) -> str:
    """The page docs/sandboxes.md makes when it and the home page are served with no error banner (else '')."""
    pages = [fetch(url + path) for path in ("sandboxes/", "")]
    return pages[0][1] if all(status == 200 and "Build error" not in html for status, html in pages) else ""


BROKEN = "\n/// sandbox | recurrenc\n///\n"  # a misspelt sandbox name
SHOWN_ERROR = "sandbox &#x27;recurrenc&#x27;: unknown sandbox"  # as the page shows it
PRINTED_ERROR = "sandbox 'recurrenc': unknown sandbox"  # as the terminal does


def broken_lesson(project: Path) -> tuple[str, str, int]:
    """A sentence and a broken block added to the copy's docs/sandboxes.md: its good text, the broken text, and the
    broken block's line."""
    good = (project.parent / "docs/sandboxes.md").read_text()
    broken = good + "\nA sentence written with the broken block.\n" + BROKEN
    return good, broken, broken.split("\n").index("/// sandbox | recurrenc") + 1


@pytest.fixture
def broken_from_the_start(project):
    """The copy's docs/sandboxes.md broken before the server starts (ask for it before `served`)."""
    good, broken, line = broken_lesson(project)
    (project.parent / "docs/sandboxes.md").write_text(broken)
    return good, broken, line


@pytest.mark.parametrize("served", ["mkdocs"], indirect=True)
def test_mkdocs_serve_keeps_serving_with_a_banner_naming_the_error_until_the_fix(project, served):
    config, url, server, log = served
    lesson = project.parent / "docs/sandboxes.md"
    good, broken, line = broken_lesson(project)
    where, printed = f"docs/sandboxes.md:{line}: {SHOWN_ERROR}", f"docs/sandboxes.md:{line}: {PRINTED_ERROR}"
    placed = good.count("/// sandbox |")
    wait_for(lambda: pages_without_banner(url), "the first build", server)

    # Broken: every page keeps being served, with the banner; the broken page is its last good version.
    write_atomic(lesson, broken)
    page = wait_for(lambda: pages_saying(url, where, ("sandboxes/", "", "lessons/rmsnorm-geometry/")),
                    "the banner on every page", server)
    assert "A sentence written with the broken block" not in page and "/// sandbox" not in page
    assert page.count('class="sandbox"') == placed > 0
    wait_for(lambda: said(log).count(printed) == 1, "the error printed", server)
    write_atomic(lesson, broken + "\nAnother sentence.\n")  # each failed rebuild prints its cause again
    wait_for(lambda: said(log).count(printed) == 2, "the error printed again", server)

    # Fixed: the banner goes with the next build.
    write_atomic(lesson, good + "\nA sentence written after the fix.\n")
    page = wait_for(lambda: "after the fix" in (html := pages_without_banner(url)) and html, "the fixed page", server)
    assert page.count('class="sandbox"') == placed
    assert server.poll() is None
    assert "Traceback" not in said(log) and "appear stuck" not in said(log), said(log)


@pytest.mark.parametrize("served", ["mkdocs"], indirect=True)
def test_mkdocs_serve_starts_with_a_page_broken_before_it_ever_built(broken_from_the_start, served):
    # No last good version: the page is shown as it is, the error in the block's place and the banner on every page.
    good, broken, line = broken_from_the_start
    config, url, server, log = served
    where = f"docs/sandboxes.md:{line}: {SHOWN_ERROR}"
    page = wait_for(lambda: (html := fetch(url + "sandboxes/")[1]) and where in html and html, "the page", server)
    assert "A sentence written with the broken block" in page and where in fetch(url)[1]
    assert page.count('class="sandbox"') == good.count("/// sandbox |") > 0  # the other blocks still build
    assert said(log).count(f"docs/sandboxes.md:{line}: {PRINTED_ERROR}") == 1, said(log)
    write_atomic(config.parent / "docs/sandboxes.md", good)
    wait_for(lambda: "Build error" not in fetch(url + "sandboxes/")[1], "the fixed page", server)


@pytest.mark.parametrize("served", ["mkdocs"], indirect=True)
def test_mkdocs_serve_puts_back_the_last_site_when_a_rebuild_fails_for_another_reason(project, served):
    config, url, server, log = served
    wait_for(lambda: fetch(url + "sandboxes/")[0] == 200, "the first build", server)
    placed = (project.parent / "docs/sandboxes.md").read_text().count("/// sandbox |")

    good_config = config.read_text()
    write_atomic(config, good_config.replace("\nnav:\n", "\nnav: [\n", 1))  # YAML that does not parse
    page = wait_for(lambda: pages_saying(url, "error parsing the configuration file"), "the banner", server)
    assert "Build error" in page
    assert page.count('class="sandbox"') == placed > 0  # the site as the last build left it
    write_atomic(config, good_config)
    wait_for(lambda: pages_without_banner(url), "the banner gone", server)

    # A bug in the code: a sandbox module that does not compile (its traceback is for the terminal).
    module = project.parent / "explainer/sandboxes/half_written.py"
    write_atomic(module, "def half_written(:\n")
    page = wait_for(lambda: pages_saying(url, "SyntaxError: invalid syntax (half_written.py"), "the banner", server)
    assert page.count('class="sandbox"') == placed
    wait_for(lambda: "Traceback" in said(log) and "half_written.py" in said(log), "the traceback", server)
    module.unlink()
    wait_for(lambda: pages_without_banner(url), "the banner gone", server)
    assert server.poll() is None and "appear stuck" not in said(log), said(log)


@pytest.mark.parametrize("served", ["zensical"], indirect=True)
def test_zensical_serve_publishes_our_files_draws_new_figures_and_survives_a_broken_block(served, tmp_path):
    config, url, server, log = served
    # Zensical empties the site as it starts: wait for its pages, and for our files put back after it.
    wait_for(lambda: fetch(url + "sandboxes/")[0] == fetch(url + "assets/explainer/runtime.json")[0] == 200,
             "the pages and the runtime manifest", server)
    status, page = fetch(url + "sandboxes/")
    assert status == 200 and "sandbox__image" in page
    shown = re.findall(r'src="([^"#]+\.svg)', page)
    assert shown and all(fetch(urljoin(url + "sandboxes/", src))[0] == 200 for src in shown[:4])

    lesson = tmp_path / "docs/sandboxes.md"
    lesson.write_text(lesson.read_text() + "\n/// sandbox | recurrence\nalpha: 0.23\nlayers: 9\n///\n")
    new_figures = wait_for(lambda: set(re.findall(r'src="([^"#]+\.svg)', fetch(url + "sandboxes/")[1])) - set(shown),
                           "the page with the new sandbox", server)
    assert len(new_figures) == 2
    for src in new_figures:  # there when the page is: Zensical's reload shows them
        assert fetch(urljoin(url + "sandboxes/", src))[0] == 200, src

    lesson.write_text(lesson.read_text() + BROKEN)
    line = lesson.read_text().split("\n").index("/// sandbox | recurrenc") + 1
    page = wait_for(lambda: (html := fetch(url + "sandboxes/")[1]) and "Build error" in html and html,
                    "the error in the page", server)
    assert f"docs/sandboxes.md:{line}: {SHOWN_ERROR}" in page
    # Above the page's last good version: the sandbox placed before the mistake is still drawn.
    assert new_figures <= set(re.findall(r'src="([^"#]+\.svg)', page))
    assert server.poll() is None
    assert said(log).count(f"docs/sandboxes.md:{line}: {PRINTED_ERROR}") == 1, said(log)
    assert "Traceback" not in said(log), said(log)
