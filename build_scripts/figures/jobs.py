"""What to render, whether it is already rendered, and rendering the rest in parallel.

A job is one SVG: a sandbox's view for some parameter values, or a named illustration, in one palette. Its cache key
hashes everything the picture depends on: the function's source, the explainer kernels (our "version": any change to
them counts), the parameters, the theme and the renderer. The key is part of the file name, so a file that exists is
up to date; the manifest records what each file is. Files are written to a temporary name and renamed.
"""

import dataclasses
import functools
import hashlib
import importlib.util
import inspect
import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from build_scripts._files import files_digest, module_files, write_atomic

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_CACHE_DIR = PROJECT_ROOT / ".cache" / "figures"
MANIFEST = "manifest.json"
THEME_FILES = ("build_scripts/figures/theme.py", "build_scripts/browser/theme.json")
DESCRIPTION_RENDERER = "build_scripts/figures/description.py"


PRELOAD = ("matplotlib.figure", "build_scripts.figures.description", "explainer.sandbox")


class FigureError(Exception):
    """A figure function raised; the message names the figure and where it is used."""


def _digest(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


@functools.cache
def kernel_digest() -> str:
    """The explainer package's code and data (figure_style.json), sandboxes aside: a change to any kernel may change
    any figure."""
    explainer = PROJECT_ROOT / "explainer"
    files = [*explainer.rglob("*.py"), *explainer.rglob("*.json")]
    return files_digest((p for p in files if "sandboxes" not in p.relative_to(explainer).parts), PROJECT_ROOT)


@functools.cache
def theme_digest(with_description_renderer: bool) -> str:
    """The palette and theme module (and, for sandbox views, the description renderer)."""
    names = THEME_FILES + ((DESCRIPTION_RENDERER,) if with_description_renderer else ())
    return files_digest((PROJECT_ROOT / name for name in names), PROJECT_ROOT)


@dataclass(frozen=True)
class FigureJob:
    """One SVG to render: a sandbox view (kind 'sandbox', with parameter values) or an illustration."""

    kind: str  # "sandbox" or "illustration"
    name: str
    scheme: str  # "light" or "dark"
    params: tuple = ()  # sorted (name, value) pairs: the sandbox's values
    height: int = 360
    used_at: tuple = field(default=(), compare=False)  # "docs/x.md:12" places, for error messages only
    module: str = field(default="", compare=False)  # an illustration's module: worker processes import it to draw

    @functools.cached_property
    def key(self) -> str:
        """The cache key: source, kernels, parameters, palette and renderer."""
        source = self._source().encode()
        parameters = json.dumps([self.kind, self.name, self.scheme, list(self.params), self.height]).encode()
        renderer = theme_digest(self.draws_description)
        return _digest(source, kernel_digest().encode(), parameters, renderer.encode())

    @functools.cached_property
    def draws_description(self) -> bool:
        """Whether the picture is a sandbox's description drawn by the static renderer (description.py)."""
        if self.kind == "sandbox":
            return True
        from build_scripts.figures.registry import get_declaration

        return bool(get_declaration(self.name).sandbox)

    @property
    def file_name(self) -> str:
        """Where the SVG goes (inside the cache and the site's assets/figures/)."""
        return f"{self.name}-{self.key[:16]}-{self.scheme}.svg"

    def _source(self) -> str:
        """The source the picture depends on: the sandbox's module, or the illustration's function and helpers (and
        the module of the sandbox it draws, if any)."""
        if self.kind == "sandbox":
            return _sandbox_source(self.name)
        from build_scripts.figures.registry import get_declaration

        declaration = get_declaration(self.name)
        return (declaration.source + (_sandbox_source(declaration.sandbox) if declaration.sandbox else "")
                + _build_code_digest(declaration.module))

    def render(self) -> bytes:
        """Draw the figure and return its SVG bytes."""
        import matplotlib

        from build_scripts.figures.theme import load_theme, rc_params, svg_bytes

        theme = load_theme(self.scheme)
        # Artists read fonts and colours from rcParams when they are made: draw the whole figure inside the theme.
        with matplotlib.rc_context(rc_params(theme)):
            if self.kind == "sandbox":
                from build_scripts.figures.description import draw_description
                from explainer.sandbox import get_sandbox

                figure = draw_description(get_sandbox(self.name).render(dict(self.params)), theme, self.height)
            else:
                from build_scripts.figures.registry import load

                figure = load(self.name, self.module)(theme)
        return svg_bytes(figure, theme)


@functools.cache
def _build_code_digest(module: str) -> str:
    """The build code an illustration's module imports (say the training grid, whose seeds its figure draws), read
    from source: the module's own code counts only through the function and helpers the figure uses."""
    own = Path(importlib.util.find_spec(module).origin).resolve()
    files = module_files(PROJECT_ROOT, ("build_scripts",), module) - {own}
    return files_digest(files, PROJECT_ROOT)


def _sandbox_source(name: str) -> str:
    from explainer.sandbox import get_sandbox

    return inspect.getsource(sys.modules[get_sandbox(name).function.__module__])


def sandbox_jobs(name: str, values: dict, height: int, used_at: str = "") -> list[FigureJob]:
    """The light and dark views of a sandbox at these parameter values."""
    params = tuple(sorted(values.items()))
    return [FigureJob("sandbox", name, scheme, params, height, (used_at,) if used_at else ()) for scheme in
            ("light", "dark")]


def illustration_jobs(name: str, used_at: str = "") -> list[FigureJob]:
    """The light and dark variants of an illustration."""
    from build_scripts.figures.registry import get_declaration

    module = get_declaration(name).module
    return [FigureJob("illustration", name, scheme, used_at=(used_at,) if used_at else (), module=module)
            for scheme in ("light", "dark")]


# ---- rendering what is missing -----------------------------------------------------------------------------------


def _render_one(job: FigureJob, cache_dir: str) -> tuple[str, float, str | None]:
    """Render a job into the cache (runs in a worker process); returns (file, seconds, error or None)."""
    start = time.perf_counter()
    try:
        write_atomic(Path(cache_dir) / job.file_name, job.render())
    except Exception as error:  # reported by the parent, naming the figure and the pages that use it
        return job.file_name, time.perf_counter() - start, f"{type(error).__name__}: {error}"
    return job.file_name, time.perf_counter() - start, None


def merge(jobs: Iterable[FigureJob]) -> list[FigureJob]:
    """One job per file, with every place that uses it."""
    merged: dict[FigureJob, FigureJob] = {}
    for job in jobs:
        known = merged.get(job)
        merged[job] = job if known is None else dataclasses.replace(
            job, used_at=tuple(dict.fromkeys(known.used_at + job.used_at)))
    return list(merged.values())


@dataclass
class RenderReport:
    """What a render_all call did."""

    rendered: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    seconds: float = 0.0


def render_all(jobs: Iterable[FigureJob], cache_dir: Path = DEFAULT_CACHE_DIR, workers: int | None = None,
               progress: Callable[[str], None] | None = None) -> RenderReport:
    """Render every job whose SVG is not in the cache yet, across `workers` processes (default: one per core)."""
    start, jobs = time.perf_counter(), merge(jobs)
    cache_dir.mkdir(parents=True, exist_ok=True)
    report = RenderReport()
    missing = [job for job in jobs if not (cache_dir / job.file_name).is_file()]
    report.reused = [job.file_name for job in jobs if job not in missing]
    errors = []
    for job, (file_name, seconds, error) in zip(missing, _run(missing, cache_dir, workers)):
        if error:
            where = f" (used at {', '.join(job.used_at)})" if job.used_at else ""
            errors.append(f"figure '{job.name}' ({job.kind}, {job.scheme}) failed: {error}{where}")
        else:
            report.rendered.append(file_name)
        if progress:
            progress(f"{'FAILED' if error else 'rendered'} {file_name} in {seconds * 1000:.0f} ms")
    _update_manifest(cache_dir, jobs)
    report.seconds = time.perf_counter() - start
    if errors:
        raise FigureError("; ".join(errors))
    return report


def _run(jobs: list[FigureJob], cache_dir: Path, workers: int | None):
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(jobs) <= 1:
        return [_render_one(job, str(cache_dir)) for job in jobs]
    # forkserver, not fork: the build may run threads (mkdocs serve does), and forking a threaded process can
    # deadlock. The server imports matplotlib and the figure code once; every worker is forked from it ready to draw.
    context = get_context("forkserver" if sys.platform != "win32" else "spawn")
    if context.get_start_method() == "forkserver":
        context.set_forkserver_preload(list(PRELOAD))
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=context) as pool:
        return list(pool.map(_render_one, jobs, [str(cache_dir)] * len(jobs)))


def _update_manifest(cache_dir: Path, jobs: list[FigureJob]) -> None:
    path = cache_dir / MANIFEST
    manifest = json.loads(path.read_text()) if path.is_file() else {}
    for job in jobs:
        manifest[job.file_name] = {"kind": job.kind, "name": job.name, "scheme": job.scheme, "key": job.key,
                                   "params": dict(job.params), "height": job.height}
    write_atomic(path, (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode())


def all_default_jobs() -> list[FigureJob]:
    """Every illustration, and every sandbox at its defaults, in both palettes (what the CLI renders)."""
    from build_scripts.figures.registry import declarations
    from explainer.figure import DEFAULT_HEIGHT
    from explainer.sandbox import registry

    jobs = [job for name in declarations() for job in illustration_jobs(name)]
    for name, sandbox in registry().items():
        jobs += sandbox_jobs(name, sandbox.defaults(), DEFAULT_HEIGHT)
    return jobs
