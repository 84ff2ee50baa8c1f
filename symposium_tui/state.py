"""What the console knows about the bridge: sessions, history decisions and tool calls.

`ConsoleState` subscribes to the bridge's event bus and folds the events into three stores the
console's panes read: the sessions of every connection (keyed by `(connection, session_id)`), the
timeline of history decisions (each with its request's outcome and a snapshot of the session's
history at that decision, so the inspector can scrub back through them), and a bounded log of
tool calls (agent-internal ones, client-tool round trips and permission outcomes).

Pure Python, no Textual: the panes subscribe with `add_listener` and are told, coalesced to at most
one call per topic every `coalesce` seconds, that something changed. The bus publishes on the
asyncio loop the console runs, so the handlers below run on that loop too and need no locks.

History snapshots cost nothing extra: a session's committed list only ever grows by appending
(reference §2.7), so a decision records the committed length it saw and keeps a reference to the
provisional list it started; the history "as it was" at decision k is the session's committed
list cut at that length plus decision k's provisional list (which stops changing once decision
k+1 replaces it).

`ConsoleState.from_file(path)` builds the same stores from a wire trace or a JSONL event log by
replaying it through a fresh history tracker (`bridge.trace`), so a file is inspected exactly
like a live bridge.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bridge import events as ev
from bridge.trace import sniff_file

__all__ = [
    "ConsoleState",
    "DecisionRecord",
    "SessionRecord",
    "ToolCallStore",
    "ToolEntry",
    "agent_name",
    "message_parts",
]

TOPICS = ("sessions", "decisions", "toolcalls")
FINISHED_STATUSES = frozenset({"completed", "failed", "cancelled"})
AGENT_SOURCE, CLIENT_SOURCE, PERMISSION_SOURCE = "agent", "client", "permission"

Listener = Callable[[str], None]


# --- messages ------------------------------------------------------------------------------------
#
# History messages come in two shapes: `bridge.protocol.Message` objects (from the live tracker)
# and wire dicts (from decision events and replayed files). The panes only read them through
# `message_parts`, so neither is ever converted into the other.


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def message_parts(msg: Any) -> tuple[str, list[tuple[str, str]]]:
    """`(role, [(kind, text), ...])` for a message in either shape; runs of text parts merged.

    kind is "text", "tool_call" or "tool_result"; text is what a person reads for it.
    """
    role = str(_field(msg, "role", "?"))
    out: list[tuple[str, str]] = []
    run: list[str] = []
    for part in _field(msg, "content", None) or ():
        kind = _field(part, "type")
        if kind == "text":
            run.append(str(_field(part, "value", "")))
            continue
        if run:
            out.append(("text", "".join(run)))
            run = []
        if kind == "tool_call":
            params = _compact_json(_field(part, "parameters"))
            out.append(
                (
                    "tool_call",
                    f"{_field(part, 'toolName', '?')}({params}) [{_field(part, 'toolCallId', '')}]",
                )
            )
        elif kind == "tool_result":
            out.append(
                (
                    "tool_result",
                    f"[{_field(part, 'toolCallId', '')}] {_compact_json(_field(part, 'result'))}",
                )
            )
        else:
            out.append(("text", _compact_json(part if isinstance(part, dict) else repr(part))))
    if run:
        out.append(("text", "".join(run)))
    return role, out


def message_text(msg: Any) -> str:
    """The message as one string (used to find where two messages first differ)."""
    role, parts = message_parts(msg)
    return "\n".join(text for _, text in parts)


def _compact_json(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)


_AGENT_NAMES: dict[str, str] = {}


def agent_name(agent_key: str) -> str:
    """A short label for an agent from its canonical key (`bridge.protocol.agent_key`)."""
    name = _AGENT_NAMES.get(agent_key)
    if name is not None:
        return name
    name = agent_key
    try:
        spec = json.loads(agent_key)
    except (TypeError, ValueError):
        spec = None
    if isinstance(spec, dict):
        kind = spec.get("kind")
        if kind == "external":
            server = spec.get("server") or {}
            name = (
                spec.get("id")
                or (server.get("name") if isinstance(server, dict) else None)
                or "external"
            )
        elif isinstance(kind, str):
            name = kind
    if len(_AGENT_NAMES) < 1024:
        _AGENT_NAMES[agent_key] = name
    return name


# --- sessions and decisions ----------------------------------------------------------------------


@dataclass(eq=False)
class DecisionRecord:
    """One routed request: the tracker's decision, its outcome and the history it left."""

    index: int  # position in the console's timeline (never reused)
    ts: float
    connection: str
    request_id: Any
    session_id: str
    kind: str  # new_session / continue / commit / cancel, or "error" for a replayed request that failed
    decision: dict[str, Any]  # Decision.to_json() without new_messages (they live in `provisional`)
    committed_len: int
    provisional: list[Any]  # the provisional exchange this decision started; grows while it streams
    outcome: str | None = None  # None while the request is in flight; complete / cancelled / error
    error: str | None = None
    finished_ts: float | None = None
    recorded_kind: str | None = None  # replay: what the live bridge decided, when it differs

    @property
    def key(self) -> tuple[str, str]:
        return (self.connection, self.session_id)

    @property
    def reason(self) -> str:
        return str(self.decision.get("reason") or self.error or "")


