"""Wire traces: record them (`--trace-dir`) and replay them through the history tracker offline.

A trace is upstream's format (architecture decision 2), one wire line per record:

    [<RFC3339 UTC time>] <recv|send|stderr>: <line>

so traces written by upstream's Rust server replay here too. Replay re-runs the recorded chat
requests through a fresh `HistoryTracker` and answers "why was my conversation cancelled?" for
each: the decision, the session, the committed length and, for a cancel, the first message that
differed and both versions of it. The JSONL event log (`bridge.events`) carries the same facts and
replays the same way.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import TypeAdapter, ValidationError

from bridge.history import Decision, DecisionKind, HistoryTracker
from bridge.protocol import (
    AgentSpec,
    ChatResponseParams,
    ContentPart,
    Message,
    agent_key,
    describe_validation_error,
    parse_agent,
)
from bridge.redact import redact_line

__all__ = [
    "ReplayStep",
    "TraceReader",
    "TraceRecord",
    "TraceWriter",
    "format_step",
    "main_replay",
    "read_trace",
    "replay_event_log",
    "replay_trace",
    "step_to_json",
]

log = logging.getLogger(__name__)

CHAT_METHOD = "lm/provideLanguageModelChatResponse"


# --- writing -------------------------------------------------------------------------------------


class TraceWriter:
    """Appends every wire line to `dir/vscodelm-YYYYMMDD-HHMMSS.log`, one flushed write per record.

    Called per wire line on the streaming path, so a record is one `os.write` of pre-encoded bytes
    and the timestamp's seconds part is formatted once per second. A trace must never break the
    bridge: after an I/O error it logs once and stops recording.
    """

    def __init__(self, dir: str | os.PathLike[str]) -> None:  # noqa: A002 - the CLI's word
        from bridge.paths import make_private_dir, open_private_fd

        directory = make_private_dir(dir)
        started = datetime.now(UTC)
        self.path = directory / f"vscodelm-{started:%Y%m%d-%H%M%S}.log"
        self._fd: int | None = open_private_fd(self.path)  # 0600: whole conversations
        self._second = -1
        self._prefix = ""

    def recv(self, line: str | bytes) -> None:
        self._write(b"recv", line)

    def send(self, line: str | bytes) -> None:
        self._write(b"send", line)

    def stderr(self, line: str | bytes) -> None:
        self._write(b"stderr", line)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stamp(self) -> bytes:
        now = time.time()
        second = int(now)
        if second != self._second:
            self._second = second
            self._prefix = time.strftime("[%Y-%m-%dT%H:%M:%S.", time.gmtime(second))
        return f"{self._prefix}{int((now - second) * 1_000_000):06d}Z] ".encode()

    def _write(self, direction: bytes, line: str | bytes) -> None:
        if self._fd is None:
            return
        data = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else bytes(line)
        if data.endswith(b"\n"):
            data = data[:-1]
        if direction != b"stderr":
            data = redact_line(data)  # an agent's env (API keys) travels in every request
        stamp = self._stamp()
        # A record is one line; a stray newline inside (free-form stderr) starts another record.
        records = data.split(b"\n") if b"\n" in data else (data,)
        out = b"".join(stamp + direction + b": " + r + b"\n" for r in records)
        try:
            os.write(self._fd, out)
        except OSError as exc:
            log.warning("trace %s: %s; no longer recording", self.path, exc)
            self.close()


# --- reading -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceRecord:
    time: str
    direction: str  # "recv", "send" or "stderr"
    line: str
    message: dict[str, Any] | None  # the parsed JSON-RPC message of a recv/send line


_RECORD = re.compile(r"\[([^\]]*)\] (recv|send|stderr): ?(.*)\Z", re.DOTALL)


class TraceReader:
    """Iterates a trace's records; lines that are not records are skipped and counted."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.skipped = 0  # junk lines seen so far

    def __iter__(self) -> Iterator[TraceRecord]:
        with open(self.path, "rb") as f:
            for raw in f:
                text = raw.decode("utf-8", "replace").rstrip("\r\n")
                if not text.strip():
                    continue
                m = _RECORD.match(text)
                if m is None:
                    self.skipped += 1
                    continue
                stamp, direction, line = m.groups()
                message = None
                if direction != "stderr":
                    try:
                        parsed = json.loads(line)
                    except ValueError:
                        parsed = None
                    message = parsed if isinstance(parsed, dict) else None
                yield TraceRecord(stamp, direction, line, message)


