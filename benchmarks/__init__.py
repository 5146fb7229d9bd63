"""Benchmarks for `make bench`: each `bench_*.py` module measures ours against a baseline in the same run."""

import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# The benchmarks build and serve the site the way the tests do: reuse tests/support.py rather than a second copy.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


@dataclass(frozen=True)
class Ratio:
    """One line of the report: ours and a baseline measured side by side, and the target for ours ÷ baseline."""

    name: str
    ours: float  # seconds (or bytes, see unit), median over repeats
    baseline: float  # the same unit, measured in the same run
    baseline_name: str
    target: float | None  # ours / baseline must be at most this; None: reported, no target
    unit: str = "s"  # "s" (printed in ms), "B" (printed in MB) or "n" (a count)

    def shown(self, value: float) -> str:
        """A value of this row as the table prints it (10 characters)."""
        if self.unit == "s":
            return f"{value * 1e3:>8.1f}ms"
        if self.unit == "B":
            return f"{value / 1e6:>8.1f}MB"
        return f"{value:>10.0f}"

    @property
    def ratio(self) -> float:
        return self.ours / self.baseline

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.ratio <= self.target


def median_seconds(action, repeats: int) -> float:
    """Median wall time of `action()` over `repeats` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
