"""The figure description: the plain JSON a sandbox returns and both renderers draw.

One description, two renderers: the browser draws it as SVG (build_scripts/browser/render.js), the build draws it
with matplotlib for the static figure. Everything a renderer needs is decided here, in Python, so the two cannot
drift: limits, ticks and their labels, colours (as theme roles), formatted readouts.

    {
      "axes":     {"xlim": [a, b], "ylim": [a, b], "xscale": "linear"|"log", "yscale": ..., "aspect": "auto"|"equal",
                   "xlabel": str, "ylabel": str, "title": str, "grid": bool,
                   "xticks": [{"value": v, "label": str}, ...], "yticks": [...]},
      "marks":    [ {"type": "line"|"arrow"|"point"|"bars"|"text"|"region"|"heatmap", ...}, ... ],   # drawn in order
      "readouts": [{"label": str, "value": float|None, "text": str}, ...],
      "status":   {"label": str, "tone": "good"|"warn"|"bad"|"info", "detail": str} or null
    }

Numbers are rounded to 6 significant digits; a value that is not finite becomes null and renderers skip it.
Colours are roles (COLOR_ROLES), mapped to the light or dark palette by each renderer's theme.

The layout both renderers follow (drawing box, margins, type sizes, stroke widths, dash pattern, opacities, legend
geometry, arrowheads) is one JSON file, figure_style.json beside this module, read here as STYLE and written into
render.js at build. The page's words for a figure (`describe`, `readouts_html`) are also made here, once.
"""

import functools
import html
import json
import math
from importlib import resources

import numpy as np

STYLE = json.loads(resources.files(__package__).joinpath("figure_style.json").read_text(encoding="utf-8"))

COLOR_ROLES = tuple(STYLE["color_roles"])
STATUS_TONES = ("good", "warn", "bad", "info")
SCALES = ("linear", "log")
ANCHORS = ("start", "middle", "end")
MARK_TYPES = ("line", "arrow", "point", "bars", "text", "region", "heatmap")

# The drawing box both renderers share: a figure is FIGURE_WIDTH logical pixels wide and as tall as the page asks
# (default DEFAULT_HEIGHT); the plot area is what the margins leave. Equal aspect widens the shorter data range about
# its centre until one data unit spans the same number of pixels on both axes.
FIGURE_WIDTH = STYLE["box"]["width"]
DEFAULT_HEIGHT = STYLE["box"]["default_height"]
MARGINS = STYLE["box"]["margins"]

SIGNIFICANT_DIGITS = 6
ROUNDING_NOISE = 1e-12  # readouts closer to 0 than this are float64 round-off of an exact 0


def number(value) -> float | None:
    """A JSON-safe number: rounded to 6 significant digits, or None when not finite."""
    value = float(value)
    if not math.isfinite(value):
        return None
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}")


def numbers(values) -> list[float | None]:
    """A JSON-safe list of numbers from any array-like (flattened): `number` of each, computed for all at once."""
    return _formatted(np.asarray(values, dtype=float).ravel(), f".{SIGNIFICANT_DIGITS}g")


_READ_FLOATS = json.JSONDecoder(parse_int=float)
_FORMAT_ONE_BY_ONE = 8


def _formatted(array: np.ndarray, spec: str) -> list[float | None]:
    """float(f"{v:{spec}}") of every finite v of a 1-D float array, None for the others. Inside Pyodide a Python loop
    over the values is most of the time a heatmap takes, so all are formatted by one %-format and read back by one
    JSON decode (parse_int=float: "3" is 3.0, "-0" is -0.0), which give exactly what formatting one value does."""
    if array.size <= _FORMAT_ONE_BY_ONE:  # a few values: a loop is quicker than the two calls
        return [float(f"{v:{spec}}") if math.isfinite(v) else None for v in array.tolist()]
    finite = np.isfinite(array)
    all_finite = bool(finite.all())
    text = (f"%{spec}," * array.size)[:-1] % tuple((array if all_finite else np.where(finite, array, 0.0)).tolist())
    listed = _READ_FLOATS.decode(f"[{text}]")
    return listed if all_finite else _none_where(listed, finite)


