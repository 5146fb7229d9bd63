"""What the pipeline writes for deploying the site (build_scripts/pipeline: csp.py, offline.py), checked in the built
files: one Content-Security-Policy on every page that allows each inline script by its hash and nothing inline else;
the service worker's lists (every file there, checked by its integrity); the footer note; the GitHub Pages workflow.
The browser side of the same is tests/browser/test_security.py, test_offline.py and test_addresses.py."""

import base64
import hashlib
import json
import os
import re
from pathlib import Path

import material
import pytest
import yaml

from build_scripts.pipeline.config import PipelineConfig, SiteConfigError
from build_scripts.pipeline.csp import InlineHandlerError, inline_script_hashes
from build_scripts.pipeline.pages import read_page, site_pages
from support import PROJECT_ROOT, copy_project_site_sources, run_mkdocs_build, run_pipeline

RE_META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">')
RE_OFFLINE = re.compile(r'self\.__EXPLAINER_OFFLINE = (\{.*?\});\n')


def policy_of(html: str) -> dict[str, list[str]]:
    [policy] = RE_META.findall(html)
    return {name: values for name, *values in (part.split() for part in policy.split("; "))}


def sri(path: Path) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(path.read_bytes()).digest()).decode()


# ---- Content-Security-Policy ----------------------------------------------------------------------------------------


def test_every_page_carries_the_same_policy_first_in_its_head(built_site):
    pages = site_pages(built_site)
    policies = set()
    for path in pages:
        html = path.read_text()
        assert len(RE_META.findall(html)) == 1, path
        head = html[html.index("<head>"): html.index("</head>")]
        assert re.match(r"<head>\s*<meta charset=\"utf-8\">\s*<meta http-equiv=\"Content-Security-Policy\"", head), (
            f"{path}: the policy must come before anything it governs")
        policies.add(RE_META.search(html)[1])
    assert len(policies) == 1, "one policy for the whole site (instant navigation keeps the first page's)"


