"""The one reader of ACP `session/update`s, for every front door.

An update arrives as the SDK's model (the stateless doors' sessions, `bridge.sessions`) or as the
JSON object it came in (the ACP front door, `bridge.acp_proxy`, which forwards it unchanged);
`read_update` takes either and says what it means in the core's terms: the agent's text, a tool
call started or changed (rendered anew as response text, status icon and fenced content), the
context usage. `record_tool` turns a tool call's reading into the core's records: the console's
`ToolCallSeen` event and, when an approved call ends, its `tool_outcome` line in the audit log.

Pure but for `record_tool`, and free of the SDK's import (it reads attributes or keys).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bridge import events as ev

if TYPE_CHECKING:
    from bridge.approvals import ApprovalBroker

FENCE = "`" * 10
STATUS_ICONS = {
    "pending": "\u23f3",
    "in_progress": "\u2699\ufe0f",
    "completed": "\u2705",
    "failed": "\u274c",
}
OTHER_ICON = "\u2022"


def _get(obj: Any, name: str, alias: str | None = None) -> Any:
    if isinstance(obj, dict):
        if name in obj:
            return obj[name]
        return obj.get(alias) if alias else None
    return getattr(obj, name, None)


def content_block_text(block: Any) -> str:
    """An ACP content block as text: its text, or a short placeholder naming what it is."""
    kind = _get(block, "type")
    if kind == "text":
        return _get(block, "text") or ""
    if kind == "image":
        return f"[Image: {_get(block, 'mime_type', 'mimeType')}]"
    if kind == "audio":
        return f"[Audio: {_get(block, 'mime_type', 'mimeType')}]"
    if kind == "resource_link":
        return _get(block, "uri") or ""
    if kind == "resource":
        resource = _get(block, "resource")
        return (_get(resource, "uri") or "") if resource is not None else ""
    return "[Unknown content type]"


def tool_content_text(item: Any) -> str:
    kind = _get(item, "type")
    if kind == "content":
        return content_block_text(_get(item, "content"))
    if kind == "diff":
        path = _get(item, "path")
        return f"--- {path}\n+++ {path}\n{_get(item, 'new_text', 'newText') or ''}"
    if kind == "terminal":
        return f"[Terminal: {_get(item, 'terminal_id', 'terminalId')}]"
    return "[Unknown content]"


@dataclass
class ToolCallState:
    title: str = ""
    status: str | None = None
    content: list[str] = field(default_factory=list)
    kind: str | None = None
    raw_input: Any = None

    def render(self) -> str:
        icon = STATUS_ICONS.get(self.status or "", OTHER_ICON)
        out = f"{icon} **{self.title}**\n"
        if self.content:
            body = "".join(self.content)
            if not body.endswith("\n"):
                body += "\n"
            out += f"{FENCE}\n{body}{FENCE}\n"
        return out


class ToolCallTracker:
    """The tool calls seen so far (a turn's, or an ACP session's), rendered anew on every change."""

    def __init__(self) -> None:
        self.calls: dict[str, ToolCallState] = {}

    def start(self, update: Any) -> tuple[ToolCallState, str]:
        state = ToolCallState(
            title=_get(update, "title") or "",
            status=_status(update),
            content=[tool_content_text(c) for c in (_get(update, "content") or ())],
            kind=_kind(update),
            raw_input=_get(update, "raw_input", "rawInput"),
        )
        self.calls[_get(update, "tool_call_id", "toolCallId")] = state
        return state, state.render()

    def update(self, update: Any) -> tuple[ToolCallState, str] | None:
        state = self.calls.get(_get(update, "tool_call_id", "toolCallId"))
        if state is None:
            return None
        title = _get(update, "title")
        if title is not None:
            state.title = title
        status = _status(update)
        if status is not None:
            state.status = status
        content = _get(update, "content")
        if content is not None:
            state.content = [tool_content_text(c) for c in content]
        kind = _kind(update)
        if kind is not None:
            state.kind = kind
        raw_input = _get(update, "raw_input", "rawInput")
        if raw_input is not None:
            state.raw_input = raw_input
        return state, state.render()

    def clear(self) -> None:
        self.calls.clear()


def _status(update: Any) -> str | None:
    status = _get(update, "status")
    value: str | None = getattr(status, "value", status)
    return value


def _kind(update: Any) -> str | None:
    kind = _get(update, "kind")
    value: str | None = getattr(kind, "value", kind)
    return value


FINISHED = ("completed", "failed")


@dataclass
class Reading:
    """What one `session/update` says. `kind` is its `sessionUpdate`; the other fields are set
    for the kinds they belong to."""

    kind: str
    text: str = ""  # agent_message_chunk: the chunk's text
    tool_call_id: str | None = None  # tool_call / tool_call_update of a known call
    tool: ToolCallState | None = None  # that call's state after this update
    rendered: str = ""  # that call rendered anew for the response text
    context_tokens: int | None = None  # usage_update: the context window in use

    @property
    def finished(self) -> bool:
        """A tool call that has ended (completed or failed) as of this update."""
        return self.tool is not None and self.tool.status in FINISHED


def read_update(update: Any, tools: ToolCallTracker) -> Reading | None:
    """One update (an SDK model or its JSON object), read against the tool calls seen so far
    (`tools`, which it updates). None for what is not an update; an update of a tool call never
    announced changes nothing."""
    kind = _get(update, "session_update", "sessionUpdate")
    if not isinstance(kind, str):
        return None
    reading = Reading(kind)
    if kind == "agent_message_chunk":
        reading.text = content_block_text(_get(update, "content"))
    elif kind == "tool_call":
        reading.tool, reading.rendered = tools.start(update)
        reading.tool_call_id = str(_get(update, "tool_call_id", "toolCallId"))
    elif kind == "tool_call_update":
        changed = tools.update(update)
        if changed is not None:
            reading.tool, reading.rendered = changed
            reading.tool_call_id = str(_get(update, "tool_call_id", "toolCallId"))
    elif kind == "usage_update":
        used = _get(update, "used")
        reading.context_tokens = used if isinstance(used, int) else None
    return reading


def record_tool(
    reading: Reading,
    *,
    connection: str,
    session_id: str,
    bus: ev.EventBus,
    approvals: ApprovalBroker,
) -> None:
    """A tool call's reading into the core's records: the console's event, and the outcome of
    an approved call next to its decision in the audit log."""
    state, call_id = reading.tool, reading.tool_call_id
    if state is None or call_id is None:
        return
    bus.publish(
        lambda: ev.ToolCallSeen(
            connection=connection,
            session_id=session_id,
            tool_call_id=call_id,
            title=state.title,
            kind=state.kind,
            status=state.status,
            raw_input=state.raw_input,
            content="".join(state.content) or None,
        )
    )
    if reading.finished and reading.kind == "tool_call_update":
        seen = {"title": state.title, "kind": state.kind, "rawInput": state.raw_input}
        approvals.tool_outcome(connection, session_id, call_id, str(state.status), seen)