def _none_where(listed: list, finite: np.ndarray) -> list:
    """`listed` with None where the boolean array `finite` (as long) is False: a value the JSON must not carry."""
    for index in np.flatnonzero(~finite).tolist():
        listed[index] = None
    return listed


def _role(color: str) -> str:
    if color not in COLOR_ROLES:
        raise ValueError(f"color must be one of {', '.join(COLOR_ROLES)} (got {color!r})")
    return color


# ---- ticks ------------------------------------------------------------------------------------------------------


def _format_tick(value: float, step: float) -> str:
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step < 1 else 0
    text = f"{value:.{decimals}f}"
    return "0" if text.strip("-0.") == "" else text.replace("-", "−")


def _tick_count(low: float, high: float, step: float) -> int:
    return math.floor(high / step + 1e-9) - math.ceil(low / step - 1e-9) + 1


def linear_ticks(low: float, high: float, target: int = 6, cover: tuple[float, float] | None = None) -> list[dict]:
    """Round ticks (steps of 1, 2 or 5 × 10ⁿ) inside [low, high], as close to `target` of them as possible.

    With `cover`, the step is still chosen for [low, high] but the ticks run over the wider `cover` range.
    """
    magnitude = 10 ** math.floor(math.log10((high - low) / target))
    steps = [m * magnitude * scale for scale in (1, 10) for m in (1, 2, 5)]
    step = min(steps, key=lambda s: (abs(_tick_count(low, high, s) - target), -s))
    low, high = cover or (low, high)
    first = math.ceil(low / step - 1e-9)
    values = [k * step for k in range(first, first + _tick_count(low, high, step))]
    return [{"value": number(v), "label": _format_tick(v, step)} for v in values]


def _power_label(exponent: int) -> str:
    if -2 <= exponent <= 3:
        return f"{10.0 ** exponent:g}"
    superscript = str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"10{superscript}"


def log_ticks(low: float, high: float, target: int = 6) -> list[dict]:
    """Powers of ten inside [low, high], thinned to at most about `target` of them."""
    first, last = math.ceil(math.log10(low) - 1e-9), math.floor(math.log10(high) + 1e-9)
    stride = max(1, math.ceil((last - first + 1) / target))
    return [{"value": number(10.0**e), "label": _power_label(e)} for e in range(first, last + 1, stride)]


def _ticks(scale: str, limits: tuple[float, float], given, widen: bool) -> list[dict]:
    """The axis' ticks, fresh dicts each time (a caller may change its description) from the cached pairs."""
    given = None if given is None else tuple((v, str(label)) for v, label in given)
    return [{"value": value, "label": label} for value, label in _tick_pairs(scale, *limits, given, widen)]


@functools.lru_cache(maxsize=256)
def _tick_pairs(scale: str, low: float, high: float, given, widen: bool) -> tuple[tuple[float | None, str], ...]:
    """(value, label) of each tick, worked out once per set of limits: most sandboxes keep their limits from one
    change to the next, and choosing and formatting ticks was a quarter of projection_shadow's render (CPython,
    178 → 131 µs per render with this cache)."""
    if given is not None:
        return tuple((number(v), label) for v, label in given)
    if scale == "log":
        ticks = log_ticks(low, high)
    else:
        # With equal aspect the renderer widens the shorter range by an amount only it knows (the page sets the
        # height), so ticks run over twice the span and renderers draw those that land inside what they show.
        centre, half = (low + high) / 2, (high - low) / 2
        ticks = linear_ticks(low, high, cover=(centre - 2 * half, centre + 2 * half) if widen else None)
    return tuple((tick["value"], tick["label"]) for tick in ticks)


def grid_ticks(limits, step: float) -> list[tuple[float, str]]:
    """Ticks every `step` inside `limits`, for axes that must share one grid step (squares stay square)."""
    first, last = math.ceil(limits[0] / step - 1e-9), math.floor(limits[1] / step + 1e-9)
    return [(k * step, f"{k * step:g}".replace("-", "−")) for k in range(first, last + 1)]


def _limits(name: str, limits, scale: str) -> tuple[float, float]:
    low, high = (float(v) for v in limits)
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"{name} must be two finite numbers, low < high (got {limits!r})")
    if scale == "log" and low <= 0:
        raise ValueError(f"{name} must be positive on a log scale (got {limits!r})")
    return low, high


