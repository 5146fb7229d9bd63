/* The code editor of live cells, bundled at build time by esbuild (build_scripts/editor_bundle.py) into one classic
 * script, `editor.js`, that cells.js loads only on pages that have a cell. It defines one global, ExplainerEditor,
 * whose `ready` is a promise of the editor: {create(parent, options)} (create.js).
 *
 * CodeMirror is evaluated a package at a time, each in a task of its own. Evaluated at once, as the script ran, it
 * held the main thread for one task of 55-84 ms at a page's load (long-animation-frame entries, no DevTools
 * attached). esbuild leaves a module that is imported with import() unevaluated until that import runs, so each
 * stage below costs a task of its own and finds the packages of the stages before it evaluated already. A stage
 * imports a file of ./stages/ that re-exports one name of its package: imported whole, a package would keep all its
 * exports (48 KB more, 16 KB gzipped), where create.js's static imports let esbuild drop what it does not use.
 *
 * Then one editor is built off the page and dropped (create.js's warmUp), in tasks of its own too, before `ready`
 * resolves: the first editor of a page runs CodeMirror's code for the first time, and built for a cell it made that
 * cell's task the longest of the editor's (30-69 ms, no DevTools attached).
 */
const STAGES = [
  () => import("./stages/state.js"),
  () => import("./stages/view.js"),
  () => import("./stages/language.js"),
  () => import("./stages/python.js"),
  () => import("./create.js"),  // @codemirror/commands, codemirror's minimalSetup, and the editor itself
];

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

async function load() {
  let module = null;
  for (const stage of STAGES) {
    await nextTask();
    module = await stage();
  }
  await module.warmUp();
  return Object.freeze({create: module.create});
}

window.ExplainerEditor = Object.freeze({ready: load()});