@dataclass(eq=False)
class SessionRecord:
    connection: str
    session_id: str
    agent: str
    agent_key: str = ""
    started: float = 0.0
    ended: float | None = None
    end_reason: str | None = None
    ready: bool = False
    acp_session_id: str | None = None
    pid: int | None = None
    committed: list[Any] = field(default_factory=list)
    provisional: list[Any] = field(default_factory=list)
    decisions: deque[DecisionRecord] = field(default_factory=deque)
    active_request: Any = None
    pending_approvals: int = 0
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=20))
    version: int = 0  # bumped on every change the panes may show

    @property
    def key(self) -> tuple[str, str]:
        return (self.connection, self.session_id)

    @property
    def label(self) -> str:
        return f"{self.connection}/{self.session_id}"

    @property
    def last_decision(self) -> DecisionRecord | None:
        return self.decisions[-1] if self.decisions else None

    @property
    def state(self) -> str:
        """ended, approval (waiting for a person), streaming, starting, or idle."""
        if self.ended is not None:
            return "ended"
        if self.pending_approvals:
            return "approval"
        if self.active_request is not None:
            return "streaming" if self.ready else "starting"
        return "idle" if self.ready else "new"


# --- tool calls ----------------------------------------------------------------------------------


class ToolEntry:
    """One tool call, updated in place as its status changes."""

    __slots__ = (
        "seq",
        "version",
        "ts",
        "connection",
        "session_id",
        "source",
        "tool_call_id",
        "title",
        "kind",
        "status",
        "duration",
        "input",
        "output",
        "detail",
        "updated",
        "key",
        "_haystack",
    )

    def __init__(
        self,
        ts: float,
        connection: str,
        session_id: str,
        source: str,
        tool_call_id: str,
        title: str,
        kind: str,
        status: str,
        input: Any = None,
        output: str | None = None,  # noqa: A002
    ) -> None:
        self.seq = -1
        self.version = 0
        self.ts = ts
        self.connection = connection
        self.session_id = session_id
        self.source = source
        self.tool_call_id = tool_call_id
        self.title = title
        self.kind = kind
        self.status = status
        self.duration: float | None = None
        self.input = input
        self.output = output
        self.detail: dict[str, Any] | None = None
        self.updated = ts
        self.key: tuple[Any, ...] | None = None
        self._haystack: str | None = None

    @property
    def name(self) -> str:
        return self.title

    @property
    def session_label(self) -> str:
        return f"{self.connection}/{self.session_id}"

    @property
    def finished(self) -> bool:
        return self.duration is not None

    def haystack(self) -> str:
        """Lower-case text a search matches against (built once per version)."""
        hay = self._haystack
        if hay is None:
            hay = " ".join(
                (
                    self.session_label,
                    self.source,
                    self.kind,
                    self.status,
                    self.title,
                    self.tool_call_id,
                    _compact_json(self.input)[:2000],
                    (self.output or "")[:2000],
                )
            ).lower()
            self._haystack = hay
        return hay

    def touch(self, ts: float) -> None:
        self.version += 1
        self.updated = ts
        self._haystack = None


