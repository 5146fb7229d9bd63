"""explainer.live under CPython: code cells (output, last value, errors trimmed to the reader's code, checks,
sessions) and streams, exactly as the browser's worker calls them (JSON in, JSON out)."""

import json
import time

import pytest

from explainer import figure as fig
from explainer import live


@pytest.fixture
def emitted():
    """What the cell sent to the page, in order: (kind, text) pairs."""
    sent = []
    live.set_emitter(lambda kind, text: sent.append((kind, text)))
    yield sent
    live.set_emitter(None)
    for session in ("page", "a", "b", "test"):
        live.reset_session(session)


def run(**args) -> dict:
    return json.loads(live.run_cell_json(json.dumps(args)))


def output(emitted, kind="stdout") -> str:
    return "".join(text for k, text in emitted if k == kind)


def test_a_cell_streams_stdout_and_stderr_and_returns_the_last_expression(emitted):
    reply = run(code="import sys\nprint('one')\nprint('two', file=sys.stderr)\nx = 6 * 7\nx")
    assert reply == {"ok": True, "value": {"result": "42", "check": None}}
    assert output(emitted) == "one\n" and output(emitted, "stderr") == "two\n"


def test_output_keeps_its_order_across_the_two_streams(emitted):
    run(code="import sys\nfor i in range(3):\n    print(i)\n    print(-i, file=sys.stderr)")
    assert "".join(text for _, text in emitted).split() == ["0", "0", "1", "-1", "2", "-2"]
    assert [kind for kind, _ in emitted] == ["stdout", "stderr"] * 3


def test_the_last_line_has_a_value_only_when_it_is_an_expression(emitted):
    assert run(code="y = 3")["value"]["result"] is None
    assert run(code="print(1)")["value"]["result"] is None, "print returns None: nothing to show"
    assert run(code="import numpy as np\nnp.arange(3) * 2")["value"]["result"] == "array([0, 2, 4])"


def test_an_exception_keeps_only_the_readers_frames_and_names_the_line(emitted):
    reply = run(code="def f(x):\n    return 1 / x\n\nf(0)")
    error = reply["error"]
    assert reply["ok"] is False and error["kind"] == "exception"
    assert error["message"] == "ZeroDivisionError: division by zero"
    assert error["line"] == 2 and error["source"] == "cell"
    assert 'File "<cell>", line 4' in error["detail"] and 'File "<cell>", line 2' in error["detail"]
    assert "live.py" not in error["detail"], "the runner's own frames are not the reader's business"


def test_an_error_inside_library_code_still_points_at_the_readers_line(emitted):
    error = run(code="import numpy as np\n\nnp.ones(3) @ np.ones(4)")["error"]
    assert error["line"] == 3 and error["message"].startswith("ValueError")


def test_a_syntax_error_names_its_line(emitted):
    error = run(code="x = 1\ny = (\n")["error"]
    assert error["kind"] == "exception" and error["message"].startswith("SyntaxError")
    assert error["line"] == 2


def test_output_printed_before_an_exception_is_still_sent(emitted):
    run(code="print('before')\nraise RuntimeError('boom')")
    assert output(emitted) == "before\n"


def test_cells_of_one_session_share_variables_and_sessions_are_apart(emitted):
    run(code="shared = 5", session="a")
    assert run(code="shared * 2", session="a")["value"]["result"] == "10"
    assert "NameError" in run(code="shared", session="b")["error"]["message"]
    assert live.reset_session("a") is True
    assert "NameError" in run(code="shared", session="a")["error"]["message"]


def test_setup_runs_first_in_the_same_namespace_and_its_errors_say_so(emitted):
    assert run(code="helper(3)", setup="def helper(x):\n    return x + 1")["value"]["result"] == "4"
    error = run(code="1", setup="import no_such_module_here")["error"]
    assert error["source"] == "setup" and "ModuleNotFoundError" in error["message"]


def test_a_check_on_output_and_a_check_by_test_code(emitted):
    passed = run(code="print(6 * 7)", check={"output": "42", "success": "Right."})["value"]["check"]
    assert passed == {"passed": True, "message": "Right.", "reason": ""}
    failed = run(code="print(41)", check={"output": "42", "failure": "Not yet."})["value"]["check"]
    assert failed["passed"] is False and failed["message"] == "Not yet." and "'42'" in failed["reason"]
    tested = run(code="def double(x):\n    return 2 * x", check={"test": "assert double(4) == 8, 'double(4) is not 8'"})
    assert tested["value"]["check"]["passed"] is True
    wrong = run(code="def double(x):\n    return x", check={"test": "assert double(4) == 8, 'double(4) is not 8'"})
    assert wrong["value"]["check"] == {"passed": False, "message": "Check failed.",
                                       "reason": "AssertionError: double(4) is not 8"}


