"""The `/// sandbox | name` block: Markdown in, the page's <figure> out, and every authoring mistake named by file:line."""

import json
import re
import textwrap
from html.parser import HTMLParser

import markdown
import pytest

from build_scripts.markdown._blocks import MarkdownSourceError
from build_scripts.markdown._page import PageContext, on_page
from support import copy_project_site_sources, markdown_error, run_mkdocs_build

EXTENSIONS = ["build_scripts.markdown.sandbox", "admonition", "pymdownx.superfences", "pymdownx.blocks.details"]


def convert(text: str) -> str:
    return markdown.markdown(textwrap.dedent(text), extensions=EXTENSIONS)


def error_of(text: str) -> MarkdownSourceError:
    return markdown_error(convert, text)


class Elements(HTMLParser):
    """Every start tag with its attributes, plus the text of <output>, <figcaption> and the config <script>."""

    def __init__(self, html: str):
        super().__init__()
        self.tags, self.texts, self._open = [], {}, None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._open = tag if tag in ("output", "figcaption", "script", "label") else None

    def handle_data(self, data):
        if self._open:
            self.texts.setdefault(self._open, []).append(data)

    def find(self, tag, **attrs):
        return [a for t, a in self.tags if t == tag and all(a.get(k.rstrip("_")) == v for k, v in attrs.items())]


def config_of(html: str) -> dict:
    return json.loads(Elements(html).find("figure")[0]["data-config"])


# ---- what the page gets -------------------------------------------------------------------------------------------


def test_a_block_becomes_a_figure_with_native_labelled_controls_and_its_config():
    html = convert(
        """
        # Title

        /// sandbox | projection_shadow
        u_angle: 30
        caption: Drag v.
        ///
        """
    )
    page = Elements(html)
    [figure] = page.find("figure")
    assert figure["class"] == "sandbox" and figure["data-sandbox"] == "projection_shadow"
    assert figure["data-state"] == "static" and figure["id"] == "sandbox-projection_shadow-1"
    [u_angle] = page.find("input", name="u_angle")
    assert (u_angle["type"], u_angle["min"], u_angle["max"], u_angle["step"], u_angle["value"]) == (
        "range", "0", "180", "0.01", "30")
    # Each control has a label pointing at it, and the value is shown with its unit.
    for control in page.find("input"):
        assert page.find("label", for_=control["id"]), f"no label for {control['id']}"
    assert "30.00°" in page.texts["output"] and "5.0" in page.texts["output"]
    assert page.texts["figcaption"] == ["Drag v."]
    config = config_of(html)
    assert config["sandbox"] == "projection_shadow" and config["height"] == 360
    assert config["params"] == {"u_angle": 30.0, "v_angle": 0.0, "v_length": 5.0}
    assert [c["name"] for c in config["controls"]] == ["u_angle", "v_angle", "v_length"]
    assert page.find("p", role="status") and page.find("form", class_="sandbox__controls")


def test_toggles_and_ints_become_checkboxes_and_sliders_fixed_is_disabled_hidden_is_absent():
    html = convert(
        """
        /// sandbox | ablation_lab
        residual: false
        depth: 3
        fixed: depth
        hidden: [causal_mask]
        height: 420
        ///
        """
    )
    page = Elements(html)
    assert "checked" not in page.find("input", name="residual")[0]
    assert "checked" in page.find("input", name="positional")[0]
    [depth] = page.find("input", name="depth")
    assert depth["value"] == "3" and "disabled" in depth
    assert not page.find("input", name="causal_mask")
    config = config_of(html)
    assert config["params"]["causal_mask"] is True and config["params"]["residual"] is False
    assert config["height"] == 420 and "aspect-ratio: 640 / 420" in html


def test_the_static_view_says_in_words_what_the_worker_says_for_the_same_values():
    # The built page's alt text and readouts are the view explainer.sandbox returns to the worker: one source.
    from explainer.sandbox import get_sandbox

    html = convert(
        """
        /// sandbox | rmsnorm_sphere
        eps: 0.5
        ///
        """
    )
    view = get_sandbox("rmsnorm_sphere").view(config_of(html)["params"])
    [image] = Elements(html).find("img")[:1]
    assert image["alt"] == view["label"] and "ε AT WORK" in view["label"]
    assert f'<div class="sandbox__readouts">{view["readouts_html"]}</div>' in html
    controls = {c["name"]: c for c in config_of(html)["controls"]}
    assert controls["eps"]["format"] == {"decimals": 2, "suffix": ""}, "the page formats with the rule Python used"
    assert controls["h_angle"]["format"] == {"decimals": 1, "suffix": "°"}


def test_the_config_carries_the_view_the_worker_renders_for_the_starting_values():
    # sandbox.js draws it live as soon as the runtime is up; the worker's reply for the same values is what it replaces.
    from explainer.sandbox import render_json

    html = convert(
        """
        /// sandbox | ablation_lab
        depth: 5
        residual: false
        fixed: depth
        hidden: [causal_mask]
        ///
        """
    )
    config = config_of(html)
    reply = json.loads(render_json("ablation_lab", json.dumps(config["params"])))
    assert reply["ok"] and config["start"] == reply["value"]
    assert config["start"]["figure"]["marks"], "a whole figure, not a placeholder"