class ToolCallStore:
    """The last `capacity` tool calls, oldest dropped first.

    Entries get consecutive sequence numbers, kept in a ring so `get(seq)` is O(1). Every addition
    and update is written to a change journal; a reader keeps a cursor into it and asks
    `changes_since(cursor)` what to re-examine, so a filtered view is maintained incrementally.
    """

    def __init__(self, capacity: int = 100_000, journal: int | None = None) -> None:
        if capacity < 1:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self._ring: list[ToolEntry] = []
        self.first_seq = 0
        self.next_seq = 0
        self._by_key: dict[tuple[Any, ...], ToolEntry] = {}
        self._journal: deque[int] = deque(maxlen=journal or max(1024, capacity // 2))
        self.change_no = 0
        self.dropped = 0

    def __len__(self) -> int:
        return self.next_seq - self.first_seq

    def __iter__(self) -> Iterator[ToolEntry]:
        for seq in range(self.first_seq, self.next_seq):
            yield self._ring[seq % self.capacity]

    def get(self, seq: int) -> ToolEntry | None:
        if self.first_seq <= seq < self.next_seq:
            return self._ring[seq % self.capacity]
        return None

    def find(self, key: tuple[Any, ...]) -> ToolEntry | None:
        return self._by_key.get(key)

    def add(self, key: tuple[Any, ...], entry: ToolEntry) -> ToolEntry:
        seq = self.next_seq
        entry.seq = seq
        if len(self._ring) < self.capacity:
            self._ring.append(entry)
        else:
            slot = seq % self.capacity
            old = self._ring[slot]
            self._forget(old)
            self._ring[slot] = entry
            self.first_seq += 1
            self.dropped += 1
        self.next_seq = seq + 1
        entry.key = key
        self._by_key[key] = entry
        self.changed(entry)
        return entry

    def _forget(self, old: ToolEntry) -> None:
        if old.key is not None and self._by_key.get(old.key) is old:
            del self._by_key[old.key]

    def changed(self, entry: ToolEntry) -> None:
        self.change_no += 1
        self._journal.append(entry.seq)

    def changes_since(self, cursor: int) -> list[int] | None:
        """Sequence numbers added or updated after `cursor` (a past `change_no`), oldest first;
        None when the journal no longer reaches back that far (the reader must rebuild)."""
        base = self.change_no - len(self._journal)
        if cursor < base:
            return None
        if cursor >= self.change_no:
            return []
        return list(itertools.islice(self._journal, cursor - base, None))


# --- the state -----------------------------------------------------------------------------------


def _compact_streamed(messages: list[Any]) -> None:
    """Merge the runs of streamed text parts of a finished answer into one part each: a reply
    streamed in hundreds of chunks is then kept as one string, not hundreds of small dicts."""
    for i, msg in enumerate(messages):
        if not (isinstance(msg, dict) and msg.get("_streamed")):
            continue
        content: list[Any] = []
        run: list[str] = []
        for part in msg.get("content") or ():
            if _field(part, "type") == "text":
                run.append(str(_field(part, "value", "")))
                continue
            if run:
                content.append({"type": "text", "value": "".join(run)})
                run = []
            content.append(part)
        if run:
            content.append({"type": "text", "value": "".join(run)})
        messages[i] = {"role": msg.get("role", "assistant"), "content": content}


def _request_key(connection: str, request_id: Any) -> tuple[str, Any]:
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
        bridge: Any = None,
        *,
        tool_capacity: int = 100_000,
        decision_capacity: int = 5_000,
        ended_session_capacity: int = 1_000,
        coalesce: float = 0.1,
        name: str = "live",
    ) -> None:
        self.bridge = bridge
        self.name = name  # "live", or the path of a replayed file
        self.coalesce = coalesce
        self.sessions: dict[tuple[str, str], SessionRecord] = {}
        self.decisions: deque[DecisionRecord] = deque()
        self.decision_capacity = decision_capacity
        self.ended_session_capacity = ended_session_capacity
        self.tools = ToolCallStore(tool_capacity)
        self.tool_sessions: dict[str, None] = {}  # session labels seen in the tool log, in order
        self.tool_kinds: dict[str, None] = {}
        self.tool_statuses: dict[str, None] = {}
        self.decision_count = 0  # decisions ever recorded (indexes are 1-based)
        self.events_seen = 0
        self.notes: list[str] = []  # replay: what could not be read
        self._requests: dict[tuple[str, Any], DecisionRecord] = {}  # requests in flight
        self._ended: deque[tuple[str, str]] = deque()
        self._listeners: list[Listener] = []
        self._dirty: set[str] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._last_agent_entry: dict[tuple[str, str], ToolEntry] = {}
        self._handlers: dict[type, Callable[[Any], None]] = {
            ev.HistoryDecided: self._on_decision,
            ev.PartStreamed: self._on_part,
            ev.RequestFinished: self._on_finished,
            ev.SessionStarted: self._on_session_started,
            ev.SessionEnded: self._on_session_ended,
            ev.AgentStderr: self._on_stderr,
            ev.ToolCallSeen: self._on_tool_call,
            ev.ClientToolCall: self._on_client_tool,
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
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    @property
    def attached(self) -> bool:
        return self._unsubscribe is not None

    def add_listener(self, callback: Listener) -> Callable[[], None]:
        """`callback(topic)` is called when a topic ("sessions", "decisions", "toolcalls")
        changed, at most once per topic every `coalesce` seconds. Returns a remover."""
        self._listeners.append(callback)

        def remove() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return remove

    def flush(self) -> None:
        """Tell the listeners now about everything changed since the last call."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        dirty = [t for t in TOPICS if t in self._dirty]
        self._dirty.clear()
        for topic in dirty:
            for callback in tuple(self._listeners):
                callback(topic)

    def _mark(self, topic: str) -> None:
        if topic in self._dirty:
            return
        self._dirty.add(topic)
        if self._timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a script, a unit test): nothing to coalesce with
            self.flush()
            return
        self._timer = loop.call_later(self.coalesce, self.flush)

    def handle(self, event: ev.Event) -> None:
        """Fold one event into the state (the bus subscriber; also used to replay files)."""
        handler = self._handlers.get(type(event))
        if handler is not None:
            self.events_seen += 1
            handler(event)

    # --- sessions --------------------------------------------------------------------------------

    def _seed_from_bridge(self) -> None:
        for conn_name, conn in list(getattr(self.bridge, "connections", {}).items()):
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
        # The committed list as the tracker now holds it (§2.4 step 5), rebuilt from what we saw.
        if kind == "commit":
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
        self._requests[_request_key(event.connection, event.request_id)] = record
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
        conn = (
            getattr(self.bridge, "connections", {}).get(rec.connection)
            if self.bridge is not None
            else None
        )
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
                self._requests.pop(_request_key(old.connection, old.request_id), None)

    def _on_part(self, event: ev.PartStreamed) -> None:
        record = self._requests.get(_request_key(event.connection, event.request_id))
        if record is None:
            return
        rec = self.sessions.get(record.key)
        if rec is None or not rec.decisions or rec.decisions[-1] is not record:
            return  # the tail of a superseded request: the tracker dropped it too
        prov = record.provisional
        part = event.part
        last = prov[-1] if prov else None
        if last is not None and _field(last, "role") == "assistant":
            if not (isinstance(last, dict) and last.get("_streamed")):
                last = {
                    "role": "assistant",
                    "content": list(_field(last, "content") or []),
                    "_streamed": True,
                }
                prov[-1] = last
            last["content"].append(part)
        else:
            prov.append({"role": "assistant", "content": [part], "_streamed": True})
        rec.version += 1
        self._mark("sessions")

    def _on_finished(self, event: ev.RequestFinished) -> None:
        record = self._requests.pop(_request_key(event.connection, event.request_id), None)
        if record is None:
            return
        record.outcome = event.outcome
        record.error = event.error
        record.finished_ts = event.ts
        _compact_streamed(record.provisional)
        rec = self.sessions.get(record.key)
        if rec is not None:
            if rec.active_request is not None and _request_key(
                "", rec.active_request
            ) == _request_key("", event.request_id):
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
        self._last_agent_entry.pop(rec.key, None)
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

    def _add_tool(self, key: tuple[Any, ...], entry: ToolEntry) -> ToolEntry:
        self.tools.add(key, entry)
        self._note_tool(entry)
        return entry

    def _note_tool(self, entry: ToolEntry) -> None:
        if entry.session_label not in self.tool_sessions and len(self.tool_sessions) < 10_000:
            self.tool_sessions[entry.session_label] = None
        if entry.kind and entry.kind not in self.tool_kinds:
            self.tool_kinds[entry.kind] = None
        if entry.status and entry.status not in self.tool_statuses:
            self.tool_statuses[entry.status] = None
        self._mark("toolcalls")

    def _update_tool(self, entry: ToolEntry, ts: float) -> None:
        entry.touch(ts)
        self.tools.changed(entry)
        self._note_tool(entry)

    def _on_tool_call(self, event: ev.ToolCallSeen) -> None:
        key = (event.connection, AGENT_SOURCE, event.session_id, event.tool_call_id)
        entry = self.tools.find(key)
        status = event.status or "pending"
        if entry is None:
            entry = self._add_tool(
                key,
                ToolEntry(
                    event.ts,
                    event.connection,
                    event.session_id,
                    AGENT_SOURCE,
                    event.tool_call_id,
                    event.title or "(untitled)",
                    event.kind or "other",
                    status,
                    event.raw_input,
                    event.content,
                ),
            )
        else:
            if event.title:
                entry.title = event.title
            if event.kind:
                entry.kind = event.kind
            entry.status = status
            if event.raw_input is not None:
                entry.input = event.raw_input
            if event.content is not None:
                entry.output = event.content
            self._update_tool(entry, event.ts)
        if status in FINISHED_STATUSES and entry.duration is None:
            entry.duration = max(0.0, event.ts - entry.ts)
        self._last_agent_entry[(event.connection, event.session_id)] = entry

    def _on_client_tool(self, event: ev.ClientToolCall) -> None:
        key = (event.connection, CLIENT_SOURCE, event.session_id, event.tool_call_id)
        entry = self.tools.find(key)
        if entry is None:
            entry = self._add_tool(
                key,
                ToolEntry(
                    event.ts,
                    event.connection,
                    event.session_id,
                    CLIENT_SOURCE,
                    event.tool_call_id,
                    event.tool_name,
                    "tool",
                    event.status,
                    event.arguments,
                    event.result,
                ),
            )
        else:
            entry.status = event.status
            if event.arguments is not None:
                entry.input = event.arguments
            if event.result is not None:
                entry.output = event.result
            self._update_tool(entry, event.ts)
        if event.status != "requested" and entry.duration is None:
            entry.duration = max(0.0, event.ts - entry.ts)

    def _on_approval_requested(self, event: ev.ApprovalRequested) -> None:
        call = event.tool_call or {}
        key = (event.connection, PERMISSION_SOURCE, event.approval_id)
        if self.tools.find(key) is None:
            entry = ToolEntry(
                event.ts,
                event.connection,
                event.session_id,
                PERMISSION_SOURCE,
                str(call.get("toolCallId") or ""),
                str(call.get("title") or "(untitled)"),
                str(call.get("kind") or "other"),
                "pending",
                call.get("rawInput"),
            )
            entry.detail = {
                "approval_id": event.approval_id,
                "agent": event.agent,
                "options": [o.get("optionId") for o in event.options if isinstance(o, dict)],
            }
            self._add_tool(key, entry)
        rec = self.sessions.get((event.connection, event.session_id))
        if rec is not None:
            rec.pending_approvals += 1
            rec.version += 1
            self._mark("sessions")

    def _on_approval_resolved(self, event: ev.ApprovalResolved) -> None:
        key = (event.connection, PERMISSION_SOURCE, event.approval_id)
        entry = self.tools.find(key)
        summary = f"{event.outcome} by {event.resolver}"
        if event.rule:
            summary += f" (rule {event.rule})"
        if event.reason:
            summary += f": {event.reason}"
        if entry is None:
            # Decided by policy before anyone was asked: no request event; name it after the
            # agent's latest tool call in that session, which is what it asked about.
            last = self._last_agent_entry.get((event.connection, event.session_id))
            entry = ToolEntry(
                event.ts,
                event.connection,
                event.session_id,
                PERMISSION_SOURCE,
                last.tool_call_id if last else "",
                last.title if last else "(policy)",
                last.kind if last else "other",
                event.outcome,
                last.input if last else None,
                summary,
            )
            entry.duration = 0.0
            entry.detail = {"approval_id": event.approval_id, "agent": event.agent}
            self._add_tool(key, entry)
        else:
            entry.status = event.outcome
            entry.output = summary
            entry.duration = max(0.0, event.ts - entry.ts)
            self._update_tool(entry, event.ts)
            rec = self.sessions.get((event.connection, event.session_id))
            if rec is not None and rec.pending_approvals:
                rec.pending_approvals -= 1
                rec.version += 1
                self._mark("sessions")
        entry.detail = dict(
            entry.detail or {},
            resolver=event.resolver,
            rule=event.rule,
            reason=event.reason,
            option_id=event.option_id,
        )

    # --- replaying files -------------------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **kwargs: Any) -> ConsoleState:
        """A state built by replaying a wire trace or a JSONL event log (raises OSError or
        ValueError when the file cannot be read or is neither)."""
        state = cls(None, name=os.fspath(path), **kwargs)
        kind = sniff_file(path)
        if kind == "trace":
            _load_trace(state, path)
        elif kind == "events":
            _load_event_log(state, path)
        else:
            raise ValueError(f"{os.fspath(path)}: neither a vscodelm trace nor a JSONL event log")
        for rec in state.sessions.values():
            if rec.ended is None and rec.decisions:  # it ran (a trace has no start events)
                rec.ready = True
        state.flush()
        return state

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


def format_clock(ts: float, millis: bool = False) -> str:
    """Local wall-clock time of a timestamp, HH:MM:SS (and .mmm)."""
    try:
        dt = datetime.fromtimestamp(ts)
    except (OverflowError, OSError, ValueError):
        return "--:--:--"
    text = dt.strftime("%H:%M:%S")
    return f"{text}.{dt.microsecond // 1000:03d}" if millis else text


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "…"
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.1f}s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


# --- replay --------------------------------------------------------------------------------------


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
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if rec.direction == "recv":
            if method == CHAT_METHOD and "id" in msg:
                step = next(steps, None)
                if step is None:
                    break
                ts = _parse_time(rec.time)
                if step.decision is None:
                    state.feed_error(conn, step.request_id, ts, step.error or "not routed")
                    continue
                messages = params.get("messages")
                state.feed_decision(
                    ev.HistoryDecided(
                        connection=conn,
                        request_id=step.request_id,
                        decision=step.decision.to_json(),
                        ts=ts,
                    ),
                    messages if isinstance(messages, list) else None,
                )
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
                    error=None if error is None else _compact_json(error),
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


def _load_event_log(state: ConsoleState, path: str | os.PathLike[str]) -> None:
    """Replay a JSONL event log: its requests re-routed by `bridge.trace.replay_event_log`, every
    other event folded in as the live console would have (session ids mapped to the replay's)."""
    from bridge.trace import read_event_log, replay_event_log

    junk: list[int] = []
    steps = replay_event_log(path, junk)
    pending = iter(steps)
    replayed: dict[tuple[str, Any], DecisionRecord] = {}
    live_to_replayed: dict[tuple[str, str], str] = {}
    for data in read_event_log(path):
        kind = data["type"]
        if kind == "request_received":
            step = next(pending, None)
            if step is None:
                continue
            conn = step.connection or str(data.get("connection") or "")
            ts = float(data.get("ts") or 0.0)
            if step.decision is None:
                state.feed_error(conn, step.request_id, ts, step.error or "not routed")
                continue
            messages = data.get("messages")
            recorded = step.recorded.get("kind") if isinstance(step.recorded, dict) else None
            record = state.feed_decision(
                ev.HistoryDecided(
                    connection=conn,
                    request_id=step.request_id,
                    decision=step.decision.to_json(),
                    ts=ts,
                ),
                messages if isinstance(messages, list) else None,
                recorded_kind=recorded,
            )
            replayed[_request_key(conn, step.request_id)] = record
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
            record = replayed.get(_request_key(event.connection, event.request_id))  # type: ignore[attr-defined]
            live_sid = event.decision.get("session_id")  # type: ignore[attr-defined]
            if record is not None and isinstance(live_sid, str):
                if record.recorded_kind is None and event.decision.get("kind") != record.kind:  # type: ignore[attr-defined]
                    record.recorded_kind = event.decision.get("kind")  # type: ignore[attr-defined]
                live_to_replayed[(event.connection, live_sid)] = record.session_id
            continue
        if kind in _SESSION_EVENTS and steps:
            sid = getattr(event, "session_id", None)
            mapped = live_to_replayed.get((event.connection, sid)) if isinstance(sid, str) else None
            if mapped is not None and mapped != sid:
                event = event.model_copy(update={"session_id": mapped})
        state.handle(event)
    if junk and junk[0]:
        state.notes.append(f"{junk[0]} unreadable line(s) skipped")
