"""The `sandbox` block: places a declared sandbox on a page.

    /// sandbox | projection_shadow
    u_angle: 53                 # any parameter: the starting value instead of the declared default
    fixed: [v_length]           # shown, but the reader cannot change it
    hidden: [v_angle]           # not shown; stays at its (overridden) value
    caption: Drag v and watch its shadow on u.
    alt: Two arrows from the origin, v and u, and the shadow of v on u.
    height: 360                 # figure height in the 640-wide drawing box
    ///

The build checks every key against the sandbox's declaration and stops with `file:line: message` on anything it
cannot honour. The page gets a <figure> holding the static view, native controls and one JSON config (its
data-config attribute) that the browser runtime (build_scripts/browser/sandbox.js) reads; the contract is in build_scripts/browser/README.md.
"""

import functools
import html
import json
from collections.abc import Callable
from dataclasses import dataclass

from markdown import Extension

from build_scripts.figures.jobs import FigureError, FigureJob, error_text, failure_message, sandbox_jobs
from build_scripts.markdown import _page
from build_scripts.markdown._blocks import Block, BlockPreprocessor, static_images_html
from build_scripts.markdown.math import text_html
from explainer.figure import DEFAULT_HEIGHT, FIGURE_WIDTH
from explainer.sandbox import Choice, ParameterError, Sandbox, Toggle, closest, registry

MIN_HEIGHT, MAX_HEIGHT = 160, 960
# What the status line says until the page runtime takes over: true for a reader without JavaScript.
NO_SCRIPT_STATUS = "Static figure at its starting values: with JavaScript on, the controls redraw it live."


# ---- options: each checked by one small typed validator ---------------------------------------------------------


