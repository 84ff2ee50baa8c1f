"""A wire trace or a JSONL event log replayed into a `ConsoleState`, through a fresh history
tracker (`bridge.trace`), so a file is inspected exactly like a live bridge."""

from __future__ import annotations

import os
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from bridge import events as ev
from bridge.trace import AUDIT_NOT_REPLAYED, sniff_file
from symposium_tui.state.console_state import ConsoleState, request_key
from symposium_tui.state.messages import compact_json

if TYPE_CHECKING:
    from bridge.trace import ReplayStep
    from symposium_tui.state.records import DecisionRecord

__all__ = ["load_file", "state_from_file"]


def state_from_file(path: str | os.PathLike[str], **kwargs: Any) -> ConsoleState:
    """A state built by replaying a wire trace or a JSONL event log (raises OSError or ValueError
    when the file cannot be read or is neither); `kwargs` go to `ConsoleState`."""
    state = ConsoleState(None, name=os.fspath(path), **kwargs)
    load_file(state, path)
    for rec in state.sessions.values():
        if rec.ended is None and rec.decisions:  # it ran (a trace has no start events)
            rec.ready = True
    state.flush()
    return state


def load_file(state: ConsoleState, path: str | os.PathLike[str]) -> None:
    """Fold the file at `path` into `state` (raises OSError or ValueError when it cannot be read
    or is neither a trace nor an event log)."""
    kind = sniff_file(path)
    if kind == "trace":
        _load_trace(state, path)
    elif kind == "events":
        _load_event_log(state, path)
    elif kind == "audit":
        raise ValueError(f"{os.fspath(path)}: {AUDIT_NOT_REPLAYED}")
    else:
        raise ValueError(f"{os.fspath(path)}: neither a vscodelm trace nor a JSONL event log")


def _parse_time(stamp: str) -> float:
    text = stamp.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    # Upstream writes nanoseconds; datetime takes at most microseconds.
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return 0.0


def _feed_step(
    state: ConsoleState,
    conn: str,
    step: ReplayStep,
    ts: float,
    messages: Any,
    recorded_kind: str | None = None,
) -> DecisionRecord | None:
    """One replayed request into the state: its decision with the messages it carried, or the
    reason it could not be routed."""
    if step.decision is None:
        state.feed_error(conn, step.request_id, ts, step.error or "not routed")
        return None
    return state.feed_decision(
        ev.HistoryDecided(
            connection=conn, request_id=step.request_id, decision=step.decision.to_json(), ts=ts
        ),
        messages if isinstance(messages, list) else None,
        recorded_kind=recorded_kind,
    )


def _load_trace(state: ConsoleState, path: str | os.PathLike[str]) -> None:
    """Replay a wire trace (one connection): decisions from `bridge.trace.replay_trace`, and the
    request's messages and streamed parts read beside it so the history is whole."""
    from bridge.trace import CHAT_METHOD, read_trace, replay_trace

    reader = read_trace(path)
    steps = iter(replay_trace(path, reader))
    conn = "trace"
    for rec in read_trace(path):
        msg = rec.message
        if msg is None:
            continue
        method = msg.get("method")
        raw_params = msg.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        if rec.direction == "recv":
            if method == CHAT_METHOD and "id" in msg:
                step = next(steps, None)
                if step is None:
                    break
                _feed_step(state, conn, step, _parse_time(rec.time), params.get("messages"))
            continue
        ts = _parse_time(rec.time)
        if method == "lm/responsePart" and isinstance(params.get("part"), dict):
            state.handle(
                ev.PartStreamed(
                    connection=conn,
                    request_id=params.get("requestId"),
                    session_id="",
                    part=params["part"],
                    ts=ts,
                )
            )
        elif method == "lm/responseComplete":
            state.handle(
                ev.RequestFinished(
                    connection=conn, request_id=params.get("requestId"), outcome="complete", ts=ts
                )
            )
        elif method is None and "id" in msg:
            error = msg.get("error")
            outcome: Literal["complete", "cancelled", "error"]
            if error is None:
                outcome = "complete"
            else:
                text = error.get("message") if isinstance(error, dict) else str(error)
                outcome = (
                    "cancelled"
                    if isinstance(text, str) and "cancelled" in text.lower()
                    else "error"
                )
            state.handle(
                ev.RequestFinished(
                    connection=conn,
                    request_id=msg.get("id"),
                    outcome=outcome,
                    error=None if error is None else compact_json(error),
                    ts=ts,
                )
            )
    if reader.skipped:
        state.notes.append(f"{reader.skipped} unreadable line(s) skipped")


_SESSION_EVENTS = (
    "session_started",
    "session_ended",
    "agent_stderr",
    "tool_call",
    "client_tool_call",
    "approval_requested",
    "approval_resolved",
    "part_streamed",
    "request_finished",
)


def _match_live_decision(
    event: ev.HistoryDecided,
    replayed: dict[tuple[str, Any], DecisionRecord],
    live_to_replayed: dict[tuple[str, str], str],
) -> None:
    """The live bridge's decision for a replayed request: its kind kept when the replay decided
    otherwise, and its live session id mapped to the replayed one."""
    decided = replayed.get(request_key(event.connection, event.request_id))
    live_sid = event.decision.get("session_id")
    if decided is not None and isinstance(live_sid, str):
        if decided.recorded_kind is None and event.decision.get("kind") != decided.kind:
            decided.recorded_kind = event.decision.get("kind")
        live_to_replayed[(event.connection, live_sid)] = decided.session_id


def _load_event_log(state: ConsoleState, path: str | os.PathLike[str]) -> None:
    """Replay a JSONL event log: its requests re-routed by `bridge.trace.replay_event_log`, every
    other event folded in as the live console would have (session ids mapped to the replay's)."""
    from bridge.trace import read_event_log, replay_event_log, run_connection

    junk: list[int] = []
    steps = replay_event_log(path, junk)
    pending = iter(steps)
    replayed: dict[tuple[str, Any], DecisionRecord] = {}
    live_to_replayed: dict[tuple[str, str], str] = {}
    run = 0
    for data in read_event_log(path):
        kind = data["type"]
        if kind == "run_started":  # a new process: its connection names start again
            run += 1
            continue
        if run > 1:
            data = {**data, "connection": run_connection(str(data.get("connection") or ""), run)}
        if kind == "request_received":
            step = next(pending, None)
            if step is None:
                continue
            conn = step.connection or str(data.get("connection") or "")
            recorded = step.recorded.get("kind") if isinstance(step.recorded, dict) else None
            ts = float(data.get("ts") or 0.0)
            record = _feed_step(state, conn, step, ts, data.get("messages"), recorded)
            if record is not None:
                replayed[request_key(conn, step.request_id)] = record
            continue
        try:
            event = ev.parse_event(data)
        except Exception:  # a line of a shape this version does not know
            continue
        if event is None:
            continue
        if kind == "history_decision":
            if not steps:  # no requests in the log: show what the live bridge decided
                state.handle(event)
                continue
            assert isinstance(event, ev.HistoryDecided)
            _match_live_decision(event, replayed, live_to_replayed)
            continue
        if kind in _SESSION_EVENTS and steps:
            sid = getattr(event, "session_id", None)
            mapped = live_to_replayed.get((event.connection, sid)) if isinstance(sid, str) else None
            if mapped is not None and mapped != sid:
                event = event.model_copy(update={"session_id": mapped})
        state.handle(event)
    if junk and junk[0]:
        state.notes.append(f"{junk[0]} unreadable line(s) skipped")
