"""Work that can wait: done later, a small step at a time, while the reader's Python has nothing else to do.

In Pyodide, asyncio's event loop is the browser's own (Pyodide's WebLoop): a step scheduled on it runs as a task of
its own after the current request has replied, and a request that arrives meanwhile waits for one step at most. So a
sandbox can prepare what the reader's next change will need between changes, without making any change slower.
Elsewhere (CPython: the tests, the site build) nothing runs the loop between requests, and `later` does nothing:
work that can wait must only ever be an optimisation, never needed for a result.
"""

import asyncio
import sys
import traceback
from collections.abc import Callable

IN_BROWSER = sys.platform == "emscripten"
_waiting: dict[str, Callable[[], bool]] = {}  # the work waiting under each key: its next step


def _call_soon(callback: Callable[[], None]) -> None:
    asyncio.get_event_loop().call_soon(callback)


def later(key: str, step: Callable[[], bool]) -> None:
    """Call `step()` in idle time, once per task, until it returns True (done). Work already waiting under `key` is
    replaced: a sandbox prepares for its newest state only. Does nothing outside the browser."""
    if not IN_BROWSER:
        return
    scheduled = key in _waiting
    _waiting[key] = step
    if not scheduled:
        _call_soon(lambda: _run(key))


def _run(key: str) -> None:
    step = _waiting.get(key)
    if step is None:
        return
    done = True  # unless the step says otherwise: work that raised is dropped
    try:
        done = step()
    except KeyboardInterrupt:
        # The page interrupts only a reader's running cell; one that lands here was written as that cell ended, too
        # late for it. Raised on, it would reach Pyodide's event loop, which prints it on the console as an error,
        # and the work would be dropped. The step runs again instead.
        done = False
    except Exception:  # a bug here must not break the page: the work is dropped, and said so on the console
        traceback.print_exc()
    finally:
        if done and _waiting.get(key) is step:
            del _waiting[key]
        if key in _waiting:
            _call_soon(lambda: _run(key))