def read_trace(path: str | os.PathLike[str]) -> TraceReader:
    """The records of a trace file: iterate the result; its `skipped` counts junk lines."""
    return TraceReader(path)


# --- replay --------------------------------------------------------------------------------------


@dataclass
class ReplayStep:
    request_id: Any
    time: str
    decision: Decision | None
    error: str | None = None
    connection: str = ""
    recorded: dict[str, Any] | None = None  # the live bridge's decision, when the log carries it
    run: int = 0  # which run of the event log (1, 2, …; 0 when the log has no run markers)


def run_connection(connection: str, run: int) -> str:
    """A connection's name as replay shows it: names start again in each run of an event log, so
    from the second run on they carry the run's number."""
    return connection if run <= 1 else f"{connection} (run {run})"


@dataclass
class _Replay:
    """The replay state of one connection (one tracker, as in the bridge)."""

    tracker: HistoryTracker = field(default_factory=HistoryTracker)
    routed: dict[Any, str] = field(default_factory=dict)  # request id key -> session id
    steps: dict[Any, ReplayStep] = field(default_factory=dict)  # request id key -> its step
    live_sessions: dict[str, str] = field(default_factory=dict)  # live session id -> replayed one
    saw_decisions: bool = False  # whether the log carries the live decisions (and so that map)


_PART: TypeAdapter[Any] = TypeAdapter(ContentPart)
_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
_AGENT_SPEC: TypeAdapter[Any] = TypeAdapter(AgentSpec)


def _id_key(request_id: Any) -> Any:
    """Request ids compare as JSON values (1 and 1.0 alike, 1 and "1" not)."""
    if isinstance(request_id, bool) or not isinstance(request_id, (int, float)):
        return ("s", json.dumps(request_id, sort_keys=True))
    return ("n", float(request_id))


def _route(
    state: _Replay, request_id: Any, stamp: str, agent: Any, messages: list[Message]
) -> ReplayStep:
    decision = state.tracker.route(agent, messages)
    # A session streams one request at a time: an older request still open on it was superseded,
    # and nothing it still says belongs to the new exchange.
    for key in [k for k, sid in state.routed.items() if sid == decision.session_id]:
        del state.routed[key]
    state.routed[_id_key(request_id)] = decision.session_id
    return ReplayStep(request_id, stamp, decision)


def _finish(state: _Replay, request_id: Any, outcome: str) -> None:
    """The request ended: `complete`, `cancelled` (provisional kept) or `error` (session gone)."""
    sid = state.routed.pop(_id_key(request_id), None)
    if sid is None:
        return
    if outcome == "complete":
        state.tracker.complete(sid)
    elif outcome == "error":
        state.tracker.remove(sid)


def _is_cancel_error(error: Any) -> bool:
    message = error.get("message") if isinstance(error, dict) else error
    return isinstance(message, str) and "cancelled" in message.lower()


def replay_trace(
    path: str | os.PathLike[str], reader: TraceReader | None = None
) -> list[ReplayStep]:
    """Re-run a wire trace's chat requests through a fresh tracker (one trace = one connection)."""
    reader = reader or read_trace(path)
    state = _Replay()
    steps: list[ReplayStep] = []
    for rec in reader:
        msg = rec.message
        if msg is None:
            continue
        method = msg.get("method")
        if rec.direction == "recv":
            if method == CHAT_METHOD and "id" in msg:
                steps.append(_replay_request(state, msg.get("id"), rec.time, msg.get("params")))
            # lm/cancel: nothing; the provisional exchange is kept, as upstream does (the next
            # request decides whether it was committed)
            continue
        raw_params = msg.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        if method == "lm/responsePart":
            sid = state.routed.get(_id_key(params.get("requestId")))
            if sid is not None:
                try:
                    state.tracker.record_part(sid, _PART.validate_python(params.get("part")))
                except ValidationError:
                    pass  # the client would have dropped it too
        elif method == "lm/responseComplete":
            _finish(state, params.get("requestId"), "complete")
        elif method is None and "id" in msg:  # a response to one of the client's requests
            if "error" in msg:
                _finish(
                    state, msg["id"], "cancelled" if _is_cancel_error(msg["error"]) else "error"
                )
            else:
                _finish(state, msg["id"], "complete")
    return steps


