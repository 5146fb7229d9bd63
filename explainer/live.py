"""What the browser's worker runs besides sandboxes: code cells a reader edits, and long computations that stream.

Both speak JSON strings to the worker (build_scripts/browser/worker.js), the way `explainer.sandbox.render_json` does,
so no Python object outlives a request on the JavaScript side, and both are plain Python: the CPython tests check
exactly what Pyodide runs.

Cells: `run_cell_json` runs a reader's code in a namespace kept per session (cells of one session share it, in the
order they run). Output is streamed through the emitter the worker installs (`set_emitter`): `emit("stdout", text)`,
`emit("stderr", text)`, `emit("figure", json)` for `show(figure)`; each printed line goes out when it is complete, and
a loop that prints faster than a reader can follow is sent in batches. The reply carries the value of the last
expression (its repr) and the result of the cell's check; an exception comes back with a traceback that starts at the
reader's code and the line it failed on.

Streams: a stream is a generator function registered by name (`@stream("name")`). The worker opens one with
`open_stream`, asks for one step at a time with `step_stream` (each step is one chunk of work, and the worker answers
other requests between steps) and closes it with `close_stream` when it ends or is cancelled.
"""

import ast
import itertools
import json
import math
import sys
import time
import traceback
from collections.abc import Callable, Iterator

from explainer.figure import validate_figure

CELL_FILE = "<cell>"  # the file name the reader's code runs under: its frames are the ones a traceback keeps
SETUP_FILE = "<setup>"
CHECK_FILE = "<check>"
OUTPUT_LIMIT = 200_000  # characters of output per run; past it the rest is dropped, with one line saying so
FLUSH_SECONDS = 0.03  # batched output goes out at most this often (and at the end): a print loop cannot flood the page
FLUSH_CHARACTERS = 8192
# A completed line goes out at once (a print before a long computation shows while it runs), up to a burst of this
# many lines; the allowance refills at LINES_PER_SECOND, and past it output waits for the next batch.
LINE_BURST = 20
LINES_PER_SECOND = 50
RESULT_LIMIT = 20_000  # characters of the last expression's repr


def _ignore(kind: str, text: str) -> None:
    pass


_emit: Callable[[str, str], None] = _ignore


def set_emitter(emit: Callable[[str, str], None] | None) -> None:
    """Install the function that carries output to the page: emit(kind, text), kind stdout, stderr or figure."""
    global _emit
    _emit = emit or _ignore


# ---- output ----------------------------------------------------------------------------------------------------------


class _Channel:
    """What a run prints, stdout and stderr in the order written, sent through the emitter in batches."""

    def __init__(self):
        self.budget = OUTPUT_LIMIT  # characters left for this run, both streams together
        self.pending: list[list[str]] = []  # [kind, text] runs not sent yet, consecutive kinds merged
        self.size = 0
        self.stdout_text: list[str] = []  # everything printed to stdout, for the output check
        self.last_flush = self.last_line = time.monotonic()
        self.line_allowance = float(LINE_BURST)  # completed lines that may still go out at once

    def write(self, kind: str, text: str) -> None:
        if kind == "stdout":
            self.stdout_text.append(text)
        if self.budget <= 0:
            return
        kept = text[: self.budget]
        self.budget -= len(kept)
        if self.pending and self.pending[-1][0] == kind:
            self.pending[-1][1] += kept
        else:
            self.pending.append([kind, kept])
        self.size += len(kept)
        if self.budget <= 0:
            self.pending.append(["stderr", f"\n… output cut here: more than {OUTPUT_LIMIT:,} characters\n"])
            self.flush()
        elif ("\n" in kept and self._line_may_go()) or self.size >= FLUSH_CHARACTERS \
                or time.monotonic() - self.last_flush >= FLUSH_SECONDS:
            self.flush()

    def _line_may_go(self) -> bool:
        now = time.monotonic()
        self.line_allowance = min(LINE_BURST, self.line_allowance + (now - self.last_line) * LINES_PER_SECOND)
        self.last_line = now
        if self.line_allowance < 1:
            return False
        self.line_allowance -= 1
        return True

    def flush(self) -> None:
        pending, self.pending, self.size = self.pending, [], 0
        for kind, text in pending:
            if text:
                _emit(kind, text)
        self.last_flush = time.monotonic()