# ---- axes, marks, readouts ----------------------------------------------------------------------------------------


def axes(
    *,
    xlim,
    ylim,
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
    xscale: str = "linear",
    yscale: str = "linear",
    aspect: str = "auto",
    grid: bool = True,
    xticks=None,
    yticks=None,
) -> dict:
    """The axes of a figure; ticks are computed here unless given as (value, label) pairs."""
    for name, scale in (("xscale", xscale), ("yscale", yscale)):
        if scale not in SCALES:
            raise ValueError(f"{name} must be one of {', '.join(SCALES)} (got {scale!r})")
    if aspect not in ("auto", "equal"):
        raise ValueError(f"aspect must be 'auto' or 'equal' (got {aspect!r})")
    x_limits, y_limits = _limits("xlim", xlim, xscale), _limits("ylim", ylim, yscale)
    return {
        "xlim": numbers(x_limits),
        "ylim": numbers(y_limits),
        "xscale": xscale,
        "yscale": yscale,
        "aspect": aspect,
        "xlabel": xlabel,
        "ylabel": ylabel,
        "title": title,
        "grid": bool(grid),
        "xticks": _ticks(xscale, x_limits, xticks, widen=aspect == "equal"),
        "yticks": _ticks(yscale, y_limits, yticks, widen=aspect == "equal"),
    }


def line(x, y, *, color: str = "primary", width: float = 2.0, dash: bool = False, label: str = "") -> dict:
    """A polyline through (x[i], y[i]); a null coordinate breaks the line."""
    x, y = numbers(x), numbers(y)
    if len(x) != len(y):
        raise ValueError(f"line: x and y must have the same length (got {len(x)} and {len(y)})")
    return {"type": "line", "x": x, "y": y, "color": _role(color), "width": width, "dash": dash, "label": label}


def arrow(start, end, *, color: str = "primary", width: float = 2.5, label: str = "") -> dict:
    """An arrow from `start` to `end` (data coordinates), labelled just past its head."""
    return {
        "type": "arrow",
        "start": numbers(start),
        "end": numbers(end),
        "color": _role(color),
        "width": width,
        "label": label,
    }


def point(x: float, y: float, *, color: str = "primary", size: float = 5.0, label: str = "") -> dict:
    """A dot at (x, y) with an optional label beside it."""
    return {"type": "point", "x": number(x), "y": number(y), "color": _role(color), "size": size, "label": label}


def bars(x, heights, *, width: float = 0.8, color: str = "primary", label: str = "") -> dict:
    """Vertical bars centred on x, rising from the bottom of the axes (so they also work on a log scale)."""
    x, heights = numbers(x), numbers(heights)
    if len(x) != len(heights):
        raise ValueError(f"bars: x and heights must have the same length (got {len(x)} and {len(heights)})")
    return {"type": "bars", "x": x, "heights": heights, "width": width, "color": _role(color), "label": label}


def text(x: float, y: float, content: str, *, color: str = "ink", anchor: str = "start",
         size: float = STYLE["font_size"]["mark_label"]) -> dict:
    """A text label at (x, y), vertically centred; `anchor` says which end of the text sits at x."""
    if anchor not in ANCHORS:
        raise ValueError(f"text anchor must be one of {', '.join(ANCHORS)} (got {anchor!r})")
    return {"type": "text", "x": number(x), "y": number(y), "text": content, "color": _role(color), "anchor": anchor,
            "size": size}


def circle(radius: float, *, samples: int = 181, **style) -> dict:
    """A circle of `radius` about the origin, as a closed line (style as for `line`)."""
    x, y = _circle_points(float(radius), int(samples))
    drawn = line((), (), **style)  # the style checked as for any line, the points already rounded:
    drawn["x"], drawn["y"] = list(x), list(y)  # copies, since a caller may change its description
    return drawn


@functools.lru_cache(maxsize=64)
def _circle_points(radius: float, samples: int) -> tuple[tuple[float | None, ...], tuple[float | None, ...]]:
    """The rounded points of a circle, computed once: the sandboxes that draw one (the circle RMSNorm maps onto)
    draw the same one at every change (jacobian_tangent: 324 → 266 µs per render in CPython)."""
    turn = np.linspace(0, 2 * math.pi, samples)  # (samples,)
    return tuple(numbers(radius * np.cos(turn))), tuple(numbers(radius * np.sin(turn)))


