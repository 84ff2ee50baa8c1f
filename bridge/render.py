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
    value: str | None = getattr(status, "value", status)
    return value


def _kind(update: Any) -> str | None:
    kind = _get(update, "kind")
    value: str | None = getattr(kind, "value", kind)
    return value


# --- prompts -----------------------------------------------------------------------------------


def user_text(message: Message) -> str:
    return "".join(p.value for p in message.content if isinstance(p, TextPart))


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

#: What the agent is prompted with when a request brings nothing it has not seen (a re-sent
#: transcript, a history ending with an assistant message): never a silent empty answer.
CONTINUE_PROMPT = "[Continue the conversation from where it stopped.]"
AFTER_RESULTS = "[Continue from the tool results above.]"


def _tool_names(messages: list[Message]) -> dict[str, str]:
    return {
        part.toolCallId: part.toolName
        for m in messages
        for part in m.content
        if isinstance(part, ToolCallPart)
    }


def _call_line(speaker: str, part: ToolCallPart) -> str:
    if part.toolName == AGENT_ACTION_TOOL:
        title = (part.parameters or {}).get("title") if isinstance(part.parameters, dict) else None
        return f"{speaker} asked permission to run: {title or 'an action'}"
    return f"{speaker} called tool {part.toolName} (call {part.toolCallId}) with {_compact(part.parameters)}"


def _result_line(part: ToolResultPart, names: dict[str, str], result_text: Any) -> str:
    name = names.get(part.toolCallId, part.toolCallId)
    if name == AGENT_ACTION_TOOL:
        return "User approved the action."
    return f"Tool {name} (call {part.toolCallId}) returned: {_compact(result_text(part.result))}"


def _result_text_fn(result_text: Any) -> Any:
    if result_text is None:
        from bridge.tool_results import tool_result_text

        return tool_result_text
    return result_text


def turn_prompt(
    messages: list[Message], history: list[Message] | None = None, result_text: Any = None
) -> str:
    """The prompt for `messages`, which the agent has not received, in a session that holds the
    rest of the conversation. The user's text as it is (upstream's prompt, reference §3.2, when
    that is all there is); tool calls the client made and tool results nobody waits for any more
    (a client-built history, a model switch mid-loop, a handoff, a regenerate after a tool round)
    as transcript lines, followed by a request to continue from them. Never empty: a request with
    nothing new still prompts the agent to continue (never an empty success)."""
    if len(messages) == 1 and messages[0].role != "assistant":  # the usual case: one user message
        content = messages[0].content
        if len(content) == 1 and isinstance(content[0], TextPart) and content[0].value:
            return content[0].value
    result_text = _result_text_fn(result_text)
    names: dict[str, str] | None = None  # tool names by call id, made only when a result needs one
    lines: list[str] = []
    texts = 0
    results = 0
    for message in messages:
        assistant = message.role == "assistant"
        for part in message.content:
            if isinstance(part, TextPart):
                if part.value and not assistant:
                    lines.append(part.value)
                    texts += 1
            elif isinstance(part, ToolCallPart):
                lines.append(_call_line("Assistant" if assistant else "User", part))
            elif isinstance(part, ToolResultPart):
                if names is None:
                    names = _tool_names(history or []) | _tool_names(messages)
                lines.append(_result_line(part, names, result_text))
                results += 1
    if not lines:
        return CONTINUE_PROMPT
    if not texts:
        lines.append(AFTER_RESULTS if results else CONTINUE_PROMPT)
    return "\n".join(lines)


def replay_parts(messages: list[Message], result_text: Any = None) -> tuple[str | None, str]:
    """The first prompt of a new session that joins a conversation already under way (decision 7):
    the earlier turns as a transcript — user and assistant text, tool calls and their results —
    and, separately, the current request (`turn_prompt` of the trailing run of user messages). None
    for the transcript when there are no earlier turns. The session sends them as two content
    blocks, the transcript marked with `_meta` `{"symposium": {"replay": true}}` so an agent can
    tell context from request."""
    earlier, current = split_current_turn(messages)
    result_text = _result_text_fn(result_text)
    if not earlier:
        return None, turn_prompt(current, None, result_text)
    names = _tool_names(earlier)
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
                lines.append(_call_line(speaker, part))
            elif isinstance(part, ToolResultPart):
                lines.append(_result_line(part, names, result_text))
    lines += ["", "[End of the replayed conversation.]"]
    return "\n".join(lines), turn_prompt(current, earlier, result_text)
