"""The tool-call log's side of the console's state: the bridge's tool-call, client-tool and
permission events folded into `ToolEntry` records in the log's store, and what the log's filters
offer: the sessions that have calls in the store, and the kinds and statuses seen so far."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from symposium_tui.state.formatting import decided_by
from symposium_tui.state.records import (
    AGENT_SOURCE,
    CLIENT_SOURCE,
    FINISHED_STATUSES,
    PERMISSION_SOURCE,
    ToolEntry,
)

if TYPE_CHECKING:
    from bridge import events as ev
    from symposium_tui.state.toolstore import ToolCallStore


class ToolLog:
    """Folds tool-call events into `store`, calling `changed()` whenever the log changed."""

    def __init__(self, store: ToolCallStore, changed: Callable[[], None]) -> None:
        self.store = store
        self._changed = changed
        # The session labels of the calls in the store, in the order they first came (one whose
        # calls have all been dropped leaves): no more than the store holds calls.
        self.sessions: dict[str, None] = {}
        self._calls_of: dict[str, int] = {}  # calls in the store, by session label
        store.on_drop = self._dropped
        self.kinds: dict[str, None] = {}
        self.statuses: dict[str, None] = {}
        self._last_agent_entry: dict[tuple[str, str], ToolEntry] = {}

    def session_ended(self, key: tuple[str, str]) -> None:
        """A session ended: a later permission of the same name is not named after its calls."""
        self._last_agent_entry.pop(key, None)

    def _add(self, key: tuple[Any, ...], entry: ToolEntry) -> ToolEntry:
        label = entry.session_label
        self._calls_of[label] = self._calls_of.get(label, 0) + 1
        self.sessions.setdefault(label, None)
        self.store.add(key, entry)
        self._note(entry)
        return entry

    def _dropped(self, entry: ToolEntry) -> None:
        label = entry.session_label
        left = self._calls_of.get(label, 0) - 1
        if left > 0:
            self._calls_of[label] = left
        else:
            self._calls_of.pop(label, None)
            self.sessions.pop(label, None)

    def _note(self, entry: ToolEntry) -> None:
        if entry.kind and entry.kind not in self.kinds:
            self.kinds[entry.kind] = None
        if entry.status and entry.status not in self.statuses:
            self.statuses[entry.status] = None
        self._changed()

    def _update(self, entry: ToolEntry, ts: float) -> None:
        entry.touch(ts)
        self.store.changed(entry)
        self._note(entry)

    def tool_call(self, event: ev.ToolCallSeen) -> None:
        key = (event.connection, AGENT_SOURCE, event.session_id, event.tool_call_id)
        entry = self.store.find(key)
        status = event.status or "pending"
        if entry is None:
            entry = self._add(
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
            self._update(entry, event.ts)
        if status in FINISHED_STATUSES and entry.duration is None:
            entry.duration = max(0.0, event.ts - entry.ts)
        self._last_agent_entry[(event.connection, event.session_id)] = entry

    def client_tool(self, event: ev.ClientToolCall) -> None:
        key = (event.connection, CLIENT_SOURCE, event.session_id, event.tool_call_id)
        entry = self.store.find(key)
        if entry is None:
            entry = self._add(
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
            self._update(entry, event.ts)
        if event.status != "requested" and entry.duration is None:
            entry.duration = max(0.0, event.ts - entry.ts)

    def approval_requested(self, event: ev.ApprovalRequested) -> None:
        call = event.tool_call or {}
        key = (event.connection, PERMISSION_SOURCE, event.approval_id)
        if self.store.find(key) is None:
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
            self._add(key, entry)

    def approval_resolved(self, event: ev.ApprovalResolved) -> bool:
        """The permission's entry settled; True when it was asked (it had a request event)."""
        key = (event.connection, PERMISSION_SOURCE, event.approval_id)
        entry = self.store.find(key)
        summary = f"{event.outcome} {decided_by(event.resolver, event.rule, event.by)}"
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
            self._add(key, entry)
            asked = False
        else:
            entry.status = event.outcome
            entry.output = summary
            entry.duration = max(0.0, event.ts - entry.ts)
            self._update(entry, event.ts)
            asked = True
        entry.detail = dict(
            entry.detail or {},
            resolver=event.resolver,
            rule=event.rule,
            reason=event.reason,
            option_id=event.option_id,
        )
        return asked
