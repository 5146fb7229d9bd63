"""MkDocs and Zensical build the same site from the same sources: the same pages, figures (byte for byte), assets,
and the same sandbox, figure and quiz HTML; Zensical gets the checks MkDocs has (nav, file:line errors)."""

import base64
import hashlib
import json
import re
import textwrap
from pathlib import Path
from urllib.parse import urljoin

import pytest
import zensical

from build_scripts.markdown._blocks import FIGURE_DIR
from build_scripts.pipeline.config import SiteConfigError, read_site
from build_scripts.pipeline.engines import BuildError, build_with_zensical
from build_scripts.pipeline.scan import check_nav
from build_scripts.site_runtime import ASSET_DIR, PYODIDE_SITE_DIR
from support import build_in_process, copy_project_site_sources, run_pipeline

ENGINES = ("mkdocs", "zensical")
OURS = (FIGURE_DIR, ASSET_DIR, PYODIDE_SITE_DIR)  # what the pipeline writes; the rest is each engine's theme
# Each engine's search index: the one file of the pages' own that differs by engine.
SEARCH_INDEX = {"mkdocs": "search/search_index.json", "zensical": "search.json"}
RE_OUR_ELEMENTS = re.compile(r'<figure class="(?:sandbox|illustration)".*?</figure>|<form class="quiz".*?</form>', re.S)
RE_SOURCE = re.compile(r'\b(src|href)="([^"#]+)')


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    """The project's site built by each engine, each from its own copy of the sources."""
    built = {}
    for engine in ENGINES:
        root = tmp_path_factory.mktemp(engine)
        built[engine] = build_in_process(engine, copy_project_site_sources(root))
    return built


def files(site: Path, under: str = "") -> set[str]:
    return {p.relative_to(site).as_posix() for p in (site / under).rglob("*") if p.is_file()}


def our_elements(site: Path, page: str) -> list[str]:
    """The page's sandboxes, figures and quizzes, with every src/href made site-absolute (engines write relative
    paths differently: Zensical resolves them from the Markdown file, MkDocs leaves them as written)."""
    url = "/" + page.removesuffix("index.html")
    html = (site / page).read_text()
    return [RE_SOURCE.sub(lambda m: f'{m[1]}="{urljoin(url, m[2])}', element) for element in RE_OUR_ELEMENTS.findall(html)]


def test_both_engines_write_the_same_pages_and_the_same_files_of_ours(sites):
    mkdocs, zensical_site = sites["mkdocs"], sites["zensical"]
    pages = {name for name in files(mkdocs) if name.endswith(".html")}
    assert "lessons/rmsnorm-geometry/index.html" in pages and "404.html" in pages
    assert pages == {name for name in files(zensical_site) if name.endswith(".html")}
    for engine, site in sites.items():
        assert (site / SEARCH_INDEX[engine]).is_file(), f"{engine}: no search index"
    for folder in OURS:
        ours = files(mkdocs, folder)
        assert ours, f"the MkDocs site has nothing in {folder}"
        assert ours == files(zensical_site, folder), folder
        for name in ours:
            assert (mkdocs / name).read_bytes() == (zensical_site / name).read_bytes(), f"{name} differs"
    svgs = files(mkdocs, FIGURE_DIR)
    assert len(svgs) >= 40 and all(name.endswith(".svg") for name in svgs)


def test_every_sandbox_figure_and_quiz_is_the_same_html_under_both_engines(sites):
    pages = sorted(name for name in files(sites["mkdocs"]) if name.endswith("index.html"))
    compared = 0
    for page in pages:
        mkdocs, zensical_html = (our_elements(sites[engine], page) for engine in ENGINES)
        assert mkdocs == zensical_html, page
        compared += len(mkdocs)
        for element in mkdocs:  # every image points into the site, at a file that is there
            for path in re.findall(r'src="(/[^"#]+)', element):
                assert (sites["mkdocs"] / path.lstrip("/")).is_file(), f"{page}: {path}"
    assert compared >= 20


def test_both_engines_load_the_page_code_on_every_page(sites):
    scripts = ("render.js", "protocol.js", "runtime.js", "page.js", "sandbox.js", "quiz.js", "sandbox.css", "quiz.css")
    for engine, site in sites.items():
        page = site / "lessons/break-the-model/index.html"
        loaded = [urljoin("/lessons/break-the-model/", m[2]) for m in RE_SOURCE.finditer(page.read_text())]
        for name in scripts:
            assert f"/{ASSET_DIR}/{name}" in loaded, f"{engine}: the page does not load {name}"


