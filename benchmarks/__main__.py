"""Run every benchmark module and print one table; exit status 0 even when a target is missed (it is reported)."""

import importlib
import pkgutil

import benchmarks


def main() -> None:
    rows = []
    for module in pkgutil.iter_modules(benchmarks.__path__):
        if module.name.startswith("bench_"):
            rows.extend(importlib.import_module(f"benchmarks.{module.name}").run())

    header = f"{'benchmark':<44} {'ours':>10} {'baseline':>10} {'ratio':>7} {'target':>8}  verdict  baseline is"
    print(header)
    print("-" * len(header))
    for row in rows:
        verdict = {True: "met", False: "MISSED", None: "(info)"}[row.met]
        target = "—" if row.target is None else f"≤ {row.target:.2f}"
        print(
            f"{row.name:<44} {row.shown(row.ours)} {row.shown(row.baseline)} {row.ratio:>7.2f} "
            f"{target:>8}  {verdict:<7}  {row.baseline_name}"
        )


if __name__ == "__main__":
    main()
