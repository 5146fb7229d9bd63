"""The `quiz` block: a question with 2 to 8 answers, each of which explains itself.

    /// quiz | Without positions, how do "cat chases dog" and "dog chases cat" compare after mean pooling?
    type: single              # single (radio buttons, the default) or multiple (checkboxes, several correct)
    answers:
      - text: They give exactly the same pooled vector.
        correct: true
        feedback: Right. Without positions every block treats positions alike, so ...
      - text: They differ a little, because the words moved.
        feedback: Not here. ...
    ///

Predict, then run: with `predict:`, the quiz is about the sandbox (or the training lab) placed right after it on the
page. Its controls (and the lab's Train button) stay locked until the reader checks an answer; then they unlock and,
when `predict` gives parameter values (the lab's settings), the sandbox jumps to them (the configuration that answers
the question; the lab waits for Train). Feedback may quote one of a sandbox's readouts with
`{{ live: <readout label> }}`: the page shows the live value (the build writes the value at the `predict` values, so
print and no-JavaScript readers see it too). A lab's numbers exist only after the reader's run, so its feedback quotes
the build-time runs with `{{ training.… }}` instead.

    /// quiz | Predict: with the residual add off, what happens to the tokens at depth 24?
    predict:                  # `predict: true` unlocks only; a mapping also moves the sandbox there
      residual: false
      depth: 24
    answers:
      - text: They become indistinguishable.
        correct: true
        feedback: "Right: the tokens now differ by {{ live: tokens distinct }}."
      ...
    ///

The question, every answer and every feedback are Markdown (`code`, *emphasis*, math `\\( … \\)` typeset at build
time like the prose's; raw HTML stays text). The page gets a <form> of native, labelled inputs and a `<details>`
holding the answers with their explanations, so a reader without JavaScript can read them;
build_scripts/browser/quiz.js moves each explanation under its answer, hides it until the reader checks, and keeps
the selection for the visit. Every authoring mistake stops the build with file:line; a mistake inside one answer
names that answer's line.
"""

import functools
import html
import json
import re
from dataclasses import dataclass

import markdown
import yaml
from markdown import Extension

from build_scripts.markdown._blocks import Block, BlockPreprocessor, MarkdownSourceError, find_blocks
from build_scripts.markdown.trainer import read_trainer
from explainer.sandbox import ParameterError, closest, registry
from explainer.streams.train import SETTING_NAMES, check_settings

KEYS = ("type", "predict", "answers")
ANSWER_KEYS = ("text", "correct", "feedback")
TYPES = ("single", "multiple")
MIN_ANSWERS, MAX_ANSWERS = 2, 8
HINTS = {"single": "Choose one answer.", "multiple": "Choose every answer that applies."}
KEY_SUMMARY = "Answers and explanations"
QUESTION_SHOWN = 48  # characters of the question an error message quotes
RE_LIVE = re.compile(r"\{\{\s*live:\s*(.+?)\s*\}\}")  # {{ live: readout label }} in feedback
PREDICT_NOTE = "Check an answer to unlock the figure below."
PREDICT_NOTE_TRAINER = "Check an answer to unlock the training lab below."


@dataclass(frozen=True)
class Answer:
    """One choice, its Markdown already rendered: text as inline HTML, feedback as block HTML."""

    text: str
    correct: bool
    feedback: str


@dataclass(frozen=True)
class Prediction:
    """A predict-then-run quiz's sandbox (its name) or training lab (sandbox None) and the values it moves to once
    the reader has answered."""

    sandbox: str | None
    reveal: dict


@dataclass(frozen=True)
class Quiz:
    """A checked quiz block, ready to be written as HTML."""

    question: str  # inline HTML
    type: str
    answers: tuple[Answer, ...]
    prediction: Prediction | None = None


# ---- Markdown of the snippets ---------------------------------------------------------------------------------------


