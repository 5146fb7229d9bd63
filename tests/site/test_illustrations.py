"""The lessons' illustrations (build_scripts/figures/illustrations.py): each renders in both palettes to repeatable,
self-contained SVG, uses only the palette's colours, and shows the numbers the explainer kernels compute. Those that
are a sandbox's own scene are drawn from the sandbox's description, never redrawn by separate code."""

import inspect
import json
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

import pytest

from build_scripts.figures.jobs import illustration_jobs
from build_scripts.figures.registry import declarations
from build_scripts.figures.theme import PT, SCHEMES, THEME_FILE
from explainer.sandbox import get_sandbox
from support import PROJECT_ROOT

ESSAY_FIGURES = (
    "magnitude_vs_direction", "rmsnorm_sphere", "attention_scale", "prenorm_vs_postnorm",
    "projection_matrices", "jacobian_tangent_plane", "tangent_zoom", "perpendicular_second_order",
    "four_pillars", "decoder_model",
)
SVG = "{http://www.w3.org/2000/svg}"

# Text each figure must draw: the essay's numbers, which the figure gets from explainer (checked below).
DRAWN_TEXT = {
    "magnitude_vs_direction": ["h = [3, 4]", "‖h‖ = 5", "3h = [9, 12]", "‖3h‖ = 15", "u = [0.6, 0.8]"],
    "rmsnorm_sphere": ["= [0.849, 1.13]", "√2 ≈ 1.414"],
    "attention_scale": ["weight on token 1 0.000045", "weight on token 2 0.999955", "score 10.00", "score 20.00",
                        "scores [1, 2] (s = 1)"],
    "prenorm_vs_postnorm": ["hₗ₊₁ = hₗ + F(N(hₗ))", "hₗ₊₁ = N(hₗ + F(hₗ))"],
    "projection_matrices": ["P x = u uᵀ x", "(I − P) x"],
    "jacobian_tangent_plane": ["sideways → × √2/5 ≈ 0.28", "J·dh = 0", "‖dh‖ = 0.1"],
    "tangent_zoom": ["half-width w 1.0000", "half-width w 0.2500", "half-width w 0.0625", "max gap 1.000",
                     "max gap / w² 1.000"],
    "perpendicular_second_order": ["Δr = 0.001", "Δr = 0.00025", "r = 5", "Δr falls 4×"],
    "four_pillars": ["Attention", "MLP", "RMSNorm", "−∞", "t = 3"],
    "decoder_model": ["token embedding", "RMSNorm", "MLP", "causal mask", "positions (RoPE)", "residual",
                      "width d = 64", "L = 1 to 24"],
}

# The explainer calls each figure's own source (or the sandbox it draws) must make: where its numbers come from.
KERNEL_CALLS = {
    "magnitude_vs_direction": ["rmsnorm("],
    "rmsnorm_sphere": ["rmsnorm("],
    "attention_scale": ["softmax("],
    "projection_matrices": ["projection_matrix(", "rejection_matrix("],
    "jacobian_tangent_plane": ["rmsnorm(", "rmsnorm_jacobian("],
    "tangent_zoom": ["zoom_window("],
    "perpendicular_second_order": ["perpendicular_length_change("],
    "four_pillars": ["rotate(", "attention_scores("],
    "decoder_model": ["AblationConfig(", "MAX_DEPTH"],
}


def render(name: str, scheme: str) -> tuple[bytes, float]:
    """One illustration as SVG bytes, and the seconds it took to draw and write."""
    start = time.perf_counter()
    [svg] = [job.render() for job in illustration_jobs(name) if job.scheme == scheme]
    return svg, time.perf_counter() - start


@pytest.fixture(scope="module")
def rendered() -> dict:
    """Every illustration in both palettes, rendered once for the module: (name, scheme) -> (svg, seconds)."""
    return {(name, scheme): render(name, scheme) for name in declarations() for scheme in SCHEMES}


def drawn_text(svg: bytes) -> list[str]:
    """The content of every <text> element, in order."""
    root = ElementTree.fromstring(svg)
    return ["".join(element.itertext()).strip() for element in root.iter(f"{SVG}text")]