def direction(angle_degrees: float) -> np.ndarray:
    """The unit vector at `angle_degrees` from the x axis, (2,)."""
    angle = math.radians(angle_degrees)
    return np.array([math.cos(angle), math.sin(angle)])


def region(x, y, *, color: str = "primary", opacity: float = 0.15, label: str = "") -> dict:
    """A filled polygon through (x[i], y[i]), closed back to the first point."""
    x, y = numbers(x), numbers(y)
    if len(x) != len(y) or len(x) < 3:
        raise ValueError(f"region: needs x and y of the same length, at least 3 (got {len(x)} and {len(y)})")
    return {"type": "region", "x": x, "y": y, "color": _role(color), "opacity": opacity, "label": label}


def _cell_edges(name: str, values, cells: int) -> list[float]:
    """Cell edges along one axis from `cells` centres (edges half-way between) or `cells + 1` edges."""
    given = np.asarray(values, dtype=float).ravel()  # (cells,) or (cells + 1,)
    listed = given.tolist()  # a heatmap's edges are few: plain floats are quicker to check than numpy calls
    if (given.size not in (cells, cells + 1) or not all(map(math.isfinite, listed))
            or any(after <= before for before, after in zip(listed, listed[1:]))):
        raise ValueError(f"heatmap: {name} must be {cells} increasing cell centres or {cells + 1} edges, all finite "
                         f"(got {given.size} values)")
    if given.size == cells + 1:
        return numbers(given)
    if cells == 1:
        return numbers([given[0] - 0.5, given[0] + 0.5])
    middles = (given[1:] + given[:-1]) / 2  # (cells - 1,)
    return numbers([given[0] - (middles[0] - given[0]), *middles, given[-1] + (given[-1] - middles[-1])])


def heatmap(x, y, values, *, color: str = "primary", vmin: float | None = None, vmax: float | None = None,
            label: str = "") -> dict:
    """A grid of cells whose fill opacity follows the value: row i at y[i], column j at x[j], values[i][j].

    `values` is (m, n). `x` and `y` are the cells' centres (n and m of them; the edges fall half-way between, and a
    lone cell is one unit wide) or their edges (n + 1 and m + 1). A cell is filled in the one colour role `color`
    with opacity (value − vmin) / (vmax − vmin), clipped to [0, 1], so it works in the light and dark palettes alike;
    vmin and vmax default to the smallest and largest finite value. A value that is not finite leaves its cell
    empty. `label` puts the map in the legend, with a swatch that runs from faint to full: say there what full
    colour means (e.g. "cosine similarity, full = 1").
    """
    grid = np.asarray(values, dtype=float)  # (m, n)
    if grid.ndim != 2 or grid.size == 0:
        raise ValueError(f"heatmap: values must be a non-empty 2-D grid, rows along y (got shape {grid.shape})")
    rows, columns = grid.shape
    x_edges, y_edges = _cell_edges("x", x, columns), _cell_edges("y", y, rows)
    finite = grid[np.isfinite(grid)]
    low = float(vmin) if vmin is not None else float(finite.min()) if finite.size else 0.0
    high = float(vmax) if vmax is not None else float(finite.max()) if finite.size else 1.0
    if not (math.isfinite(low) and math.isfinite(high) and low <= high):
        raise ValueError(f"heatmap: need finite vmin ≤ vmax (got {low!r} and {high!r})")
    share = np.clip((grid - low) / (high - low), 0, 1) if high > low else np.where(grid >= high, 1.0, 0.0)  # (m, n)
    share = np.where(np.isfinite(grid), share, np.nan)  # (m, n) an empty cell stays empty
    # Opacities to the nearest thousandth, all cells in one pass (no text formatting): k / 1000 is the float of the
    # decimal k/1000, as float(f"{v:.3f}") is; k is v·1000 rounded, so a v within a rounding error of a tie may round
    # either way. A cell that is not finite stays empty (None).
    thousandths = (np.rint(share * 1000) / 1000).ravel()  # (m * n,)
    opacity = _none_where(thousandths.tolist(), np.isfinite(thousandths))
    values = numbers(grid)
    return {"type": "heatmap", "x": x_edges, "y": y_edges, "values": _rows(values, columns),
            "opacity": _rows(opacity, columns), "vmin": number(low), "vmax": number(high), "color": _role(color),
            "label": label}


