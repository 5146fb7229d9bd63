/* Sandboxes on the page: turns each built sandbox container (<figure class="sandbox">) into a live figure.
 *
 * The figures are computed by the one Pyodide worker of the visit, owned by runtime.js (ExplainerRuntime). It starts
 * when the first sandbox comes near the viewport or the reader first touches a control, never on a page without
 * sandboxes, and it outlives Material's instant navigation: every `document$` emission mounts the sandboxes of the new
 * page and unmounts those that left the document.
 * README.md in this folder is the written contract (container HTML, manifest, messages, states, colours).
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

  const LIVE_STATUS = "Live: this figure is computed in your browser; change the controls to redraw it.";
  // After a failed render the figure and readouts still show the values before the change (data-stale marks them).
  const STALE_STATUS = "The last change failed (see the error above): the figure and readouts still show the values "
    + "before it.";
  // The page is built saying what a reader without JavaScript gets; with it, the figure is about to go live.
  const WAITING_STATUS = "Static figure; the live version starts when you scroll here.";

  // ---- formatting ------------------------------------------------------------------------------------------------

  // A slider's value as the page shows it. The rule is data, the control's `format` ({decimals, suffix}) that
  // explainer.sandbox.format_value applies to write the built page; here it is applied on every input, without a
  // round trip to Python. tests/browser/test_page_runtime.py compares the two on every value of every slider.
  function formatValue(value, {decimals, suffix}) {
    if (!Number.isFinite(value)) return "—";
    let text = value.toFixed(decimals);
    if (Number(text) === 0) text = text.replace("-", "");
    return text.replace("-", "−") + suffix;
  }

  function firstLine(text, limit = 200) {
    const line = String(text ?? "").split("\n")[0].trim();
    return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
  }

  /** A container's config, from its data-config attribute (not a JSON <script>: Material's instant navigation
   * re-creates inline scripts without their type, so JSON there would run as JavaScript). */
  function readConfig(root) {
    return JSON.parse(root.dataset.config);
  }

  // ---- one sandbox on the page -----------------------------------------------------------------------------------

  class SandboxView {
    constructor(root, config, runtime, page) {
      this.root = root;
      this.config = config;
      this.runtime = runtime;
      this.page = page;  // shared by the sandboxes of one page: {firstLiveDrawn, firstComputed}
      this.controls = new Map((config.controls || []).map((control) => [control.name, control]));
      this.figureBox = root.querySelector(".sandbox__figure");
      this.staticView = root.querySelector(".sandbox__static");
      this.readouts = root.querySelector(".sandbox__readouts");
      this.form = root.querySelector(".sandbox__controls");
      this.status = root.querySelector(".sandbox__status");
      this.wanted = false;  // near the viewport or touched: should be live
      this.hasLive = false;  // a live figure has been drawn
      this.inFlight = null;  // id of the render request the worker is working on
      this.pending = null;  // latest-wins slot: {inputTime} when a newer render is wanted
      this.waitingForReader = false;  // this sandbox's render stopped the worker: it waits for the next interaction
      this.renders = 0;
      this.readoutsHtml = null;  // the readouts' HTML last drawn live
      this.shownParams = JSON.stringify(config.params);  // the values the figure on show was drawn for
      // The build's view of the starting values (explainer.sandbox's, as the worker sends it): drawn live as soon as
      // the runtime is up, instead of after the worker's first render (README.md, "The first live figure").
      this.startView = config.start && config.start.figure ? config.start : null;
      this.unmounted = false;
      this.listeners = new AbortController();
      this.observer = null;
    }

    /** A view for a container, or null (with the reason in its status line) if its config cannot be read. */
    static create(root, runtime, page) {
      try {
        return new SandboxView(root, readConfig(root), runtime, page);
      } catch (error) {
        const status = root.querySelector(".sandbox__status");
        if (status) status.textContent = "Static figure only: this sandbox's settings could not be read.";
        console.warn(`sandbox ${root.id}: unreadable data-config`, error);
        return null;
      }
    }

    mount() {
      this.addParts();
      const signal = this.listeners.signal;
      if (this.form) {
        this.form.addEventListener("input", (event) => this.onInput(event), {signal});
        this.form.addEventListener("focusin", () => this.want(), {signal});
        this.form.addEventListener("pointerdown", () => this.want(), {signal});
        this.form.addEventListener("submit", (event) => event.preventDefault(), {signal});
        for (const control of this.controlElements()) this.updateOutput(control);
      }
      this.retryButton.addEventListener("click", () => this.retry(), {signal});
      this.root.dataset.renders = "0";
      this.setStatus(WAITING_STATUS);
      this.runtime.subscribe(this);
      this.observer = new IntersectionObserver((entries) => {
        if (entries.some((entry) => entry.isIntersecting)) this.want();
      }, {rootMargin: NEAR_VIEWPORT});
      this.observer.observe(this.root);
    }

    unmount() {
      this.unmounted = true;
      if (this.observer) this.observer.disconnect();
      this.listeners.abort();
      this.runtime.unsubscribe(this);
      if (this.inFlight !== null) this.runtime.cancel(this.inFlight);
      this.inFlight = null;
      this.pending = null;
    }

    addParts() {
      this.liveView = element("div", "sandbox__live");
      this.liveView.hidden = true;
      this.figureBox.appendChild(this.liveView);
      this.errorBox = element("div", "sandbox__error");
      this.errorBox.setAttribute("role", "alert");
      this.errorBox.hidden = true;
      this.root.insertBefore(this.errorBox, this.form || this.status);
      this.retryButton = element("button", "sandbox__retry", "Retry");
      this.retryButton.type = "button";
      this.retryButton.hidden = true;
      this.status.after(this.retryButton);
      this.status.setAttribute("tabindex", "-1");  // focus lands here when the Retry button hides itself
    }

    controlElements() {
      return this.form ? [...this.form.querySelectorAll(".sandbox__control[data-param]")] : [];
    }

    // ---- state shown to the reader -------------------------------------------------------------------------------

    setState(state) {
      if (this.root.dataset.state !== state) this.root.dataset.state = state;
    }

    /** One sentence in the status line, with a progress bar while loading; unchanged text is not re-announced. */
    setStatus(text, progress = null) {
      let bar = this.status.querySelector(".sandbox__progress");
      if (this.status.dataset.text !== text) {
        this.status.dataset.text = text;
        this.status.replaceChildren(text);
        bar = null;
      }
      if (progress === null) {
        if (bar) bar.remove();
        return;
      }
      if (!bar) {
        bar = element("progress", "sandbox__progress");
        bar.max = 1;
        bar.setAttribute("aria-hidden", "true");  // the text already says which step
        this.status.appendChild(bar);
      }
      bar.value = progress;
    }

    runtimeChanged() {
      if (!this.wanted || this.unmounted || this.waitingForReader) return;
      const runtime = this.runtime;
      if (runtime.state === "booting") this.showLoading(runtime.progress);
      else if (runtime.state === "ready") this.pump();
      else if (runtime.state === "failed") this.showFailure(runtime.failure);
      else if (runtime.state === "idle") this.recover(runtime.stopped);
    }

    /** The worker went away. The sandbox whose render was in flight says so and waits for the reader (its values may
     * be what stopped it); the others draw their current values again on a fresh worker, by themselves. */
    recover(stopped) {
      if (this.inFlight !== null && stopped && stopped.blames(this.inFlight)) {
        this.inFlight = null;
        this.waitingForReader = true;
        this.pending = {inputTime: null};
        this.showStopped(stopped.reason);
        return;
      }
      this.inFlight = null;
      if (this.waitingForReader) return;
      this.pending = this.pending || {inputTime: null};
      this.runtime.start();
    }

    showStopped(text) {
      const reason = text.replace(/[\s.]+$/, "");
      this.setState("error");
      this.setStatus(`The live version stopped: ${reason}. Change a control or press Retry to start it again; `
        + `${this.hasLive ? "the last figure stays" : "the static figure stays"}.`);
      this.retryButton.hidden = false;
    }

    showLoading({stage, state, fraction}) {
      this.retryButton.hidden = true;
      this.setState("loading");
      const step = Protocol.STAGES.indexOf(stage) + (state === "done" ? 1 : 0);
      if (step >= Protocol.STAGES.length) {
        this.setStatus("Drawing the live figure…", fraction);
      } else {
        const label = Protocol.STAGE_LABELS[Protocol.STAGES[step]];
        this.setStatus(`Loading ${label} (step ${step + 1} of ${Protocol.STAGES.length})…`, fraction);
      }
    }

    showFailure({reason: text}) {
      const reason = text.replace(/[\s.]+$/, "");
      this.inFlight = null;
      this.pending = this.pending || {inputTime: null};  // draw the current values once a retry succeeds
      this.setState("error");
      this.setStatus(this.hasLive ? `The live version stopped: ${reason}. The last figure stays.`
        : `The live version could not start: ${reason}. The static figure stays.`);
      this.retryButton.hidden = false;
    }

    retry() {
      if (document.activeElement === this.retryButton) this.status.focus();
      if (this.runtime.state === "failed") this.runtime.retry();
      else this.want();
    }

    // ---- rendering (latest wins) ---------------------------------------------------------------------------------

    want() {
      if (this.unmounted) return;
      if (this.waitingForReader) {  // the reader is back: start again (a fresh worker if the last one is gone)
        this.waitingForReader = false;
        this.pending = this.pending || {inputTime: null};
        this.runtime.start();
        this.runtimeChanged();
        return;
      }
      if (this.wanted) return;
      this.wanted = true;
      this.observer.disconnect();
      this.pending = this.pending || {inputTime: null};
      this.runtime.start();
      this.runtimeChanged();
    }

    onInput(event) {
      const control = event.target.closest(".sandbox__control[data-param]");
      if (!control) return;
      this.updateOutput(control);
      // Only updates of a live figure are timed: before that the wait includes loading the runtime.
      this.pending = {inputTime: this.hasLive ? event.timeStamp || performance.now() : null};
      this.want();
      this.pump();
    }

    /** Send the pending render unless one is already in flight: a dragged slider never queues stale work. The
     * first one, at the starting values, first draws the build's view of them; the worker's reply then only
     * confirms it (and has made the sandbox ready for the reader's first change). */
    pump() {
      if (this.unmounted || !this.pending || this.inFlight !== null || this.runtime.state !== "ready") return;
      const {inputTime} = this.pending;
      this.pending = null;
      const params = this.currentParams();
      const key = JSON.stringify(params);
      const fromBuild = !this.hasLive && this.startView !== null && key === this.shownParams;
      if (fromBuild) this.draw(this.startView, null, key, "build");
      const {id, reply} = this.runtime.call(Protocol.OPS.RENDER, {sandbox: this.config.sandbox, params});
      this.inFlight = id;
      reply.then((message) => this.received(id, message, inputTime, key, fromBuild), () => {
        if (this.inFlight === id) this.inFlight = null;
      });
    }

    received(id, message, inputTime, params, fromBuild) {
      if (this.inFlight !== id || this.unmounted) return;
      this.inFlight = null;
      this.pump();  // the newest values go to the worker before this reply is drawn
      const onShow = fromBuild && params === this.shownParams;  // the build's view of these values is on show
      if (message.ok) {
        if (onShow) this.computedInBrowser();  // the worker has these values too: no need to redraw
        else this.draw(message.value, inputTime, params);
      } else if (message.error.kind !== "cancelled") {
        if (onShow) this.showStatic();  // values the browser cannot draw: the static figure, not a live one, stays
        this.showError(message.error, params !== this.shownParams);
      }
    }

    currentParams() {
      const params = {...this.config.params};
      for (const control of this.controlElements()) {
        const input = control.querySelector("input, select");
        if (!input || input.disabled) continue;  // fixed parameters keep their configured value
        const kind = control.dataset.kind || (this.controls.get(control.dataset.param) || {}).kind;
        if (kind === "toggle") params[control.dataset.param] = input.checked;
        else if (kind === "choice") params[control.dataset.param] = input.value;
        else params[control.dataset.param] = input.valueAsNumber;  // NaN reaches Python as null and is reported
      }
      return params;
    }

    updateOutput(control) {
      const output = control.querySelector("output");
      const input = control.querySelector("input");
      const spec = this.controls.get(control.dataset.param);
      if (!output || !input || !spec || (spec.kind !== "float" && spec.kind !== "int")) return;
      const text = formatValue(input.valueAsNumber, spec.format);
      if (output.textContent !== text) output.textContent = text;
    }

    // ---- drawing -------------------------------------------------------------------------------------------------

    /** Draw a render's view: explainer.sandbox's {figure, label, readouts_html}, the words made in Python once;
     * `computed` says where (data-computed): "build" for the build's view of the starting values, else "browser". */
    draw({figure, label, readouts_html: readoutsHtml}, inputTime, params, computed = "browser") {
      this.shownParams = params;
      const svg = Render.renderFigure(figure, {height: this.config.height, label});
      this.liveView.replaceChildren(svg);
      if (!this.hasLive) {
        this.hasLive = true;
        this.staticView.hidden = true;
        this.liveView.hidden = false;
      }
      if (this.readoutsHtml !== readoutsHtml) {  // made (and escaped) by explainer, as in the built page
        this.readouts.innerHTML = readoutsHtml;
        this.readoutsHtml = readoutsHtml;
      }
      this.clearError();
      this.renders += 1;
      this.root.dataset.renders = String(this.renders);
      this.retryButton.hidden = true;
      this.setState("live");
      this.setStatus(LIVE_STATUS);
      if (!this.page.firstLiveDrawn) {
        this.page.firstLiveDrawn = true;
        performance.mark("explainer:first-live");
      }
      if (computed === "browser") this.computedInBrowser();
      else this.root.dataset.computed = computed;
      if (inputTime !== null) {
        performance.measure(`explainer:update:${this.root.id}`, {start: inputTime, end: performance.now()});
      }
    }

    /** The figure on show is the worker's (drawn from its reply, or the build's view of the same values, confirmed). */
    computedInBrowser() {
      this.root.dataset.computed = "browser";
      if (!this.page.firstComputed) {
        this.page.firstComputed = true;
        performance.mark("explainer:first-computed");
      }
    }

    /** Back to the static figure: the build's view was drawn for values the worker then failed to draw. */
    showStatic() {
      this.hasLive = false;
      delete this.root.dataset.computed;
      this.liveView.hidden = true;
      this.liveView.replaceChildren();
      this.staticView.hidden = false;
      this.readoutsHtml = null;
    }

    /** A render that failed: the error inline and, when the figure on show was drawn for other values, marked stale. */
    showError(error, stale) {
      this.clearError();
      const message = element("p", "sandbox__error-message");
      message.append(element("strong", null, "This figure could not be drawn. "), firstLine(error.message));
      this.errorBox.appendChild(message);
      if (error.detail) {
        const details = element("details", "sandbox__error-details");
        details.append(element("summary", null, "Details"), element("pre", "sandbox__error-detail", error.detail));
        this.errorBox.appendChild(details);
      }
      this.errorBox.hidden = false;
      if (stale) {
        this.root.dataset.stale = "true";  // sandbox.css dims the figure and readouts: they show the values before
        this.setStatus(STALE_STATUS);
      } else if (!this.hasLive) {  // the starting values themselves failed: the static figure shows just those
        this.setStatus("The live version is running, but these values could not be drawn; the static figure stays.");
      }
      const control = error.parameter && this.form
        && this.form.querySelector(`.sandbox__control[data-param="${CSS.escape(error.parameter)}"]`);
      if (control) {
        control.classList.add("sandbox__control--invalid");
        const input = control.querySelector("input, select");
        if (input) input.setAttribute("aria-invalid", "true");
      }
      this.setState("error");
    }

    clearError() {
      delete this.root.dataset.stale;
      if (this.errorBox.hidden) return;
      this.errorBox.hidden = true;
      this.errorBox.replaceChildren();
      for (const control of this.controlElements()) {
        control.classList.remove("sandbox__control--invalid");
        const input = control.querySelector("[aria-invalid]");
        if (input) input.removeAttribute("aria-invalid");
      }
    }
  }

  // ---- pages: mount on load and on every instant navigation ------------------------------------------------------

  // The sandboxes mounted in one pass share {firstLiveDrawn, firstComputed}.
  Page.mountViews("figure.sandbox[data-sandbox]", "sandbox", (root, page) => SandboxView.create(root, runtime, page));
})();
