"""A live preview that keeps serving while a page is broken, under either engine (`make serve`, `make serve
ENGINE=zensical`); `make build` and `mkdocs build --strict` still stop at the first mistake.

While the preview runs, an authoring mistake (a block, a `{{ quantity }}`, a sandbox or figure that raises) does not
stop the build: the page is converted from its last good version (the Markdown that last passed the check), the
error is printed on every rebuild that meets it, and the pages show it until the build after the fix:

- MkDocs (the explainer plugin, in `mkdocs serve` only): every page of the site starts with a banner listing the
  errors that stand, with `docs/<file>.md:<line>`.
- Zensical converts only the pages that changed, so only the broken page shows its error, above its last version.

A page broken before it ever built has no last good version: it is converted as it is, and each block extension
shows the error in place of what it could not build (build_scripts/markdown/_blocks.py, previewed).

Under MkDocs any other failure of a rebuild (a bug in the code, a broken mkdocs.yml) puts back the site the last
finished build wrote (LastGoodSite), with the banner naming the cause; Zensical's own server stops at such an error.
"""

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from build_scripts._files import write_atomic
from build_scripts.figures.jobs import FigureError, FigureJob
from build_scripts.markdown._blocks import MarkdownSourceError, error_line
from build_scripts.markdown._page import error_box
from build_scripts.pipeline.scan import scan_page
from build_scripts.site_runtime import link_or_copy

PAGES_NOTE = "This preview keeps building: a broken page shows its last good version until the error is fixed."
SITE_NOTE = "This preview shows the site as the last finished build wrote it, until the error is fixed."
# Where Material's pages start their content; a page without it (none of Material's) gets the banner after <body>.
CONTENT_START = '<article class="md-content__inner md-typeset">'


class LastGoodPages:
    """The last good Markdown of each page, and the errors of the pages broken now (by page, as errors name it)."""

    def __init__(self, report: Callable[[str], None]):
        self.report = report
        self.markdown: dict[str, str] = {}
        self.errors: dict[str, str] = {}

    def checked(self, page: str, markdown: str) -> tuple[str, list[FigureJob], str | None]:
        """Check a page's Markdown (inside `on_page(...)`): what to convert, the figures it shows, and, when that is
        the page's last good version instead, its error (reported here; else the blocks report it as they fail)."""
        try:
            jobs = scan_page(markdown)
        except (MarkdownSourceError, FigureError) as error:
            self.errors[page] = error_line(error)
            if page in self.markdown:
                try:
                    jobs = scan_page(self.markdown[page])
                except (MarkdownSourceError, FigureError):
                    pass  # the code changed under the last version too: convert the page as it is
                else:
                    self.report(self.errors[page])
                    return self.markdown[page], jobs, self.errors[page]
            return markdown, [], None
        self.markdown[page] = markdown
        self.errors.pop(page, None)
        return markdown, jobs, None

    def page_markdown(self, page: str, markdown: str) -> tuple[str, str | None]:
        """`checked` without the figures, as _page.Preview.page_markdown takes it."""
        markdown, _, error = self.checked(page, markdown)
        return markdown, error


def show_banner(site_dir: Path, errors: list[str], note: str = PAGES_NOTE) -> None:
    """Start every page of a built site with a banner listing the errors that stand. Each page is written anew, never
    in place: it may be a hard link into LastGoodSite's copy."""
    banner = error_box(*errors, note=note)
    for page in site_dir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        at = text.find(CONTENT_START)
        if at >= 0:
            at += len(CONTENT_START)
        else:
            body = text.find("<body")
            at = text.find(">", body) + 1 if body >= 0 else 0
        write_atomic(page, text[:at] + banner + text[at:])


class LastGoodSite:
    """The site as the last finished build wrote it, kept beside it as hard links (next to free: every build writes
    new files, never into old ones), and put back when a rebuild fails half way."""

    def __init__(self, site_dir: Path):
        self.site_dir = site_dir
        self.copy = Path(tempfile.mkdtemp(prefix="explainer-last-good-", dir=site_dir.parent)) / "site"

    def keep(self) -> None:
        """Remember the site as it is now."""
        shutil.rmtree(self.copy, ignore_errors=True)
        shutil.copytree(self.site_dir, self.copy, copy_function=link_or_copy)

    def restore(self, errors: list[str]) -> None:
        """Put the remembered site back, every page starting with the errors."""
        for entry in self.site_dir.iterdir():  # what the failed build left
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        if self.copy.is_dir():
            shutil.copytree(self.copy, self.site_dir, dirs_exist_ok=True, copy_function=link_or_copy)
        show_banner(self.site_dir, errors, SITE_NOTE)

    def remove(self) -> None:
        """Delete the copy (the server stops)."""
        shutil.rmtree(self.copy.parent, ignore_errors=True)