@functools.cache
def _snippet_markdown() -> markdown.Markdown:
    md = markdown.Markdown(extensions=["build_scripts.markdown.math"])  # math typeset like the prose's
    # Raw HTML in a quiz stays text, as in a sandbox caption: a stray </form> must not break the page.
    md.preprocessors.deregister("html_block")
    md.inlinePatterns.deregister("html")
    return md


def render_markdown(text: str) -> str:
    """A snippet's Markdown as HTML (block level: one or more paragraphs)."""
    md = _snippet_markdown()
    md.reset()
    return md.convert(text)


def render_inline(text: str) -> str | None:
    """A snippet's Markdown as inline HTML, or None when it is more than one paragraph of inline text."""
    rendered = render_markdown(text)
    match = re.fullmatch(r"<p>(.*)</p>", rendered, re.S)
    return match.group(1) if match and "<p>" not in match.group(1) else None


# ---- reading the block ----------------------------------------------------------------------------------------------


class _Reader:
    """Checks one block; errors name the question and the line of the key (or answer) at fault."""

    def __init__(self, block: Block, page_lines: list[str] | None):
        self.block = block
        question = " ".join(block.argument.split())
        if len(question) > QUESTION_SHOWN:
            question = question[:QUESTION_SHOWN].rsplit(" ", 1)[0] + "…"
        self.shown = question
        self.page_lines = page_lines

    @functools.cached_property
    def answer_lines(self) -> list[tuple[int, dict]]:
        return _answer_lines(self.block, self.page_lines) if self.page_lines else []

    def error(self, message: str, line: int | None = None, key: str | None = None) -> MarkdownSourceError:
        line = line or self.block.option_lines.get(key, self.block.line)
        return MarkdownSourceError(line, f"quiz '{self.shown}': {message}")

    def answer_error(self, number: int, message: str, key: str | None = None) -> MarkdownSourceError:
        item_line, key_lines = (self.answer_lines[number - 1] if number <= len(self.answer_lines)
                                else (self.block.option_lines.get("answers"), {}))
        return self.error(f"answer {number}: {message}", key_lines.get(key, item_line))

    def read(self) -> Quiz:
        if not self.block.argument:
            raise MarkdownSourceError(self.block.line, "quiz: write the question after '|' (/// quiz | Why …?)")
        for key in self.block.options:
            if key not in KEYS:
                raise self.error(_unknown(key, KEYS), key=key)
        question = self.markdown(render_inline, self.block.argument)
        if question is None:
            raise self.error("the question must be one line of inline Markdown")
        quiz_type = self.block.options.get("type", "single")
        if quiz_type not in TYPES:
            raise self.error(f"type: {quiz_type!r} is not a quiz type{closest(str(quiz_type), TYPES)}; "
                             f"valid: {', '.join(TYPES)}", key="type")
        prediction, readouts = self.prediction()
        answers = tuple(self.answer(number, item, readouts) for number, item in enumerate(self.answer_list(), start=1))
        self.check_answers(answers, quiz_type)
        return Quiz(question, quiz_type, answers, prediction)

    def prediction(self) -> tuple[Prediction | None, dict[str, str]]:
        """The sandbox right after the quiz and the values to reveal, checked against its declaration; and that
        sandbox's readouts at those values (label → text), which feedback may quote."""
        if "predict" not in self.block.options:
            return None, {}
        value = self.block.options["predict"]
        if value is not True and not isinstance(value, dict):
            raise self.error(f"predict must be true or parameter values ('name: value' lines), not {value!r}",
                             key="predict")
        following = self._next_live_block()
        reveal = value if isinstance(value, dict) else {}
        if following is not None and following.name == "trainer":
            return self._trainer_prediction(following, reveal), {}
        sandbox = registry().get(following.argument) if following else None
        if sandbox is None:
            raise self.error("predict: place the sandbox or training lab this quiz is about right after it on the "
                             "page", key="predict")
        try:
            start = sandbox.validate({k: v for k, v in following.options.items() if k in sandbox.defaults()})
            shown = sandbox.validate({**start, **reveal})
        except ParameterError as error:
            raise self.error(f"predict: {error}{closest(error.parameter, sandbox.defaults())}", key="predict") from None
        readouts = {r["label"]: r["text"] for r in sandbox.render(shown)["readouts"]}
        return Prediction(sandbox.name, {k: shown[k] for k in reveal}), readouts

    def _trainer_prediction(self, following: Block, reveal: dict) -> Prediction:
        """The training lab's settings to move to, checked against its own starting settings."""
        start = read_trainer(following).settings
        try:
            check_settings({**start, **reveal})
        except ParameterError as error:
            raise self.error(f"predict: {error}{closest(error.parameter, SETTING_NAMES)}", key="predict") from None
        return Prediction(None, dict(reveal))

    def _next_live_block(self) -> Block | None:
        """The first block after this quiz if it is a sandbox or a training lab (a mistake in a block on the way is
        raised as such)."""
        for block in find_blocks(self.page_lines or [], {"sandbox", "trainer", "quiz", "figure"}):
            if block.line > self.block.line:
                return block if block.name in ("sandbox", "trainer") else None
        return None

    def answer_list(self) -> list:
        if "answers" not in self.block.options:
            raise self.error(f"needs answers: a list of {MIN_ANSWERS} to {MAX_ANSWERS} items, each with text, "
                             "feedback and, for the right ones, 'correct: true'")
        answers = self.block.options["answers"]
        if not isinstance(answers, list):
            raise self.error(f"answers must be a list of {MIN_ANSWERS} to {MAX_ANSWERS} items ('- text: …' lines), "
                             f"not {type(answers).__name__}", key="answers")
        if not MIN_ANSWERS <= len(answers) <= MAX_ANSWERS:
            raise self.error(f"answers: give {MIN_ANSWERS} to {MAX_ANSWERS} (got {len(answers)})", key="answers")
        return answers

    def answer(self, number: int, item, readouts: dict[str, str]) -> Answer:
        if not isinstance(item, dict):
            raise self.answer_error(number, f"must be 'text:', 'correct:' and 'feedback:' lines (got {item!r})")
        for key in item:
            if key not in ANSWER_KEYS:
                raise self.answer_error(number, _unknown(key, ANSWER_KEYS), key)
        if "text" not in item:
            raise self.answer_error(number, "needs text")
        if "feedback" not in item:
            raise self.answer_error(number, "needs feedback: every answer explains why it is right or wrong")
        correct = item.get("correct", False)
        if not isinstance(correct, bool):
            raise self.answer_error(number, f"correct must be true or false (got {correct!r})", "correct")
        text = self.markdown(render_inline, self.answer_text(number, item, "text"), number, "text")
        if text is None:
            raise self.answer_error(number, "text must be one paragraph of inline Markdown", "text")
        feedback = self.live_readouts(number, self.answer_text(number, item, "feedback"), readouts)
        return Answer(text, correct, self.markdown(render_markdown, feedback, number, "feedback"))

    def markdown(self, render, text: str, number: int | None = None, key: str | None = None) -> str | None:
        """`render(text)`; a formula it cannot typeset is named at the answer's key (or the question's line)."""
        try:
            return render(text)
        except MarkdownSourceError as error:
            if number is None:
                raise self.error(error.reason) from None
            raise self.answer_error(number, f"{key}: {error.reason}", key) from None

    def live_readouts(self, number: int, feedback: str, readouts: dict[str, str]) -> str:
        """Each {{ live: label }} as a placeholder the page fills with the live readout (the build's value first)."""
        def placeholder(match):
            label = match.group(1)
            if not readouts:
                raise self.answer_error(number, "{{ live: … }} quotes a readout of the sandbox after the quiz: "
                                                "add 'predict:' to the quiz, before a sandbox (a training lab's "
                                                "numbers come only with the reader's run: quote the build's, "
                                                "{{ training.… }})", "feedback")
            if label not in readouts:
                raise self.answer_error(number, f"no readout {label!r}{closest(label, readouts)}; the sandbox's "
                                                f"readouts: {', '.join(map(repr, readouts))}", "feedback")
            return f"`{LIVE_MARK}{label}{LIVE_MARK}{readouts[label]}{LIVE_MARK}`"
        return RE_LIVE.sub(placeholder, feedback)

    def answer_text(self, number: int, item: dict, key: str) -> str:
        value = item[key]
        if isinstance(value, str) and value.strip():
            return value.strip()
        quote = " (put it in quotes)" if isinstance(value, int | float) and not isinstance(value, bool) else ""
        raise self.answer_error(number, f"{key} must be non-empty text (got {value!r}){quote}", key)

    def check_answers(self, answers: tuple[Answer, ...], quiz_type: str) -> None:
        right = [number for number, answer in enumerate(answers, start=1) if answer.correct]
        if quiz_type == "single" and len(right) != 1:
            got = f"answers {_and(right)}" if right else "none"
            more = "; for several, add 'type: multiple'" if right else "; mark it with 'correct: true'"
            raise self.error(f"a single-answer quiz needs exactly one correct answer (got {got}){more}",
                             key="answers")
        if not right:
            raise self.error("needs at least one correct answer (mark each with 'correct: true')", key="answers")
        seen = {}
        for number, answer in enumerate(answers, start=1):
            if answer.text in seen:
                raise self.answer_error(number, f"has the same text as answer {seen[answer.text]}", "text")
            seen[answer.text] = number


