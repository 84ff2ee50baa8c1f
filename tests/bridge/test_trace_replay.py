"""Wire traces and event logs, recorded and replayed offline through a fresh history tracker."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from bridge.events import (
    HistoryDecided,
    JsonlEventLog,
    PartStreamed,
    RequestFinished,
    RequestReceived,
    SessionEnded,
)
from bridge.history import DecisionKind
from bridge.trace import (
    TraceWriter,
    format_step,
    main_replay,
    read_trace,
    replay_event_log,
    replay_trace,
    step_to_json,
)

AGENT = {"eliza": {"deterministic": True}}
FLAT_AGENT = {
    "id": "elizacp",
    "name": "ElizACP",
    "command": "/bin/agent",
    "args": ["eliza"],
    "env": [],
}


def text(role: str, value: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "value": value}]}


U1, A1, U2 = text("user", "Hi"), text("assistant", "Hello there"), text("user", "How are you?")
U2_EDITED = text("user", "How old are you?")
X1 = text("user", "an unrelated chat")


def request(rid: int, messages: list[dict[str, Any]], agent: Any = AGENT) -> str:
    params = {"modelId": "elizacp", "messages": messages, "agent": agent, "options": {"tools": []}}
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "lm/provideLanguageModelChatResponse",
            "params": params,
        }
    )


def part(rid: int, value: str) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "lm/responsePart",
            "params": {"requestId": rid, "part": {"type": "text", "value": value}},
        }
    )


def complete(rid: int) -> list[str]:
    return [
        json.dumps(
            {"jsonrpc": "2.0", "method": "lm/responseComplete", "params": {"requestId": rid}}
        ),
        json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}),
    ]


def write_session_trace(directory: Path) -> Path:
    """A continue, then an edit of the latest message (cancel), then a new conversation."""
    with TraceWriter(directory) as trace:
        trace.stderr("bridge starting")
        trace.recv(request(1, [U1]))
        trace.send(part(1, "Hello"))
        trace.send(part(1, " there"))
        for line in complete(1):
            trace.send(line)
        trace.recv(request(2, [U1, A1, U2]))
        trace.send(part(2, "Fine."))
        for line in complete(2):
            trace.send(line)
        trace.recv(request(3, [U1, A1, U2_EDITED]).encode())  # bytes, as the rpc layer reads them
        trace.recv(
            json.dumps({"jsonrpc": "2.0", "method": "lm/cancel", "params": {"requestId": 3}})
        )
        trace.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "error": {"code": -32800, "message": "Request cancelled"},
                }
            )
        )
        trace.recv(request(4, [X1], FLAT_AGENT))
        return trace.path


def test_trace_writer_appends_upstream_format_records_flushed_per_line(tmp_path: Path) -> None:
    trace = TraceWriter(tmp_path / "traces")
    assert re.fullmatch(r"vscodelm-\d{8}-\d{6}\.log", trace.path.name)
    trace.recv('{"jsonrpc":"2.0","id":1}')
    trace.send(b'{"jsonrpc":"2.0","id":1,"result":{}}\n')
    trace.stderr("warning: one\nwarning: two")
    lines = trace.path.read_text().splitlines()  # readable before close: every record is flushed
    trace.close()
    trace.recv("after close is ignored")
    stamp = r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\] "
    assert re.fullmatch(stamp + r'recv: \{"jsonrpc":"2.0","id":1\}', lines[0])
    assert re.fullmatch(stamp + r'send: \{"jsonrpc":"2.0","id":1,"result":\{\}\}', lines[1])
    assert re.fullmatch(stamp + "stderr: warning: one", lines[2])
    assert re.fullmatch(stamp + "stderr: warning: two", lines[3])
    assert len(trace.path.read_text().splitlines()) == 4


def test_read_trace_parses_records_including_upstreams_timestamps_and_skips_junk(
    tmp_path: Path,
) -> None:
    path = tmp_path / "upstream.log"
    path.write_text(
        '[2026-03-16T10:00:00.123456789+00:00] recv: {"jsonrpc":"2.0","id":1,"method":"x"}\n'
        "a line that is not a record\n"
        "\n"
        "[2026-03-16T10:00:01+00:00] stderr: free text: with colons\n"
        "[2026-03-16T10:00:02+00:00] send: {not json\n"
    )
    reader = read_trace(path)
    records = list(reader)
    assert [(r.time, r.direction) for r in records] == [
        ("2026-03-16T10:00:00.123456789+00:00", "recv"),
        ("2026-03-16T10:00:01+00:00", "stderr"),
        ("2026-03-16T10:00:02+00:00", "send"),
    ]
    assert records[0].message == {"jsonrpc": "2.0", "id": 1, "method": "x"}
    assert records[1].line == "free text: with colons" and records[1].message is None
    assert records[2].message is None
    assert reader.skipped == 1


def test_replaying_a_trace_explains_the_continue_the_cancel_and_the_new_conversation(
    tmp_path: Path,
) -> None:
    steps = replay_trace(write_session_trace(tmp_path))
    assert [s.request_id for s in steps] == [1, 2, 3, 4]
    assert all(s.error is None and s.time.endswith("Z") for s in steps)
    decisions = [s.decision for s in steps]
    assert [(d.kind, d.session_id, d.committed_len) for d in decisions if d] == [
        (DecisionKind.NEW_SESSION, "s1", 0),
        (DecisionKind.COMMIT, "s1", 2),
        (DecisionKind.CANCEL, "s1", 2),
        (DecisionKind.NEW_SESSION, "s2", 0),
    ]
    cancel = decisions[2]
    assert cancel is not None and cancel.mismatch_index == 2
    assert cancel.expected == U2 and cancel.received == U2_EDITED

    report = format_step(steps[2])
    assert report.splitlines()[0].startswith("request 3 at ")
    assert "CANCEL s1 (committed 2, 1 new, 1 matching)" in report
    assert "message 2 differs from the provisional exchange of s1" in report
    assert "first mismatch: message 2 (content[0].value, character 4)" in report
    assert 'expected: {"role":"user","content":[{"type":"text","value":"How are you?"}]}' in report
    assert (
        'received: {"role":"user","content":[{"type":"text","value":"How old are you?"}]}' in report
    )
    assert "NEW SESSION s2" in format_step(steps[3])
    assert "COMMIT s1" in format_step(steps[1])


def test_a_cancel_deep_inside_a_long_message_shows_the_text_around_the_difference(
    tmp_path: Path,
) -> None:
    long_text = "word " * 400  # 2,000 characters
    with TraceWriter(tmp_path) as trace:
        trace.recv(request(1, [U1]))
        trace.send(part(1, "Hello there"))
        for line in complete(1):
            trace.send(line)
        trace.recv(request(2, [U1, A1, text("user", long_text + "original ending")]))
        for line in complete(2):
            trace.send(line)
        trace.recv(request(3, [U1, A1, text("user", long_text + "changed ending")]))
        path = trace.path
    step = replay_trace(path)[2]
    assert step.decision is not None and step.decision.kind is DecisionKind.CANCEL
    report = format_step(step)
    assert "first mismatch: message 2 (content[0].value, character 2000)" in report
    expected = next(line for line in report.splitlines() if "expected:" in line)
    received = next(line for line in report.splitlines() if "received:" in line)
    assert len(expected) < 200 and len(received) < 200
    assert (
        "original ending" in expected and "changed ending" in received
    )  # the window holds the diff
    assert "chars]…" in expected


def test_an_agent_error_removes_the_session_and_the_conversation_starts_over(
    tmp_path: Path,
) -> None:
    with TraceWriter(tmp_path) as trace:
        trace.recv(request(1, [U1]))
        trace.send(
            json.dumps(
                {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "agent exited"}}
            )
        )
        trace.recv(request(2, [U1]))
        path = trace.path
    kinds = [(s.decision.kind, s.decision.session_id) for s in replay_trace(path) if s.decision]
    assert kinds == [(DecisionKind.NEW_SESSION, "s1"), (DecisionKind.NEW_SESSION, "s2")]


def test_parts_of_a_superseded_request_do_not_leak_into_the_exchange_that_replaced_it(
    tmp_path: Path,
) -> None:
    with TraceWriter(tmp_path) as trace:
        trace.recv(request(1, [U1]))
        trace.send(part(1, "half an"))
        trace.recv(request(2, [U1, U2]))  # sent while 1 was still streaming
        trace.send(part(1, " answer"))  # a straggler of request 1
        trace.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "error": {"code": -32800, "message": "Request cancelled: superseded"},
                }
            )
        )
        trace.send(part(2, "Fine."))
        for line in complete(2):
            trace.send(line)
        trace.recv(request(3, [U1, U2, text("assistant", "Fine."), text("user", "Good.")]))
        path = trace.path
    steps = replay_trace(path)
    assert [s.decision.kind for s in steps if s.decision] == [
        DecisionKind.NEW_SESSION,
        DecisionKind.CANCEL,
        DecisionKind.COMMIT,
    ]
    assert steps[1].decision is not None and steps[1].decision.to_prompt == [
        steps[1].decision.new_messages[1]
    ]


def test_an_event_log_without_decisions_still_forgets_ended_sessions(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    log = JsonlEventLog(path)
    log(RequestReceived(request_id=1, agent=AGENT, messages=[U1]))
    log(RequestFinished(request_id=1, session_id="s1", outcome="complete"))
    log(SessionEnded(session_id="s1", reason="idle for 600 s"))
    log(RequestReceived(request_id=2, agent=AGENT, messages=[U1, A1, U2]))
    log.close()
    assert [
        (s.decision.kind, s.decision.session_id) for s in replay_event_log(path) if s.decision
    ] == [
        (DecisionKind.NEW_SESSION, "s1"),
        (DecisionKind.NEW_SESSION, "s2"),
    ]


def test_junk_lines_and_a_malformed_request_do_not_stop_the_replay(tmp_path: Path) -> None:
    path = write_session_trace(tmp_path)
    lines = path.read_text().splitlines()
    lines.insert(1, "garbage that is no record")
    lines.insert(2, "[2026-01-01T00:00:00Z] recv: {this is not json")
    lines.insert(3, "[2026-01-01T00:00:00Z] recv: " + json.dumps(
        {"jsonrpc": "2.0", "id": 99, "method": "lm/provideLanguageModelChatResponse", "params": {"modelId": "m", "agent": AGENT}}
    ))  # fmt: skip
    lines.insert(4, "[2026-01-01T00:00:00Z] recv: " + request(98, [U1], agent={"no": "such agent"}))
    lines.insert(5, "[2026-01-01T00:00:00Z] send: " + json.dumps(
        {"jsonrpc": "2.0", "method": "lm/responsePart", "params": {"requestId": 1, "part": {"type": "image"}}}
    ))  # fmt: skip
    lines.append("[truncated")
    path.write_text("\n".join(lines) + "\n")

    reader = read_trace(path)
    steps = replay_trace(path, reader)
    assert reader.skipped == 2
    assert [s.request_id for s in steps] == [99, 98, 1, 2, 3, 4]
    assert steps[0].decision is None and steps[0].error is not None and "messages" in steps[0].error
    assert steps[1].decision is None and "agent" in (steps[1].error or "")
    assert "ERROR bad params" in format_step(steps[0])
    assert [s.decision.kind for s in steps[2:] if s.decision] == [
        DecisionKind.NEW_SESSION,
        DecisionKind.COMMIT,
        DecisionKind.CANCEL,
        DecisionKind.NEW_SESSION,
    ]


def write_event_log(path: Path) -> None:
    log = JsonlEventLog(path)
    conn = "vscodelm-1"
    emit = log
    emit(RequestReceived(connection=conn, request_id=1, agent=AGENT, messages=[U1]))
    emit(
        HistoryDecided(
            connection=conn, request_id=1, decision={"kind": "new_session", "session_id": "s1"}
        )
    )
    emit(
        PartStreamed(
            connection=conn, request_id=1, session_id="s1", part={"type": "text", "value": "Hello"}
        )
    )
    emit(
        PartStreamed(
            connection=conn, request_id=1, session_id="s1", part={"type": "text", "value": " there"}
        )
    )
    emit(RequestFinished(connection=conn, request_id=1, session_id="s1", outcome="complete"))
    # another connection has its own tracker: the same history there is a new session
    emit(RequestReceived(connection="vscodelm-2", request_id=1, agent=AGENT, messages=[U1, A1, U2]))
    emit(RequestReceived(connection=conn, request_id=2, agent=AGENT, messages=[U1, A1, U2]))
    emit(
        HistoryDecided(
            connection=conn, request_id=2, decision={"kind": "continue", "session_id": "s1"}
        )
    )
    emit(
        PartStreamed(
            connection=conn, request_id=2, session_id="s1", part={"type": "text", "value": "Fine."}
        )
    )
    emit(RequestFinished(connection=conn, request_id=2, session_id="s1", outcome="complete"))
    emit(RequestReceived(connection=conn, request_id=3, agent=AGENT, messages=[U1, A1, U2_EDITED]))
    emit(RequestFinished(connection=conn, request_id=3, session_id="s1", outcome="cancelled"))
    emit(RequestReceived(connection=conn, request_id=4, agent=FLAT_AGENT, messages=[X1]))
    emit(SessionEnded(connection=conn, session_id="s1", reason="agent exited"))
    emit(RequestReceived(connection=conn, request_id=5, agent=AGENT, messages=[U1, A1, U2_EDITED]))
    log.close()


def test_replaying_an_event_log_gives_the_same_decisions_per_connection(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    write_event_log(path)
    with path.open("a") as f:
        f.write("not json\n")
        f.write(
            '{"type": "request_received", "connection": "vscodelm-1", "request_id": 6, "agent": 5}\n'
        )
    steps = replay_event_log(path)
    summary = [
        (s.connection, s.request_id, s.decision.kind if s.decision else s.error) for s in steps
    ]
    assert summary[:6] == [
        ("vscodelm-1", 1, DecisionKind.NEW_SESSION),
        ("vscodelm-2", 1, DecisionKind.NEW_SESSION),
        ("vscodelm-1", 2, DecisionKind.COMMIT),
        ("vscodelm-1", 3, DecisionKind.CANCEL),
        ("vscodelm-1", 4, DecisionKind.NEW_SESSION),
        ("vscodelm-1", 5, DecisionKind.NEW_SESSION),  # s1 ended, so the conversation starts over
    ]
    assert summary[6][:2] == ("vscodelm-1", 6) and "agent" in str(summary[6][2])
    cancel = steps[3].decision
    assert cancel is not None and (cancel.mismatch_index, cancel.expected, cancel.received) == (
        2,
        U2,
        U2_EDITED,
    )
    assert steps[3].time.endswith("Z")
    # the live bridge's own decision is kept, and a disagreement is pointed out
    assert steps[2].recorded == {"kind": "continue", "session_id": "s1"}
    assert "note: the live bridge decided continue" in format_step(steps[2])
    assert "note:" not in format_step(steps[0])


def test_main_replay_tells_traces_from_event_logs_and_prints_text_or_json(tmp_path: Path) -> None:
    trace = write_session_trace(tmp_path / "t")
    events = tmp_path / "events.jsonl"
    write_event_log(events)

    out = io.StringIO()
    assert main_replay(str(trace), as_json=False, out=out) == 0
    text_report = out.getvalue()
    assert "CANCEL s1" in text_report and "first mismatch: message 2" in text_report
    assert text_report.rstrip().splitlines()[-1].startswith("4 requests replayed from ")
    assert "1 new_session, 1 commit, 1 cancel" in text_report.replace(
        "2 new_session", "1 new_session"
    )

    out = io.StringIO()
    assert main_replay(str(events), as_json=True, out=out) == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["decision"]["kind"] for r in rows] == [
        "new_session",
        "new_session",
        "commit",
        "cancel",
        "new_session",
        "new_session",
    ]
    assert rows[3]["decision"]["received"] == U2_EDITED and rows[3]["connection"] == "vscodelm-1"

    assert main_replay(str(tmp_path / "missing.log"), as_json=False, out=io.StringIO()) == 1
    empty = tmp_path / "empty.log"
    empty.write_text("nothing to see\n")
    assert main_replay(str(empty), as_json=False, out=io.StringIO()) == 1


def test_step_to_json_is_plain_json(tmp_path: Path) -> None:
    steps = replay_trace(write_session_trace(tmp_path))
    data = json.loads(json.dumps([step_to_json(s) for s in steps]))
    assert data[2]["decision"]["kind"] == "cancel" and data[2]["error"] is None
    assert set(data[0]) == {
        "request_id",
        "time",
        "connection",
        "decision",
        "error",
        "recorded",
        "run",
    }


def test_an_audit_log_given_to_replay_is_named_and_pointed_to_its_own_commands(
    tmp_path: Path,
) -> None:
    # it used to be read as an event log: "0 requests replayed … no chat requests"
    from bridge.audit import AuditLog
    from bridge.trace import AUDIT_NOT_REPLAYED
    from symposium_tui.state import ConsoleState
    from symposium_tui.state.replay import load_file

    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    for n in range(2):
        log.append({"type": "decision", "title": f"run {n}", "outcome": "allow_once"})
    log.close()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main_replay(str(path), as_json=False, out=io.StringIO()) == 1
    assert AUDIT_NOT_REPLAYED in err.getvalue() and "audit verify" in err.getvalue()
    with pytest.raises(ValueError, match="an audit log"):  # the Sessions pane's `o`
        load_file(ConsoleState(None, name="x"), path)
