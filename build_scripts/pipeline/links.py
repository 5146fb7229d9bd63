"""Link health of a built site: every internal link, anchor and image must lead somewhere; external links are listed,
never fetched (the build and the tests run offline, and another site's health is not ours to fail on).

Internal means relative, site-absolute under site_url's path, or a full address under site_url. A target is a file of
the site (a folder stands for its index.html, as static hosts serve it); a fragment must be an id (or <a name>) of
the target page. `python -m build_scripts.pipeline links` (`make links`) prints the report.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from build_scripts.pipeline.pages import Page, Reference, file_for, read_page, site_pages, site_path

CHECKED_TAGS = {"a", "img", "link", "script", "source", "iframe", "video", "audio", "embed", "object"}


@dataclass
class LinkReport:
    """What a site's pages point at."""

    checked: int = 0  # internal references checked
    broken: list[str] = field(default_factory=list)  # "page:line: <tag attr="…">: why"
    external: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # address → ["page:line", …]

    def summary(self) -> str:
        """The report as `make links` prints it."""
        lines = [f"{self.checked} internal links, anchors and images checked: "
                 + (f"{len(self.broken)} broken" if self.broken else "all lead somewhere")]
        lines += [f"  {line}" for line in self.broken]
        lines.append(f"{len(self.external)} external links (listed, not fetched):")
        for address in sorted(self.external):
            places = self.external[address]
            lines.append(f"  {address}  ({', '.join(places[:3])}{f', and {len(places) - 3} more' if len(places) > 3 else ''})")
        return "\n".join(lines)


class _Pages:
    """Pages read once each, on demand (a fragment needs its target's anchors)."""

    def __init__(self, site_dir: Path):
        self.site_dir = site_dir
        self.read: dict[Path, Page] = {}

    def page(self, path: Path) -> Page:
        if path not in self.read:
            self.read[path] = read_page(self.site_dir, path)
        return self.read[path]


def _problem(pages: _Pages, page: Page, reference: Reference, site_url: str) -> str | None:
    """Why an internal reference leads nowhere, or None when it is fine."""
    target = site_path(page, reference.value, site_url)
    fragment = unquote(urlsplit(reference.value).fragment)
    file = file_for(pages.site_dir, target)
    if not file.is_file():
        if (pages.site_dir / target / "index.html").is_file():
            file = pages.site_dir / target / "index.html"  # a folder without its slash: hosts redirect
        else:
            return f"no file {target or 'index.html'} in the site"
    if fragment and file.suffix == ".html" and fragment not in pages.page(file).anchors:
        return f"no element with id '{fragment}' in {file.relative_to(pages.site_dir).as_posix()}"
    return None


def check_links(site_dir: Path, site_url: str = "") -> LinkReport:
    """Check every internal reference of every page; list the external ones."""
    pages, report = _Pages(site_dir), LinkReport()
    for path in site_pages(site_dir):
        page = pages.page(path)
        for reference in page.references:
            if reference.tag not in CHECKED_TAGS:
                continue
            where = f"{page.path}:{reference.line}"
            if site_path(page, reference.value, site_url) is None:
                if urlsplit(reference.value).scheme in ("http", "https") or reference.value.startswith("//"):
                    report.external[reference.value].append(where)
                continue
            report.checked += 1
            problem = _problem(pages, page, reference, site_url)
            if problem:
                report.broken.append(f'{where}: <{reference.tag} {reference.attribute}="{reference.value}">: {problem}')
    report.external = dict(report.external)
    return report