def _rows(flat: list, columns: int) -> list[list]:
    return [flat[start:start + columns] for start in range(0, len(flat), columns)]


def readout(label: str, value, *, unit: str = "", digits: int = 3) -> dict:
    """A named number under the figure, formatted once here so both renderers show the same text."""
    value = None if value is None else number(value)
    if value is not None and abs(value) < ROUNDING_NOISE:
        value = 0.0  # float64 round-off (say 3e-16 where the math gives 0) shows as the 0 it is
    if value is None:
        shown = "not finite"
    elif value != 0 and (abs(value) >= 1e5 or abs(value) < 10.0**-digits):
        shown = f"{value:.{digits - 1}e}"
    else:
        shown = f"{value:.{digits}f}"
    gap = "" if unit in ("", "°", "%") else " "
    return {"label": label, "value": value, "text": f"{shown}{gap}{unit}".replace("-", "−")}


def status(label: str, tone: str, detail: str = "") -> dict:
    """A status badge (e.g. HEALTHY in the good tone) with a one-sentence reason."""
    if tone not in STATUS_TONES:
        raise ValueError(f"status tone must be one of {', '.join(STATUS_TONES)} (got {tone!r})")
    return {"label": label, "tone": tone, "detail": detail}


def figure(*, axes: dict, marks: list[dict], readouts: list[dict] = (), status: dict | None = None) -> dict:
    """The whole description a sandbox returns."""
    return {"axes": axes, "marks": list(marks), "readouts": list(readouts), "status": status}


def validate_figure(description: dict) -> None:
    """Raise ValueError if `description` is not a figure description both renderers can draw."""
    if set(description) != {"axes", "marks", "readouts", "status"}:
        raise ValueError(f"figure keys must be axes, marks, readouts, status (got {sorted(description)})")
    for index, mark in enumerate(description["marks"]):
        if mark.get("type") not in MARK_TYPES:
            raise ValueError(f"mark {index}: type must be one of {', '.join(MARK_TYPES)} (got {mark.get('type')!r})")
        _role(mark["color"])
    for item in description["readouts"]:
        if set(item) != {"label", "value", "text"}:
            raise ValueError(f"readout keys must be label, value, text (got {sorted(item)})")
    if description["status"] is not None and description["status"]["tone"] not in STATUS_TONES:
        raise ValueError(f"status tone must be one of {', '.join(STATUS_TONES)}")


# ---- the figure in words: one text for the static image, the live SVG and the readouts under both ----------------


def describe(title: str, description: dict) -> str:
    """The figure in words (title, readouts, status): the static image's alt text and the live SVG's label."""
    said = [f"{r['label']} {r['text']}" for r in description["readouts"]]
    if description["status"]:
        status = description["status"]
        said.append(f"{status['label']}: {status['detail']}" if status["detail"] else status["label"])
    return f"{title}: {'; '.join(said)}" if said else title


def readouts_html(description: dict) -> str:
    """The readouts and status badge under the figure, as HTML (the build writes it, the page swaps it in live)."""
    parts = []
    if description["readouts"]:
        items = "".join(
            f'<div class="sandbox__readout"><dt class="sandbox__readout-label">{html.escape(r["label"])}</dt>'
            f'<dd class="sandbox__readout-value">{html.escape(r["text"])}</dd></div>'
            for r in description["readouts"]
        )
        parts.append(f'<dl class="sandbox__readout-list">{items}</dl>')
    if description["status"]:
        status, tone = description["status"], html.escape(description["status"]["tone"])
        detail = f'<span class="sandbox__badge-detail">{html.escape(status["detail"])}</span>' if status["detail"] else ""
        parts.append(f'<p class="sandbox__badge sandbox__badge--{tone}" data-tone="{tone}">'
                     f'<strong class="sandbox__badge-label">{html.escape(status["label"])}</strong>{detail}</p>')
    return "".join(parts)