def _unknown(key, valid) -> str:
    return f"unknown key '{key}'{closest(str(key), valid)}; valid keys: {', '.join(valid)}"


def _and(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}" if len(numbers) > 1 else str(numbers[0])


def _answer_lines(block: Block, page_lines: list[str]) -> list[tuple[int, dict]]:
    """For each item of `answers`, the line it starts on and the line of each of its keys (1-based)."""
    body = [line[len(block.indent):] if line.startswith(block.indent) else line.lstrip()
            for line in page_lines[block.line : block.end]]
    first = block.line + 1
    root = yaml.compose("\n".join(body), Loader=yaml.SafeLoader)  # the block was parsed already: this cannot fail
    if not isinstance(root, yaml.MappingNode):
        return []
    answers = next((value for key, value in root.value if key.value == "answers"), None)
    if not isinstance(answers, yaml.SequenceNode):
        return []
    return [
        (first + item.start_mark.line,
         {key.value: first + key.start_mark.line for key, _ in item.value} if isinstance(item, yaml.MappingNode)
         else {})
        for item in answers.value
    ]


# A live readout travels through Markdown as inline code (so no emphasis or math touches it), then becomes a span.
LIVE_MARK = "\u2063"  # INVISIBLE SEPARATOR: never typed by an author
RE_LIVE_CODE = re.compile(f"<code>{LIVE_MARK}(.+?){LIVE_MARK}(.*?){LIVE_MARK}</code>")


