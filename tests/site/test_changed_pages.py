"""`make check`: which pages changed since a base branch (tests/changed_pages.py), in a real git repository, and the
target itself, which lints every page, builds strict and says when there is no page to load in the browser."""

import shutil
import subprocess

import pytest

from changed_pages import changed_files, pages_for, since
from support import PROJECT_ROOT


def git(root, *arguments):
    subprocess.run(["git", "-c", "user.name=Test", "-c", "user.email=test@example.org", *arguments], cwd=root,
                   check=True, capture_output=True)


def write(root, name, text):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def repository(tmp_path):
    """A project on branch `work`, one commit ahead of `main`."""
    for name, text in {"docs/index.md": "# Home\n", "docs/lessons/a.md": "# A\n\n/// sandbox | recurrence\n///\n",
                       "docs/lessons/b.md": "# B\n", "docs/old.md": "# Old\n", "docs/nested/index.md": "# N\n",
                       "explainer/sandboxes/recurrence.py": "", "explainer/sandboxes/ablation_lab.py": "",
                       "mkdocs.yml": "site_name: x\n"}.items():
        write(tmp_path, name, text)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    git(tmp_path, "checkout", "-q", "-b", "work")
    write(tmp_path, "docs/lessons/b.md", "# B, edited and committed\n")
    git(tmp_path, "commit", "-q", "-am", "edit b")
    return tmp_path


def changed(root, base="main"):
    return pages_for(changed_files(root, base)[1], root)


def test_nothing_changed_means_no_page(repository):
    assert changed(repository, "HEAD") == []
    said, pages = since("HEAD", repository)
    assert pages == [] and said.startswith("no page changed since HEAD (merge-base ")


def test_committed_uncommitted_and_new_pages_count_deleted_pages_and_other_files_do_not(repository):
    write(repository, "docs/index.md", "# Home, not committed yet\n")
    write(repository, "docs/lessons/new.md", "# New, not added to git\n")
    write(repository, "docs/nested/index.md", "# Nested, edited\n")
    (repository / "docs/old.md").unlink()
    write(repository, "docs/stylesheets/site.css", "body {}\n")
    write(repository, "mkdocs.yml", "site_name: y\n")
    assert changed(repository) == ["", "lessons/b/", "lessons/new/", "nested/"]
    said, pages = since("main", repository)
    assert said.startswith("4 page(s) changed since main (merge-base ")
    assert said.endswith("): /, /lessons/b/, /lessons/new/, /nested/")


def test_a_changed_sandbox_module_changes_the_pages_that_place_it(repository):
    write(repository, "explainer/sandboxes/recurrence.py", "# edited\n")
    assert changed(repository) == ["lessons/a/", "lessons/b/"]
    write(repository, "explainer/sandboxes/recurrence.py", "")
    write(repository, "explainer/sandboxes/ablation_lab.py", "# placed nowhere\n")
    assert changed(repository) == ["lessons/b/"]


def test_an_unknown_base_says_so(repository):
    said, pages = since("no-such-branch", repository)
    assert pages == [] and said == "no branch or commit 'no-such-branch' to compare with: no page to load"


@pytest.mark.skipif(shutil.which("chromium") is None, reason="make check needs Debian's chromium (make test installs it)")
def test_make_check_lints_every_page_builds_strict_and_says_when_no_page_is_to_load():
    result = subprocess.run(["make", "--no-print-directory", "check", "CHECK_BASE=no-such-base"], cwd=PROJECT_ROOT,
                            capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr  # every failure below shows it (one that did not come back showed none)
    assert result.returncode == 0, output
    assert " pages checked: every block is valid" in result.stdout, output
    assert "no branch or commit 'no-such-base' to compare with: no page to load" in result.stdout, output
    assert "1 passed, 1 skipped" in result.stdout, output  # the strict build ran; the browser had nothing to load
