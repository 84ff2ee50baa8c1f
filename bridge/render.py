"""Text renderings: ACP updates → response text (reference §3.3), client history → agent prompt.

Pure functions over plain data; no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bridge.protocol import Message, TextPart, ToolCallPart, ToolResultPart

FENCE = "`" * 10
STATUS_ICONS = {
    "pending": "\u23f3",
    "in_progress": "\u2699\ufe0f",
    "completed": "\u2705",
    "failed": "\u274c",
}
OTHER_ICON = "\u2022"
AGENT_ACTION_TOOL = "symposium-agent-action"


def _get(obj: Any, name: str, alias: str | None = None) -> Any:
    if isinstance(obj, dict):
        if name in obj:
            return obj[name]
        return obj.get(alias) if alias else None
    return getattr(obj, name, None)


def content_block_text(block: Any) -> str:
    """An ACP content block as text (reference §3.3)."""
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
    """Tool calls seen in the current turn, rendered anew on every change (reference §3.3)."""

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
    return getattr(status, "value", status)


def _kind(update: Any) -> str | None:
    kind = _get(update, "kind")
    return getattr(kind, "value", kind)


# --- prompts -----------------------------------------------------------------------------------


def user_text(message: Message) -> str:
    return "".join(p.value for p in message.content if isinstance(p, TextPart))


def user_prompt(messages: list[Message]) -> str:
    """Upstream's prompt (reference §3.2): each user message's text, joined with newlines.

    Messages that carry no text (a tool-result-only message) are left out rather than adding an
    empty line.
    """
    texts = [user_text(m) for m in messages if m.role == "user"]
    return "\n".join(t for t in texts if t)


def _compact(value: Any, limit: int = 4000) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    )
    if len(text) > limit:
        text = text[: limit // 2] + " … " + text[-limit // 2 :]
    return text


def split_current_turn(messages: list[Message]) -> tuple[list[Message], list[Message]]:
    """Earlier turns and the trailing run of user messages that forms the current request."""
    i = len(messages)
    while i > 0 and messages[i - 1].role == "user":
        i -= 1
    return messages[:i], messages[i:]


REPLAY_META = {"symposium": {"replay": True}}


def replay_parts(messages: list[Message], result_text: Any = None) -> tuple[str | None, str]:
    """The first prompt of a new session that joins a conversation already under way (decision 7):
    the earlier turns as a transcript — user and assistant text, tool calls and their results —
    and, separately, the current request's text. None for the transcript when there are no
    earlier turns. The session sends them as two content blocks, the transcript marked with
    `_meta` `{"symposium": {"replay": true}}` so an agent can tell context from request."""
    earlier, current = split_current_turn(messages)
    if not earlier:
        return None, user_prompt(current)
    if result_text is None:
        from bridge.tool_results import tool_result_text as result_text  # noqa: N813
    names: dict[str, str] = {}
    lines = [
        "[The conversation so far, replayed because this agent session is new. Continue from it.]",
        "",
    ]
    for message in earlier:
        speaker = "Assistant" if message.role == "assistant" else "User"
        for part in message.content:
            if isinstance(part, TextPart):
                if part.value:
                    lines.append(f"{speaker}: {part.value}")
            elif isinstance(part, ToolCallPart):
                names[part.toolCallId] = part.toolName
                if part.toolName == AGENT_ACTION_TOOL:
                    title = (
                        (part.parameters or {}).get("title")
                        if isinstance(part.parameters, dict)
                        else None
                    )
                    lines.append(f"{speaker} asked permission to run: {title or 'an action'}")
                else:
                    lines.append(
                        f"{speaker} called tool {part.toolName} with {_compact(part.parameters)}"
                    )
            elif isinstance(part, ToolResultPart):
                name = names.get(part.toolCallId, part.toolCallId)
                if name == AGENT_ACTION_TOOL:
                    lines.append("User approved the action.")
                else:
                    lines.append(f"Tool {name} returned: {_compact(result_text(part.result))}")
    lines += ["", "[End of the replayed conversation.]"]
    return "\n".join(lines), user_prompt(current)


def replay_prompt(messages: list[Message], result_text: Any = None) -> str:
    """`replay_parts` as one text."""
    context, current = replay_parts(messages, result_text)
    return f"{context}\n\n{current}" if context else current
