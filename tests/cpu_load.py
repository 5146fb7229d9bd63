"""A bounded CPU load for `make test-stress`: busy processes that keep every core occupied while the tests run.

CI machines are often busy; a suite that passes only on an idle machine is a flaky suite. Each load process spins
for at most `limit_seconds`, stops as soon as the test session that started it is gone (killed, crashed), and is
terminated when the session ends.
"""

import multiprocessing
import os
import time


def _spin(limit_seconds: float, session: int) -> None:
    deadline = time.monotonic() + limit_seconds
    while time.monotonic() < deadline and os.getppid() == session:
        sum(i * i for i in range(10_000))


class CpuLoad:
    """`processes` busy loops, started now and stopped by `stop()` (or after `limit_seconds`, whichever is first)."""

    def __init__(self, processes: int, limit_seconds: float = 1800):
        context = multiprocessing.get_context("spawn")
        self.workers = [context.Process(target=_spin, args=(limit_seconds, os.getpid()), daemon=True) for _ in range(processes)]
        for worker in self.workers:
            worker.start()

    def stop(self) -> None:
        for worker in self.workers:
            worker.terminate()
        for worker in self.workers:
            worker.join(timeout=10)
