"""Material's templates, overridden the documented way (theme.custom_dir: overrides): each overridden partial is
Material's own plus one named change, and the built pages carry that change. Where Zensical's partial of the same
name differs in what it draws (search), the override gives each engine its own: Material's, changed, when MkDocs
builds (which defines mkdocs_version), and Zensical's, unchanged, when Zensical does."""

import re
from pathlib import Path

import material
import pytest
import zensical

from support import PROJECT_ROOT

MATERIAL_TEMPLATES = Path(material.__file__).parent / "templates"
ZENSICAL_TEMPLATES = Path(zensical.__file__).parent / "templates"
# An override with a part per engine.
BY_ENGINE = re.compile(r"\A\{% if mkdocs_version is defined -%\}\n(?P<mkdocs>.*)\{%- else -%\}\n(?P<zensical>.*)"
                       r"\{%- endif %\}\n\Z", re.S)
# Each override's one change: (Material's text, ours).
CHANGES = {
    "partials/progress.html": ('role="progressbar">', 'role="progressbar" aria-label="Loading the next page">'),
    "partials/search.html": ('role="dialog">', 'role="dialog" aria-label="{{ lang.t(\'search\') }}">'),
}


def without_header_comment(template: str) -> str:
    return re.sub(r"\A\{#-.*?-#\}\n", "", template, flags=re.S)


def override(partial: str, engine: str) -> str:
    """Our partial as `engine` (mkdocs or zensical) renders it: its part for that engine, if it has parts."""
    ours = without_header_comment((PROJECT_ROOT / "overrides" / partial).read_text())
    parts = BY_ENGINE.match(ours)
    return parts[engine] if parts else ours


@pytest.mark.parametrize("partial", sorted(CHANGES))
def test_an_overridden_partial_is_materials_own_with_one_change(partial):
    ours = override(partial, "mkdocs")
    theirs = without_header_comment((MATERIAL_TEMPLATES / partial).read_text())
    original, changed = CHANGES[partial]
    assert ours.count(changed) == 1 and theirs.count(original) == 1
    assert ours.replace(changed, original) == theirs, (
        f"Material's {partial} changed since it was copied into overrides/: copy it again and re-apply the change")


def test_zensical_builds_the_search_dialog_from_its_own_partial_which_names_it():
    ours = override("partials/search.html", "zensical")
    assert ours != override("partials/search.html", "mkdocs")
    theirs = without_header_comment((ZENSICAL_TEMPLATES / "partials/search.html").read_text())
    assert ours == theirs, ("Zensical's partials/search.html changed since it was copied into overrides/: copy it "
                            "again")
    assert re.search(r'<div class="md-search" [^>]*role="dialog" aria-label="[^"]+">', ours)


def test_the_search_dialog_and_the_progress_bar_have_accessible_names_on_every_page(built_site):
    pages = sorted(built_site.rglob("*.html"))
    assert pages
    for page in pages:
        html = page.read_text()
        assert re.search(r'<div class="md-search" [^>]*role="dialog" aria-label="Search">', html), page
        assert re.search(r'<div class="md-progress" [^>]*role="progressbar" aria-label="[^"]+">', html), page
