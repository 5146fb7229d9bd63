r"""Math typeset at build time (build_scripts/markdown/math.py): `\( … \)` and `\[ … \]` become KaTeX's HTML in the
page wherever the lessons write them, a formula KaTeX rejects stops the build with file:line, and the built site
carries KaTeX's CSS and fonts but none of its JavaScript."""

import re
import textwrap

import markdown
import pytest

from build_scripts.markdown import math
from support import copy_project_site_sources, markdown_error, run_mkdocs_build

EXTENSIONS = ["build_scripts.markdown.quiz", "build_scripts.markdown.figure", "build_scripts.markdown.sandbox",
              "build_scripts.markdown.math", "admonition", "tables", "pymdownx.superfences",
              "pymdownx.blocks.details"]
RE_TEX_SOURCE = re.compile(r'<annotation encoding="application/x-tex">(.*?)</annotation>', re.S)


def convert(text: str) -> str:
    return markdown.markdown(textwrap.dedent(text), extensions=EXTENSIONS)


def typeset(html: str) -> list[str]:
    """The TeX of every formula KaTeX typeset in `html`, in order (KaTeX keeps it in the MathML's annotation)."""
    return [tex.strip() for tex in RE_TEX_SOURCE.findall(html)]


def delimiters_left(html: str) -> bool:
    """Whether `\\(` or `\\[` is left in the HTML outside code and outside KaTeX's record of the TeX."""
    text = re.sub(r"<(code|pre|annotation)\b.*?</\1>", "", html, flags=re.S)
    return "\\(" in text or "\\[" in text


# ---- what a page gets -----------------------------------------------------------------------------------------------


def test_inline_and_display_math_become_katex_html_in_the_wrappers_the_stylesheet_targets():
    html = convert(r"""
        A residual block computes \(y = x + F(x)\) at every layer:

        \[
        \|h + F(h)\| \approx (1 + \alpha)\,\|h\|
        \]

        and so on.
        """)
    assert typeset(html) == [r"y = x + F(x)", r"\|h + F(h)\| \approx (1 + \alpha)\,\|h\|"]
    assert '<p>A residual block computes <span class="arithmatex"><span><span class="katex">' in html
    assert re.search(r'^<div class="arithmatex"><span><span class="katex-display"><span class="katex">', html, re.M)
    assert 'display="block"' in html  # the MathML screen readers read says display too
    assert not delimiters_left(html)


def test_math_in_admonitions_tables_lists_and_details_is_typeset():
    html = convert(r"""
        !!! note "Recollect"
            \[
            P = u u^{\top}
            \]

            with \(\|u\| = 1\).

        | quantity | value |
        |---|---|
        | \(\operatorname{rms}(h)\) | \(\sqrt{d}\) |

        - a list item with \(x_1\)

        /// details | Why?
        Because \(J v = 0\).
        ///
        """)
    assert typeset(html) == [r"P = u u^{\top}", r"\|u\| = 1", r"\operatorname{rms}(h)", r"\sqrt{d}", "x_1", "J v = 0"]
    assert re.search(r'<div class="admonition note">.*<div class="arithmatex">', html, re.S)
    assert re.search(r'<td><span class="arithmatex">.*</td>', html)
    assert "<details>" in html and not delimiters_left(html)


def test_code_keeps_its_backslashes_and_an_escaped_backslash_is_not_math():
    html = convert(r"""
        Inline `\(not math\)` and \\(not math either\\).

        ```
        \[ still code \]
        ```
        """)
    assert typeset(html) == []
    assert r"<code>\(not math\)</code>" in html and r"\(not math either\)" in html and r"\[ still code \]" in html


def test_a_display_formula_inside_a_paragraph_stays_inline_html():
    # Text right before and after: one paragraph, so the formula must not be a <div> (invalid inside <p>).
    html = convert("where\n\\[ q = 1 \\]\nholds.\n")
    assert typeset(html) == ["q = 1"]
    pattern = r'<p>where\n<span class="arithmatex"><span><span class="katex-display">.*</span>\nholds.</p>'
    assert re.fullmatch(pattern, html, re.S)


