"""Render the static figures: `python -m build_scripts.figures [--out DIR] [--workers N] [--verbose] [NAME ...]`.

Without names: every illustration and every sandbox at its defaults, light and dark. Figures already in the cache
(build/cache/figures/, keyed by what they depend on) are not rendered again. The site build (build_scripts.pipeline)
calls the same code with the exact figures the pages use.
"""

import argparse
import shutil
import sys
from pathlib import Path

from build_scripts.figures.jobs import DEFAULT_CACHE_DIR, FigureError, all_default_jobs, render_all


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m build_scripts.figures", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="only these figures or sandboxes (default: all)")
    parser.add_argument("--out", type=Path, help="also copy the SVGs into this folder")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR, help="the figure cache")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: one per core)")
    parser.add_argument("--verbose", "-v", action="store_true", help="a line per figure")
    parser.add_argument("--list", action="store_true", help="list the figures and exit")
    args = parser.parse_args(argv)
    jobs = all_default_jobs()
    known = sorted({job.name for job in jobs})
    if args.list:
        print("\n".join(known))
        return 0
    unknown = [name for name in args.names if name not in known]
    if unknown:
        print(f"error: unknown figure(s) {', '.join(unknown)}; valid: {', '.join(known)}", file=sys.stderr)
        return 2
    jobs = [job for job in jobs if not args.names or job.name in args.names]
    try:
        report = render_all(jobs, args.cache_dir, args.workers, log=print if args.verbose else None)
    except FigureError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for job in jobs:
            shutil.copy2(args.cache_dir / job.file_name, args.out / job.file_name)
    print(f"{len(report.rendered)} figures rendered, {len(report.reused)} reused from {args.cache_dir} "
          f"in {report.seconds:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