# ---- what Zensical lacks, the pipeline adds -------------------------------------------------------------------------


def test_a_page_left_out_of_the_nav_fails_the_zensical_build_too(tmp_path):
    config = copy_project_site_sources(tmp_path)
    (tmp_path / "docs/lessons/orphan.md").write_text("# Orphan\n")
    with pytest.raises(BuildError) as caught:
        build_with_zensical(read_site(config))
    assert str(caught.value) == ("explainer: docs/lessons/orphan.md: not in mkdocs.yml's nav; "
                                 "add it there, so readers can reach it")
    (tmp_path / "docs/lessons/orphan.md").unlink()
    config.write_text(config.read_text().replace("  - All figures: sandboxes.md\n",
                                                 "  - All figures: sandboxes.md\n  - Gone: lessons/gone.md\n"))
    with pytest.raises(SiteConfigError, match=r"nav names lessons/gone\.md, not found in docs/"):
        check_nav(read_site(config))


def test_a_bad_block_names_its_file_and_line_under_zensical_with_no_traceback(tmp_path):
    config = copy_project_site_sources(tmp_path)
    page = tmp_path / "docs/lessons/break-the-model.md"
    text = "---\ntitle: Break\n---\n\n# Break\n\n/// sandbox | ablation_lab\ndepth: 30\n///\n"
    page.write_text(text)
    expected = "docs/lessons/break-the-model.md:8: sandbox 'ablation_lab': depth: must be between 1 and 24 (got 30)"
    result = run_pipeline(config, "build", "--engine", "zensical")
    assert result.returncode == 1
    assert result.stderr.strip() == expected, result.stderr
    # Zensical alone (no pipeline checking the pages first): the extension reads Zensical's page, so the error
    # still names the file and the line, front matter counted.
    with pytest.raises(RuntimeError) as caught:
        zensical.build(str(config), {"clean": False, "strict": True})
    assert f"MarkdownSourceError: {expected}" in str(caught.value).splitlines()[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_sandbox_that_raises_at_its_starting_values_is_one_line_under_both_engines(tmp_path, engine):
    config = copy_project_site_sources(tmp_path)
    (tmp_path / "explainer/sandboxes/dot_product.py").write_text(textwrap.dedent('''
        """A sandbox with a bug at its starting value."""

        from explainer import figure as fig
        from explainer.sandbox import FloatParam, sandbox


        @sandbox(FloatParam("x", "x", 0, 1, step=0.5, default=0), title="Dot product")
        def dot_product(x: float) -> dict:
            """Divides by x."""
            return fig.figure(axes=fig.axes(xlim=(0, 1), ylim=(0, 1)), marks=[fig.point(0.5, 1 / x)])
        '''))
    page = tmp_path / "docs/sandboxes.md"
    page.write_text(page.read_text() + "\n/// sandbox | dot_product\n///\n")
    line = page.read_text().split("\n").index("/// sandbox | dot_product") + 1
    result = run_pipeline(config, "build", "--engine", engine)
    assert result.returncode == 1
    expected = (f"explainer: figure 'dot_product' (sandbox) failed: ZeroDivisionError: float division by zero "
                f"(used at docs/sandboxes.md:{line})")
    said = [line for line in result.stderr.splitlines() if re.fullmatch(r"(ERROR +- +)?" + re.escape(expected), line)]
    assert len(said) == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("ZeroDivisionError") == 1, result.stderr


def test_both_engines_get_the_policy_and_offline_reading(sites):
    """The pipeline writes its Content-Security-Policy and service worker into either engine's pages: one policy per
    site, covering that engine's own inline scripts, and the same runtime for offline reading."""
    lists = {}
    for engine, site in sites.items():
        policies = set()
        for page in site.rglob("*.html"):
            html = page.read_text()
            found = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
            assert len(found) == 1, f"{engine}: {page}"
            policies.add(found[0])
            for script in re.findall(r"<script>(.*?)</script>", html, re.S):  # each inline script is allowed
                digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
                assert f"'sha256-{digest}'" in found[0], f"{engine}: {page}: {script[:60]}"
        assert len(policies) == 1, engine
        text = (site / "sw.js").read_text()
        lists[engine] = json.loads(re.match(r"self\.__EXPLAINER_OFFLINE = (\{.*?\});\n", text)[1])
        assert f"/{ASSET_DIR}/sandbox.js".lstrip("/") in {entry["url"] for entry in lists[engine]["shell"]}
    assert lists["mkdocs"]["runtime"] == lists["zensical"]["runtime"]