def test_a_starting_view_that_is_not_json_is_an_error_naming_the_block():
    # A value the figure's builders did not make finite would fail the worker's reply (render_json) and the page's
    # JSON both: the build names the block instead.
    from build_scripts.figures.jobs import FigureError
    from explainer import figure as fig
    from explainer import sandbox as module

    @module.sandbox(module.FloatParam("x", "x", 0, 1, step=0.5, default=0), title="Not a number")
    def not_a_number_for_test(x):
        """A point with no x."""
        figure = fig.figure(axes=fig.axes(xlim=(0, 1), ylim=(0, 1)), marks=[fig.point(0.5, 0.5)])
        figure["marks"][0]["x"] = float("nan")
        return figure

    try:
        with on_page(PageContext("docs/page.md")), pytest.raises(FigureError) as caught:
            convert("text\n\n/// sandbox | not_a_number_for_test\n///\n")
        assert str(caught.value) == ("figure 'not_a_number_for_test' (sandbox) failed: ValueError: Out of range float "
                                     "values are not JSON compliant: nan (used at docs/page.md:3)")
    finally:
        module._REGISTRY.pop("not_a_number_for_test")


def test_two_blocks_on_a_page_get_distinct_ids():
    html = convert("/// sandbox | projection_shadow\n///\n\n/// sandbox | projection_shadow\n///\n")
    ids = [a["id"] for a in Elements(html).find("figure")]
    assert ids == ["sandbox-projection_shadow-1", "sandbox-projection_shadow-2"]


def test_a_block_nests_inside_a_details_block_and_one_shown_as_code_stays_code():
    html = convert(
        """
        /// details | Try it
        /// sandbox | projection_shadow
        ///
        ///

        ```
        /// sandbox | no_such_sandbox
        ///
        ```
        """
    )
    assert re.search(r"<details>.*<figure class=\"sandbox\"", html, re.S)
    assert "/// sandbox | no_such_sandbox" in html  # inside <code>, untouched


def test_markup_in_a_caption_stays_text():
    html = convert('/// sandbox | projection_shadow\ncaption: "a </figure> <b>tag</b> & \\"quote\\""\n///\n')
    assert config_of(html)["sandbox"] == "projection_shadow"
    assert Elements(html).texts["figcaption"] == ['a </figure> <b>tag</b> & "quote"']
    assert "<b>" not in html


# ---- every authoring mistake stops with file:line ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("\n/// sandbox | projection_shadw\n///\n", 2, "unknown sandbox (did you mean 'projection_shadow'?)"),
        ("/// sandbox\n///\n", 1, "name the sandbox after '|'"),
        ("/// sandbox | projection_shadow\nu_angle: 53\nv_angel: 3\n///\n", 3, "unknown key 'v_angel' (did you mean "
         "'v_angle'?); options: caption, alt, height, fixed, hidden; parameters: u_angle, v_angle, v_length"),
        ("/// sandbox | projection_shadow\n\nu_angle: 500\n///\n", 3, "u_angle: must be between 0 and 180 (got 500)"),
        ("/// sandbox | projection_shadow\nu_angle: steep\n///\n", 2, "u_angle: must be a number (got 'steep')"),
        ("/// sandbox | ablation_lab\ndepth: 2.5\n///\n", 2, "depth: must be a whole number (got 2.5)"),
        ("/// sandbox | ablation_lab\nresidual: 1\n///\n", 2, "residual: must be true or false (got 1)"),
        ("/// sandbox | ablation_lab\nhidden: [dept]\n///\n", 2, "hidden: 'dept' is not a parameter (did you mean"),
        ("/// sandbox | ablation_lab\nheight: 5000\n///\n", 2, "height must be a whole number from 160 to 960"),
        ("/// sandbox | ablation_lab\ncaption: [1, 2]\n///\n", 2, "caption must be non-empty text"),
        ("/// sandbox | ablation_lab\ndepth: 2\ndepth: 3\n///\n", 3, "'depth' is given twice"),
        ("/// sandbox | ablation_lab\ndepth: [2\n///\n", 2, "malformed YAML"),
        ("/// sandbox | ablation_lab\n- depth\n///\n", 2, "the body must be 'name: value' lines"),
        ("text\n\n/// sandbox | ablation_lab\ndepth: 2\n", 3, "block is never closed (add a line '///')"),
        ("/// sandbx | ablation_lab\n///\n", 1, "unknown block 'sandbx' (did you mean 'sandbox'?)"),
    ],
)
def test_a_mistake_is_an_error_naming_file_line_and_what_is_valid(text, line, message):
    error = error_of(text)
    assert str(error).startswith(f"docs/page.md:{line}: "), str(error)
    assert message in str(error)


def test_a_mistake_fails_the_real_strict_build_with_the_authors_line_number(tmp_path):
    config = copy_project_site_sources(tmp_path)
    page = tmp_path / "docs/lessons/break-the-model.md"
    # Front matter, which MkDocs strips before extensions see the page, still counts for the line number.
    page.write_text("---\ntitle: Break\n---\n\n# Break\n\n/// sandbox | ablation_lab\ndepth: 30\n///\n")
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode != 0
    assert "docs/lessons/break-the-model.md:8: sandbox 'ablation_lab': depth: must be between 1 and 24 (got 30)" in (
        result.stderr), result.stderr
    assert "Traceback" not in result.stderr


def test_a_block_after_other_blocks_still_reports_its_own_line():
    # Each extension replaces the blocks it handles before the next one reads the page: line numbers must survive.
    text = "/// sandbox | projection_shadow\ncaption: one\nheight: 300\n///\n\n/// figure | no_such_figure\ncaption: c\n///\n"
    with on_page(PageContext("docs/page.md")), pytest.raises(MarkdownSourceError) as caught:
        markdown.markdown(text, extensions=["build_scripts.markdown.sandbox", "build_scripts.markdown.figure"])
    assert str(caught.value).startswith("docs/page.md:6: figure 'no_such_figure'"), str(caught.value)
