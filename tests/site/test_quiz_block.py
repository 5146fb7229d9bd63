"""The `/// quiz | question` block: Markdown in, the page's <form> out, every authoring mistake named by file:line."""

import re
import textwrap
from collections import Counter
from html.parser import HTMLParser

import markdown
import pytest

from build_scripts.markdown._blocks import MarkdownSourceError
from build_scripts.markdown.math import formula_html
from support import copy_project_site_sources, markdown_error, run_mkdocs_build

EXTENSIONS = ["build_scripts.markdown.quiz", "build_scripts.markdown.math", "pymdownx.superfences",
              "pymdownx.blocks.details"]

QUIZ = """
/// quiz | With positions off, how do "cat chases dog" and "dog chases cat" compare?
answers:
  - text: They give exactly the same pooled vector.
    correct: true
    feedback: Right. Without positions every block treats positions alike.
  - text: They differ a little, because the words moved.
    feedback: Not here. Nothing records where a word sits.
///
"""


def convert(text: str) -> str:
    return markdown.markdown(textwrap.dedent(text), extensions=EXTENSIONS)


def error_of(text: str) -> MarkdownSourceError:
    return markdown_error(convert, text)


class Elements(HTMLParser):
    """Every start tag with its attributes, and the inner HTML of each element with an id or a quiz class."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=False)
        self.tags = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def find(self, tag, **attrs):
        return [a for t, a in self.tags if t == tag and all(a.get(k.rstrip("_")) == v for k, v in attrs.items())]


def inner(html: str, css_class: str) -> list[str]:
    """The inner HTML of every element whose class is exactly `css_class` (none of ours nest in themselves)."""
    return [m.group(2) for m in re.finditer(rf'<(\w+) class="{css_class}"[^>]*>(.*?)</\1>', html, re.S)]


# ---- what the page gets -------------------------------------------------------------------------------------------


def test_a_single_answer_quiz_is_a_form_of_labelled_radio_buttons_with_a_key_to_read_without_javascript():
    html = convert(QUIZ)
    page = Elements(html)
    [form] = page.find("form")
    assert (form["class"], form["id"], form["data-quiz"], form["data-quiz-type"]) == ("quiz", "quiz-1", "1", "single")
    [fieldset] = page.find("fieldset")
    assert fieldset["aria-describedby"] == "quiz-1-hint" and page.find("p", id="quiz-1-hint")
    assert inner(html, "quiz__question") == [
        'With positions off, how do "cat chases dog" and "dog chases cat" compare?']
    assert inner(html, "quiz__hint") == ["Choose one answer."]
    inputs = page.find("input")
    assert [(i["type"], i["name"], i["value"], i["id"]) for i in inputs] == [
        ("radio", "quiz-1", "1", "quiz-1-answer-1"), ("radio", "quiz-1", "2", "quiz-1-answer-2")]
    assert [label["for"] for label in page.find("label")] == ["quiz-1-answer-1", "quiz-1-answer-2"]
    assert inner(html, "quiz__label") == ["They give exactly the same pooled vector.",
                                          "They differ a little, because the words moved."]
    assert [a["data-correct"] for a in page.find("div", class_="quiz__answer")] == ["true", "false"]
    # Checking needs JavaScript, so the button waits hidden for quiz.js; the result is announced politely.
    [button] = page.find("button")
    assert button["type"] == "submit" and "hidden" in button and inner(html, "quiz__check") == ["Check answer"]
    [result] = page.find("p", class_="quiz__result")
    assert result["role"] == "status" and result["aria-live"] == "polite"
    # Without JavaScript the key says which answers are right and why.
    assert re.search(r"<details class=\"quiz__key\"><summary>Answers and explanations</summary>", html)
    assert [re.sub("<[^>]+>", "", a) for a in inner(html, "quiz__key-answer")] == [
        "Right: They give exactly the same pooled vector.", "Not right: They differ a little, because the words moved."]
    assert [f["id"] for f in page.find("div", class_="quiz__feedback")] == ["quiz-1-feedback-1", "quiz-1-feedback-2"]
    assert inner(html, "quiz__feedback") == ["<p>Right. Without positions every block treats positions alike.</p>",
                                             "<p>Not here. Nothing records where a word sits.</p>"]


def test_a_multiple_answer_quiz_uses_checkboxes_and_says_so():
    html = convert(
        """
        /// quiz | Which parts keep a deep stack trainable?
        type: multiple
        answers:
          - text: The residual add.
            correct: true
            feedback: It keeps a straight road through the stack.
          - text: Normalization.
            correct: yes
            feedback: It keeps additions from compounding.
          - text: The causal mask.
            correct: false
            feedback: It hides the future; depth is not its business.
        ///
        """
    )
    page = Elements(html)
    assert page.find("form")[0]["data-quiz-type"] == "multiple"
    assert [i["type"] for i in page.find("input")] == ["checkbox"] * 3
    assert {i["name"] for i in page.find("input")} == {"quiz-1"}
    assert inner(html, "quiz__hint") == ["Choose every answer that applies."]
    assert [a["data-correct"] for a in page.find("div", class_="quiz__answer")] == ["true", "true", "false"]


def test_two_quizzes_on_a_page_get_distinct_ids_and_input_groups():
    html = convert(QUIZ + "\nSome prose.\n" + QUIZ.replace("/// quiz | With", "/// quiz | Again, with"))
    page = Elements(html)
    assert [f["id"] for f in page.find("form")] == ["quiz-1", "quiz-2"]
    assert [f["data-quiz"] for f in page.find("form")] == ["1", "2"]
    ids = Counter(attrs["id"] for _, attrs in page.tags if "id" in attrs)
    assert ids and max(ids.values()) == 1, ids
    assert [i["name"] for i in page.find("input")] == ["quiz-1", "quiz-1", "quiz-2", "quiz-2"]
    for label in page.find("label"):
        assert page.find("input", id=label["for"])


def test_question_answers_and_feedback_are_inline_markdown_with_math_and_raw_html_stays_text():
    html = convert(
        r"""
        /// quiz | Why is *each* `h + F(h)` step bigger than \(h\)?
        answers:
          - text: Because \(\|h + F(h)\| \approx (1 + \alpha)\|h\|\) **compounds**.
            correct: true
            feedback: |
              Right: after \(L\) layers, \((1 + \alpha)^L\).

              A second paragraph with `code`.
          - text: Because of a <b>bold</b> </form> tag.
            feedback: Markup is text here & stays so.
        ///
        """
    )
    # Each formula typeset as the prose's are (build_scripts/markdown/math.py), here inside the quiz's own Markdown.
    h, growth, layers, compounded = (formula_html(tex, display=False) for tex in
                                     ("h", r"\|h + F(h)\| \approx (1 + \alpha)\|h\|", "L", r"(1 + \alpha)^L"))
    [question] = inner(html, "quiz__question")
    assert question == f"Why is <em>each</em> <code>h + F(h)</code> step bigger than {h}?"
    first, second = inner(html, "quiz__label")
    assert first == f"Because {growth} <strong>compounds</strong>."
    assert second == "Because of a &lt;b&gt;bold&lt;/b&gt; &lt;/form&gt; tag."
    feedback = inner(html, "quiz__feedback")
    assert feedback[0] == (f"<p>Right: after {layers} layers, {compounded}.</p>\n"
                           "<p>A second paragraph with <code>code</code>.</p>")
    assert feedback[1] == "<p>Markup is text here &amp; stays so.</p>"
    assert html.count("</form>") == 1


def test_a_quiz_nests_inside_a_details_block_and_one_shown_as_code_stays_code():
    html = convert("/// details | Check yourself\n" + QUIZ + "///\n\n```\n/// quiz | Not a quiz?\n///\n```\n")
    assert re.search(r"<details>.*<form class=\"quiz\"", html, re.S)
    assert "/// quiz | Not a quiz?" in html


# ---- every authoring mistake stops with file:line ------------------------------------------------------------------

GOOD_ANSWERS = """answers:
  - text: Yes.
    correct: true
    feedback: Because.
  - text: No.
    feedback: Because not.