def size_px(svg: bytes) -> tuple[float, float]:
    """The SVG's width and height in live-renderer px (matplotlib writes them in pt)."""
    root = ElementTree.fromstring(svg)
    return tuple(float(root.get(side).removesuffix("pt")) / PT for side in ("width", "height"))


def test_every_essay_figure_is_declared_with_alt_text():
    declared = declarations()
    assert set(ESSAY_FIGURES) <= set(declared), f"missing: {sorted(set(ESSAY_FIGURES) - set(declared))}"
    for name, figure in declared.items():
        assert figure.name == name
        assert 40 <= len(figure.alt) <= 500 and figure.alt.endswith("."), f"{name}: alt text {figure.alt!r}"
        assert "\n" not in figure.alt and "$" not in figure.alt, f"{name}: alt text must be one plain paragraph"


def test_every_figure_renders_in_both_schemes_at_its_size(rendered):
    for (name, scheme), (svg, _) in rendered.items():
        width, height = size_px(svg)
        assert round(width) == 640, f"{name} ({scheme}) is {width:g} px wide"
        assert 300 <= round(height) <= 540, f"{name} ({scheme}) is {height:g} px tall"  # 3 stacked views at most
        assert drawn_text(svg), f"{name} ({scheme}) has no text"


def test_rendering_is_byte_for_byte_repeatable(rendered):
    for (name, scheme), (svg, _) in rendered.items():
        assert render(name, scheme)[0] == svg, f"{name} ({scheme}) rendered differently the second time"


def test_rendering_is_repeatable_in_another_process(rendered):
    # The build renders in worker processes: ids and output must not depend on the process.
    name = "four_pillars"
    code = ("import sys; from build_scripts.figures.jobs import illustration_jobs; "
            f"sys.stdout.buffer.write(illustration_jobs({name!r})[1].render())")
    result = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, check=True)
    assert result.stdout == rendered[(name, "dark")][0]


def test_svg_has_no_date_and_no_local_paths(rendered):
    for (name, scheme), (svg, _) in rendered.items():
        text = svg.decode()
        assert not re.search(r"\d{4}-\d{2}-\d{2}", text) and "<dc:date>" not in text, f"{name} ({scheme}) has a date"
        for path in (str(PROJECT_ROOT), str(PROJECT_ROOT.home()), "site-packages"):
            assert path not in text, f"{name} ({scheme}) contains the path {path}"


def test_colours_are_the_palettes_and_the_schemes_differ(rendered):
    palettes = json.loads(THEME_FILE.read_text())
    for (name, scheme), (svg, _) in rendered.items():
        used = {colour.decode().lower() for colour in re.findall(rb"#[0-9a-fA-F]{6}\b", svg)}
        foreign = used - set(palettes[scheme].values()) - {palettes["background"][scheme]}  # legends' boxes
        assert used, f"{name} ({scheme}) draws no colour at all"
        assert not foreign, f"{name} ({scheme}) uses colours outside the {scheme} palette: {sorted(foreign)}"
    for name in declarations():
        assert rendered[(name, "light")][0] != rendered[(name, "dark")][0], f"{name}: light and dark are identical"


def test_text_is_plain_text_in_the_page_font(rendered):
    # With svg.fonttype "none", mathtext ($...$) becomes per-glyph spans pinned to DejaVu/STIX fonts the reader may
    # not have; plain Unicode text (‖h‖, √d, u⊥) stays one <text> in the page's own font stack.
    for (name, scheme), (svg, _) in rendered.items():
        for element in ElementTree.fromstring(svg).iter(f"{SVG}text"):
            style = element.get("style", "")
            assert "font-family: '-apple-system'" in style, f"{name} ({scheme}): text not in the page font: {style}"
            assert not list(element.iter(f"{SVG}tspan")), f"{name} ({scheme}): mathtext in {drawn_text(svg)}"


@pytest.mark.parametrize("name", sorted(DRAWN_TEXT))
def test_figure_draws_the_kernels_numbers(rendered, name):
    drawn = "\n".join(drawn_text(rendered[(name, "light")][0]))
    for expected in DRAWN_TEXT[name]:
        assert expected in drawn, f"{name} does not show {expected!r}; it shows:\n{drawn}"


