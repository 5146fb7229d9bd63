"""The build's own part of a site, after the engine has written the pages: the static figures the pages show (rendered
into the cache first) and, for live sandboxes, the browser code, our wheel, runtime.json and (self-hosted) Pyodide.

`site_figures` remembers, in the figure cache, which figures the pages showed for which inputs (the pages, mkdocs.yml,
explainer and build_scripts); when none of those changed and every figure is still cached, a build neither reads
the pages again nor imports anything heavy.
"""

import functools
import hashlib
import json
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from pathlib import Path

from build_scripts import site_runtime, trained_weights
from build_scripts._files import code_digest, write_atomic
from build_scripts.figures.jobs import FigureJob, render_all
from build_scripts.figures.theme import PT
from build_scripts.markdown._blocks import FIGURE_DIR
from build_scripts.pipeline import csp, offline
from build_scripts.pipeline.katex_fonts import preload_katex_fonts
from build_scripts.pipeline.config import Site
from build_scripts.pipeline.pages import PageError, insert_head_tags, read_page, site_pages
from build_scripts.pipeline.theme_assets import lean_theme_assets
from build_scripts.progress import Progress

# A static figure's <img>: its file under assets/figures/ and the rest of the tag (see size_figure_images).
RE_FIGURE_IMAGE = re.compile(r'<img (?P<attributes>[^>]*?src="[^"]*%s/(?P<file>[^"#/]+\.svg)[^>]*?)\s*/?>' % FIGURE_DIR)
STATE_FILE = "pages.json"  # in the figure cache: the figures the pages showed, and the inputs they were read from


def inputs_digest(site: Site) -> str:
    """sha256 over what decides the pages' figures and checks: the code, mkdocs.yml and the pages."""
    digest = hashlib.sha256(code_digest(site.root).encode())
    for path in [site.config_file, *sorted(site.docs_dir.rglob("*.md"))]:
        digest.update(site.shown(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def reporter(emit: Callable[[str], None] | None) -> Callable[..., Progress]:
    """Progress reporters that write to `emit` (stderr when None)."""
    return functools.partial(Progress, emit=emit)


def package_data(emit: Callable[[str], None] | None = None) -> None:
    """What explainer/ must hold before a page is read, a figure drawn or the wheel made: the ablation lab's trained
    weights (build_scripts/trained_weights.py; trained once into the cache, copied into the package)."""
    trained_weights.export(progress=reporter(emit))


def render_figures(jobs: list[FigureJob], site: Site, emit: Callable[[str], None] | None = None) -> list[str]:
    """Render the jobs missing from the cache (FigureError names any that raises); the files, sorted."""
    render_all(jobs, site.cache_dir, site.options.workers or None, progress=reporter(emit))
    return sorted({job.file_name for job in jobs})


def site_figures(site: Site, emit: Callable[[str], None] | None = None) -> list[str]:
    """Check every page and render the figures they show; unchanged inputs skip both (see the module docstring)."""
    from build_scripts.pipeline.scan import scan_docs

    package_data(emit)  # first: the trained weights are among the inputs below
    state_path, digest = site.cache_dir / STATE_FILE, inputs_digest(site)
    try:
        state = json.loads(state_path.read_text())
    except (OSError, ValueError):
        state = {}
    if state.get("inputs") == digest and all((site.cache_dir / name).is_file() for name in state["figures"]):
        return state["figures"]
    files = render_figures(scan_docs(site), site, emit)
    write_atomic(state_path, json.dumps({"inputs": digest, "figures": files}, indent=1) + "\n")
    return files


def link_figures(site: Site, files: list[str], site_dir: Path) -> None:
    """Put the figures into the site's assets/figures/ (hard links into the cache)."""
    target = site_dir / FIGURE_DIR
    target.mkdir(parents=True, exist_ok=True)
    for name in files:
        site_runtime.link_or_copy(site.cache_dir / name, target / name)


def svg_size(path: Path) -> tuple[int, int]:
    """An SVG's width and height in CSS pixels (matplotlib writes them in points)."""
    root = ElementTree.parse(path).getroot()
    return tuple(round(float(root.get(name).removesuffix("pt")) / PT) for name in ("width", "height"))


def size_figure_images(site_dir: Path) -> None:
    """Give every static figure's <img> the width and height of its SVG, so the browser keeps its place before it
    loads and the text under it does not jump. The pages are written before the figures are drawn (an illustration
    decides its own height), so this is done here, once both exist."""
    sizes: dict[str, tuple[int, int]] = {}

    def sized(match: re.Match) -> str:
        attributes = match["attributes"]
        if re.search(r"\swidth=", " " + attributes):
            return match[0]
        name = match["file"]
        if name not in sizes:
            sizes[name] = svg_size(site_dir / FIGURE_DIR / name)
        width, height = sizes[name]
        return f'<img {attributes} width="{width}" height="{height}">'

    for page in site_dir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if FIGURE_DIR not in text:
            continue
        new = RE_FIGURE_IMAGE.sub(sized, text)
        if new != text:
            write_atomic(page, new)


def finish_pages(site: Site, site_dir: Path, manifest: dict | None) -> None:
    """What the pipeline adds to the pages and the site's root once everything else is in place: the
    Content-Security-Policy in every page (csp.py) and, for offline reading, sw.js and the mark that registers it
    (offline.py). PageError names a page that cannot take them."""
    if not (site.options.csp or site.options.offline):
        return
    paths = site_pages(site_dir)
    pages = [read_page(site_dir, path) for path in paths]
    tags = {page.path: [] for page in pages}
    if site.options.csp:
        tag = csp.meta_tag(csp.page_policy(pages))
        for page in pages:
            tags[page.path].append(tag)
    if site.options.offline and manifest:
        offline.write_service_worker(site_dir, pages, manifest, site.site_url)
        for page in pages:
            mark = offline.page_mark(page)
            if mark:
                tags[page.path].append(mark)
    for path, page in zip(paths, pages):
        html = path.read_text(encoding="utf-8")
        finished = insert_head_tags(html, tags[page.path], page.path)
        if finished != html:
            write_atomic(path, finished)


def publish(site: Site, figure_files: list[str], site_dir: Path | None = None,
            emit: Callable[[str], None] | None = None, serving: bool = False) -> dict | None:
    """Write our part into a built site (mkdocs.yml's site_dir unless given): figures, page code and, unless the
    pipeline is disabled, the live runtime; then, unless `serving` (a live preview), the pages' policy and offline
    reading. Returns the runtime manifest (None when disabled)."""
    site_dir = site_dir or site.site_dir
    link_figures(site, figure_files, site_dir)
    size_figure_images(site_dir)
    preload_katex_fonts(site_dir)
    lean_theme_assets(site_dir)
    site_runtime.copy_browser_files(site_dir)
    manifest = None
    if site.options.enabled:
        manifest = site_runtime.write_site_runtime(site_dir, self_host=site.options.self_host,
                                                   progress=reporter(emit))
    if not serving:
        finish_pages(site, site_dir, manifest)
    return manifest