class _Output:
    """sys.stdout or sys.stderr during a run: a text stream that writes into the run's channel."""

    def __init__(self, kind: str, channel: _Channel):
        self.kind, self.channel = kind, channel

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.channel.write(self.kind, text)
        return len(text)

    def flush(self) -> None:
        self.channel.flush()

    def isatty(self) -> bool:
        return False


def show(description: dict) -> None:
    """Draw a figure description (see explainer.figure) under the cell, with the site's renderer."""
    validate_figure(description)
    sys.stdout.flush()  # what was printed before show() comes before the figure
    _emit("figure", json.dumps(description, allow_nan=False))


# ---- running a cell --------------------------------------------------------------------------------------------------

_sessions: dict[str, dict] = {}


def _namespace(session: str) -> dict:
    if session not in _sessions:
        _sessions[session] = {"__name__": "__main__", "__builtins__": __builtins__, "show": show}
    return _sessions[session]


def reset_session(session: str) -> bool:
    """Forget a session's variables; True if it had any."""
    return _sessions.pop(session, None) is not None


def _run_code(code: str, namespace: dict, filename: str):
    """Run `code` in `namespace`; return the value of its last line when that line is an expression, else None."""
    tree = ast.parse(code, filename, "exec")
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body.pop()
    exec(compile(tree, filename, "exec"), namespace)
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), filename, "eval"), namespace)


class CellError(Exception):
    """What went wrong in a reader's code: kind, message, the trimmed traceback and the line it points at."""

    def __init__(self, kind: str, message: str, detail: str = "", line: int | None = None, source: str = "cell"):
        super().__init__(message)
        self.kind, self.message, self.detail, self.line, self.source = kind, message, detail, line, source

    def to_json(self) -> dict:
        return {"kind": self.kind, "message": self.message, "parameter": None, "detail": self.detail,
                "line": self.line, "source": self.source}


def _cell_error(error: BaseException, filename: str) -> CellError:
    """The error as the reader should see it: frames from their code down, nothing of this module's."""
    source = {CELL_FILE: "cell", SETUP_FILE: "setup", CHECK_FILE: "check"}[filename]
    if isinstance(error, KeyboardInterrupt):
        return CellError("interrupted", "the code was stopped: it ran past its time limit", source=source)
    summary = traceback.TracebackException.from_exception(error)
    frames = list(itertools.dropwhile(lambda frame: frame.filename != filename, summary.stack))
    summary.stack = traceback.StackSummary.from_list(frames)
    line = None
    if isinstance(error, SyntaxError) and error.filename == filename:
        line = error.lineno
    else:
        line = next((frame.lineno for frame in reversed(frames) if frame.filename == filename), None)
    message = "".join(summary.format_exception_only()).strip().splitlines()[-1]
    return CellError("exception", message, "".join(summary.format()), line, source)


def _run_part(code: str, namespace: dict, filename: str):
    try:
        return _run_code(code, namespace, filename)
    except (Exception, KeyboardInterrupt) as error:  # noqa: BLE001 (the reader's code may raise anything)
        raise _cell_error(error, filename) from None


def _result_text(value) -> str | None:
    if value is None:
        return None
    text = repr(value)
    return text if len(text) <= RESULT_LIMIT else text[:RESULT_LIMIT] + " …"


def _check(check: dict, namespace: dict, output: str) -> dict:
    """Run the cell's check: expected output and/or test code; passed, with the author's message."""
    passed, reason = True, ""
    expected = check.get("output")
    if expected is not None:
        got = "\n".join(line.rstrip() for line in output.strip().splitlines())
        want = "\n".join(line.rstrip() for line in str(expected).strip().splitlines())
        if got != want:
            passed, reason = False, f"expected the output {want!r}, got {got!r}"
    test = check.get("test")
    if passed and test:
        try:
            _run_code(test, namespace, CHECK_FILE)
        except Exception as error:  # noqa: BLE001
            passed, reason = False, "".join(traceback.format_exception_only(error)).strip().splitlines()[-1]
    message = check.get("success" if passed else "failure") or ("Check passed." if passed else "Check failed.")
    return {"passed": passed, "message": message, "reason": reason}


def run_cell(code: str, session: str = "page", setup: str = "", check: dict | None = None) -> dict:
    """Run a cell; returns {"result": repr of the last expression or None, "check": {...} or None}; raises CellError."""
    namespace, channel = _namespace(session), _Channel()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Output("stdout", channel), _Output("stderr", channel)
    try:
        if setup.strip():
            _run_part(setup, namespace, SETUP_FILE)
        result = _result_text(_run_part(code, namespace, CELL_FILE))
    finally:
        sys.stdout, sys.stderr = saved
        channel.flush()
    return {"result": result, "check": _check(check, namespace, "".join(channel.stdout_text)) if check else None}


