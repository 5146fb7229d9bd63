"""The `explainer` MkDocs plugin in real builds: its defaults, CDN and self-host modes, and a misconfigured site."""

import dataclasses
import json

from build_scripts.mkdocs_plugin.config import ExplainerConfig
from build_scripts.pipeline.config import PipelineConfig
from build_scripts.pyodide_runtime import (NPM_PYODIDE_DIR, PYODIDE_CDN_URL, PYODIDE_VERSION, boot_file_integrity,
                                          sri_for_file)
from support import copy_project_site_sources, run_mkdocs_build

OUR_SETTING = "  - explainer:\n      self_host: true\n      offline: true\n"


def with_plugin_setting(tmp_path, setting: str):
    config = copy_project_site_sources(tmp_path)
    text = config.read_text()
    assert OUR_SETTING in text, "mkdocs.yml's explainer plugin setting changed; update this test"
    config.write_text(text.replace(OUR_SETTING, setting))
    return config


def test_the_options_and_their_defaults_are_the_pipelines():
    config = ExplainerConfig()
    config.load_dict({})
    failed, _ = config.validate()
    assert not failed
    expected = {"enabled": True, "self_host": True, "cache_dir": "build/cache/figures", "workers": 0, "offline": False,
                "csp": True}
    assert dict(config) == expected
    assert dataclasses.asdict(PipelineConfig()) == expected  # what Zensical builds read from mkdocs.yml


def built_with_plugin_setting(tmp_path, setting: str):
    """The project's site built with `setting` in place of ours: (the site folder, its runtime.json)."""
    site = tmp_path / "site"
    result = run_mkdocs_build(with_plugin_setting(tmp_path, setting), site)
    assert result.returncode == 0, result.stderr
    return site, json.loads((site / "assets/explainer/runtime.json").read_text())


def test_by_default_the_site_holds_the_runtime_and_asks_no_other_origin(tmp_path):
    site, manifest = built_with_plugin_setting(tmp_path, "  - explainer\n")
    assert manifest["pyodide"]["indexURL"] == f"../pyodide/{PYODIDE_VERSION}/"
    assert (site / f"assets/pyodide/{PYODIDE_VERSION}/pyodide.asm.wasm").is_file()
    assert "cdn.jsdelivr.net" not in json.dumps(manifest)


def test_without_self_host_the_runtime_comes_from_the_official_cdn_and_the_site_holds_no_copy(tmp_path):
    site, manifest = built_with_plugin_setting(tmp_path, "  - explainer:\n      self_host: false\n")
    assert manifest["pyodide"] == {"version": PYODIDE_VERSION, "indexURL": PYODIDE_CDN_URL,
                                   "files": boot_file_integrity(NPM_PYODIDE_DIR)}  # the release's bytes, checked
    assert PYODIDE_CDN_URL == f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
    assert not (site / "assets/pyodide").exists()
    wheel = site / "assets/explainer" / manifest["wheel"]["url"]
    assert wheel.is_file() and manifest["wheel"]["integrity"] == sri_for_file(wheel)
    page = (site / "lessons/break-the-model/index.html").read_text()
    for script in ("render.js", "protocol.js", "runtime.js", "page.js", "sandbox.js"):
        assert f"assets/explainer/{script}" in page


def test_self_host_copies_the_runtime_and_points_the_manifest_at_it(built_site):
    manifest = json.loads((built_site / "assets/explainer/runtime.json").read_text())
    assert manifest["pyodide"]["indexURL"] == f"../pyodide/{PYODIDE_VERSION}/"
    runtime = built_site / "assets/explainer" / manifest["pyodide"]["indexURL"]
    for name in ("pyodide.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"):
        assert (runtime / name).is_file(), name
    assert any(runtime.glob("numpy-2.0.2-*.whl"))


def test_disabled_the_plugin_ships_no_runtime_but_still_checks_the_blocks(tmp_path):
    config = with_plugin_setting(tmp_path, "  - explainer:\n      enabled: false\n")
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    explainer = tmp_path / "site/assets/explainer"
    assert not (explainer / "runtime.json").exists() and not (explainer / "wheels").exists()
    assert not (tmp_path / "site/assets/pyodide").exists()
    assert (explainer / "quiz.js").is_file(), "the pages list the page code: it is there, runtime or not"
    assert any((tmp_path / "site/assets/figures").glob("*.svg")), "the static figures are there"
    (tmp_path / "docs/sandboxes.md").write_text("# x\n\n/// sandbox | ablation_lab\ndepth: 0\n///\n")
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode != 0 and "docs/sandboxes.md:4: sandbox 'ablation_lab': depth:" in result.stderr


def test_without_the_markdown_extension_the_build_says_what_to_add(tmp_path):
    config = with_plugin_setting(tmp_path, OUR_SETTING)
    config.write_text(config.read_text().replace("  - build_scripts.markdown.sandbox\n", ""))
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode != 0
    assert "add '- build_scripts.markdown.sandbox' to markdown_extensions" in result.stderr