"""


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("\n/// quiz\n" + GOOD_ANSWERS + "///\n", 2, "quiz: write the question after '|' (/// quiz | Why …?)"),
        ("/// quiz | Q?\ntype: single\nanwsers:\n  - text: Yes.\n///\n", 3,
         "quiz 'Q?': unknown key 'anwsers' (did you mean 'answers'?); valid keys: type, predict, answers"),
        ("/// quiz | Q?\ntype: multi\n" + GOOD_ANSWERS + "///\n", 2,
         "quiz 'Q?': type: 'multi' is not a quiz type (did you mean 'multiple'?); valid: single, multiple"),
        ("/// quiz | Q?\ntype: single\n///\n", 1, "quiz 'Q?': needs answers: a list of 2 to 8 items, each with text, "
         "feedback and, for the right ones, 'correct: true'"),
        ("/// quiz | Q?\nanswers: Yes, No\n///\n", 2,
         "quiz 'Q?': answers must be a list of 2 to 8 items ('- text: …' lines), not str"),
        ("/// quiz | Q?\nanswers:\n  - text: Yes.\n    correct: true\n    feedback: Because.\n///\n", 2,
         "quiz 'Q?': answers: give 2 to 8 (got 1)"),
        ("/// quiz | Q?\nanswers:\n" + "".join(f"  - text: A{n}.\n    feedback: F.\n" for n in range(9)) + "///\n", 2,
         "quiz 'Q?': answers: give 2 to 8 (got 9)"),
        ("/// quiz | Q?\nanswers:\n  - text: Yes.\n    correct: true\n    feedback: Because.\n  - Maybe\n///\n", 6,
         "quiz 'Q?': answer 2: must be 'text:', 'correct:' and 'feedback:' lines (got 'Maybe')"),
        ("/// quiz | Q?\nanswers:\n  - text: Yes.\n    correct: true\n    feedback: Because.\n  - text: No.\n"
         "    feedbak: Because not.\n///\n", 7,
         "quiz 'Q?': answer 2: unknown key 'feedbak' (did you mean 'feedback'?); valid keys: text, correct, feedback"),
        ("/// quiz | Q?\nanswers:\n  - correct: true\n    feedback: Because.\n  - text: No.\n"
         "    feedback: F.\n///\n", 3,
         "quiz 'Q?': answer 1: needs text"),
        ("/// quiz | Q?\nanswers:\n  - text: Yes.\n    correct: true\n    feedback: Because.\n\n  - text: No.\n"
         "///\n", 7,
         "quiz 'Q?': answer 2: needs feedback: every answer explains why it is right or wrong"),
        ("/// quiz | Q?\nanswers:\n  - text: Yes.\n    correct: 'true'\n    feedback: Because.\n  - text: No.\n"
         "    feedback: F.\n///\n", 4, "quiz 'Q?': answer 1: correct must be true or false (got 'true')"),
        ("/// quiz | Q?\nanswers:\n  - text: 1.50\n    correct: true\n    feedback: Because.\n  - text: No.\n"
         "    feedback: F.\n///\n", 3, "quiz 'Q?': answer 1: text must be non-empty text (got 1.5) (put it in quotes)"),
        ("/// quiz | Q?\nanswers:\n  - text: Yes.\n    correct: true\n    feedback: ''\n  - text: No.\n"
         "    feedback: F.\n///\n", 5, "quiz 'Q?': answer 1: feedback must be non-empty text (got '')"),
        ("/// quiz | Q?\nanswers:\n  - text: Yes.\n    correct: true\n    feedback: Because.\n  - text: '# No'\n"
         "    feedback: F.\n///\n", 6, "quiz 'Q?': answer 2: text must be one paragraph of inline Markdown"),
        ("/// quiz | Q?\nanswers:\n  - text: Yes.\n    correct: true\n    feedback: Because.\n  - text: No.\n"
         "    correct: true\n    feedback: F.\n///\n", 2, "quiz 'Q?': a single-answer quiz needs exactly one correct "
         "answer (got answers 1 and 2); for several, add 'type: multiple'"),
        ("/// quiz | Q?\nanswers:\n  - text: Yes.\n    feedback: Because.\n  - text: No.\n    feedback: F.\n///\n", 2,
         "quiz 'Q?': a single-answer quiz needs exactly one correct answer (got none); mark it with 'correct: true'"),
        ("/// quiz | Q?\ntype: multiple\nanswers:\n  - text: Yes.\n    feedback: Because.\n  - text: No.\n"
         "    feedback: F.\n///\n", 3, "quiz 'Q?': needs at least one correct answer (mark each with 'correct: true')"),
        ("/// quiz | Q?\nanswers:\n  - text: Yes.\n    correct: true\n    feedback: Because.\n  - text: Yes.\n"
         "    feedback: F.\n///\n", 6, "quiz 'Q?': answer 2: has the same text as answer 1"),
    ],
)
def test_a_mistake_is_an_error_naming_file_line_and_what_is_valid(text, line, message):
    assert str(error_of(text)) == f"docs/page.md:{line}: {message}"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("/// quiz | Q?\nanswers:\n  - text: [Yes\n///\n", 3, "malformed YAML"),
        ("/// quizz | Q?\n///\n", 1, "unknown block 'quizz' (did you mean 'quiz'?)"),
        ("/// quiz | Q?\n" + GOOD_ANSWERS, 1, "'quiz' block is never closed (add a line '///')"),
    ],
)
def test_the_block_scanners_own_errors_name_the_line_too(text, line, message):
    error = error_of(text)
    assert str(error).startswith(f"docs/page.md:{line}: ") and message in str(error), str(error)


def test_an_error_quotes_the_start_of_a_long_question():
    question = "Positional encoding and the causal mask are both off. What do you get?"
    error = error_of(f"/// quiz | {question}\n///\n")
    assert str(error).startswith("docs/page.md:1: quiz 'Positional encoding and the causal mask are…': needs answers")


def test_a_mistake_in_an_answer_fails_the_real_strict_build_with_the_authors_line_number(tmp_path):
    config = copy_project_site_sources(tmp_path)
    page = tmp_path / "docs/lessons/break-the-model.md"
    # Front matter, which MkDocs strips before extensions see the page, still counts for the line number.
    page.write_text("---\ntitle: Break\n---\n\n# Break\n\n/// quiz | Which one?\nanswers:\n  - text: This.\n"
                    "    correct: true\n    feedback: Yes.\n  - text: That.\n    correct: maybe\n"
                    "    feedback: No.\n///\n")
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode != 0
    assert ("docs/lessons/break-the-model.md:13: quiz 'Which one?': answer 2: correct must be true or false "
            "(got 'maybe')") in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


# ---- predict, then run ------------------------------------------------------------------------------------------------

PREDICT = """
/// quiz | Predict: what happens to the tokens without the residual add at depth 24?
predict:
  residual: false
  depth: 24