def _live_spans(html: str) -> str:
    return RE_LIVE_CODE.sub(lambda m: f'<span class="quiz__live" data-readout="{m.group(1).replace(chr(34), "&quot;")}">'
                                      f"{m.group(2)}</span>", html)


def read_quiz(block: Block, page_lines: list[str] | None = None) -> Quiz:
    """Check a quiz block and render its Markdown; with the page's lines, an answer's error names its own line."""
    return _Reader(block, page_lines).read()


# ---- HTML -----------------------------------------------------------------------------------------------------------


def _answer_html(quiz: Quiz, number: int, answer: Answer, element_id: str) -> str:
    input_type = "radio" if quiz.type == "single" else "checkbox"
    input_id = f"{element_id}-answer-{number}"
    return (f'<div class="quiz__answer" data-answer="{number}" data-correct="{str(answer.correct).lower()}">'
            f'<input class="quiz__input" type="{input_type}" id="{input_id}" name="{element_id}" value="{number}">'
            f'<label class="quiz__label" for="{input_id}">{answer.text}</label></div>')


def _key_html(quiz: Quiz, element_id: str) -> str:
    """The answers with their explanations, readable without JavaScript (quiz.js moves each under its answer)."""
    items = "".join(
        f'<li class="quiz__key-item" data-answer="{number}">'
        f'<p class="quiz__key-answer"><strong>{"Right" if answer.correct else "Not right"}:</strong> {answer.text}</p>'
        f'<div class="quiz__feedback" id="{element_id}-feedback-{number}">{_live_spans(answer.feedback)}</div></li>'
        for number, answer in enumerate(quiz.answers, start=1)
    )
    return (f'<details class="quiz__key"><summary>{KEY_SUMMARY}</summary>'
            f'<ul class="quiz__key-list">{items}</ul></details>')


