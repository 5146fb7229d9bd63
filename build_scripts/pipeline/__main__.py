"""The build pipeline's command line: `python -m build_scripts.pipeline COMMAND [--engine mkdocs|zensical]`.

    build     the finished site into mkdocs.yml's site_dir (strict: any warning fails)
    serve     preview with live reload on --dev-addr
    check     mkdocs.yml, the nav and every block of every page, without writing a site
    publish   render the pages' figures and write them and the live runtime into an already built site
    links     check every internal link, anchor and image of the built site; list the external links
    csp       print the Content-Security-Policy headers of the built site (pages, and the Pyodide worker)

Errors are one line each (`docs/lessons/x.md:42: …`), never a traceback; long steps report their progress.
"""

import argparse
import os
import sys
from pathlib import Path

# Nothing heavy at the top: with MkDocs this process only hands over to `python -m mkdocs`.
ENGINES = ("mkdocs", "zensical")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _check(site) -> None:
    from build_scripts.pipeline.config import check_site
    from build_scripts.pipeline.scan import check_nav, doc_pages, scan_docs

    check_site(site)
    check_nav(site)
    jobs = scan_docs(site)
    print(f"{len(doc_pages(site))} pages checked: every block is valid; they show "
          f"{len({job.file_name for job in jobs})} static figures")


def _publish(site, site_dir: Path) -> None:
    from build_scripts.pipeline.publish import publish, site_figures

    publish(site, site_figures(site, _stderr), site_dir, _stderr)


def _links(site) -> None:
    from build_scripts.pipeline.links import check_links
    from build_scripts.pipeline.engines import BuildError

    report = check_links(_built(site), site.site_url)
    print(report.summary())
    if report.broken:
        raise BuildError(f"explainer: {len(report.broken)} broken links in {site.shown(site.site_dir)}/ (listed above)")


def _csp(site) -> None:
    import json

    from build_scripts.pipeline import csp
    from build_scripts.pipeline.pages import read_page, site_pages
    from build_scripts.site_runtime import ASSET_DIR

    site_dir = _built(site)
    pages = [read_page(site_dir, path) for path in site_pages(site_dir)]
    manifest = site_dir / ASSET_DIR / "runtime.json"
    worker = csp.worker_policy(json.loads(manifest.read_text())) if manifest.is_file() else None
    print(csp.describe(csp.page_policy(pages), worker, site_dir))


def _built(site) -> Path:
    from build_scripts.pipeline.engines import BuildError

    if not (site.site_dir / "index.html").is_file():
        raise BuildError(f"explainer: no site in {site.shown(site.site_dir)}/: run `make build` first")
    return site.site_dir


def run_mkdocs(command: str, config_file: Path, dev_addr: str) -> None:
    """Hand the process over to MkDocs: its explainer plugin runs the pipeline. The preview is not strict: a warning
    (a broken link while writing) is printed, and would otherwise stop every rebuild until fixed, as it does not in
    Zensical's preview; `build` and `check` stay strict."""
    options = ["--strict"] if command == "build" else ["--livereload", "--no-strict", "--dev-addr", dev_addr]
    os.execv(sys.executable, [sys.executable, "-m", "mkdocs", command, *options, "--config-file", str(config_file)])


def run(arguments: argparse.Namespace) -> None:
    """Carry out one command; BuildError (or one of engines.AUTHOR_ERRORS) says what went wrong."""
    if arguments.engine == "mkdocs" and arguments.command in ("build", "serve"):
        run_mkdocs(arguments.command, arguments.config_file, arguments.dev_addr)
    from build_scripts.pipeline import engines
    from build_scripts.pipeline.config import read_site

    site = read_site(arguments.config_file)
    if arguments.command == "build":
        engines.build_with_zensical(site, arguments.clean, _stderr)
    elif arguments.command == "serve":
        engines.serve_with_zensical(site, arguments.dev_addr, _stderr)
    elif arguments.command == "check":
        _check(site)
    elif arguments.command == "links":
        _links(site)
    elif arguments.command == "csp":
        _csp(site)
    else:
        _publish(site, arguments.site_dir or site.site_dir)


def parser() -> argparse.ArgumentParser:
    """The command line's options."""
    parser = argparse.ArgumentParser(prog="python -m build_scripts.pipeline", description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.split("\n")[2:9]))
    parser.add_argument("command", choices=("build", "serve", "check", "publish", "links", "csp"))
    parser.add_argument("--engine", choices=ENGINES, default="mkdocs", help="the site engine (default: mkdocs)")
    parser.add_argument("--config-file", "-f", type=Path, default=Path("mkdocs.yml"),
                        help="the site's configuration (default: mkdocs.yml in the current folder, as both engines)")
    parser.add_argument("--clean", action="store_true", help="build: also empty the engine's own cache")
    parser.add_argument("--dev-addr", default="127.0.0.1:8000", help="serve: the address to serve on")
    parser.add_argument("--site-dir", type=Path, help="publish: the built site (default: mkdocs.yml's site_dir)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    arguments = parser().parse_args(argv)
    try:
        run(arguments)
    except Exception as error:
        from build_scripts.markdown._blocks import error_line
        from build_scripts.pipeline import engines

        if isinstance(error, engines.BuildError):
            _stderr(str(error))
        elif isinstance(error, engines.AUTHOR_ERRORS):
            _stderr(error_line(error))
        else:
            raise
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
