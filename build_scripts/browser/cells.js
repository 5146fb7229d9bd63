/* Live code cells: turns each built cell (<div class="cell">, build_scripts/markdown/cell.py) into an editor whose
 * Python runs in the page's one Pyodide worker (runtime.js, ExplainerRuntime), shared with the sandboxes.
 *
 * The editor (CodeMirror 6, bundled at build time into editor.js) is loaded only on a page that has a cell. Output
 * streams in as the code prints; then the last expression's value, the check's verdict, or the error with its line
 * marked in the editor. Code that runs past its cell's limit is stopped: through Pyodide's interrupt buffer when the
 * page is cross-origin isolated (the variables survive), else by replacing the worker (every sandbox redraws by
 * itself). Edits are kept per page and cell in localStorage. README.md in this folder is the written contract.
 *
 * Needs the globals of render.js (ExplainerRender), protocol.js (ExplainerProtocol), runtime.js (ExplainerRuntime)
 * and page.js (ExplainerPage), loaded before this file.
 */
(function () {
  "use strict";

  const Protocol = window.ExplainerProtocol;
  const Render = window.ExplainerRender;
  const runtime = window.ExplainerRuntime;
  const {element, NEAR_VIEWPORT, onEveryPage} = window.ExplainerPage;
  const script = document.currentScript || document.querySelector('script[src*="cells.js"]');
  const EDITOR_URL = new URL("editor.js", script.src).href;
  const STORAGE_PREFIX = "explainer-cell:";
  const READY_STATUS = "Edit the code, then press Run (or Ctrl+Enter) to run it in your browser.";

  function button(className, text, label) {
    const node = element("button", className, text);
    node.type = "button";
    if (label) node.setAttribute("aria-label", label);
    return node;
  }

  function seconds(value) {
    return `${Math.round(value * 10) / 10} s`;
  }

  function firstLine(text) {
    return String(text ?? "").split("\n")[0].trim().replace(/[\s.]+$/, "");
  }

  // ---- the editor, loaded once per visit and only when a page has a cell -------------------------------------------

  let editorLoading = null;

  /** A promise of the editor, {create}: editor.js evaluates CodeMirror a package per task once it has run. */
  function loadEditor() {
    if (window.ExplainerEditor) return window.ExplainerEditor.ready;
    if (!editorLoading) {
      editorLoading = new Promise((resolve, reject) => {
        const tag = document.createElement("script");
        tag.src = EDITOR_URL;
        tag.onload = () => (window.ExplainerEditor ? resolve(window.ExplainerEditor.ready)
          : reject(new Error("the editor file defines no editor")));
        tag.onerror = () => reject(new Error("the editor file could not be loaded"));
        document.head.appendChild(tag);
      });
      editorLoading.catch(() => {
        editorLoading = null;  // the next page (or a reload of the editor) tries again
      });
    }
    return editorLoading;
  }

  /** Resolves when the runtime is ready, starting it if idle; reports boot progress; rejects if it cannot start. */
  function whenReady(onLoading) {
    if (runtime.state === "failed") runtime.retry();
    return new Promise((resolve, reject) => {
      const waiter = {
        runtimeChanged() {
          if (runtime.state === "ready") {
            runtime.unsubscribe(waiter);
            resolve();
          } else if (runtime.state === "failed") {
            runtime.unsubscribe(waiter);
            reject(new Error(runtime.failure.reason));
          } else if (runtime.state === "booting") {
            onLoading(runtime.progress);
          } else {
            runtime.start();
          }
        },
      };
      runtime.subscribe(waiter);
      waiter.runtimeChanged();
    });
  }

  // ---- storage: a reader's edits, per page and cell -----------------------------------------------------------------

  function storageKey(number) {
    return `${STORAGE_PREFIX}${location.pathname}#${number}`;
  }

  /** The reader's saved code, if it was saved from this same original (an edited lesson drops old edits). */
  function savedCode(number, original) {
    try {
      const saved = JSON.parse(localStorage.getItem(storageKey(number)) || "null");
      return saved && saved.original === original && typeof saved.code === "string" ? saved.code : null;
    } catch (error) {
      return null;  // storage disabled, or unreadable: start from the original
    }
  }

  function saveCode(number, original, code) {
    try {
      if (code === original) localStorage.removeItem(storageKey(number));
      else localStorage.setItem(storageKey(number), JSON.stringify({original, code}));
    } catch (error) {
      // Storage full or disabled: the edit lives until the page is left.
    }
  }

  // ---- one page: its cells, their sessions and one queue of runs ----------------------------------------------------

  /** Cells of one page. Runs go one at a time in the order asked; a session's namespace lives in the worker, so the
   * page remembers which of its cells ran there since the worker (or the session) started. */
  class Page {
    constructor() {
      this.cells = [];
      this.sessions = new Map();  // session key → {generation, ran: Set of cells}
      this.queue = Promise.resolve();
    }

    session(name) {
      let session = this.sessions.get(name);
      if (!session || session.generation !== runtime.generation) {
        session = {generation: runtime.generation, ran: new Set()};
        this.sessions.set(name, session);
      }
      return session;
    }

    /** The cells above `cell` in its named session that have not run in the current namespace, in page order.
     * Cells that name no session share the page's namespace but never run one another. */
    missing(cell) {
      if (!cell.config.session) return [];
      const session = this.session(cell.sessionKey);
      return this.cells.filter((other) => other.config.session === cell.config.session
        && other.number < cell.number && !session.ran.has(other));
    }

    enqueue(work) {
      const next = this.queue.then(work, work);
      this.queue = next.catch(() => {});
      return next;
    }

    forget(sessionKey) {
      this.sessions.delete(sessionKey);
    }
  }

  // ---- one cell -----------------------------------------------------------------------------------------------------

  class CellView {
    constructor(root, config, page) {
      this.root = root;
      this.config = config;
      this.page = page;
      this.number = Number(root.dataset.cell);
      this.name = config.title || `cell ${this.number}`;
      // Sessions live in the worker for the whole visit: the page's path keeps two pages' sessions apart. Cells
      // that name no session share the page's own namespace.
      this.sessionKey = config.session ? `${location.pathname}#${config.session}` : location.pathname;
      this.editor = null;
      this.running = false;
      this.unmounted = false;
      this.listeners = new AbortController();
      this.observer = null;
    }

    static create(root, page) {
      try {
        return new CellView(root, JSON.parse(root.dataset.config), page);
      } catch (error) {
        console.warn(`cell ${root.id}: unreadable data-config`, error);
        return null;
      }
    }

    mount() {
      this.staticCode = this.root.querySelector(".highlight, pre");
      this.editorBox = element("div", "cell__editor");
      const toolbar = element("div", "cell__toolbar");
      this.runButton = button("cell__run", "Run", `Run ${this.name}`);
      this.runButton.setAttribute("aria-keyshortcuts", "Control+Enter Meta+Enter");
      this.runButton.title = "Run the code (Ctrl+Enter)";
      this.resetButton = button("cell__reset", "Reset", `Reset ${this.name} to its original code`);
      this.copyButton = button("cell__copy", "Copy", `Copy the code of ${this.name}`);
      this.restartButton = button("cell__restart", "Restart", `Restart the Python session of ${this.name}`);
      this.restartButton.title = "Forget the variables of this session's cells";
      toolbar.append(this.runButton, this.resetButton, this.copyButton, this.restartButton);
      this.status = element("p", "cell__status");
      this.status.setAttribute("role", "status");
      this.output = element("div", "cell__output");
      this.output.hidden = true;
      (this.staticCode || this.root.lastChild).after(this.editorBox, toolbar, this.status, this.output);
      for (const control of toolbar.children) control.disabled = true;  // until the editor is there
      this.setStatus("Loading the code editor…");
      const signal = this.listeners.signal;
      this.runButton.addEventListener("click", (event) => this.run(event.timeStamp), {signal});
      this.resetButton.addEventListener("click", () => this.reset(), {signal});
      this.copyButton.addEventListener("click", () => this.copy(), {signal});
      this.restartButton.addEventListener("click", () => this.restart(), {signal});
      // Each cell builds its editor in tasks of its own (two: create() builds the state, then the view): built
      // together, a page's five editors held the main thread for one 270-290 ms task (long-animation-frame entries on
      // try-it-yourself).
      const ownTask = (Editor) => new Promise((resolve) => setTimeout(() => resolve(Editor), 0));
      loadEditor().then(ownTask).then((Editor) => this.attachEditor(Editor), (error) => {
        this.setStatus(`The code editor could not be loaded (${error.message}); the code above is shown as text.`);
        this.root.dataset.state = "error";
      });
    }

    async attachEditor(Editor) {
      if (this.unmounted) return;
      const editor = await Editor.create(this.editorBox, {
        doc: savedCode(this.number, this.config.code) ?? this.config.code,
        label: `Python code: ${this.name}`,
        onRun: () => this.run(performance.now()),
        onEscape: () => this.runButton.focus(),
        onChange: (code) => saveCode(this.number, this.config.code, code),
      });
      if (this.unmounted) {  // the reader left the page while the editor was built
        editor.destroy();
        return;
      }
      this.editor = editor;
      if (this.staticCode) this.staticCode.hidden = true;
      for (const control of this.runButton.parentNode.children) control.disabled = false;
      this.root.dataset.state = "ready";
      this.setStatus(READY_STATUS);
      // A reader who reaches into a cell will likely run it: start Python then, not at the first Run.
      this.editorBox.addEventListener("focusin", () => runtime.start(), {signal: this.listeners.signal, once: true});
      if (this.config.autorun) {
        this.observer = new IntersectionObserver((entries) => {
          if (!entries.some((entry) => entry.isIntersecting)) return;
          this.observer.disconnect();
          this.run(performance.now());
        }, {rootMargin: NEAR_VIEWPORT});
        this.observer.observe(this.root);
      }
    }

    unmount() {
      this.unmounted = true;
      if (this.observer) this.observer.disconnect();
      this.listeners.abort();
      if (this.editor) this.editor.destroy();
    }

    setStatus(text) {
      if (this.status.textContent !== text) this.status.textContent = text;
    }

    // ---- running ----------------------------------------------------------------------------------------------------

    run(requestTime) {
      if (!this.editor || this.running) return;
      this.running = true;
      this.root.dataset.state = "running";
      this.runButton.setAttribute("aria-disabled", "true");
      this.clearOutput();
      this.setStatus("Waiting for the cells before it to finish…");
      this.page.enqueue(() => this.runInOrder(requestTime)).finally(() => {
        this.running = false;
        this.runButton.removeAttribute("aria-disabled");
      });
    }

    /** Run the cells above this one in its session that have not run yet (their own output shows under each),
     * then this one. */
    async runInOrder(requestTime) {
      try {
        await whenReady((progress) => this.showLoading(progress));
      } catch (error) {
        this.finish("error", `Python could not start: ${firstLine(error.message)}. Press Run to try again.`);
        return;
      }
      const before = this.page.missing(this);
      for (const cell of before) {
        if (cell.unmounted || !cell.editor) continue;
        cell.clearOutput();
        const outcome = await cell.execute();
        if (outcome !== "ok") {
          this.finish("error", `${cell.name} above, which this cell builds on, did not run cleanly: fix it and run `
            + "again.");
          return;
        }
      }
      await this.execute(requestTime, before);
    }

    /** One run in the worker; resolves "ok", "error" or "stopped" once its outcome is on screen. */
    async execute(requestTime = performance.now(), before = []) {
      this.root.dataset.state = "running";
      this.editor.markLine(null);
      this.setStatus("Running…");
      const limit = Math.min(this.config.timeout, runtime.manifest.timeout_ms / 1000);
      const session = this.page.session(this.sessionKey);
      const started = performance.now();
      const {reply} = runtime.call(Protocol.OPS.RUN, {
        code: this.editor.getCode(), session: this.sessionKey, setup: this.config.setup, check: this.config.check,
      }, {
        onProgress: (progress) => this.showProgress(progress),
        timeoutMs: limit * 1000,
        fromStart: true,  // the limit is the cell's own running time, not its wait behind a render or a chunk
        onTimeout: (id) => runtime.interrupt(id, `it ran past its time limit of ${seconds(limit)}`),
      });
      let message;
      try {
        message = await reply;
      } catch (stopped) {  // the worker went away: every session's variables with it
        this.page.forget(this.sessionKey);
        const why = stopped.culprit ? firstLine(stopped.reason) : "Python stopped while this cell was waiting";
        return this.finish("stopped", `Stopped: ${why}, so Python was restarted and this session's variables are `
          + "gone; run the cell again to start afresh.");
      }
      session.ran.add(this);
      const elapsed = performance.now() - started;
      if (!message.ok) return this.showError(message.error, limit);
      this.showValue(message.value);
      performance.measure(`explainer:cell:${this.root.id}`, {start: requestTime, end: performance.now()});
      const after = before.length ? ` (after ${before.map((cell) => cell.name).join(", ")}, which it builds on)` : "";
      return this.finish("ok", `Ran in ${Math.round(elapsed)} ms${after}.`);
    }

    finish(state, text) {
      this.root.dataset.state = {ok: "done", error: "error", stopped: "stopped"}[state];
      this.setStatus(text);
      return state;
    }

    showLoading({stage, state}) {
      const step = Protocol.STAGES.indexOf(stage) + (state === "done" ? 1 : 0);
      if (step < Protocol.STAGES.length) {
        this.setStatus(`Loading ${Protocol.STAGE_LABELS[Protocol.STAGES[step]]} (step ${step + 1} of `
          + `${Protocol.STAGES.length})…`);
      }
    }

    // ---- output ---------------------------------------------------------------------------------------------------

    clearOutput() {
      this.output.replaceChildren();
      this.output.hidden = true;
      if (this.editor) this.editor.markLine(null);
    }

    append(node) {
      this.output.appendChild(node);
      this.output.hidden = false;
    }

    showProgress(progress) {
      if (progress.figure) {
        this.showFigure(progress.figure);
        return;
      }
      const kind = progress.stream === "stderr" ? "stderr" : "stdout";
      const last = this.output.lastElementChild;
      if (last && last.dataset.stream === kind) {
        last.textContent += progress.text;
        return;
      }
      const block = element("pre", `cell__stream cell__stream--${kind}`, progress.text);
      block.dataset.stream = kind;
      this.append(block);
    }

    showFigure(description) {
      const readouts = (description.readouts || []).map((readout) => `${readout.label} ${readout.text}`);
      const title = description.axes.title || "Figure drawn by the code";
      const box = element("div", "cell__figure");
      box.appendChild(Render.renderFigure(description, {
        label: readouts.length ? `${title}: ${readouts.join("; ")}` : title,
      }));
      if (readouts.length) box.appendChild(element("p", "cell__readouts", readouts.join(" · ")));
      this.append(box);
    }

    showValue({result, check}) {
      if (result !== null && result !== undefined) this.append(element("pre", "cell__result", result));
      if (check) this.showCheck(check);
    }

    showCheck({passed, message, reason}) {
      const verdict = element("p", `cell__check cell__check--${passed ? "passed" : "failed"}`);
      verdict.dataset.passed = String(passed);
      verdict.append(element("strong", null, passed ? "Check passed: " : "Check failed: "), message);
      if (!passed && reason) verdict.append(" ", element("span", "cell__check-reason", `(${reason})`));
      this.append(verdict);
    }

    showError(error, limit) {
      if (error.kind === "interrupted") {
        return this.finish("stopped", `Stopped: it ran past its time limit of ${seconds(limit)}; Python kept `
          + "this session's variables.");
      }
      const where = {setup: "the cell's hidden setup code", check: "the cell's check"}[error.source];
      const box = element("div", "cell__error");
      box.append(element("p", "cell__error-message", error.message));
      if (error.detail) box.append(element("pre", "cell__traceback", error.detail));
      this.append(box);
      if (where) return this.finish("error", `The error is in ${where}, not in your code: ${error.message}.`);
      if (error.line) {
        this.editor.markLine(error.line);
        return this.finish("error", `Error on line ${error.line}: ${error.message}`);
      }
      return this.finish("error", `Error: ${error.message}`);
    }

    // ---- the other buttons ----------------------------------------------------------------------------------------

    reset() {
      this.editor.setCode(this.config.code);
      saveCode(this.number, this.config.code, this.config.code);
      this.clearOutput();
      this.root.dataset.state = "ready";
      this.setStatus("Back to the original code.");
    }

    copy() {
      const code = this.editor.getCode();
      Promise.resolve()
        .then(() => navigator.clipboard.writeText(code))
        .then(() => this.setStatus("Copied the code."),
          () => this.setStatus("This browser did not allow copying: select the code and copy it by hand."));
    }

    restart() {
      this.page.forget(this.sessionKey);
      for (const cell of this.page.cells) {
        if (cell.sessionKey === this.sessionKey && !cell.running) cell.clearOutput();
      }
      const done = "Restarted: the variables of this cell's session are forgotten.";
      if (runtime.state !== "ready") {
        this.setStatus(done);
        return;
      }
      runtime.call(Protocol.OPS.RESET, {session: this.sessionKey}).reply.then(() => this.setStatus(done),
        () => this.setStatus(done));  // a worker that went away took the variables with it
    }
  }

  // ---- pages: mount on load and on every instant navigation ------------------------------------------------------

  const mounted = new WeakSet();
  let page = null;

  function mountPage() {
    const roots = [...document.querySelectorAll("div.cell[data-config]")];
    if (page && page.cells.some((cell) => !cell.root.isConnected)) {
      for (const cell of page.cells) cell.unmount();
      page = null;
    }
    if (!roots.length || roots.every((root) => mounted.has(root))) return;
    page = page || new Page();
    for (const root of roots) {
      if (mounted.has(root)) continue;
      mounted.add(root);
      const cell = CellView.create(root, page);
      if (!cell) continue;
      page.cells.push(cell);
      cell.mount();
    }
    page.cells.sort((a, b) => a.number - b.number);
  }

  onEveryPage(mountPage);
})();
