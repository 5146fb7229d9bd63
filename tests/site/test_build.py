"""Real `mkdocs build --strict` runs of the project's site, and of broken copies of it."""

import re
from html.parser import HTMLParser
from pathlib import Path

import yaml

from support import copy_project_site_sources, run_mkdocs_build


class AssetCollector(HTMLParser):
    """Collect every URL a page loads by itself (scripts, styles, images, fonts), not the links a reader may follow."""

    def __init__(self):
        super().__init__()
        self.urls = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "img", "source", "iframe") and attrs.get("src"):
            self.urls.append(attrs["src"])
        if tag == "link" and attrs.get("rel") in ("stylesheet", "preload", "modulepreload", "icon") and attrs.get("href"):
            self.urls.append(attrs["href"])


def nav_pages(config_file: Path) -> list[str]:
    """Every Markdown page named in mkdocs.yml's nav, in order."""
    config = yaml.load(config_file.read_text(), Loader=yaml.BaseLoader)
    pages = []

    def walk(entries):
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            walk(value) if isinstance(value, list) else pages.append(value)

    walk(config["nav"])
    return pages


def test_every_nav_page_is_built(built_site, project_root):
    pages = nav_pages(project_root / "mkdocs.yml")
    assert "index.md" in pages and len(pages) >= 3
    for page in pages:
        html = "index.html" if page == "index.md" else page.removesuffix(".md") + "/index.html"
        assert (built_site / html).is_file(), f"{page} was not built to {html}"


def test_every_file_of_the_site_is_readable_by_any_user(built_site):
    """A static host's server (or the GitHub Pages artifact) reads the files as another user than the build's."""
    private = [str(path.relative_to(built_site)) for path in built_site.rglob("*")
               if path.is_file() and not path.stat().st_mode & 0o004]
    assert not private, f"files only their owner can read: {private[:10]}"


def test_pages_load_nothing_from_another_origin(built_site):
    pages = sorted(built_site.rglob("*.html"))
    assert pages
    for page in pages:
        collector = AssetCollector()
        collector.feed(page.read_text())
        off_origin = [url for url in collector.urls if re.match(r"^(https?:)?//", url)]
        assert not off_origin, f"{page.relative_to(built_site)} loads {off_origin}"
        assert "fonts.googleapis.com" not in page.read_text()


def test_a_broken_link_fails_the_strict_build_naming_the_page(tmp_path):
    config = copy_project_site_sources(tmp_path)
    (tmp_path / "docs/lessons/break-the-model.md").write_text("# A page\n\nSee [the missing lesson](missing.md).\n")
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode != 0
    assert "lessons/break-the-model.md" in result.stderr and "missing.md" in result.stderr


def test_a_page_left_out_of_the_nav_fails_the_strict_build(tmp_path):
    config = copy_project_site_sources(tmp_path)
    (tmp_path / "docs/lessons/orphan.md").write_text("# Orphan\n")
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode != 0
    assert "lessons/orphan.md" in result.stderr


def test_every_sandbox_a_lesson_places_is_also_on_all_figures(project_root):
    # README: a new sandbox goes on "All figures" (docs/sandboxes.md) as well as on its lesson.
    from build_scripts.markdown._blocks import find_blocks

    def placed(page: Path) -> set[str]:
        lines = page.read_text(encoding="utf-8").split("\n")
        return {block.argument for block in find_blocks(lines, {"sandbox", "figure", "quiz"}) if block.name == "sandbox"}

    in_lessons = set().union(*map(placed, (project_root / "docs/lessons").glob("*.md")))
    assert in_lessons, "no lesson places a sandbox"
    missing = in_lessons - placed(project_root / "docs/sandboxes.md")
    assert not missing, f"add a '/// sandbox | name' block to docs/sandboxes.md for: {', '.join(sorted(missing))}"
