"""Link health of the built site (build_scripts/pipeline/links.py): every internal link, anchor and image leads
somewhere; external links are listed by `make links`, never fetched."""

import textwrap

from build_scripts.pipeline.links import check_links
from support import run_pipeline


def test_every_internal_link_anchor_and_image_of_the_built_site_leads_somewhere(built_site, site_server):
    report = check_links(built_site, site_server.url)
    assert not report.broken, "\n".join(report.broken)
    images = sum(1 for path in built_site.rglob("*.html") for _ in path.read_text().split("<img ")[1:])
    assert report.checked > 300 and images > 20, (report.checked, images)
    assert "https://pyodide.org/" in report.external and "index.html" in report.external["https://pyodide.org/"][0]


def write(site, path, body):
    file = site / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(f"<!doctype html>\n<html><head><meta charset=\"utf-8\"></head>\n<body>\n{body}\n</body></html>\n")


def test_the_checker_names_each_broken_link_anchor_and_image_and_lists_external_links(tmp_path):
    site = tmp_path / "site"
    write(site, "index.html", textwrap.dedent("""\
        <a href="lesson/">fine</a> <a href="lesson/#part">fine anchor</a> <a href="#top" id="top">self</a>
        <a href="lesson">folder without its slash</a>
        <a href="gone/">missing page</a>
        <a href="lesson/#nowhere">missing anchor</a>
        <img src="assets/figure.svg" alt="">
        <img src="assets/missing.svg" alt="">
        <a href="https://example.org/paper">a paper</a> <a href="mailto:someone@example.org">mail</a>
        <link rel="canonical" href="https://site.example/explainer/lesson/">"""))
    write(site, "lesson/index.html", '<h2 id="part">Part</h2><a href="../index.html#top">back</a>')
    (site / "assets").mkdir()
    (site / "assets/figure.svg").write_text("<svg/>")
    report = check_links(site, "https://site.example/explainer/")
    assert report.broken == [
        'index.html:6: <a href="gone/">: no file gone/ in the site',
        'index.html:7: <a href="lesson/#nowhere">: no element with id \'nowhere\' in lesson/index.html',
        'index.html:9: <img src="assets/missing.svg">: no file assets/missing.svg in the site',
    ]
    assert report.external == {"https://example.org/paper": ["index.html:10"]}
    assert report.checked == 10  # the canonical address under site_url counts as the site's own


def test_make_links_prints_the_report_and_fails_on_a_broken_link(tmp_path, built_site, site_server):
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: x\nsite_dir: {built_site}\nsite_url: {site_server.url}\nplugins:\n  - explainer\n")
    result = run_pipeline(config, "links")
    assert result.returncode == 0, result.stderr
    assert "all lead somewhere" in result.stdout and "https://pyodide.org/  (index.html:" in result.stdout
    broken = tmp_path / "broken"
    write(broken, "index.html", '<img src="nowhere.svg" alt="">')
    config.write_text(f"site_name: x\nsite_dir: {broken}\nplugins:\n  - explainer\n")
    result = run_pipeline(config, "links")
    assert result.returncode == 1
    assert 'index.html:4: <img src="nowhere.svg">: no file nowhere.svg in the site' in result.stdout
    assert result.stderr.strip() == "explainer: 1 broken links in broken/ (listed above)"
