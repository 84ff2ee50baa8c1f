"""`ConsoleState`: the bridge's events folded into the sessions, decisions and tool-call stores.

The bus publishes on the asyncio loop the console runs, so the handlers below run on that loop too
and need no locks. The panes are told what changed through `symposium_tui.state.notify`.

History snapshots cost nothing extra: a session's committed list only ever grows by appending
(committed only grows by whole provisional exchanges), so a decision records the committed length it saw and keeps a reference to the
provisional list it started; the history "as it was" at decision k is the session's committed
list cut at that length plus decision k's provisional list (which stops changing once decision
k+1 replaces it).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bridge import events as ev

if TYPE_CHECKING:
    from bridge.core import Bridge
from symposium_tui.state.messages import agent_name, field_of
from symposium_tui.state.notify import Coalescer, Listener
from symposium_tui.state.records import (
    DecisionRecord,
    SessionRecord,
)
from symposium_tui.state.tool_log import ToolLog
from symposium_tui.state.toolstore import DEFAULT_MAX_BYTES, ToolCallStore

__all__ = ["ConsoleState", "request_key"]


def _compact_streamed(messages: list[Any]) -> None:
    """Merge the runs of streamed text parts of a finished answer into one part each: a reply
    streamed in hundreds of chunks is then kept as one string, not hundreds of small dicts."""
    for i, msg in enumerate(messages):
        if not (isinstance(msg, dict) and msg.get("_streamed")):
            continue
        content: list[Any] = []
        run: list[str] = []
        for part in msg.get("content") or ():
            if field_of(part, "type") == "text":
                run.append(str(field_of(part, "value", "")))
                continue
            if run:
                content.append({"type": "text", "value": "".join(run)})
                run = []
            content.append(part)
        if run:
            content.append({"type": "text", "value": "".join(run)})
        messages[i] = {"role": msg.get("role", "assistant"), "content": content}


def request_key(connection: str, request_id: Any) -> tuple[str, Any]:
    """Request ids compare as JSON values (1 and 1.0 alike, 1 and "1" not)."""
    if isinstance(request_id, bool) or not isinstance(request_id, (int, float)):
        try:
            return (connection, ("s", json.dumps(request_id, sort_keys=True, default=str)))
        except (TypeError, ValueError):
            return (connection, ("r", repr(request_id)))
    return (connection, ("n", float(request_id)))


class ConsoleState:
    """Sessions, decisions and tool calls of a bridge, folded from its event bus."""

    def __init__(
        self,
        bridge: Bridge | None = None,
        *,
        tool_capacity: int = 100_000,
        tool_max_bytes: int = DEFAULT_MAX_BYTES,
        decision_capacity: int = 5_000,
        ended_session_capacity: int = 1_000,
        coalesce: float = 0.1,
        name: str = "live",
    ) -> None:
        self.bridge = bridge
        self.name = name  # "live", or the path of a replayed file
        self.changes = Coalescer(coalesce)
        self.sessions: dict[tuple[str, str], SessionRecord] = {}
        self.decisions: deque[DecisionRecord] = deque()
        self.decision_capacity = decision_capacity
        self.ended_session_capacity = ended_session_capacity
        self.tool_log = ToolLog(
            ToolCallStore(tool_capacity, max_bytes=tool_max_bytes), lambda: self._mark("toolcalls")
        )
        self.tools = self.tool_log.store
        self.tool_sessions = self.tool_log.sessions  # session labels seen in the log, in order
        self.tool_kinds = self.tool_log.kinds
        self.tool_statuses = self.tool_log.statuses
        self.decision_count = 0  # decisions ever recorded (indexes are 1-based)
        self.events_seen = 0
        self.notes: list[str] = []  # replay: what could not be read
        self._requests: dict[tuple[str, Any], DecisionRecord] = {}  # requests in flight
        self._ended: deque[tuple[str, str]] = deque()
        self._unsubscribe: Callable[[], None] | None = None
        self._handlers: dict[type, Callable[[Any], None]] = {
            ev.HistoryDecided: self._on_decision,
            ev.PartStreamed: self._on_part,
            ev.RequestFinished: self._on_finished,
            ev.SessionStarted: self._on_session_started,
            ev.SessionEnded: self._on_session_ended,
            ev.AgentStderr: self._on_stderr,
            ev.ToolCallSeen: self.tool_log.tool_call,
            ev.ClientToolCall: self.tool_log.client_tool,
            ev.ApprovalRequested: self._on_approval_requested,
            ev.ApprovalResolved: self._on_approval_resolved,
        }

    # --- wiring ----------------------------------------------------------------------------------

    def attach(self) -> None:
        """Subscribe to the bridge's bus (once) and take in the sessions it already has."""
        if self._unsubscribe is not None or self.bridge is None:
            return
        self._unsubscribe = self.bridge.bus.subscribe(self.handle)
        self._seed_from_bridge()

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.changes.cancel()

    @property
    def attached(self) -> bool:
        return self._unsubscribe is not None

    @property
    def coalesce(self) -> float:
        return self.changes.delay

    def add_listener(self, callback: Listener) -> Callable[[], None]:
        """`callback(topic)` is called when a topic (TOPICS: "sessions", "decisions",
        "toolcalls") changed, at most once per topic every `coalesce` seconds. Returns a remover."""
        return self.changes.add_listener(callback)

    def flush(self) -> None:
        """Tell the listeners now about everything changed since the last call."""
        self.changes.flush()

    def _mark(self, topic: str) -> None:
        self.changes.mark(topic)

    def handle(self, event: ev.Event) -> None:
        """Fold one event into the state (the bus subscriber; also used to replay files)."""
        handler = self._handlers.get(type(event))
        if handler is not None:
            self.events_seen += 1
            handler(event)

    # --- sessions --------------------------------------------------------------------------------

    def _seed_from_bridge(self) -> None:
        assert self.bridge is not None
        for conn_name, conn in list(self.bridge.connections.items()):
            for view in conn.tracker.sessions():
                key = (conn_name, view.session_id)
                if key in self.sessions:
                    continue
                live = conn.sessions.get(view.session_id)
                rec = SessionRecord(
                    conn_name,
                    view.session_id,
                    getattr(live, "agent_label", None) or agent_name(view.agent_key),
                    agent_key=view.agent_key,
                    committed=list(view.committed),
                    provisional=list(view.provisional),
                )
                rec.ready = getattr(live, "state", "") == "ready"
                self.sessions[key] = rec
        if self.sessions:
            self._mark("sessions")

    def _session(
        self, connection: str, session_id: str, agent_key: str = "", ts: float = 0.0
    ) -> SessionRecord:
        key = (connection, session_id)
        rec = self.sessions.get(key)
        if rec is None:
            rec = SessionRecord(
                connection,
                session_id,
                agent_name(agent_key) if agent_key else "?",
                agent_key=agent_key,
                started=ts,
            )
            self.sessions[key] = rec
        return rec

    def _on_decision(
        self, event: ev.HistoryDecided, request_messages: list[Any] | None = None
    ) -> None:
        d = dict(event.decision)
        new_messages = d.pop("new_messages", None) or []
        sid = str(d.get("session_id") or "")
        kind = str(d.get("kind") or "?")
        committed_len = int(d.get("committed_len") or 0)
        agent_key = str(d.get("agent_key") or "")
        rec = self._session(event.connection, sid, agent_key, event.ts)
        if kind == "new_session" and (rec.decisions or rec.committed or rec.provisional):
            # a session id seen before (a replayed file restarting its numbering): start afresh
            rec.committed, rec.provisional, rec.decisions = [], [], deque()
        if not rec.agent_key and agent_key:
            rec.agent_key = agent_key
            if rec.agent == "?":
                rec.agent = agent_name(agent_key)
        # The committed list as the tracker now holds it (a commit appends the provisional
        # exchange; a cancel keeps committed as it was), rebuilt from what we saw.
        if kind == "turn":
            # An ACP session keeps its own history: every earlier turn stands.
            rec.committed.extend(rec.provisional)
            committed_len = len(rec.committed)
        elif kind == "commit":
            rec.committed.extend(rec.provisional)
        elif kind == "new_session":
            rec.committed = []
        if len(rec.committed) != committed_len:
            rec.committed = self._resync_committed(rec, committed_len, request_messages)
        provisional = [dict(m) if isinstance(m, dict) else m for m in new_messages]
        rec.provisional = provisional
        self.decision_count += 1
        record = DecisionRecord(
            index=self.decision_count,
            ts=event.ts,
            connection=event.connection,
            request_id=event.request_id,
            session_id=sid,
            kind=kind,
            decision=d,
            committed_len=committed_len,
            provisional=provisional,
        )
        rec.decisions.append(record)
        rec.active_request = event.request_id
        rec.version += 1
        self._requests[request_key(event.connection, event.request_id)] = record
        self._append_decision(record)
        self._mark("decisions")
        self._mark("sessions")

    def _resync_committed(
        self, rec: SessionRecord, length: int, request_messages: list[Any] | None
    ) -> list[Any]:
        """The console missed part of this session (attached late, or a file without the parts):
        take the committed messages from the request or the live tracker, or mark the gap."""
        if request_messages is not None and len(request_messages) >= length:
            return list(request_messages[:length])
        conn = self.bridge.connections.get(rec.connection) if self.bridge is not None else None
        if conn is not None:
            view = conn.tracker.session(rec.session_id)
            if view is not None and len(view.committed) == length:
                return list(view.committed)
        have = rec.committed[:length]
        gap = {
            "role": "?",
            "content": [{"type": "text", "value": "(a message the console did not see)"}],
        }
        return have + [gap] * (length - len(have))

    def _append_decision(self, record: DecisionRecord) -> None:
        self.decisions.append(record)
        while len(self.decisions) > self.decision_capacity:
            old = self.decisions.popleft()
            rec = self.sessions.get(old.key)
            if rec is not None and rec.decisions and rec.decisions[0] is old:
                rec.decisions.popleft()
            if old.outcome is None:
                self._requests.pop(request_key(old.connection, old.request_id), None)

    def _on_part(self, event: ev.PartStreamed) -> None:
        record = self._requests.get(request_key(event.connection, event.request_id))
        if record is None:
            return
        rec = self.sessions.get(record.key)
        if rec is None or not rec.decisions or rec.decisions[-1] is not record:
            return  # the tail of a superseded request: the tracker dropped it too
        prov = record.provisional
        part = event.part
        last = prov[-1] if prov else None
        if last is not None and field_of(last, "role") == "assistant":
            if not (isinstance(last, dict) and last.get("_streamed")):
                last = {
                    "role": "assistant",
                    "content": list(field_of(last, "content") or []),
                    "_streamed": True,
                }
                prov[-1] = last
            last["content"].append(part)
        else:
            prov.append({"role": "assistant", "content": [part], "_streamed": True})
        rec.version += 1
        self._mark("sessions")

    def _on_finished(self, event: ev.RequestFinished) -> None:
        record = self._requests.pop(request_key(event.connection, event.request_id), None)
        if record is None:
            return
        record.outcome = event.outcome
        record.error = event.error
        record.stop_reason = event.stop_reason
        record.finished_ts = event.ts
        _compact_streamed(record.provisional)
        rec = self.sessions.get(record.key)
        if rec is not None:
            if rec.active_request is not None and request_key(
                "", rec.active_request
            ) == request_key("", event.request_id):
                rec.active_request = None
            rec.version += 1
        self._mark("decisions")
        self._mark("sessions")

    def _on_session_started(self, event: ev.SessionStarted) -> None:
        rec = self._session(event.connection, event.session_id, ts=event.ts)
        if rec.agent in ("?", "") or event.agent:
            rec.agent = event.agent or rec.agent
        rec.ready = True
        rec.ended = None
        rec.end_reason = None
        rec.acp_session_id = event.acp_session_id
        rec.pid = event.pid
        if not rec.started:
            rec.started = event.ts
        rec.version += 1
        self._mark("sessions")

    def _on_session_ended(self, event: ev.SessionEnded) -> None:
        rec = self.sessions.get((event.connection, event.session_id))
        if rec is None or rec.ended is not None:
            return
        rec.ended = event.ts
        rec.end_reason = event.reason
        rec.active_request = None
        rec.pending_approvals = 0
        rec.version += 1
        self.tool_log.session_ended(rec.key)
        self._ended.append(rec.key)
        while len(self._ended) > self.ended_session_capacity:
            old = self.sessions.get(self._ended.popleft())
            if old is not None and old.ended is not None:
                del self.sessions[old.key]
        self._mark("sessions")

    def _on_stderr(self, event: ev.AgentStderr) -> None:
        rec = self.sessions.get((event.connection, event.session_id))
        if rec is not None:
            rec.stderr.append(event.line)
            rec.version += 1
            self._mark("sessions")

    # --- decisions: queries ----------------------------------------------------------------------

    def session_decisions(self, key: tuple[str, str]) -> list[DecisionRecord]:
        rec = self.sessions.get(key)
        return list(rec.decisions) if rec is not None else []

    def history_at(
        self, key: tuple[str, str], record: DecisionRecord | None = None
    ) -> tuple[list[Any], list[Any]]:
        """`(committed, provisional)` of a session now, or as they were at `record`."""
        rec = self.sessions.get(key)
        if rec is None:
            return [], list(record.provisional) if record is not None else []
        if record is None:
            return list(rec.committed), list(rec.provisional)
        return rec.committed[: record.committed_len], list(record.provisional)

    def previous_provisional(self, record: DecisionRecord) -> list[Any] | None:
        """The provisional exchange `record` replaced (what a cancel discarded)."""
        rec = self.sessions.get(record.key)
        if rec is None:
            return None
        before = None
        for d in rec.decisions:
            if d is record:
                return before.provisional if before is not None else None
            before = d
        return None

    # --- tool calls ------------------------------------------------------------------------------

    def _on_approval_requested(self, event: ev.ApprovalRequested) -> None:
        self.tool_log.approval_requested(event)
        rec = self.sessions.get((event.connection, event.session_id))
        if rec is not None:
            rec.pending_approvals += 1
            rec.version += 1
            self._mark("sessions")

    def _on_approval_resolved(self, event: ev.ApprovalResolved) -> None:
        if not self.tool_log.approval_resolved(event):
            return  # decided by policy before anyone was asked: no card was counted
        rec = self.sessions.get((event.connection, event.session_id))
        if rec is not None and rec.pending_approvals:
            rec.pending_approvals -= 1
            rec.version += 1
            self._mark("sessions")

    # --- replaying files -------------------------------------------------------------------------

    def feed_decision(
        self,
        event: ev.HistoryDecided,
        request_messages: list[Any] | None = None,
        recorded_kind: str | None = None,
    ) -> DecisionRecord:
        """Record a decision (the replay's entry point; `request_messages` are the request's own)."""
        self.events_seen += 1
        self._on_decision(event, request_messages)
        record = self.decisions[-1]
        if recorded_kind is not None and recorded_kind != record.kind:
            record.recorded_kind = recorded_kind
        return record

    def feed_error(self, connection: str, request_id: Any, ts: float, error: str) -> DecisionRecord:
        """A replayed request the tracker never saw (its params did not parse)."""
        self.decision_count += 1
        record = DecisionRecord(
            index=self.decision_count,
            ts=ts,
            connection=connection,
            request_id=request_id,
            session_id="",
            kind="error",
            decision={"reason": error},
            committed_len=0,
            provisional=[],
            outcome="error",
            error=error,
        )
        self._append_decision(record)
        self._mark("decisions")
        return record