def _text(value, option: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{option} must be non-empty text (got {value!r})")
    return value.strip()


def _caption(value, option: str) -> str:
    return text_html(_text(value, option))  # HTML; a formula KaTeX rejects is a ValueError (MathError)


def _height(value, option: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_HEIGHT <= value <= MAX_HEIGHT:
        raise ValueError(f"{option} must be a whole number from {MIN_HEIGHT} to {MAX_HEIGHT} (got {value!r})")
    return value


def _names(value, option: str) -> list[str]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ValueError(f"{option} must be a parameter name or a list of them (got {value!r})")
    return names


OPTIONS: dict[str, tuple[object, Callable]] = {
    "caption": ("", _caption),
    "alt": ("", _text),
    "height": (DEFAULT_HEIGHT, _height),
    "fixed": ([], _names),
    "hidden": ([], _names),
}


@dataclass(frozen=True)
class Placement:
    """A sandbox as one page places it: the values it starts from and how each parameter is shown."""

    sandbox: Sandbox
    values: dict
    fixed: frozenset
    hidden: frozenset
    caption: str  # HTML: plain text with its formulas typeset
    alt: str
    height: int
    line: int = 0

    @property
    def used_at(self) -> str:
        """Where the block is: docs/lessons/x.md:25."""
        return f"{_page.PAGE.get().source_path}:{self.line}"

    def figure_jobs(self) -> list[FigureJob]:
        """The static views this placement needs: light and dark, at its starting values."""
        return sandbox_jobs(self.sandbox.name, self.values, self.height, self.used_at)

    def view(self) -> dict:
        """The sandbox at its starting values as the page shows it (explainer.sandbox.Sandbox.view); a sandbox that
        raises is a FigureError naming it and the page, the same line the static renderer gives."""
        try:
            return _view(self.sandbox, tuple(sorted(self.values.items())))
        except Exception as error:
            raise FigureError(failure_message("sandbox", self.sandbox.name, error_text(error), [self.used_at])) from None


@functools.lru_cache(maxsize=256)
def _view(sandbox: Sandbox, values: tuple) -> dict:
    # The build checks each placement (build_scripts.pipeline) before the page is converted: both need the view,
    # which is drawn once.
    view = sandbox.view(dict(values))
    json.dumps(view, allow_nan=False)  # the page reads it as JSON, as it reads the worker's (render_json): no NaN
    return view


def read_placement(block: Block, sandboxes: dict[str, Sandbox]) -> Placement:
    """Check a block against the registry and the sandbox's declaration; errors name the line."""
    if block.argument not in sandboxes:
        if not block.argument:
            raise block.error(f"name the sandbox after '|' (one of: {', '.join(sandboxes)})")
        raise block.error(f"unknown sandbox{closest(block.argument, sandboxes)}; valid: {', '.join(sandboxes)}")
    sandbox = sandboxes[block.argument]
    params = [p.name for p in sandbox.params]
    options, overrides = {name: default for name, (default, _) in OPTIONS.items()}, {}
    for key, value in block.options.items():
        if key in OPTIONS:
            try:
                options[key] = OPTIONS[key][1](value, key)
            except ValueError as error:
                raise block.error(str(error), key) from None
        elif key in params:
            overrides[key] = value
        else:
            valid = f"options: {', '.join(OPTIONS)}; parameters: {', '.join(params)}"
            raise block.error(f"unknown key '{key}'{closest(str(key), [*OPTIONS, *params])}; {valid}", key)
    try:
        values = sandbox.validate(overrides)
    except ParameterError as error:
        raise block.error(str(error), error.parameter) from None
    for option in ("fixed", "hidden"):
        for name in options[option]:
            if name not in params:
                raise block.error(f"{option}: '{name}' is not a parameter{closest(name, params)}; "
                                  f"parameters: {', '.join(params)}", option)
    return Placement(sandbox, values, frozenset(options["fixed"]), frozenset(options["hidden"]),
                     options["caption"], options["alt"], options["height"], block.line)


# ---- HTML -----------------------------------------------------------------------------------------------------------


def _attrs(**attributes) -> str:
    parts = []
    for name, value in attributes.items():
        name = name.rstrip("_").replace("_", "-")
        if value is True:
            parts.append(name)
        elif value not in (None, False):
            parts.append(f'{name}="{html.escape(str(value))}"')
    return " ".join(parts)


def control_html(param, value, element_id: str, disabled: bool) -> str:
    """One native, labelled control for a parameter (range + output, checkbox, or select)."""
    label = f'<label for="{element_id}">{html.escape(param.label)}</label>'
    head = f'<div class="sandbox__control" data-param="{param.name}" data-kind="{param.kind}">'
    if isinstance(param, Toggle):
        box = f"<input {_attrs(type='checkbox', id=element_id, name=param.name, checked=value, disabled=disabled)}>"
        return f"{head}{box} {label}</div>"
    if isinstance(param, Choice):
        options = "".join(
            f"<option {_attrs(value=v, selected=v == value)}>{html.escape(text)}</option>" for v, text in param.options
        )
        select = f"<select {_attrs(id=element_id, name=param.name, disabled=disabled)}>{options}</select>"
        return f"{head}{label} {select}</div>"
    slider = _attrs(type="range", id=element_id, name=param.name, min=f"{param.min:g}", max=f"{param.max:g}",
                    step=f"{param.step:g}", value=f"{value:g}", disabled=disabled)
    output = f'<output for="{element_id}">{html.escape(param.format(value))}</output>'
    return f"{head}{label} <input {slider}> {output}</div>"


def _config_json(placement: Placement) -> str:
    sandbox = placement.sandbox
    config = {
        "sandbox": sandbox.name,
        "title": sandbox.title,
        "height": placement.height,
        "params": placement.values,
        "controls": [p.to_json() for p in sandbox.params],
        # The view the worker would send for the starting values: sandbox.js draws it live as soon as the runtime is
        # up, while the worker computes the same view (browser README, "The first live figure").
        "start": placement.view(),
    }
    return json.dumps(config, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def sandbox_html(placement: Placement, element_id: str) -> str:
    """The <figure> the page gets: static view, readouts, controls, status line, caption and config."""
    sandbox = placement.sandbox
    controls = "".join(
        control_html(p, placement.values[p.name], f"{element_id}-{p.name}", p.name in placement.fixed)
        for p in sandbox.params
        if p.name not in placement.hidden
    )
    view = placement.view()  # the same label and readouts the worker sends the live page
    light, dark = (job.file_name for job in placement.figure_jobs())
    static = static_images_html(light, dark, placement.alt or view["label"], "sandbox__image")
    caption = f"<figcaption>{placement.caption}</figcaption>" if placement.caption else ""
    return (
        # The config is an attribute, not a <script type="application/json">: Material's instant navigation
        # re-creates inline scripts without their type, and the JSON would then run as JavaScript.
        f'<figure class="sandbox" id="{element_id}" data-sandbox="{sandbox.name}" data-state="static" '
        f'data-config="{html.escape(_config_json(placement))}">'
        f'<div class="sandbox__figure" style="aspect-ratio: {FIGURE_WIDTH} / {placement.height}">'
        f'<div class="sandbox__static">{static}</div></div>'
        f'<div class="sandbox__readouts">{view["readouts_html"]}</div>'
        f'<form class="sandbox__controls" aria-label="Controls: {html.escape(sandbox.title)}">{controls}</form>'
        f'<p class="sandbox__status" role="status">{NO_SCRIPT_STATUS}</p>'
        f"{caption}"
        f"</figure>"
    )


# ---- the extension --------------------------------------------------------------------------------------------------


class SandboxExtension(Extension):
    """Adds the `/// sandbox | name` block."""

    def extendMarkdown(self, md):
        self.md, self.count = md, 0
        md.registerExtension(self)
        # After whitespace normalisation (30), before pymdownx.superfences stashes fences (25): the lines are still
        # the author's, so line numbers are exact.
        md.preprocessors.register(BlockPreprocessor(md, {"sandbox": self.place}), "explainer-sandbox", 29.5)

    def reset(self):
        self.count = 0

    def place(self, block: Block) -> str:
        placement = read_placement(block, registry())
        if _page.PREVIEW:
            _page.PREVIEW.figures_needed(placement.figure_jobs())
        self.count += 1
        return sandbox_html(placement, f"sandbox-{block.argument}-{self.count}")


def makeExtension(**kwargs):  # noqa: N802 (the name Python-Markdown looks for)
    return SandboxExtension(**kwargs)