def test_quiz_questions_answers_and_feedback_carry_typeset_math():
    html = convert(r"""
        /// quiz | What does \(P = u u^{\top}\) do to \(u\)?
        answers:
          - text: It keeps \(u\) as it is.
            correct: true
            feedback: |
              Right:

              \[
              P u = u (u^{\top} u) = u
              \]
          - text: It sends \(u\) to zero.
            feedback: That is \(I - P\).
        ///
        """)
    # The question, the two answers as choices, then the key: each answer again with its feedback.
    assert typeset(html) == [r"P = u u^{\top}", "u", "u", "u", "u", r"P u = u (u^{\top} u) = u", "u", "I - P"]
    assert '<div class="quiz__feedback" id="quiz-1-feedback-1"><p>Right:</p>\n<div class="arithmatex">' in html


def test_figure_and_sandbox_captions_carry_typeset_math_and_stay_escaped_text():
    html = convert(r"""
        /// figure | magnitude_vs_direction
        caption: Same direction, lengths \(\|v\|\) & \(3\|v\|\) <b>apart</b>.
        ///

        /// sandbox | projection_shadow
        caption: The shadow of \(v\) on \(u\).
        ///
        """)
    assert typeset(html) == [r"\|v\|", r"3\|v\|", "v", "u"]
    assert "&amp; " in html and "&lt;b&gt;apart&lt;/b&gt;" in html
    assert re.search(r'<figcaption>The shadow of <span class="arithmatex"><span><span class="katex">', html)


# ---- mistakes stop the build with file:line -------------------------------------------------------------------------


@pytest.mark.parametrize("text, line, message", [
    ("Intro.\n\nThen \\(\\fracc{1}{2}\\).\n", 3, r"math \(\fracc{1}{2}\): Undefined control sequence: \fracc"),
    # The line of the mistake inside a display formula, not the line of its \[.
    ("Intro.\n\n\\[\na = 1 \\\\\nb = \\sqrtt{2}\n\\]\n", 5, r"Undefined control sequence: \sqrtt"),
    ("Intro.\n\nOpen \\(x + 1\n\nnever closed.\n", 3, "math: '\\(' is never closed (add '\\)' in the same paragraph)"),
    ("Text \\(\\frac{1}{\\)\n", 1, "Unexpected end of input in a macro argument, expected '}'"),
    ("!!! note\n    Indented \\(\\bad\\) too.\n", 2, r"Undefined control sequence: \bad"),
    ("Accented \\(é\\) letter.\n", 1, "LaTeX-incompatible input"),
])
def test_a_formula_katex_rejects_is_an_error_naming_file_and_line(text, line, message):
    error = markdown_error(convert, text, path="docs/lessons/page.md")
    assert str(error).startswith(f"docs/lessons/page.md:{line}: math")
    assert message in str(error)


def test_a_bad_formula_in_a_quiz_answer_or_a_caption_names_the_line_of_its_key():
    quiz = """/// quiz | Which?
answers:
  - text: Yes.
    correct: true
    feedback: Because.
  - text: No.
    feedback: Because \\(\\nope\\).
///
"""
    error = markdown_error(convert, "Intro.\n\n" + quiz, path="docs/q.md")
    assert str(error) == (r"docs/q.md:9: quiz 'Which?': answer 2: feedback: math \(\nope\): "
                          r"Undefined control sequence: \nope")
    caption = "/// figure | magnitude_vs_direction\nalt: Two arrows.\ncaption: Lengths \\(\\|v\\|\\right)\\)\n///\n"
    error = markdown_error(convert, caption, path="docs/f.md")
    assert str(error).startswith("docs/f.md:3: figure 'magnitude_vs_direction': math \\(\\|v\\|\\right)\\): ")


def test_a_bad_formula_fails_the_real_strict_build_with_the_authors_line(tmp_path):
    config = copy_project_site_sources(tmp_path)
    lesson = tmp_path / "docs/lessons/rmsnorm-calculus.md"
    lines = lesson.read_text().split("\n")
    display = next(index for index, text in enumerate(lines) if text.strip() == "\\[")  # a display formula's opener
    lines[display + 1] += r" + \undefinedmacro"
    lesson.write_text("\n".join(lines))
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode != 0
    assert (f"docs/lessons/rmsnorm-calculus.md:{display + 2}: math " in result.stderr
            and r"Undefined control sequence: \undefinedmacro" in result.stderr), result.stderr[-2000:]