def run_cell_json(args_json: str) -> str:
    """The worker's entry point for op "run": JSON {code, session, setup, check} in, {ok, value | error} out."""
    try:
        args = json.loads(args_json)
        value = run_cell(str(args.get("code", "")), str(args.get("session") or "page"), str(args.get("setup") or ""),
                         args.get("check") or None)
        return json.dumps({"ok": True, "value": value})
    except CellError as error:
        return json.dumps({"ok": False, "error": error.to_json()})
    except Exception as error:  # noqa: BLE001 (a bug here must reach the page as a message)
        return json.dumps({"ok": False, "error": {"kind": "exception", "parameter": None,
                                                  "message": f"{type(error).__name__}: {error}",
                                                  "detail": traceback.format_exc()}})


# ---- streams -------------------------------------------------------------------------------------------------------

_STREAMS: dict[str, Callable[..., Iterator]] = {}
_open: dict[int, Iterator] = {}
_handles = itertools.count(1)


def stream(name: str) -> Callable:
    """Declare the decorated generator function the stream `name`: it takes JSON-able keyword arguments, yields
    JSON-able progress items (one per chunk of work) and may `return` a JSON-able result."""

    def register(function: Callable[..., Iterator]) -> Callable[..., Iterator]:
        known = _STREAMS.get(name)
        if known and (known.__module__, known.__qualname__) != (function.__module__, function.__qualname__):
            raise ValueError(f"stream {name!r} is declared twice")
        _STREAMS[name] = function
        return function

    return register


def _json_error(error: BaseException) -> dict:
    kind = "parameter" if isinstance(error, ValueError) and getattr(error, "parameter", None) else "exception"
    return {"kind": kind, "parameter": getattr(error, "parameter", None),
            "message": f"{type(error).__name__}: {error}" if kind == "exception" else str(error),
            "detail": traceback.format_exc() if kind == "exception" else ""}


def _safe(value):
    """JSON cannot hold NaN or infinity: they travel as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_safe(item) for item in value]
    return value


def _find_stream(name: str) -> Callable[..., Iterator]:
    """The stream `name`: declared already, or in the module explainer.streams.<name> (imported on first use)."""
    if name not in _STREAMS and name.isidentifier():
        import importlib

        try:
            importlib.import_module(f"explainer.streams.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"explainer.streams.{name}":
                raise
    if name not in _STREAMS:
        raise KeyError(f"unknown stream {name!r}; valid: {', '.join(sorted(_STREAMS)) or 'none loaded'}")
    return _STREAMS[name]


def open_stream(name: str, args_json: str) -> str:
    """Start the stream `name` with JSON keyword arguments: {"handle": n} or {"error": {...}}."""
    try:
        function = _find_stream(name)
        args = json.loads(args_json)
        if not isinstance(args, dict):
            raise TypeError("stream arguments must be a JSON object")
        iterator = function(**args)
    except Exception as error:  # noqa: BLE001
        return json.dumps({"error": _json_error(error)})
    handle = next(_handles)
    _open[handle] = iterator
    return json.dumps({"handle": handle})


def step_stream(handle: int) -> str:
    """Run one chunk: {"progress": item}, {"done": result} (the stream is closed) or {"error": {...}} (closed)."""
    iterator = _open.get(handle)
    if iterator is None:
        return json.dumps({"error": {"kind": "exception", "parameter": None, "detail": "",
                                     "message": f"no open stream {handle}"}})
    try:
        item = next(iterator)
    except StopIteration as stop:
        _open.pop(handle, None)
        return json.dumps({"done": _safe(stop.value)}, allow_nan=False)
    except Exception as error:  # noqa: BLE001
        _open.pop(handle, None)
        return json.dumps({"error": _json_error(error)})
    return json.dumps({"progress": _safe(item)}, allow_nan=False)


def close_stream(handle: int) -> bool:
    """Stop a stream early (its generator's finally blocks run); True if it was open."""
    iterator = _open.pop(handle, None)
    if iterator is None:
        return False
    close = getattr(iterator, "close", None)
    if close:
        close()
    return True
