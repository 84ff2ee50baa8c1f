"""Replay: the chat requests of a wire trace or a JSONL event log re-run through fresh history
trackers (one per connection, as in the bridge), each giving the decision it got and why."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from pydantic import TypeAdapter, ValidationError

from bridge.history import Decision, HistoryTracker
from bridge.protocol import (
    AgentSpec,
    ContentPart,
    Message,
    agent_key,
    describe_validation_error,
    parse_agent,
)
from bridge.trace.files import CHAT_METHOD, TraceReader, read_trace
from bridge.vscodelm.wire import ChatResponseParams

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
        except (ValueError, RecursionError):
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
            except (ValueError, RecursionError):
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
        if kind == "request_received":
            step = _replay_received(state, event)
            step.connection = conn
            step.run = run
            steps.append(step)
        else:
            handle = _EVENT_HANDLERS.get(kind)
            if handle is not None and not handle(state, event):
                junk[0] += 1
    if skipped is not None:
        skipped.append(junk[0])
    return [_with_live_session(step) for step in steps]


def _replay_received(state: _Replay, event: dict[str, Any]) -> ReplayStep:
    """A `request_received` event: the request routed as the bridge routed it."""
    rid = event.get("request_id")
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
    state.steps[_id_key(rid)] = step
    return step


# Each takes an event of its type to the replay state: False when the event could not be read.


def _decided(state: _Replay, event: dict[str, Any]) -> bool:
    """`history_decision`: the live bridge's decision, and the session id it gave."""
    recorded_step = state.steps.get(_id_key(event.get("request_id")))
    decision = event.get("decision")
    state.saw_decisions = True
    if recorded_step is not None and isinstance(decision, dict):
        step = recorded_step
        step.recorded = decision
        live_sid = decision.get("session_id")
        if step.decision is not None and isinstance(live_sid, str):
            state.live_sessions[live_sid] = step.decision.session_id
    return True


def _streamed(state: _Replay, event: dict[str, Any]) -> bool:
    """`part_streamed`: the part joins the reply of the session the request went to."""
    sid = state.routed.get(_id_key(event.get("request_id")))
    if sid is not None:
        try:
            state.tracker.record_part(sid, _PART.validate_python(event.get("part")))
        except ValidationError:
            return False
    return True


def _finished(state: _Replay, event: dict[str, Any]) -> bool:
    outcome = event.get("outcome")
    _finish(
        state,
        event.get("request_id"),
        outcome if outcome in ("complete", "error") else "cancelled",
    )
    return True


def _ended(state: _Replay, event: dict[str, Any]) -> bool:
    """`session_ended` (died, reaped when idle, or evicted): the session is forgotten."""
    live_sid = str(event.get("session_id"))
    sid = state.live_sessions.pop(live_sid, None if state.saw_decisions else live_sid)
    if sid is not None:
        state.tracker.remove(sid)
    return True


_EVENT_HANDLERS: dict[str, Callable[[_Replay, dict[str, Any]], bool]] = {
    "history_decision": _decided,
    "part_streamed": _streamed,
    "request_finished": _finished,
    "session_ended": _ended,
}


def _with_live_session(step: ReplayStep) -> ReplayStep:
    """The step naming the session as the live bridge (and so the console) did, when it agrees."""
    d, live = step.decision, step.recorded
    if d is None or not isinstance(live, dict) or live.get("kind") != d.kind.value:
        return step
    live_sid = live.get("session_id")
    if isinstance(live_sid, str) and live_sid != d.session_id:
        step.decision = replace(d, session_id=live_sid)
    return step