# ---- KaTeX: one Node process, results cached by formula --------------------------------------------------------------


def test_one_node_process_typesets_every_formula_and_the_cache_then_needs_none(tmp_path, monkeypatch):
    server = math.KatexServer(tmp_path / "cache")
    starts = []
    start = server._start
    monkeypatch.setattr(server, "_start", lambda: (starts.append(1), start())[1])
    formulas = [(f"x_{{{n}}} + \\frac{{{n}}}{{2}}", n % 2 == 0) for n in range(30)]
    first = [server.render(tex, display) for tex, display in formulas]
    server.close()
    assert len(starts) == 1 and len(list((tmp_path / "cache").glob("*.html"))) == len(formulas)
    assert all('class="katex"' in html for html in first) and all("katex-display" in first[n] for n in (0, 2))

    # A second build: every formula comes from the cache files, and no Node process is started.
    cached = math.KatexServer(tmp_path / "cache")
    monkeypatch.setattr(cached, "_start", lambda: pytest.fail("the cache should have answered"))
    assert [cached.render(tex, display) for tex, display in formulas] == first


def test_the_cache_key_covers_display_mode_katex_version_and_options(tmp_path, monkeypatch):
    server = math.KatexServer(tmp_path)
    inline, display = server.render("a^2", False), server.render("a^2", True)
    assert inline != display and len(list(tmp_path.glob("*.html"))) == 2
    monkeypatch.setattr(math, "KATEX_OPTIONS", {**math.KATEX_OPTIONS, "output": "html"})
    other_options = math.KatexServer(tmp_path)
    assert "katex-mathml" not in other_options.render("a^2", False) and len(list(tmp_path.glob("*.html"))) == 3
    other_options.close()
    server.close()


def test_an_error_is_not_cached_and_the_server_keeps_serving(tmp_path):
    server = math.KatexServer(tmp_path)
    with pytest.raises(math.KatexError, match=r"Undefined control sequence: \\nope"):
        server.render(r"\nope", False)
    assert 'class="katex"' in server.render("b", False)
    assert len(list(tmp_path.glob("*.html"))) == 1
    server.close()


def test_without_node_the_build_says_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(math.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="Node.js is needed to typeset formulas at build time"):
        math.KatexServer(tmp_path).render("x", False)


# ---- the built site -------------------------------------------------------------------------------------------------


def test_every_formula_of_the_built_site_is_typeset_and_no_page_loads_katex_javascript(built_site):
    pages = {page.relative_to(built_site).as_posix(): page.read_text() for page in built_site.rglob("*.html")}
    typeset_count = {name: len(typeset(html)) for name, html in pages.items()}
    assert typeset_count["lessons/rmsnorm-calculus/index.html"] > 100, typeset_count
    for name, html in pages.items():
        assert not re.search(r"<script[^>]*(katex|auto-render|math\.js)", html), name
        assert not delimiters_left(html), f"{name} has math left untypeset"
        assert "katex-error" not in html, name
    assert not list(built_site.rglob("katex*.js")) and not list(built_site.rglob("auto-render*"))
    assert (built_site / "assets/vendor/katex/katex.min.css").is_file()
    assert any((built_site / "assets/vendor/katex/fonts").glob("*.woff2"))
    lesson = pages["lessons/rmsnorm-calculus/index.html"]
    assert "assets/vendor/katex/katex.min.css" in lesson
    # Pages with math preload the fonts their shown formulas use (build_scripts/pipeline/katex_fonts.py); pages
    # without math load no KaTeX font.
    def preloaded(html: str) -> set[str]:
        return set(re.findall(r'<link rel="preload" href="[^"]*fonts/(KaTeX_[\w-]+)\.woff2"', html))

    sizes = {f"KaTeX_Size{n}-Regular" for n in range(1, 5)}
    assert preloaded(lesson) == {"KaTeX_Main-Regular", "KaTeX_Math-Italic"} | sizes
    assert preloaded(pages["lessons/ablation-experiment/index.html"]) == {"KaTeX_Main-Regular", "KaTeX_Math-Italic"}
    assert "KaTeX_" not in pages["index.html"]