def _replay_request(state: _Replay, request_id: Any, stamp: str, params: Any) -> ReplayStep:
    try:
        parsed = ChatResponseParams.model_validate(params)
    except ValidationError as exc:
        return ReplayStep(request_id, stamp, None, f"bad params: {describe_validation_error(exc)}")
    try:
        key = agent_key(parse_agent(parsed.agent))
    except ValueError as exc:
        return ReplayStep(request_id, stamp, None, f"bad params: {exc}")
    return _route(state, request_id, stamp, key, parsed.messages)


def _event_agent_key(agent: Any) -> str:
    """An event's agent: the wire form, an `AgentSpec` dump (`{"kind": ...}`) or an `agent_key`."""
    if isinstance(agent, str) and agent.startswith("{"):
        try:
            agent = json.loads(agent)
        except ValueError:
            pass
    if isinstance(agent, dict) and "kind" in agent:
        try:
            return agent_key(_AGENT_SPEC.validate_python(agent))
        except ValidationError:
            pass
    return agent_key(parse_agent(agent))


def _rfc3339(ts: Any) -> str:
    try:
        return (
            datetime.fromtimestamp(float(ts), UTC)
            .isoformat(timespec="microseconds")
            .replace("+00:00", "Z")
        )
    except (TypeError, ValueError, OverflowError, OSError):
        return ""


def read_event_log(
    path: str | os.PathLike[str], junk: list[int] | None = None
) -> Iterator[dict[str, Any]]:
    """The events of a JSONL event log, in order; lines that are not events are skipped (and
    counted in `junk[0]` when given)."""
    with open(path, "rb") as f:
        for raw in f:
            text = raw.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                event = json.loads(text)
            except ValueError:
                event = None
            if not isinstance(event, dict) or not isinstance(event.get("type"), str):
                if junk is not None:
                    junk[0] += 1
                continue
            yield event


def replay_event_log(
    path: str | os.PathLike[str], skipped: list[int] | None = None
) -> list[ReplayStep]:
    """Re-run the chat requests of a JSONL event log, one fresh tracker per connection, and a
    fresh start at each run marker (a process that opened the log: its connections and sessions
    are new). Where the log carries the live decisions, the steps name the live session ids (the
    ones the console showed), as long as the replay agrees with the live bridge."""
    states: dict[str, _Replay] = {}
    steps: list[ReplayStep] = []
    junk = [0]
    run = 0
    for event in read_event_log(path, junk):
        kind = event["type"]
        if kind == "run_started":
            run += 1
            states = {}
            continue
        conn = run_connection(str(event.get("connection") or ""), run)
        state = states.setdefault(conn, _Replay())
        rid = event.get("request_id")
        if kind == "request_received":
            stamp = _rfc3339(event.get("ts"))
            try:
                messages = _MESSAGES.validate_python(event.get("messages") or [])
                key = _event_agent_key(event.get("agent"))
            except ValidationError as exc:
                step = ReplayStep(
                    rid, stamp, None, f"bad params: {describe_validation_error(exc, 'messages')}"
                )
            except ValueError as exc:
                step = ReplayStep(rid, stamp, None, f"bad params: {exc}")
            else:
                step = _route(state, rid, stamp, key, messages)
            step.connection = conn
            step.run = run
            state.steps[_id_key(rid)] = step
            steps.append(step)
        elif kind == "history_decision":
            recorded_step = state.steps.get(_id_key(rid))
            decision = event.get("decision")
            state.saw_decisions = True
            if recorded_step is not None and isinstance(decision, dict):
                step = recorded_step
                step.recorded = decision
                live_sid = decision.get("session_id")
                if step.decision is not None and isinstance(live_sid, str):
                    state.live_sessions[live_sid] = step.decision.session_id
        elif kind == "part_streamed":
            sid = state.routed.get(_id_key(rid))
            if sid is not None:
                try:
                    state.tracker.record_part(sid, _PART.validate_python(event.get("part")))
                except ValidationError:
                    junk[0] += 1
        elif kind == "request_finished":
            outcome = event.get("outcome")
            _finish(state, rid, outcome if outcome in ("complete", "error") else "cancelled")
        elif kind == "session_ended":  # died, reaped when idle, or evicted: forgotten
            live_sid = str(event.get("session_id"))
            sid = state.live_sessions.pop(live_sid, None if state.saw_decisions else live_sid)
            if sid is not None:
                state.tracker.remove(sid)
    if skipped is not None:
        skipped.append(junk[0])
    return [_with_live_session(step) for step in steps]


