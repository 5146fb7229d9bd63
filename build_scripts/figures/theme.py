"""One theme for every static figure: the palette of build_scripts/browser/theme.json, the drawing box of
explainer.figure, type sizes and line widths of the live renderer, and the settings that make SVG output
byte-for-byte repeatable.

Sizes are given in the live renderer's units (px of a 640-wide box) and converted here, so a static figure and its
live twin look the same when the page scales both to the column width.
"""

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from explainer.figure import DEFAULT_HEIGHT, FIGURE_WIDTH, MARGINS, STYLE

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# matplotlib is imported where a figure is drawn, not here: a build whose figures are all cached never pays for it.

THEME_FILE = Path(__file__).resolve().parent.parent / "browser" / "theme.json"
SCHEMES = ("light", "dark")
DPI = 100  # one figure pixel per live-renderer unit: a 640-wide figure is 6.4 in
PT = 72 / DPI  # matplotlib sizes are points; multiply a live-renderer px by PT
FONT_FAMILY = ["-apple-system", "BlinkMacSystemFont", "Helvetica", "Arial", "DejaVu Sans"]
FONT_PX = STYLE["font_size"]  # tick, label, title, legend, mark_label: as the live renderer's (figure_style.json)
HASH_SALT = "explainer-figures"  # fixed, so the ids matplotlib writes into an SVG are the same on every build


@dataclass(frozen=True)
class Theme:
    """Colours for one palette (light or dark) and the size helpers every figure function uses."""

    scheme: str
    colors: dict  # role -> hex, roles as explainer.figure.COLOR_ROLES
    background: str  # the page background behind the figure (figures themselves are transparent)

    def color(self, role: str) -> str:
        """The hex colour of a role (ink, muted, primary, secondary, accent, good, warn, bad)."""
        return self.colors[role]

    @staticmethod
    def font(kind: str) -> float:
        """Font size in points for 'tick', 'label', 'title', 'legend' or 'mark_label' text."""
        return FONT_PX[kind] * PT

    @staticmethod
    def width(px: float) -> float:
        """A line width given in live-renderer px, in points."""
        return px * PT


def load_theme(scheme: str) -> Theme:
    """The light or dark theme, read from the one palette file the browser also uses."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)} (got {scheme!r})")
    palette = json.loads(THEME_FILE.read_text(encoding="utf-8"))
    return Theme(scheme, dict(palette[scheme]), palette["background"][scheme])


def rc_params(theme: Theme) -> dict:
    """matplotlib settings for a theme: its ink colours, our fonts, and repeatable SVG output."""
    ink, muted = theme.color("ink"), theme.color("muted")
    return {
        "svg.fonttype": "none",  # text stays text: crisp, small, and in the page's own font
        "svg.hashsalt": HASH_SALT,
        "svg.id": None,
        "font.family": "sans-serif",
        "font.sans-serif": FONT_FAMILY,
        "font.size": theme.font("tick"),
        "text.color": ink,
        "axes.labelcolor": ink,
        "axes.edgecolor": muted,
        "axes.linewidth": theme.width(STYLE["axes"]["stroke_width"]),
        "xtick.color": muted,
        "ytick.color": muted,
        "xtick.labelcolor": ink,
        "ytick.labelcolor": ink,
        "xtick.labelsize": theme.font("tick"),
        "ytick.labelsize": theme.font("tick"),
        "xtick.major.size": STYLE["axes"]["tick_length"] * PT,
        "ytick.major.size": STYLE["axes"]["tick_length"] * PT,
        "xtick.major.pad": STYLE["axes"]["tick_label_gap"] * PT,
        "ytick.major.pad": STYLE["axes"]["tick_label_gap"] * PT,
        "axes.facecolor": "none",
        "figure.facecolor": "none",
        "savefig.facecolor": "none",
        "savefig.transparent": True,
        "path.simplify": False,  # keep every vertex: the live renderer draws them all
    }


def new_figure(theme: Theme, height: int = DEFAULT_HEIGHT, width: int = FIGURE_WIDTH) -> "Figure":
    """An empty figure of `width` × `height` live-renderer px (no pyplot: safe in worker processes)."""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(rc_params(theme)):
        return Figure(figsize=(width / DPI, height / DPI), dpi=DPI)


def plot_axes(figure: "Figure", theme: Theme):
    """Axes placed exactly where the live renderer puts its plot area (explainer.figure.MARGINS)."""
    width, height = figure.get_size_inches() * DPI
    left, bottom = MARGINS["left"] / width, MARGINS["bottom"] / height
    box = [left, bottom, 1 - left - MARGINS["right"] / width, 1 - bottom - MARGINS["top"] / height]
    import matplotlib

    with matplotlib.rc_context(rc_params(theme)):
        return figure.add_axes(box)


def svg_bytes(figure: "Figure", theme: Theme) -> bytes:
    """The figure as SVG, identical bytes for identical input (no date, fixed ids)."""
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context(rc_params(theme)):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return buffer.getvalue()
