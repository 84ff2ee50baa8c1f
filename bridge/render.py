"""Text renderings: client history → agent prompt. (ACP updates are read by
`bridge.acp_updates`, which renders tool calls into response text.)

Pure functions over plain data; no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from bridge.protocol import Message, TextPart, ToolCallPart, ToolResultPart

AGENT_ACTION_TOOL = "symposium-agent-action"


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
    rest of the conversation. The user's text as it is (upstream's prompt, when
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
