/* The code editor itself: CodeMirror 6 with Python, set up for a live cell. entry.js imports it last, once the
 * packages it builds on are evaluated (each in a task of its own).
 *
 * Colours come from CSS: tokens get `tok-*` classes (classHighlighter) and cells.css maps them to Material's code
 * colour variables, so the editor follows the light and dark palettes exactly like the site's code blocks do.
 */
import {minimalSetup} from "codemirror";
import {EditorState, StateEffect, StateField} from "@codemirror/state";
import {Decoration, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers} from "@codemirror/view";
import {indentWithTab} from "@codemirror/commands";
import {bracketMatching, indentOnInput, indentUnit, syntaxHighlighting} from "@codemirror/language";
import {classHighlighter} from "@lezer/highlight";
import {python} from "@codemirror/lang-python";

// One highlighted line at most: the line a traceback points at. Any edit clears it.
const markLineEffect = StateEffect.define();
const errorLine = Decoration.line({class: "cm-errorLine", attributes: {"data-error-line": "true"}});
const markedLine = StateField.define({
  create: () => Decoration.none,
  update(marks, transaction) {
    if (transaction.docChanged) marks = Decoration.none;
    for (const effect of transaction.effects) {
      if (!effect.is(markLineEffect)) continue;
      const number = effect.value;
      const doc = transaction.state.doc;
      marks = number && number >= 1 && number <= doc.lines
        ? Decoration.set([errorLine.range(doc.line(number).from)]) : Decoration.none;
    }
    return marks;
  },
  provide: (field) => EditorView.decorations.from(field),
});

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * A promise of an editor in `parent`. Options: doc (the code), label (the accessible name of the text box), onRun()
 * for Ctrl/Cmd+Enter, onEscape() for Escape (the cell moves focus out, so keyboard users are never trapped by Tab
 * indenting), onChange(code).
 *
 * The state (which parses the code) and the view (its DOM) are built in two tasks: for the longest cell of
 * try-it-yourself (1716 characters) they took 10-23 and 19-25 ms, in one task with the cell's own work 33-48 ms.
 */
export async function create(parent, {doc = "", label = "Code", onRun = () => {}, onEscape = () => {},
  onChange = () => {}} = {}) {
  const runKeys = keymap.of([
    {key: "Mod-Enter", run: () => (onRun(), true), preventDefault: true},
    {key: "Shift-Enter", run: () => (onRun(), true), preventDefault: true},
    {key: "Escape", run: () => (onEscape(), true)},
  ]);
  const state = EditorState.create({
    doc,
    extensions: [
      runKeys,  // first: Ctrl+Enter runs instead of inserting a line
      minimalSetup,  // history, selection drawing, special characters, the default and history keymaps
      lineNumbers(),
      highlightActiveLineGutter(),
      indentOnInput(),
      bracketMatching(),
      highlightActiveLine(),
      indentUnit.of("    "),
      EditorState.tabSize.of(4),
      python(),
      // Long lines wrap (under their line number): no sideways scrolling on a phone, and no scrollable region
      // that a keyboard cannot reach (axe's scrollable-region-focusable).
      EditorView.lineWrapping,
      syntaxHighlighting(classHighlighter),
      markedLine,
      keymap.of([indentWithTab]),
      EditorView.contentAttributes.of({"aria-label": label, "aria-multiline": "true"}),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) onChange(update.state.doc.toString());
      }),
    ],
  });
  await nextTask();
  const view = new EditorView({parent, state});
  return {
    view,
    getCode: () => view.state.doc.toString(),
    setCode(code) {
      view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: code}});
    },
    /** Highlight line `number` (1-based), or none with null; the line scrolls into view. */
    markLine(number) {
      if (!number && view.state.field(markedLine).size === 0) return;  // nothing to clear: no update at all
      const effects = [markLineEffect.of(number)];
      if (number && number <= view.state.doc.lines) {
        effects.push(EditorView.scrollIntoView(view.state.doc.line(number).from, {y: "nearest"}));
      }
      view.dispatch({effects});
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}

/**
 * Builds one editor off the page and drops it. The first editor of a page runs CodeMirror's code cold and adds its
 * styles to the page: built for a cell, it held the main thread for 30-69 ms in one task.
 */
export async function warmUp() {
  (await create(document.createElement("div"), {doc: "def f(x):\n    return [x * 2 for x in range(3)]  # (x)\n"}))
    .destroy();
}
