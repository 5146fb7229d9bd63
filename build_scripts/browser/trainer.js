/* Training labs on the page: turns each built <figure class="trainer"> (build_scripts/markdown/trainer.py) into a
 * model the reader trains in their browser, in the one Pyodide worker of the visit (runtime.js).
 *
 * Train sends one request, op "stream" with the stream "train" (explainer/streams/train.py): the worker runs it a
 * chunk of about 100 ms at a time and posts each chunk's view (the figure so far, its readouts) as a progress
 * message; the reply is the final view with the results and the greedy generations. Stop cancels the request: the
 * worker closes the stream before its next chunk, and the last figure stays. Changing a setting stops a run and shows
 * the new settings' reference (the build-time run, drawn by the same stream with `run: false`); a run completed in
 * this visit is kept in sessionStorage and shown again for its settings, across pages. Leaving the page (Material's
 * instant navigation, `document$`) stops the run.
 * README.md in this folder is the written contract ("Training lab").
 *
 * Needs the globals of render.js (ExplainerRender), protocol.js (ExplainerProtocol), runtime.js (ExplainerRuntime)
 * and page.js (ExplainerPage), loaded before this file.
 */
(function () {
  "use strict";

  const Protocol = window.ExplainerProtocol;
  const Render = window.ExplainerRender;
  const runtime = window.ExplainerRuntime;
  const Page = window.ExplainerPage;
  const {element, NEAR_VIEWPORT} = Page;

  const STORAGE_PREFIX = "explainer-trainer:";
  const WAITING_STATUS = "Choose settings and press Train: the model trains in your browser.";

  function firstLine(text, limit = 200) {
    const line = String(text ?? "").split("\n")[0].trim().replace(/[\s.]+$/, "");
    return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
  }

  function seconds(ms) {
    return ms < 10000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
  }

  /** A setting's value as shown beside its slider: the control's format (decimals, then the unit), as Python
   * writes it (explainer.sandbox.format_value); the lab's sliders are whole, non-negative numbers. */
  function shownValue(value, {decimals, suffix}) {
    return Number.isFinite(value) ? value.toFixed(decimals) + suffix : "—";
  }

  // ---- one training lab ------------------------------------------------------------------------------------------

  class TrainerView {
    constructor(root, config) {
      this.root = root;
      this.config = config;
      this.controls = config.controls;
      this.form = root.querySelector(".trainer__controls");
      this.actions = root.querySelector(".trainer__actions");
      this.trainButton = root.querySelector(".trainer__train");
      this.stopButton = root.querySelector(".trainer__stop");
      this.progressBar = root.querySelector(".trainer__progress");
      this.counter = root.querySelector(".trainer__counter");
      this.figureBox = root.querySelector(".trainer__figure");
      this.staticView = root.querySelector(".trainer__static");
      this.readouts = root.querySelector(".trainer__readouts");
      this.results = root.querySelector(".trainer__results");
      this.status = root.querySelector(".trainer__status");
      this.storageKey = `${STORAGE_PREFIX}${location.pathname}#${root.id}`;
      this.run = null;  // the run in flight: {id, key, clicked, step, steps, rateFrom}
      this.wantsRun = null;  // Train was pressed before the runtime was ready: the settings to train
      this.viewInFlight = null;  // id of the reference view request in flight
      this.viewWanted = false;  // latest wins: the view of the current settings should be drawn
      this.readoutsHtml = null;  // the HTML last put under the figure, and into the results
      this.resultsHtml = null;
      this.chunks = 0;
      this.unmounted = false;
      this.listeners = new AbortController();
      this.observer = null;
    }

    static create(root) {
      try {
        return new TrainerView(root, JSON.parse(root.dataset.config));
      } catch (error) {
        root.querySelector(".trainer__status").textContent = "Static view only: this lab's settings could not be read.";
        console.warn(`trainer ${root.id}: unreadable data-config`, error);
        return null;
      }
    }

    mount() {
      this.liveView = element("div", "sandbox__live trainer__live");
      this.liveView.hidden = true;
      this.figureBox.appendChild(this.liveView);
      this.actions.hidden = false;
      const signal = this.listeners.signal;
      this.form.addEventListener("input", (event) => this.settingsChanged(event), {signal});
      this.form.addEventListener("submit", (event) => event.preventDefault(), {signal});
      this.form.addEventListener("focusin", () => runtime.start(), {signal});
      this.trainButton.addEventListener("click", () => this.train(), {signal});
      this.stopButton.addEventListener("click", () => this.stop("Stopped"), {signal});
      runtime.subscribe(this);
      this.root.dataset.chunks = "0";
      this.setStatus(WAITING_STATUS);
      this.restore();
      this.observer = new IntersectionObserver((entries) => {
        if (entries.some((entry) => entry.isIntersecting)) runtime.start();
      }, {rootMargin: NEAR_VIEWPORT});
      this.observer.observe(this.root);
    }

    /** The page is going away (instant navigation): stop the run; the last completed one is in sessionStorage. */
    unmount() {
      this.unmounted = true;
      if (this.run) runtime.cancel(this.run.id);
      if (this.viewInFlight !== null) runtime.cancel(this.viewInFlight);
      this.run = null;
      this.listeners.abort();
      if (this.observer) this.observer.disconnect();
      runtime.unsubscribe(this);
    }

    // ---- settings ------------------------------------------------------------------------------------------------

    inputOf(name) {
      return this.form.querySelector(`.sandbox__control[data-param="${CSS.escape(name)}"] input, `
        + `.sandbox__control[data-param="${CSS.escape(name)}"] select`);
    }

    currentSettings() {
      const settings = {};
      for (const control of this.controls) {
        const input = this.inputOf(control.name);
        if (control.kind === "toggle") settings[control.name] = input.checked;
        else if (control.kind === "choice") settings[control.name] = input.value;
        else settings[control.name] = input.valueAsNumber;
      }
      return settings;
    }

    applySettings(settings) {
      for (const control of this.controls) {
        const input = this.inputOf(control.name);
        if (!(control.name in settings) || !input) continue;
        if (control.kind === "toggle") input.checked = settings[control.name];
        else input.value = String(settings[control.name]);
        this.updateOutput(control);
      }
    }

    updateOutput(control) {
      const output = this.form.querySelector(`output[for="${this.root.id}-${control.name}"]`);
      if (output && control.format) output.textContent = shownValue(this.inputOf(control.name).valueAsNumber,
        control.format);
    }

    keyOf(settings) {
      return JSON.stringify(this.controls.map((control) => settings[control.name]));
    }

    /** The build-time run with these settings (the step count aside), if the grid trained one. */
    referenceFor(settings) {
      return this.config.references.find((reference) => Object.entries(reference.settings)
        .every(([name, value]) => settings[name] === value)) || null;
    }

    settingsChanged(event) {
      const changed = event.target.closest(".sandbox__control[data-param]");
      const control = changed && this.controls.find((c) => c.name === changed.dataset.param);
      if (control) this.updateOutput(control);
      if (this.run || this.wantsRun) this.stop("Stopped because the settings changed");
      this.save();
      this.showSettingsView();
    }

    /** Show what is known for the current settings: a run completed in this visit, else their reference (the
     * static view already shows the starting settings' reference). */
    showSettingsView() {
      const settings = this.currentSettings();
      const key = this.keyOf(settings);
      const completed = this.load().runs[key];
      this.progressBar.max = settings.steps;
      this.viewWanted = false;
      if (completed) {
        this.draw(completed.view);
        this.showCounter(completed.view.step, completed.view.steps);
        this.setState("done");
        this.setStatus(this.doneText(completed));
        return;
      }
      this.showCounter(0, settings.steps);
      if (this.liveView.hidden && key === this.keyOf(this.config.settings)) {
        delete this.root.dataset.stale;
        this.setState("static");
        this.setStatus(WAITING_STATUS);
        return;
      }
      this.viewWanted = true;
      this.root.dataset.stale = "true";  // the view on show is another settings' until the new one is drawn
      this.setStatus(runtime.state === "ready" ? "Drawing the reference for these settings…"
        : "The reference for these settings is drawn once the Python runtime is ready.");
      runtime.start();
      this.pumpView();
    }

    /** Ask the worker for the current settings' reference view; one request at a time, the latest settings win. */
    pumpView() {
      if (!this.viewWanted || this.viewInFlight !== null || runtime.state !== "ready" || this.unmounted) return;
      this.viewWanted = false;
      const settings = this.currentSettings();
      const key = this.keyOf(settings);
      const {id, reply} = runtime.call(Protocol.OPS.STREAM, {name: this.config.stream,
        args: {settings, reference: this.referenceFor(settings), run: false}});
      this.viewInFlight = id;
      reply.then((message) => {
        if (this.viewInFlight !== id) return;
        this.viewInFlight = null;
        if (this.run || this.wantsRun || key !== this.keyOf(this.currentSettings())) {
          this.pumpView();  // a run started, or the settings moved on: this view is not wanted any more
          return;
        }
        if (message.ok) {
          this.draw(message.value);
          this.setState("ready");
          this.setStatus(this.referenceFor(settings) ? "The grey lines are the run trained when this site was "
            + "built with these settings. Press Train to run it yourself." : "No run was trained at build time with "
            + "these settings. Press Train to find out how it learns.");
        } else if (message.error.kind !== "cancelled") {
          this.showError(message.error);
        }
      }, () => {  // the worker went away: ask the next one
        if (this.viewInFlight !== id) return;
        this.viewInFlight = null;
        this.viewWanted = true;
        runtime.start();
      });
    }

    // ---- training ------------------------------------------------------------------------------------------------

    train() {
      if (this.run || this.wantsRun) return;
      this.wantsRun = {settings: this.currentSettings(), clicked: performance.now()};
      performance.mark(`explainer:trainer:train:${this.root.id}`);
      this.trainButton.disabled = true;
      this.stopButton.disabled = false;
      this.setState("training");
      if (runtime.state === "failed") runtime.retry();
      else runtime.start();
      this.runtimeChanged();
    }

    startRun() {
      const {settings, clicked} = this.wantsRun;
      this.wantsRun = null;
      // A stream's limit is on the silence between two messages. A code cell on the page holds the worker for up
      // to timeout_ms (its own limit, after which it is stopped), so the run waits longer than that before it is
      // judged stuck: the two share the worker, and neither is ever stopped for the other's work.
      const run = {id: null, key: this.keyOf(settings), clicked, step: 0, steps: settings.steps, rateFrom: null};
      const {id, reply} = runtime.call(Protocol.OPS.STREAM, {name: this.config.stream,
        args: {settings, reference: this.referenceFor(settings), run: true}},
      {idleTimeoutMs: 2 * runtime.manifest.timeout_ms, onProgress: (progress) => this.progressed(run, progress)});
      run.id = id;
      this.run = run;
      this.progressBar.max = settings.steps;
      this.showCounter(0, settings.steps);
      this.setStatus("Training…");
      reply.then((message) => this.finished(run, message), (error) => this.lost(run, error));
    }

    progressed(run, progress) {
      if (this.run !== run) return;
      const now = performance.now();
      if (run.rateFrom === null) {
        run.rateFrom = {step: progress.step, time: now};
        performance.measure(`explainer:trainer:first-point:${this.root.id}`, {start: run.clicked, end: now});
      }
      run.step = progress.step;
      this.draw(progress);
      this.chunks += 1;
      this.root.dataset.chunks = String(this.chunks);
      const elapsed = now - run.rateFrom.time;
      const rate = elapsed > 0 ? (progress.step - run.rateFrom.step) / (elapsed / 1000) : NaN;
      this.showCounter(progress.step, progress.steps, rate);
      if (progress.phase === "evaluating" && this.status.dataset.text !== "Evaluating on the held-out strings…") {
        this.setStatus("Evaluating on the held-out strings…");
      }
    }

    finished(run, message) {
      if (this.run !== run) return;
      this.run = null;
      this.buttonsIdle();
      if (!message.ok) {
        if (message.error.kind !== "cancelled") this.showError(message.error);
        return;
      }
      const view = message.value;
      const ms = performance.now() - run.clicked;
      performance.measure(`explainer:trainer:run:${this.root.id}`, {start: run.clicked, end: performance.now()});
      this.draw(view);
      this.showCounter(view.step, view.steps);
      const completed = {view: {...view, curve: undefined}, ms};
      const stored = this.load();
      stored.runs[run.key] = completed;
      this.save(stored);
      this.setState("done");
      this.setStatus(this.doneText(completed));
    }

    doneText({view, ms}) {
      const diverged = view.result && view.result.diverged ? " It diverged: the loss stopped being finite." : "";
      return `Trained ${view.step} steps in ${seconds(ms)} in your browser; the final numbers and what the model `
        + `writes are below.${diverged}`;
    }

    /** The worker went away during the run (a crash, or another request past its limit). */
    lost(run, error) {
      if (this.run !== run) return;
      this.run = null;
      this.buttonsIdle();
      this.setState("stopped");
      this.setStatus(`The run stopped at step ${run.step}: ${firstLine(error && error.message)}. Press Train to `
        + "run it again; the same settings give the same run.");
    }

    /** Stop the run now: the last figure stays; the worker closes the stream before its next chunk. */
    stop(why) {
      this.wantsRun = null;
      const run = this.run;
      this.buttonsIdle();
      if (!run) {
        if (this.root.dataset.state === "training") this.setState(this.liveView.hidden ? "static" : "ready");
        return;
      }
      this.run = null;
      const clicked = performance.now();
      delete this.root.dataset.halted;
      runtime.cancel(run.id).then(() => {  // the worker has closed the stream: it is free for other work
        if (!this.unmounted) this.root.dataset.halted = String(Math.round(performance.now() - clicked));
      });
      this.setState("stopped");
      this.root.dataset.stoppedAt = String(run.step);
      this.setStatus(`${why} at step ${run.step} of ${run.steps}; the curve so far stays. Press Train to start `
        + "again: the same settings give the same run.");
    }

    buttonsIdle() {
      this.trainButton.disabled = false;
      this.stopButton.disabled = true;
    }

    // ---- the runtime -----------------------------------------------------------------------------------------

    runtimeChanged() {
      if (this.unmounted) return;
      if (runtime.state === "ready") {
        if (this.wantsRun) this.startRun();
        this.pumpView();
      } else if (runtime.state === "booting" && this.wantsRun) {
        const {stage, state} = runtime.progress || {};
        const step = Math.min(Protocol.STAGES.indexOf(stage) + (state === "done" ? 1 : 0), Protocol.STAGES.length - 1);
        this.setStatus(`Loading ${Protocol.STAGE_LABELS[Protocol.STAGES[step]]} (step ${step + 1} of `
          + `${Protocol.STAGES.length}); training starts when it is ready…`);
      } else if (runtime.state === "failed" && (this.wantsRun || this.viewWanted)) {
        this.wantsRun = null;
        this.buttonsIdle();
        this.setState("error");
        this.setStatus(`The Python runtime could not start: ${firstLine(runtime.failure.reason)}. Press Train to `
          + "try again.");
      } else if (runtime.state === "idle" && (this.wantsRun || this.viewWanted)) {
        runtime.start();  // the worker went away (another request stopped it): a fresh one boots
      }
    }

    // ---- drawing ---------------------------------------------------------------------------------------------

    /** Draw a view of explainer.streams.train: {figure, label, readouts_html, results_html}. */
    draw({figure, label, readouts_html: readoutsHtml, results_html: resultsHtml}) {
      this.liveView.replaceChildren(Render.renderFigure(figure, {height: this.config.height, label}));
      if (this.liveView.hidden) {
        this.liveView.hidden = false;
        this.staticView.hidden = true;
      }
      if (readoutsHtml !== this.readoutsHtml) {  // made and escaped by explainer, as in the built page
        this.readouts.innerHTML = readoutsHtml;
        this.readoutsHtml = readoutsHtml;
      }
      if (resultsHtml !== this.resultsHtml) {
        this.results.innerHTML = resultsHtml;
        this.resultsHtml = resultsHtml;
      }
      delete this.root.dataset.stale;
    }

    showCounter(step, steps, rate = NaN) {
      this.progressBar.value = step;
      let text = `Step ${step} of ${steps}`;
      if (Number.isFinite(rate) && rate > 0) {
        text += ` · ${rate.toFixed(rate < 10 ? 1 : 0)} steps/s`;
        if (step < steps) text += ` · about ${seconds(1000 * (steps - step) / rate)} left`;
      }
      this.counter.textContent = text;
    }

    showError(error) {
      this.setState("error");
      this.setStatus(`The run failed: ${firstLine(error.message)}.`);
    }

    setState(state) {
      if (this.root.dataset.state !== state) this.root.dataset.state = state;
    }

    setStatus(text) {
      if (this.status.dataset.text === text) return;  // unchanged text is not announced again
      this.status.dataset.text = text;
      this.status.textContent = text;
    }

    // ---- this visit's runs (sessionStorage) --------------------------------------------------------------------

    load() {
      try {
        const stored = JSON.parse(sessionStorage.getItem(this.storageKey) || "null");
        if (stored && typeof stored === "object" && stored.runs) return stored;
      } catch (error) {
        // unreadable or unavailable storage: this visit starts afresh
      }
      return {settings: null, runs: {}};
    }

    save(stored = this.load()) {
      stored.settings = this.currentSettings();
      try {
        sessionStorage.setItem(this.storageKey, JSON.stringify(stored));
      } catch (error) {
        // full or unavailable: the runs are simply not kept
      }
    }

    /** Back on the page in this visit: the last settings, and the run completed with them, if any. */
    restore() {
      const {settings} = this.load();
      if (!settings) return;
      this.applySettings(settings);
      this.showSettingsView();
    }
  }

  // ---- pages: mount on load and on every instant navigation ------------------------------------------------------

  Page.mountViews("figure.trainer[data-config]", "trainer", (root) => TrainerView.create(root));
})();
