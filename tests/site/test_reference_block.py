"""The `reference` block and the contributors' page made of it: every public function and class of explainer.figure
(every mark among them) is listed with its parameters and docstring, read from the code, so the page cannot drift;
one without a docstring stops the build with the block's line."""

import html
import inspect
import re

import markdown
import pytest

import explainer.figure
import explainer.sandbox
from build_scripts.markdown._page import PageContext, on_page
from build_scripts.pipeline.scan import scan_page
from support import markdown_error

EXTENSIONS = ["build_scripts.markdown.reference", "pymdownx.superfences", "pymdownx.highlight", "toc"]
PAGE = "contributing/reference/index.html"


def convert(text: str) -> str:
    return markdown.Markdown(extensions=EXTENSIONS).convert(text)


def defined_here(module) -> list[str]:
    """The public functions and classes `module` itself defines, found here independently of the block's code."""
    return [name for name, value in vars(module).items() if not name.startswith("_")
            and (inspect.isfunction(value) or inspect.isclass(value)) and value.__module__ == module.__name__]


def sections(page_html: str) -> dict[str, str]:
    """Each <h3> of a page by its code name, with the text (tags removed) up to the next heading."""
    parts = re.split(r"<h3[^>]*><code>([^<]+)</code>.*?</h3>", page_html)
    stop = re.compile(r"<h[12][ >]")
    return {name: html.unescape(re.sub(r"<[^>]+>", "", stop.split(body)[0]))
            for name, body in zip(parts[1::2], parts[2::2])}


@pytest.mark.parametrize("module", [explainer.figure, explainer.sandbox], ids=lambda m: m.__name__)
def test_the_contributors_page_lists_every_public_name_with_its_parameters_and_docstring(built_site, module):
    listed = sections((built_site / PAGE).read_text())
    for name in defined_here(module):
        assert name in listed, f"{module.__name__}.{name} is missing from the reference page"
        shown, value = listed[name], getattr(module, name)
        for parameter in inspect.signature(value).parameters:
            assert re.search(rf"\b{parameter}\b", shown), f"{name}: parameter {parameter} not shown"
        summary = inspect.getdoc(value).split("\n")[0].replace("`", "")  # `code` is shown as code
        assert summary in " ".join(shown.split()), f"{name}: docstring not shown"


def test_every_mark_the_renderers_draw_has_its_function_on_the_page(built_site):
    listed = sections((built_site / PAGE).read_text())
    assert set(explainer.figure.MARK_TYPES) <= set(listed)
    for role in explainer.figure.COLOR_ROLES:  # the colour roles, as the code has them
        assert f"'{role}'" in (built_site / PAGE).read_text().replace("&#39;", "'")


def sparkline(values, *, color: str = "primary"):
    return {"type": "line", "values": values, "color": color}


def test_a_function_added_to_the_module_is_listed_and_needs_a_docstring(monkeypatch):
    sparkline.__module__ = "explainer.figure"  # as if written in explainer/figure.py
    monkeypatch.setattr(explainer.figure, "sparkline", sparkline, raising=False)
    error = markdown_error(convert, "Intro.\n\n/// reference | explainer.figure\n///\n")
    assert str(error) == ("docs/page.md:3: reference 'explainer.figure': explainer.figure.sparkline has no docstring: "
                          "every public function and class of a referenced module needs one (the reference is made "
                          "of them)")
    monkeypatch.setattr(sparkline, "__doc__", "A small line without axes.")
    listed = sections(convert("/// reference | explainer.figure\n///\n"))
    assert "sparkline(values, *, color: str = 'primary')" in listed["sparkline"]
    assert "A small line without axes." in listed["sparkline"]


def test_a_mark_whose_docstring_is_removed_stops_the_page_check_naming_the_line(monkeypatch):
    monkeypatch.setattr(explainer.figure.line, "__doc__", None)
    with on_page(PageContext("docs/contributing/reference.md", line_offset=2)), pytest.raises(ValueError) as caught:
        scan_page("# Reference\n\n/// reference | explainer.figure\n///\n")
    assert str(caught.value).startswith("docs/contributing/reference.md:5: reference 'explainer.figure': "
                                        "explainer.figure.line has no docstring")


def test_first_puts_names_first_and_keeps_every_other_in_source_order():
    listed = list(sections(convert("/// reference | explainer.figure\nfirst: [status, line]\n///\n")))
    assert listed[:2] == ["status", "line"]
    rest = [name for name in defined_here(explainer.figure) if name not in ("status", "line")]
    assert listed[2:] == rest


def test_a_long_signature_is_written_one_parameter_per_line_and_stays_valid_python():
    shown = sections(convert("/// reference | explainer.figure\n///\n"))["heatmap"]
    signature = shown[: shown.index("-> dict") + len("-> dict")].strip()
    assert signature.startswith("heatmap(\n    x,\n    y,\n    values,\n    *,\n")
    compile(f"def {signature}: pass", "<signature>", "exec")  # keyword-only marker and defaults where Python has them


@pytest.mark.parametrize(("body", "line", "message"), [
    ("/// reference | explainer.figur\n///", 3,
     "reference 'explainer.figur': no such module (did you mean 'explainer.figure'?)"),
    ("/// reference | json\n///", 3,
     "reference 'json': only modules of explainer can be referenced (the build imports them)"),
    ("/// reference | explainer.figure\nfirts: [line]\n///", 4,
     "reference 'explainer.figure': unknown key 'firts' (did you mean 'first'?); options: first, constants"),
    ("/// reference | explainer.figure\nfirst: [lien]\n///", 4,
     "reference 'explainer.figure': first: no public 'lien' in explainer.figure (did you mean 'line'?)"),
    ("/// reference | explainer.figure\nfirst: line\n///", 4,
     "reference 'explainer.figure': first must be a list of names (got 'line')"),
    ("/// reference | explainer.figure\nfirst: [line, line]\n///", 4,
     "reference 'explainer.figure': first: 'line' is named twice"),
    ("/// reference | explainer.figure\nconstants: [COLOUR_ROLES]\n///", 4,
     "reference 'explainer.figure': constants: no public 'COLOUR_ROLES' in explainer.figure (did you mean "
     "'COLOR_ROLES'?)"),
])
def test_a_mistake_in_the_block_is_one_line_naming_its_line(body, line, message):
    assert str(markdown_error(convert, f"# Title\n\n{body}\n")) == f"docs/page.md:{line}: {message}"