answers:
  - text: They become indistinguishable.
    correct: true
    feedback: "Right: they now differ by {{ live: tokens still distinct }}."
  - text: Nothing changes.
    feedback: Try it.
///

Some prose between them is fine.

/// sandbox | ablation_lab
depth: 6
///
"""


def test_a_predict_quiz_names_its_sandbox_the_values_to_reveal_and_quotes_the_build_time_readout():
    html = markdown.markdown(PREDICT, extensions=EXTENSIONS + ["build_scripts.markdown.sandbox"])
    form = re.search(r'<form class="quiz"[^>]*>', html).group(0)
    assert 'data-predict-sandbox="ablation_lab"' in form
    assert 'data-predict="{&quot;residual&quot;:false,&quot;depth&quot;:24}"' in form
    assert '<p class="quiz__predict-note" hidden>' in html
    from explainer.sandbox import get_sandbox

    readouts = {r["label"]: r["text"] for r in get_sandbox("ablation_lab").render(
        {"residual": False, "depth": 24})["readouts"]}
    expected = f'<span class="quiz__live" data-readout="tokens still distinct">{readouts["tokens still distinct"]}</span>'
    assert expected in html


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (PREDICT.replace("/// sandbox | ablation_lab\ndepth: 6\n///\n", ""), 3,
         "predict: place the sandbox or training lab this quiz is about right after it on the page"),
        (PREDICT.replace("/// sandbox | ablation_lab", "/// figure | four_pillars\ncaption: A.\n///\n\n"
                         "/// sandbox | ablation_lab"), 3,
         "predict: place the sandbox or training lab this quiz is about right after it on the page"),
        (PREDICT.replace("  residual: false", "  residul: false"), 3,
         "predict: residul: is not a parameter of sandbox 'ablation_lab' (did you mean 'residual'?)"),
        (PREDICT.replace("depth: 24", "depth: 99"), 3, "predict: depth: must be between 1 and 24 (got 99)"),
        (PREDICT.replace("predict:\n  residual: false\n  depth: 24", "predict: yes please"), 3,
         "predict must be true or parameter values ('name: value' lines), not 'yes please'"),
        (PREDICT.replace("tokens still distinct", "tokens distinct"), 9,
         "answer 1: no readout 'tokens distinct' (did you mean 'tokens still distinct'?)"),
        (PREDICT.replace("predict:\n  residual: false\n  depth: 24\n", ""), 6,
         "answer 1: {{ live: … }} quotes a readout of the sandbox after the quiz: add 'predict:' to the quiz"),
    ],
    ids=["no-sandbox", "figure-in-between", "unknown-parameter", "bad-value", "not-a-mapping", "unknown-readout",
         "live-without-predict"],
)
def test_a_predict_mistake_names_its_line(text, line, message):
    error = error_of(text)
    assert str(error).startswith(f"docs/page.md:{line}: quiz 'Predict: what happens to the tokens without") \
        and message in str(error), str(error)
    assert not re.search(r"(\w+): .*did you mean '\1'", str(error)), "a valid name with a bad value is no misspelling"


PREDICT_TRAINER = """
/// quiz | Predict: without positions, how many strings does the two-block model reverse?
predict:
  positional: none
  steps: 600