def quiz_html(quiz: Quiz, number: int) -> str:
    """The page's <form>: the question as the legend of native inputs, the Check button, a live region, the key."""
    element_id = f"quiz-{number}"
    answers = "".join(_answer_html(quiz, n, answer, element_id) for n, answer in enumerate(quiz.answers, start=1))
    predict, note = "", ""
    if quiz.prediction:
        reveal = html.escape(json.dumps(quiz.prediction.reveal, separators=(",", ":")))
        target = (f'data-predict-sandbox="{quiz.prediction.sandbox}"' if quiz.prediction.sandbox
                  else "data-predict-trainer")
        predict = f' {target} data-predict="{reveal}"'
        # Shown by quiz.js, which does the locking: without JavaScript nothing is locked.
        words = PREDICT_NOTE if quiz.prediction.sandbox else PREDICT_NOTE_TRAINER
        note = f'<p class="quiz__predict-note" hidden>{words}</p>'
    return (
        f'<form class="quiz" id="{element_id}" data-quiz="{number}" data-quiz-type="{quiz.type}"{predict} '
        'autocomplete="off">'
        f'<fieldset class="quiz__fieldset" aria-describedby="{element_id}-hint">'
        f'<legend class="quiz__question">{quiz.question}</legend>'
        f'<p class="quiz__hint" id="{element_id}-hint">{HINTS[quiz.type]}</p>{note}'
        f'<div class="quiz__answers">{answers}</div></fieldset>'
        # Hidden until quiz.js mounts: without JavaScript there is nothing to check, and the key below is open to read.
        f'<div class="quiz__actions"><button class="quiz__check" type="submit" hidden>Check answer</button>'
        f'<p class="quiz__result" role="status" aria-live="polite"></p></div>'
        f"{_key_html(quiz, element_id)}</form>"
    )


# ---- the extension --------------------------------------------------------------------------------------------------


class QuizPreprocessor(BlockPreprocessor):
    """Replaces each quiz block of a page with its form, numbering them in page order for unique ids."""

    def __init__(self, md):
        super().__init__(md, {"quiz": self.place})
        self.count, self.page_lines = 0, []

    def run(self, lines: list[str]) -> list[str]:
        self.count, self.page_lines = 0, lines
        return super().run(lines)

    def place(self, block: Block) -> str:
        quiz = read_quiz(block, self.page_lines)
        self.count += 1
        return quiz_html(quiz, self.count)


class QuizExtension(Extension):
    """Adds the `/// quiz | question` block."""

    def extendMarkdown(self, md):
        md.registerExtension(self)
        # After {{ quantities }} (29.6), before the sandbox block (29.5) replaces its blocks: a predict-then-run quiz
        # reads the sandbox block after it. Before superfences (25), so line numbers are the author's.
        md.preprocessors.register(QuizPreprocessor(md), "explainer-quiz", 29.55)


def makeExtension(**kwargs):  # noqa: N802 (the name Python-Markdown looks for)
    return QuizExtension(**kwargs)
