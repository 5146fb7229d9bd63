/* Quizzes: turns each built `<form class="quiz">` (build_scripts/markdown/quiz.py) into a question the reader checks.
 *
 * The build writes every explanation into a `<details>` key, so a reader without JavaScript can read them all. On
 * mount this file moves each explanation under its answer (hidden until checked), removes the key and shows the
 * Check button. Checking marks the answers with text and an icon as well as colour, shows the explanations that
 * matter, and announces the result in the form's live region. The selection is kept in sessionStorage per page and
 * quiz, so leaving a lesson and coming back (Material's instant navigation included) finds it as it was.
 *
 * Predict, then run (form[data-predict-sandbox], or form[data-predict-trainer] for the training lab): the sandbox or
 * lab placed right after the quiz keeps its controls (and the lab its Train button) locked until the reader checks an
 * answer; then they unlock and move to the values in data-predict, the configuration that answers the question (a
 * sandbox redraws, the lab waits for Train). Feedback spans `.quiz__live[data-readout]` follow the sandbox's readout
 * of the same label whenever it draws.
 * README.md in this folder describes the HTML contract.
 */
(function () {
  "use strict";

  const RESULT = {
    right: "Correct.",
    wrong: "Not quite — read the notes under your choices.",
    empty: "Choose an answer first.",
  };
  // What each answer says once checked; the icon is drawn by quiz.css, the words carry the meaning.
  const VERDICT = {
    right: "Right",
    wrong: "Not right",
    missed: "Right answer, not chosen",
  };
  const MARKS = Object.keys(VERDICT);
  const STORAGE_PREFIX = "explainer-quiz:";

  function load(key) {
    try {
      const state = JSON.parse(sessionStorage.getItem(key));
      return state && Array.isArray(state.chosen) ? state : null;
    } catch (error) {  // storage disabled or an old value: start afresh
      return null;
    }
  }

  function save(key, state) {
    try {
      sessionStorage.setItem(key, JSON.stringify(state));
    } catch (error) {
      // Storage full or disabled: the quiz still works, it only forgets on leaving.
    }
  }

  /** The sandbox or training lab a predict-then-run quiz is about: the first one after `form` in the page, or null. */
  function predictionTarget(form) {
    const name = form.dataset.predictSandbox;
    const candidates = name ? [...document.querySelectorAll("figure.sandbox[data-sandbox]")]
      .filter((figure) => figure.dataset.sandbox === name)
      : form.dataset.predictTrainer !== undefined ? [...document.querySelectorAll("figure.trainer")] : [];
    return candidates.find((figure) => form.compareDocumentPosition(figure) & Node.DOCUMENT_POSITION_FOLLOWING) || null;
  }

  /** The locked controls of a predict-then-run quiz's sandbox, the values to reveal, the live readouts. */
  class Prediction {
    constructor(form, sandbox) {
      this.form = form;
      this.sandbox = sandbox;
      this.reveal = JSON.parse(form.dataset.predict || "{}");
      this.note = form.querySelector(".quiz__predict-note");
      this.observer = new MutationObserver(() => this.showLive());
    }

    inputs() {  // a training lab's Train button too: nothing runs before the reader has answered
      return [...this.sandbox.querySelectorAll(".sandbox__controls input, .sandbox__controls select, .trainer__train")];
    }

    lock() {
      for (const input of this.inputs()) {
        if (input.disabled) continue;  // a fixed parameter stays fixed
        input.disabled = true;
        input.dataset.lockedBy = this.form.id;
      }
      this.sandbox.dataset.locked = "";
      if (this.note) this.note.hidden = false;
      this.observer.observe(this.sandbox, {attributes: true, attributeFilter: ["data-renders"]});
    }

    /** Unlock the controls; with `reveal`, move them to the values that answer the question (the sandbox redraws). */
    unlock(reveal) {
      for (const input of this.inputs()) {
        if (input.dataset.lockedBy !== this.form.id) continue;
        input.disabled = false;
        delete input.dataset.lockedBy;
      }
      delete this.sandbox.dataset.locked;
      if (this.note) this.note.hidden = true;
      this.observer.observe(this.sandbox, {attributes: true, attributeFilter: ["data-renders"]});
      if (!reveal) return;
      // Every value first, then the events: the first redraw already has the whole configuration (one event per
      // value would draw the in-between ones, each a render of a configuration nobody asked about).
      const moved = [];
      for (const [name, value] of Object.entries(this.reveal)) {
        const input = this.sandbox.querySelector(`.sandbox__control[data-param="${CSS.escape(name)}"] :is(input, select)`);
        if (!input || input.disabled) continue;
        if (input.type === "checkbox") input.checked = Boolean(value);
        else input.value = String(value);
        moved.push(input);
      }
      for (const input of moved) {
        input.dispatchEvent(new Event("input", {bubbles: true}));  // sandbox.js (trainer.js) updates and redraws
      }
    }

    /** Each live span shows the sandbox's current readout of its label (the build wrote the revealed value). */
    showLive() {
      for (const span of this.form.querySelectorAll(".quiz__live[data-readout]")) {
        const item = [...this.sandbox.querySelectorAll(".sandbox__readout")].find((readout) =>
          readout.querySelector("dt")?.textContent === span.dataset.readout);
        const text = item && item.querySelector("dd")?.textContent;
        if (text && span.textContent !== text) span.textContent = text;
      }
    }
  }

  class Quiz {
    constructor(form) {
      this.form = form;
      this.key = `${STORAGE_PREFIX}${location.pathname}#${form.dataset.quiz}`;
      this.button = form.querySelector(".quiz__check");
      this.result = form.querySelector(".quiz__result");
      this.announceTimer = 0;
      this.answers = Array.from(form.querySelectorAll(".quiz__answer"), (element) => ({
        element,
        input: element.querySelector(".quiz__input"),
        correct: element.dataset.correct === "true",
        verdict: null,
        feedback: null,
      }));
    }

    mount() {
      const key = this.form.querySelector(".quiz__key");
      for (const answer of this.answers) {
        const number = answer.element.dataset.answer;
        answer.feedback = key && key.querySelector(`.quiz__key-item[data-answer="${number}"] .quiz__feedback`);
        if (!answer.input || !answer.feedback || !this.button || !this.result) {
          throw new Error(`answer ${number} has no input or no explanation in the key`);  // before touching the page
        }
      }
      for (const answer of this.answers) {
        answer.verdict = document.createElement("p");
        answer.verdict.className = "quiz__verdict";
        answer.verdict.id = `${answer.input.id}-verdict`;
        answer.verdict.hidden = true;
        answer.feedback.hidden = true;
        answer.element.append(answer.verdict, answer.feedback);
      }
      key.remove();
      this.button.hidden = false;
      const target = predictionTarget(this.form);
      this.prediction = target ? new Prediction(this.form, target) : null;
      if (this.prediction) this.prediction.lock();
      this.form.addEventListener("submit", (event) => {
        event.preventDefault();
        const answered = this.check(true);
        this.store(true);
        if (answered && this.prediction && this.prediction.sandbox.dataset.locked !== undefined) {
          this.prediction.unlock(true);
        }
      });
      this.form.addEventListener("change", () => {
        this.clear();
        this.store(false);
      });
      this.restore();
    }

    chosen() {
      return this.answers.filter((answer) => answer.input.checked);
    }

    store(checked) {
      const chosen = this.chosen().map((answer) => answer.input.value);
      save(this.key, {chosen, checked: checked && chosen.length > 0});
    }

    restore() {
      const state = load(this.key);
      if (!state) return;
      for (const answer of this.answers) answer.input.checked = state.chosen.includes(answer.input.value);
      if (!state.checked) return;
      this.check(false);
      if (this.prediction) this.prediction.unlock(false);  // answered earlier in the visit: unlocked, left as it is
    }

    // Marks every answer that matters and shows its explanation: each chosen one, and the right ones the reader
    // missed. Answers rightly left alone stay unmarked. Returns whether anything was chosen.
    check(announce) {
      const chosen = this.chosen();
      if (chosen.length === 0) {
        this.clear();
        this.say(RESULT.empty, announce);
        return false;
      }
      const allRight = this.answers.every((answer) => answer.input.checked === answer.correct);
      for (const answer of this.answers) {
        let mark = null;
        if (answer.input.checked) mark = answer.correct ? "right" : "wrong";
        else if (answer.correct && !allRight) mark = "missed";
        this.mark(answer, mark);
      }
      this.form.dataset.result = allRight ? "right" : "wrong";
      this.say(allRight ? RESULT.right : RESULT.wrong, announce);
      if (this.prediction) this.prediction.showLive();
      return true;
    }

    mark(answer, mark) {
      for (const name of MARKS) answer.element.classList.toggle(`quiz__answer--${name}`, name === mark);
      answer.verdict.textContent = mark ? VERDICT[mark] : "";
      answer.verdict.hidden = !mark;
      answer.feedback.hidden = !mark;
      // A screen reader on the input hears its verdict and explanation; never before the reader has checked.
      if (mark) answer.input.setAttribute("aria-describedby", `${answer.verdict.id} ${answer.feedback.id}`);
      else answer.input.removeAttribute("aria-describedby");
    }

    clear() {
      for (const answer of this.answers) this.mark(answer, null);
      delete this.form.dataset.result;
      this.say("", false);
    }

    // A live region only speaks when its text changes: to announce the same result twice (checking again without
    // changing anything), empty it first and write the text a moment later.
    say(text, announce) {
      clearTimeout(this.announceTimer);
      if (!announce || this.result.textContent !== text) {
        this.result.textContent = text;
        return;
      }
      this.result.textContent = "";
      this.announceTimer = setTimeout(() => { this.result.textContent = text; }, 150);
    }
  }

  const mounted = new WeakSet();

  function mountPage() {
    for (const form of document.querySelectorAll("form.quiz[data-quiz]")) {
      if (mounted.has(form)) continue;
      mounted.add(form);
      try {
        new Quiz(form).mount();
      } catch (error) {  // a malformed quiz keeps its key open to read and must not stop the others
        console.warn(`quiz ${form.id}: could not be mounted`, error);
      }
    }
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(() => mountPage());  // Material: emits on load and after each instant navigation
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", mountPage, {once: true});
  } else {
    mountPage();
  }
})();
