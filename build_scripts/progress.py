"""Progress of long build work (rendering figures, training runs, building the wheel), quiet when nothing is slow.

    with Progress("rendering static figures", total=len(missing)) as progress:
        for job in missing:
            render(job)
            progress.advance()

A task says nothing during its first AFTER seconds; a task still running then gets a line saying what runs, how far it
is (n of N) and for how long, again every EVERY seconds, and a last line when it ends. So a warm build, whose steps all
finish at once, prints no progress line, and a cold one never goes silent for long:

    explainer: rendering static figures: 12 of 92, 6.0 s
    explainer: rendering static figures: 92 of 92, done in 41.3 s

Lines go to `emit` (stderr by default; the MkDocs plugin passes its logger, so they show as `INFO - explainer: …`).
A task with nothing to do should not be started at all: the caller knows, and a warm build then costs nothing here.
"""

import sys
import threading
import time
from collections.abc import Callable

AFTER = 2.0  # seconds a task runs before its first line: shorter work stays silent
EVERY = 5.0  # seconds between two lines of a task still running
PREFIX = "explainer: "


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Progress:
    """One task of `total` steps (or None for a single step): reports itself only if it runs longer than `after`."""

    def __init__(self, what: str, total: int | None = None, emit: Callable[[str], None] | None = None,
                 after: float | None = None, every: float | None = None):
        self.what, self.total, self.done = what, total, 0
        self.emit = emit or _stderr
        self.after = AFTER if after is None else after
        self.every = EVERY if every is None else every
        self.reported = False
        self._start = 0.0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._timer: threading.Thread | None = None

    def __enter__(self) -> "Progress":
        self._start = time.perf_counter()
        self._timer = threading.Thread(target=self._report_while_running, name=f"progress: {self.what}", daemon=True)
        self._timer.start()
        return self

    def advance(self, steps: int = 1) -> None:
        """Count finished steps (callable from any thread)."""
        with self._lock:
            self.done += steps

    def __exit__(self, kind, error, traceback) -> None:
        self._stop.set()
        if self._timer:
            self._timer.join()
        elapsed = self.elapsed()
        if self.reported or elapsed >= self.after:
            self._line(f"failed after {elapsed:.1f} s" if kind else f"done in {elapsed:.1f} s")

    def elapsed(self) -> float:
        """Seconds since the task started."""
        return time.perf_counter() - self._start

    def _count(self) -> str:
        return f"{self.done} of {self.total}, " if self.total is not None else ""

    def _line(self, state: str) -> None:
        with self._lock:
            line = f"{PREFIX}{self.what}: {self._count()}{state}"
            self.reported = True
        self.emit(line)

    def _report_while_running(self) -> None:
        wait = self.after
        while not self._stop.wait(wait):
            self._line(f"{self.elapsed():.1f} s")
            wait = self.every