@pytest.mark.parametrize("name", sorted(KERNEL_CALLS))
def test_figure_takes_its_numbers_from_explainer(name):
    declaration = declarations()[name]
    source = declaration.source
    if declaration.sandbox:
        source += inspect.getsource(sys.modules[get_sandbox(declaration.sandbox).function.__module__])
    for call in KERNEL_CALLS[name]:
        assert call in source, f"{name} should call {call}...) rather than type its numbers in"


SANDBOX_SCENES = {"attention_scale": "attention_scale", "tangent_zoom": "tangent_zoom"}


@pytest.mark.parametrize("name", sorted(SANDBOX_SCENES))
def test_a_sandbox_scene_is_drawn_from_the_sandbox_description_and_keyed_on_its_module(rendered, name):
    declaration = declarations()[name]
    assert declaration.sandbox == SANDBOX_SCENES[name]
    assert "_sandbox_views(theme, " in declaration.source and "_arrow(" not in declaration.source, (
        f"{name} must draw the sandbox's description, not redraw its scene")
    [job] = [job for job in illustration_jobs(name) if job.scheme == "light"]
    sandbox_module = sys.modules[get_sandbox(declaration.sandbox).function.__module__]
    assert inspect.getsource(sandbox_module) in job._source(), "a sandbox edit must re-render the picture"
    assert job.draws_description, "and so must an edit of the static renderer"
    # The sandbox's axis labels and legend entries are the picture's: the same description, drawn.
    description = get_sandbox(declaration.sandbox).render()
    labels = {description["axes"][k] for k in ("xlabel", "ylabel", "title")} | {
        m["label"] for m in description["marks"] if m["type"] in ("line", "bars", "region", "heatmap")}
    drawn = set(drawn_text(rendered[(name, "light")][0]))
    assert labels - {""} <= drawn, labels - {""} - drawn


def test_causal_mask_hides_exactly_the_future():
    drawn = drawn_text(render("four_pillars", "light")[0])
    assert drawn.count("−∞") == 5 * 4 // 2  # the strict upper triangle of a 5 × 5 grid


def test_the_essays_numbers_are_the_kernels_numbers():
    # The literals in DRAWN_TEXT are the essay's; they must also be what the kernels give, to the digits shown.
    from explainer import perpendicular_length_change, proportional_recurrence, softmax, tangent_zoom

    assert [f"{p:.6f}" for p in softmax([10.0, 20.0])] == ["0.000045", "0.999955"]
    assert f"{proportional_recurrence(1.0, 0.1, 16)[-1]:.4g}" == "4.595"
    assert [f"{d:.2g}" for d in perpendicular_length_change(5.0, [0.1, 0.05])] == ["0.001", "0.00025"]
    assert tangent_zoom("square", 1.0, 1.0).max_gap / tangent_zoom("square", 1.0, 0.25).max_gap == pytest.approx(16)
    assert tangent_zoom("square", 1.0, 0.0625).max_gap == pytest.approx(1 / 256)


def test_report_sizes_and_render_times(rendered):
    """Not a check: prints each figure's SVG size and render time (see them with `pytest -s` or `-rP`)."""
    print(f"\n{'illustration':28} {'scheme':6} {'px':>9} {'bytes':>7} {'ms':>6}")
    for (name, scheme), (svg, seconds) in sorted(rendered.items()):
        width, height = size_px(svg)
        print(f"{name:28} {scheme:6} {width:4.0f}×{height:<4.0f} {len(svg):7d} {1000 * seconds:6.0f}")


def test_every_static_figure_in_the_built_site_names_the_size_of_its_svg(built_site):
    """An <img> without width and height has no place until it loads, and the text under it jumps (layout shift)."""
    images = 0
    for page in built_site.rglob("*.html"):
        for tag in re.findall(r"<img [^>]*assets/figures/[^>]*>", page.read_text(encoding="utf-8")):
            attributes = dict(re.findall(r'(\w+)="([^"]*)"', tag))
            svg = ElementTree.parse(page.parent / attributes["src"].split("#")[0]).getroot()
            width, height = (float(svg.get(name).removesuffix("pt")) / PT for name in ("width", "height"))
            assert (int(attributes["width"]), int(attributes["height"])) == (round(width), round(height)), (page, tag)
            images += 1
    assert images > 20