answers:
  - text: Some.
    correct: true
    feedback: The mask still carries order.
  - text: None.
    feedback: Not so.
///

/// trainer
depth: 2
///
"""


def test_a_predict_quiz_before_a_training_lab_locks_the_lab_and_names_its_settings():
    html = markdown.markdown(PREDICT_TRAINER, extensions=EXTENSIONS + ["build_scripts.markdown.trainer"])
    form = re.search(r'<form class="quiz"[^>]*>', html).group(0)
    assert "data-predict-trainer" in form and "data-predict-sandbox" not in form
    assert 'data-predict="{&quot;positional&quot;:&quot;none&quot;,&quot;steps&quot;:600}"' in form
    assert "unlock the training lab below" in html


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (PREDICT_TRAINER.replace("positional: none", "positonal: none"), 3,
         "predict: positonal: is not a training setting; valid: positional, residual, norm, causal_mask, depth, seed, "
         "steps (did you mean 'positional'?)"),
        (PREDICT_TRAINER.replace("steps: 600", "steps: 610"), 3, "predict: steps: must be between 20 and 600 (got 610)"),
        (PREDICT_TRAINER.replace("The mask still carries order.", "'It reverses {{ live: generated }}.'"), 9,
         "answer 1: {{ live: … }} quotes a readout of the sandbox after the quiz: add 'predict:' to the quiz, before "
         "a sandbox (a training lab's numbers come only with the reader's run"),
    ],
    ids=["unknown-setting", "bad-steps", "live-quote"],
)
def test_a_predict_mistake_before_a_training_lab_names_its_line(text, line, message):
    error = markdown_error(lambda source: markdown.markdown(
        source, extensions=EXTENSIONS + ["build_scripts.markdown.trainer"]), text)
    assert str(error).startswith(f"docs/page.md:{line}: quiz 'Predict: without positions") and message in str(error), \
        str(error)
    assert not re.search(r"(\w+): .*did you mean '\1'", str(error)), "a valid name with a bad value is no misspelling"
