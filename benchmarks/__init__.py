"""Benchmarks for `make bench`: each `bench_*.py` module measures ours against a baseline in the same run."""

import statistics
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Ratio:
    """One line of the report: ours and a baseline measured side by side, and the target for ours ÷ baseline."""

    name: str
    ours: float  # seconds, median over repeats
    baseline: float  # seconds, median over repeats, measured in the same run
    baseline_name: str
    target: float  # ours / baseline must be at most this

    @property
    def ratio(self) -> float:
        return self.ours / self.baseline

    @property
    def met(self) -> bool:
        return self.ratio <= self.target


def median_seconds(action, repeats: int) -> float:
    """Median wall time of `action()` over `repeats` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