def test_show_sends_a_validated_figure_description_after_what_was_printed(emitted):
    code = ("from explainer import figure as fig\nprint('first')\n"
            "show(fig.figure(axes=fig.axes(xlim=(0, 1), ylim=(0, 1)), marks=[fig.point(0.5, 0.5)]))")
    assert run(code=code)["ok"] is True
    kinds = [kind for kind, _ in emitted]
    assert kinds == ["stdout", "figure"]
    description = json.loads(emitted[1][1])
    fig.validate_figure(description)
    assert description["marks"][0]["x"] == 0.5
    error = run(code="show({'marks': []})")["error"]
    assert "figure keys" in error["message"]


def test_a_line_printed_before_a_long_computation_is_sent_before_the_computation_ends():
    sent = []
    live.set_emitter(lambda kind, text: sent.append((time.monotonic(), text)))
    try:
        started = time.monotonic()
        run(code="import time\nprint('before')\ntime.sleep(0.5)\nprint('after')")
    finally:
        live.set_emitter(None)
        live.reset_session("page")
    assert "".join(text for _, text in sent) == "before\nafter\n"
    assert sent[0][1] == "before\n" and sent[0][0] - started < 0.25 < sent[1][0] - started, \
        "each line goes out when it is complete, not with the next one"


def test_runaway_output_is_cut_with_one_line_saying_so(emitted):
    run(code="for i in range(100_000):\n    print('x' * 9)")
    assert len(output(emitted)) == live.OUTPUT_LIMIT
    assert "output cut here" in output(emitted, "stderr")
    assert len(emitted) < 200, "output goes out in batches, not one message per print"


def test_keyboard_interrupt_is_reported_as_interrupted(emitted):
    error = run(code="raise KeyboardInterrupt")["error"]
    assert error["kind"] == "interrupted"


# ---- streams ---------------------------------------------------------------------------------------------------------


@live.stream("test_counter")
def counter(upto: int, fail_at: int = -1):
    """A stream for the tests: yields 0..upto-1, returns their sum."""
    total = 0
    for i in range(upto):
        if i == fail_at:
            raise ValueError(f"failed at {i}")
        total += i
        yield {"i": i, "ratio": float("nan") if i == 1 else i / upto}
    return {"total": total}


def steps(handle):
    while True:
        reply = json.loads(live.step_stream(handle))
        yield reply
        if "progress" not in reply:
            return


def test_a_stream_runs_one_step_at_a_time_and_ends_with_its_result():
    handle = json.loads(live.open_stream("test_counter", json.dumps({"upto": 3})))["handle"]
    replies = list(steps(handle))
    assert replies == [{"progress": {"i": 0, "ratio": 0.0}}, {"progress": {"i": 1, "ratio": None}},
                       {"progress": {"i": 2, "ratio": 2 / 3}}, {"done": {"total": 3}}]
    assert "no open stream" in json.loads(live.step_stream(handle))["error"]["message"]


def test_a_stream_that_raises_reports_it_and_closes():
    handle = json.loads(live.open_stream("test_counter", json.dumps({"upto": 3, "fail_at": 1})))["handle"]
    *_, last = steps(handle)
    assert last["error"]["message"] == "ValueError: failed at 1"
    assert live.close_stream(handle) is False


def test_closing_a_stream_early_runs_its_cleanup():
    cleaned = []

    @live.stream("test_cleanup")
    def with_cleanup():
        try:
            while True:
                yield {}
        finally:
            cleaned.append(True)

    handle = json.loads(live.open_stream("test_cleanup", "{}"))["handle"]
    live.step_stream(handle)
    assert live.close_stream(handle) is True and cleaned == [True]


def test_unknown_streams_and_bad_arguments_are_errors_not_exceptions():
    unknown = json.loads(live.open_stream("no_such_stream", "{}"))["error"]
    assert "unknown stream 'no_such_stream'" in unknown["message"] and "test_counter" in unknown["message"]
    assert "unexpected keyword" in json.loads(live.open_stream("test_counter", '{"bogus": 1}'))["error"]["message"]
    assert "JSON object" in json.loads(live.open_stream("test_counter", "[1]"))["error"]["message"]