def _with_live_session(step: ReplayStep) -> ReplayStep:
    """The step naming the session as the live bridge (and so the console) did, when it agrees."""
    d, live = step.decision, step.recorded
    if d is None or not isinstance(live, dict) or live.get("kind") != d.kind.value:
        return step
    live_sid = live.get("session_id")
    if isinstance(live_sid, str) and live_sid != d.session_id:
        step.decision = replace(d, session_id=live_sid)
    return step


# --- presenting ----------------------------------------------------------------------------------

_KIND_WORDS = {
    DecisionKind.NEW_SESSION: "NEW SESSION",
    DecisionKind.CONTINUE: "CONTINUE",
    DecisionKind.COMMIT: "COMMIT",
    DecisionKind.CANCEL: "CANCEL",
}
_TEXT_WIDTH = 72


def _elide(text: str, width: int = _TEXT_WIDTH, around: int | None = None) -> str:
    """`text` shortened in the middle, or, given `around`, to a window around that index."""
    if len(text) <= width:
        return text
    if around is None:
        head = width * 2 // 3
        tail = width - head
        return f"{text[:head]}…[{len(text) - width} chars]…{text[-tail:]}"
    start = max(0, min(around - width // 3, len(text) - width))
    end = start + width
    return (
        (f"…[{start} chars]…" if start else "")
        + text[start:end]
        + (f"…[{len(text) - end} chars]…" if end < len(text) else "")
    )


_MAX_DEPTH = 32  # deeper JSON is shown as "…": a person reads these lines


def _first_difference(
    a: Any, b: Any, path: str = "", depth: int = 0
) -> tuple[str, int | None] | None:
    """Where two wire JSON values first differ: a path like `content[0].value` and, for two
    strings, the index of the first differing character."""
    if depth > _MAX_DEPTH:
        return None if a == b else (path, None)
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return (f"{path}.{k}" if path else k), None
            d = _first_difference(a[k], b[k], f"{path}.{k}" if path else k, depth + 1)
            if d is not None:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = _first_difference(x, y, f"{path}[{i}]", depth + 1)
            if d is not None:
                return d
        if len(a) != len(b):
            return f"{path}[{min(len(a), len(b))}]", None
        return None
    if isinstance(a, str) and isinstance(b, str):
        if a == b:
            return None
        i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return path, i
    if type(a) is bool or type(b) is bool:
        return None if (type(a) is type(b) and a == b) else (path, None)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return None if a == b else (path, None)
    return None if a == b else (path, None)


def _compact(
    value: Any, focus: tuple[str, int | None] | None, path: str = "", depth: int = 0
) -> Any:
    """`value` with long strings elided; the string at `focus` keeps a window around its diff."""
    if isinstance(value, (dict, list)) and depth > _MAX_DEPTH:
        return "…"
    if isinstance(value, dict):
        return {
            k: _compact(v, focus, f"{path}.{k}" if path else k, depth + 1) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_compact(v, focus, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, str):
        if focus is not None and focus[0] == path and focus[1] is not None:
            return _elide(value, around=focus[1])
        return _elide(value)
    return value


def _one_line(value: Any, focus: tuple[str, int | None] | None) -> str:
    return json.dumps(_compact(value, focus), ensure_ascii=False, separators=(",", ":"))


def format_step(step: ReplayStep) -> str:
    """A paragraph for a person asking "why was my conversation cancelled?"."""
    where = f" at {step.time}" if step.time else ""
    conn = f" [{step.connection}]" if step.connection else ""
    head = f"request {json.dumps(step.request_id)}{conn}{where}"
    d = step.decision
    if d is None:
        return f"{head}: ERROR {step.error or 'not routed'}"
    lines = [
        f"{head}: {_KIND_WORDS[d.kind]} {d.session_id} "
        f"(committed {d.committed_len}, {len(d.new_messages)} new, {d.candidates} matching)",
        f"  {d.reason}",
    ]
    if d.kind is DecisionKind.CANCEL:
        focus = _first_difference(d.expected, d.received) if d.received is not None else None
        detail = ""
        if focus is not None:
            detail = (
                f" ({focus[0] or 'whole message'}"
                + (f", character {focus[1]}" if focus[1] is not None else "")
                + ")"
            )
        lines.append(f"  first mismatch: message {d.mismatch_index}{detail}")
        lines.append(f"    expected: {_one_line(d.expected, focus)}")
        lines.append(
            f"    received: {_one_line(d.received, focus) if d.received is not None else '(the request ended here)'}"
        )
    if d.prompt_start:
        lines.append(
            f"  the agent already had the first {d.prompt_start} of the new messages; not prompted again"
        )
    if step.recorded is not None and step.recorded.get("kind") != d.kind.value:
        lines.append(
            f"  note: the live bridge decided {step.recorded.get('kind')} "
            f"({step.recorded.get('session_id')}) for this request"
        )
    return "\n".join(lines)


def step_to_json(step: ReplayStep) -> dict[str, Any]:
    return {
        "request_id": step.request_id,
        "time": step.time,
        "connection": step.connection,
        "decision": step.decision.to_json() if step.decision is not None else None,
        "error": step.error,
        "recorded": step.recorded,
        "run": step.run,
    }


def sniff_file(path: str | os.PathLike[str]) -> str | None:
    """ "trace" for a vscodelm wire trace, "events" for a JSONL event log, None for neither."""
    with open(path, "rb") as f:
        for n, raw in enumerate(f):
            if n >= 200:
                break
            text = raw.decode("utf-8", "replace").strip()
            if not text:
                continue
            if _RECORD.match(text):
                return "trace"
            try:
                data = json.loads(text)
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("type"), str):
                return "events"
    return None


def main_replay(path: str, as_json: bool, out: IO[str] = sys.stdout) -> int:
    """`symposium-tui replay TRACE [--json]`: replay a wire trace or an event log and explain it.

    Exit status 0 when the file was replayed (steps that failed to parse are part of the output),
    1 when it cannot be read or is neither a trace nor an event log.
    """
    try:
        kind = sniff_file(path)
    except OSError as exc:
        print(f"replay: {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if kind is None:
        print(f"replay: {path}: neither a vscodelm trace nor a JSONL event log", file=sys.stderr)
        return 1
    if kind == "trace":
        reader = read_trace(path)
        steps = replay_trace(path, reader)
        skipped = reader.skipped
    else:
        junk: list[int] = []
        steps = replay_event_log(path, junk)
        skipped = junk[0]
    if as_json:
        for step in steps:
            out.write(
                json.dumps(step_to_json(step), ensure_ascii=False, separators=(",", ":")) + "\n"
            )
        return 0
    for step in steps:
        out.write(format_step(step) + "\n\n")
    counts: dict[str, int] = {}
    for step in steps:
        name = step.decision.kind.value if step.decision is not None else "error"
        counts[name] = counts.get(name, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "no chat requests"
    runs = max((step.run for step in steps), default=0)
    if runs > 1:
        summary += f" in {runs} runs"
    extra = f"; {skipped} unreadable line{'s' if skipped != 1 else ''} skipped" if skipped else ""
    out.write(
        f"{len(steps)} request{'s' if len(steps) != 1 else ''} replayed from {path}: {summary}{extra}\n"
    )
    return 0