def test_the_policy_allows_each_inline_script_by_its_hash_and_nothing_inline_or_evaluated(built_site):
    pages = [read_page(built_site, path) for path in site_pages(built_site)]
    policy = policy_of((built_site / "index.html").read_text())
    scripts = policy["script-src"]
    assert scripts[0] == "'self'" and all(value.startswith("'sha256-") for value in scripts[1:])
    inline = {text for page in pages for _, text in page.inline_scripts}
    assert len(inline) >= 3, "Material writes inline scripts into every page"
    for text in inline:
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in scripts, text[:80]
    assert len(scripts) == len(inline) + 1, "no hash for a script the site does not have"
    values = [value for directive in policy.values() for value in directive]
    assert "'unsafe-inline'" not in scripts
    assert not {"'unsafe-eval'", "'wasm-unsafe-eval'", "*"} & set(values), "no eval, no WebAssembly, no wildcard"
    assert not [value for value in values if value.startswith(("http:", "https:", "blob:"))], "no other origin"
    assert policy["style-src"] == ["'self'", "'unsafe-inline'"]  # styles only: KaTeX and figures use style attributes
    assert policy["connect-src"] == policy["worker-src"] == policy["default-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]


def test_the_csp_command_prints_the_pages_policy_and_the_workers(tmp_path, built_site, site_server):
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: x\nsite_dir: {built_site}\nsite_url: {site_server.url}\nplugins:\n  - explainer\n")
    result = run_pipeline(config, "csp")
    assert result.returncode == 0, result.stderr
    headers = [line.removeprefix("Content-Security-Policy: ") for line in result.stdout.splitlines()
               if line.startswith("Content-Security-Policy: ")]
    assert headers[0] == RE_META.search((built_site / "index.html").read_text())[1]
    assert headers[1] == "default-src 'self'; script-src 'self' 'wasm-unsafe-eval' blob:; connect-src 'self' blob:"


def test_an_inline_event_handler_is_an_error_naming_its_page_and_line(tmp_path):
    page = tmp_path / "index.html"
    page.write_text('<!doctype html>\n<html><head><meta charset="utf-8"></head>\n<body>\n'
                    '<button onclick="go()">Go</button>\n</body></html>\n')
    with pytest.raises(InlineHandlerError, match=r"^index\.html:4: <button onclick=…> is an inline event handler"):
        inline_script_hashes([read_page(tmp_path, page)])


# ---- offline reading -------------------------------------------------------------------------------------------------


def offline_lists(site: Path) -> dict:
    return json.loads(RE_OFFLINE.match((site / "sw.js").read_text())[1])


def test_the_service_worker_lists_the_shell_and_the_runtime_each_with_its_integrity(built_site):
    lists = offline_lists(built_site)
    assert re.fullmatch(r"[0-9a-f]{16}", lists["version"])
    for entry in lists["shell"] + lists["runtime"]:
        assert entry["integrity"] == sri(built_site / entry["url"]), entry["url"]
    runtime = {entry["url"]: entry["revision"] for entry in lists["runtime"]}
    manifest = json.loads((built_site / "assets/explainer/runtime.json").read_text())
    # What a boot loads: Pyodide's loader from its folder, the standard library and lock from the manifest (the
    # precompiled ones) or else from that folder, numpy's wheel and ours from the manifest.
    in_site = {entry: os.path.normpath(f"assets/explainer/{manifest[entry]['url']}")
               for entry in ("stdlib", "lock", "numpy", "wheel") if manifest[entry]}
    pyodide = "assets/pyodide/0.27.7/"
    versioned = [pyodide + name for name in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm")]
    versioned.append(in_site.get("stdlib", pyodide + "python_stdlib.zip"))
    versioned.append(in_site.get("lock", pyodide + "pyodide-lock.json"))
    versioned += [in_site["numpy"], in_site["wheel"]]
    assert re.search(r"/numpy-2\.0\.2-.*\.whl$", in_site["numpy"])
    assert all(runtime[url] is None for url in versioned), "addresses that carry their version need no revision"
    for name in ("runtime.json", "worker.js", "editor.js"):
        assert runtime[f"assets/explainer/{name}"], name
    assert len(runtime) == len(versioned) + 3
    shell = {entry["url"] for entry in lists["shell"]}
    loaded = {ref for path in site_pages(built_site) for ref in re.findall(
        r'<(?:script src|link rel="stylesheet" href)="(?:\./|\.\./|/)*([^"]+)"', path.read_text()) if "://" not in ref}
    assert len(loaded) > 15 and loaded <= shell, loaded - shell
    assert {"search/search_index.json", "sitemap.xml", "assets/explainer/boot.js"} <= shell
    assert any(url.endswith(".woff2") for url in shell) and not any(url.endswith(".map") for url in shell)
    assert not shell & set(runtime)


def test_every_page_but_the_404_page_points_at_the_service_worker(built_site):
    for path in site_pages(built_site):
        marks = re.findall(r'<meta name="explainer-offline" content="([^"]+)">', path.read_text())
        if path.name == "404.html" and path.parent == built_site:
            assert marks == []
            continue
        assert len(marks) == 1 and (path.parent / marks[0]).resolve() == (built_site / "sw.js").resolve(), path


def test_offline_reading_needs_the_runtime_in_the_site():
    with pytest.raises(SiteConfigError, match=r"offline: true needs self_host: true"):
        PipelineConfig(offline=True, self_host=False)
    assert PipelineConfig(offline=True).offline  # self_host is the default


def test_the_site_without_csp_or_offline_has_neither(tmp_path):
    config = copy_project_site_sources(tmp_path)
    text = config.read_text()
    config.write_text(text.replace("      offline: true\n", "      csp: false\n"))
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "site/lessons/break-the-model/index.html").read_text()
    assert "Content-Security-Policy" not in page and "explainer-offline\"" not in page.split("<body")[0]
    assert not (tmp_path / "site/sw.js").exists()


FOOTER = "partials/footer.html"
NOTE = ('      <p class="explainer-offline" data-explainer-offline hidden>Available offline: the pages you have read '
        'here, with their live figures and code, also work without a network.</p>\n')


def test_the_footer_is_materials_own_with_the_offline_note_after_the_copyright(built_site):
    ours = re.sub(r"\A\{#-.*?-#\}\n", "", (PROJECT_ROOT / "overrides" / FOOTER).read_text(), flags=re.S)
    theirs = re.sub(r"\A\{#-.*?-#\}\n", "", (Path(material.__file__).parent / "templates" / FOOTER).read_text(),
                    flags=re.S)
    assert ours.count(NOTE) == 1 and ours.replace(NOTE, "") == theirs, (
        "Material's footer changed since it was copied into overrides/: copy it again and re-add the note")
    for path in site_pages(built_site):
        assert path.read_text().count("data-explainer-offline hidden>Available offline:") == 1, path


# ---- GitHub Pages ---------------------------------------------------------------------------------------------------


def test_the_pages_workflow_builds_with_make_at_the_pages_address_and_publishes_the_site():
    workflow = yaml.safe_load((PROJECT_ROOT / ".github/workflows/pages.yml").read_text())
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    steps = workflow["jobs"]["build"]["steps"]
    uses = [step.get("uses", "").split("@")[0] for step in steps]
    runs = [step["run"] for step in steps if "run" in step]
    assert runs == ['make build SITE_URL="${{ steps.pages.outputs.base_url }}/"']
    assert uses.index("actions/configure-pages") < uses.index("") < uses.index("actions/upload-pages-artifact")
    assert next(step for step in steps if step.get("id") == "pages")["uses"].startswith("actions/configure-pages@")
    assert next(step for step in steps if "upload-pages-artifact" in step.get("uses", ""))["with"]["path"] == "site"
    assert workflow["jobs"]["deploy"]["steps"][0]["uses"].startswith("actions/deploy-pages@")
    assert workflow["jobs"]["deploy"]["needs"] == "build"
    plugin = next(entry["explainer"] for entry in yaml.load((PROJECT_ROOT / "mkdocs.yml").read_text(),
                                                            Loader=_AnyTag)["plugins"] if isinstance(entry, dict))
    assert plugin["self_host"] is True, "the site the workflow publishes serves its own runtime"


class _AnyTag(yaml.SafeLoader):
    """mkdocs.yml's !ENV and !!python/name tags read as nothing."""


_AnyTag.add_multi_constructor("", lambda loader, suffix, node: None)
