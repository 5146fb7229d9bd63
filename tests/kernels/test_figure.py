"""The figure description helpers: JSON-safe numbers, ticks both renderers share, and refusals of bad marks."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from explainer import figure as fig


def test_numbers_are_rounded_and_non_finite_values_become_null():
    assert fig.numbers([1 / 3, math.nan, math.inf, 2]) == [0.333333, None, None, 2.0]
    json.dumps(fig.line([0, 1, 2], [1, math.nan, 3]), allow_nan=False)


def test_numbers_of_an_array_are_each_values_number_to_the_bit():
    """numbers() formats a whole array at once; each entry must equal number() of that value, float type and sign of
    zero included, over values of every size, integers, halfway cases and non-finite ones."""
    rng = np.random.default_rng(0)
    values = np.concatenate([
        rng.standard_normal(400) * 10.0 ** rng.integers(-30, 30, 400),
        [0.0, -0.0, 3.0, -7.0, 1e22, 2.5e-5, 0.1234565, 1234565.0, 1 / 3, math.nan, math.inf, -math.inf, 5e-324,
         1.7976931348623157e308]])
    got = fig.numbers(values)
    want = [fig.number(v) for v in values]
    assert [(type(g), g, math.copysign(1, g) if g is not None else None) for g in got] == [
        (type(w), w, math.copysign(1, w) if w is not None else None) for w in want]
    assert fig.numbers(values.reshape(-1, 2)) == got  # any shape, flattened
    small = [entry for start in range(0, len(values), 3) for entry in fig.numbers(values[start:start + 3])]
    assert [(g, math.copysign(1, g) if g is not None else None) for g in small] == [
        (w, math.copysign(1, w) if w is not None else None) for w in want]  # a few values take another path
    assert fig.numbers([]) == []


def test_heatmap_opacities_are_the_values_share_to_three_decimals():
    grid = np.array([[0.0, 0.25, 0.1234, 0.0625], [math.nan, 1.5, -2.0, math.inf]])
    mark = fig.heatmap([0, 1, 2, 3], [0, 1], grid, vmin=0, vmax=1)
    assert mark["values"] == [[0.0, 0.25, 0.1234, 0.0625], [None, 1.5, -2.0, None]]
    assert mark["opacity"] == [[0.0, 0.25, 0.123, 0.062], [None, 1.0, 0.0, None]], "clipped; an exact tie to even"
    shares = np.random.default_rng(0).random((40, 50))
    opacities = np.array(fig.heatmap(np.arange(50), np.arange(40), shares, vmin=0, vmax=1)["opacity"])
    assert np.all(np.abs(opacities - shares) <= 0.0005 + 1e-12), "the nearest thousandth (a near-tie either way)"
    assert all(float(f"{v:.3f}") == v for v in opacities.ravel().tolist()), "each one the float of its 3 decimals"


def test_linear_ticks_are_round_and_inside_the_limits():
    ticks = fig.linear_ticks(-6.5, 6.5)
    values = [t["value"] for t in ticks]
    assert values == [-6.0, -4.0, -2.0, 0.0, 2.0, 4.0, 6.0]
    assert [t["label"] for t in ticks][:2] == ["−6", "−4"]
    assert [t["label"] for t in fig.linear_ticks(0, 1)] == ["0", "0.2", "0.4", "0.6", "0.8", "1.0"]


def test_log_ticks_are_powers_of_ten_thinned_to_a_few():
    ticks = fig.log_ticks(1e-4, 1e4)
    assert [t["value"] for t in ticks] == [1e-4, 1e-2, 1, 1e2, 1e4]
    assert [t["label"] for t in ticks] == ["10⁻⁴", "0.01", "1", "100", "10⁴"]


def test_readouts_are_formatted_once_for_both_renderers():
    assert fig.readout("x", 3.0)["text"] == "3.000"
    assert fig.readout("p", 4.5e-5)["text"] == "4.50e−05"
    assert fig.readout("noise", 3e-16)["text"] == "0.000"
    assert fig.readout("share", 12.34, unit="%", digits=1)["text"] == "12.3%"
    assert fig.readout("bad", math.inf) == {"label": "bad", "value": None, "text": "not finite"}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: fig.axes(xlim=(1, 0), ylim=(0, 1)), "xlim must be two finite numbers"),
        (lambda: fig.axes(xlim=(0, 1), ylim=(0, 1), yscale="log"), "ylim must be positive on a log scale"),
        (lambda: fig.axes(xlim=(0, 1), ylim=(0, 1), xscale="symlog"), "xscale must be one of linear, log"),
        (lambda: fig.line([0, 1], [0]), "line: x and y must have the same length"),
        (lambda: fig.point(0, 0, color="red"), "color must be one of"),
        (lambda: fig.text(0, 0, "a", anchor="left"), "text anchor must be one of"),
        (lambda: fig.region([0, 1], [0, 1]), "region: needs x and y of the same length, at least 3"),
        (lambda: fig.status("OK", "great"), "status tone must be one of"),
        (lambda: fig.heatmap([0, 1], [0], [1, 2]), "heatmap: values must be a non-empty 2-D grid"),
        (lambda: fig.heatmap([0, 1, 2, 3, 4], [0], [[1, 2]]), "heatmap: x must be 2 increasing cell centres or 3"),
        (lambda: fig.heatmap([1, 0], [0], [[1, 2]]), "heatmap: x must be 2 increasing"),
        (lambda: fig.heatmap([0, 1], [0], [[1, 2]], vmin=2, vmax=1), "heatmap: need finite vmin ≤ vmax"),
        (lambda: fig.heatmap([0, 1], [0], [[1, 2]], color="blue"), "color must be one of"),
    ],
)
def test_bad_marks_are_refused_with_what_is_valid(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_validate_figure_refuses_unknown_marks():
    description = fig.figure(axes=fig.axes(xlim=(0, 1), ylim=(0, 1)), marks=[{"type": "pie", "color": "ink"}])
    with pytest.raises(ValueError, match="mark 0: type must be one of"):
        fig.validate_figure(description)


def test_shape_helpers_the_geometry_sandboxes_share():
    ring = fig.circle(2.0, samples=5, color="muted", dash=True)
    assert ring["type"] == "line" and ring["dash"] and ring["x"][0] == ring["x"][-1] == 2.0
    assert all(math.isclose(math.hypot(x, y), 2.0, abs_tol=1e-5) for x, y in zip(ring["x"], ring["y"]))
    assert fig.grid_ticks((-2.6, 6.4), 2) == [(-2, "−2"), (0, "0"), (2, "2"), (4, "4"), (6, "6")]
    assert [round(v, 12) for v in fig.direction(90)] == [0.0, 1.0]


def test_ticks_and_circles_are_worked_out_once_yet_every_description_owns_its_lists():
    first = fig.figure(axes=fig.axes(xlim=(-6.5, 6.5), ylim=(1e-4, 1e4), yscale="log", yticks=None),
                       marks=[fig.circle(2.0, samples=7)])
    hits = fig._tick_pairs.cache_info().hits, fig._circle_points.cache_info().hits
    first["axes"]["xticks"][0]["label"] = "changed"  # a caller changing its description...
    first["axes"]["yticks"].clear()
    first["marks"][0]["x"][0] = 99.0
    second = fig.figure(axes=fig.axes(xlim=(-6.5, 6.5), ylim=(1e-4, 1e4), yscale="log", yticks=None),
                        marks=[fig.circle(2.0, samples=7)])
    assert fig._tick_pairs.cache_info().hits == hits[0] + 2 and fig._circle_points.cache_info().hits == hits[1] + 1
    assert second["axes"]["xticks"] == fig.linear_ticks(-6.5, 6.5), "...changes no later one"
    assert second["axes"]["yticks"] == fig.log_ticks(1e-4, 1e4)
    turn = np.linspace(0, 2 * math.pi, 7)
    assert second["marks"][0] == fig.line(2 * np.cos(turn), 2 * np.sin(turn))
    given = fig.axes(xlim=(0, 3), ylim=(0, 1), xticks=[(1, "one"), (2.5, 2.5)])["xticks"]
    assert given == [{"value": 1.0, "label": "one"}, {"value": 2.5, "label": "2.5"}]


def test_a_heatmap_places_cells_by_centres_or_edges_and_fills_them_by_value():
    nan = math.nan
    layers, positions = [1, 2, 3], [0, 1]
    cosine = [[0.0, 0.5, 1.0], [nan, 0.25, 2.0]]  # (2 positions, 3 layers)
    cells = fig.heatmap(layers, positions, cosine, color="accent", vmin=0, vmax=1, label="cosine")
    assert cells["x"] == [0.5, 1.5, 2.5, 3.5] and cells["y"] == [-0.5, 0.5, 1.5], "edges half-way between centres"
    assert cells["opacity"] == [[0.0, 0.5, 1.0], [None, 0.25, 1.0]], "linear from vmin to vmax, clipped, null kept"
    assert cells["values"][1][0] is None and cells["values"][1][2] == 2.0
    assert fig.heatmap([0, 1, 3], [0], [[1, 2]])["x"] == [0.0, 1.0, 3.0], "n + 1 values are the edges themselves"
    assert fig.heatmap([4], [7], [[3]])["x"] == [3.5, 4.5], "a lone cell is one unit wide"
    spread = fig.heatmap([0, 1], [0], [[2, 6]])
    assert (spread["vmin"], spread["vmax"], spread["opacity"]) == (2.0, 6.0, [[0.0, 1.0]]), "default: the values' range"
    description = fig.figure(axes=fig.axes(xlim=(0, 4), ylim=(-1, 2)), marks=[cells])
    fig.validate_figure(description)
    json.dumps(description, allow_nan=False)


def test_the_figure_in_words_is_made_once_and_escaped_for_the_page():
    description = fig.figure(axes=fig.axes(xlim=(0, 1), ylim=(0, 1)), marks=[],
                             readouts=[fig.readout("a < b", 0.5), fig.readout("angle", 30, unit="°", digits=0)],
                             status=fig.status("OK & fine", "good", "nothing \"odd\""))
    assert fig.describe("Title", description) == 'Title: a < b 0.500; angle 30°; OK & fine: nothing "odd"'
    assert fig.describe("Title", fig.figure(axes=description["axes"], marks=[])) == "Title"
    html = fig.readouts_html(description)
    assert '<dt class="sandbox__readout-label">a &lt; b</dt><dd class="sandbox__readout-value">0.500</dd>' in html
    assert '<strong class="sandbox__badge-label">OK &amp; fine</strong>' in html and 'data-tone="good"' in html
    assert fig.readouts_html(fig.figure(axes=description["axes"], marks=[])) == ""


def test_the_drawing_box_comes_from_the_one_style_file():
    style = json.loads((Path(fig.__file__).parent / "figure_style.json").read_text(encoding="utf-8"))
    assert (fig.FIGURE_WIDTH, fig.DEFAULT_HEIGHT, fig.MARGINS) == (
        style["box"]["width"], style["box"]["default_height"], style["box"]["margins"])
    assert fig.COLOR_ROLES == tuple(style["color_roles"])
    assert fig.text(0, 0, "a")["size"] == style["font_size"]["mark_label"]
