"""Run the benchmark modules and print one table; exit status 0 even when a target is missed (it is reported).

    python -m benchmarks                   # every benchmarks/bench_*.py
    python -m benchmarks sandboxes cells   # only bench_sandboxes and bench_cells (make bench BENCH="sandboxes cells")
"""

import importlib
import pkgutil
import sys

import benchmarks

NAME_WIDTH_LIMIT = 64


def main(names: list[str]) -> None:
    available = sorted(module.name.removeprefix("bench_") for module in pkgutil.iter_modules(benchmarks.__path__)
                       if module.name.startswith("bench_"))
    unknown = sorted(set(names) - set(available))
    if unknown:
        sys.exit(f"benchmarks: no benchmark named {', '.join(unknown)} (there are: {', '.join(available)})")
    rows = []
    for name in names or available:
        rows.extend(importlib.import_module(f"benchmarks.bench_{name}").run())

    # The name column fits the names up to NAME_WIDTH_LIMIT characters; a longer one (Lighthouse's, which lists the
    # page's scores) runs into its own row's figures rather than pushing every row's far to the right.
    width = max([44, *(len(row.name) for row in rows if len(row.name) <= NAME_WIDTH_LIMIT)])
    header = f"{'benchmark':<{width}} {'ours':>10} {'baseline':>10} {'ratio':>7} {'target':>8}  verdict  baseline is"
    print(header)
    print("-" * len(header))
    for row in rows:
        verdict = {True: "met", False: "MISSED", None: "(info)"}[row.met]
        target = "—" if row.target is None else f"≤ {row.target:.2f}"
        print(
            f"{row.name:<{width}} {row.shown(row.ours)} {row.shown(row.baseline)} {row.ratio:>7.2f} "
            f"{target:>8}  {verdict:<7}  {row.baseline_name}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
