"""`make serve ENGINE=zensical`: Zensical's server with the pipeline around it. Our files are in the served site, a
sandbox placed while serving has its static figure when its page is rebuilt, and a broken block shows its error in
the page (and one line in the terminal) without stopping the server."""

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


@pytest.fixture
def served(tmp_path):
    """A copy of the project served by `python -m build_scripts.pipeline serve --engine zensical`."""
    config = copy_project_site_sources(tmp_path)
    port = free_port()
    log = open(tmp_path / "serve.log", "w+")
    server = subprocess.Popen([sys.executable, "-m", "build_scripts.pipeline", "serve", "--engine", "zensical",
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

    lesson.write_text(lesson.read_text() + "\n/// sandbox | recurrenc\n///\n")
    line = lesson.read_text().split("\n").index("/// sandbox | recurrenc") + 1
    page = wait_for(lambda: (html := fetch(url + "sandboxes/")[1]) and "Build error" in html and html,
                    "the error in the page", server)
    assert f"docs/sandboxes.md:{line}: sandbox &#x27;recurrenc&#x27;: unknown sandbox" in page
    assert server.poll() is None
    log.seek(0)
    said = log.read()
    assert said.count(f"docs/sandboxes.md:{line}: sandbox 'recurrenc'") == 1, said
    assert "Traceback" not in said, said
