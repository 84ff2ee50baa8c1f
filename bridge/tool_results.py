"""The client's own tools as the agent meets them: the MCP server's name, and what a client tool's
result looks like to the agent.

Upstream handed the agent a tool result as VS Code serialized it; here the agent gets its text.
VS Code sends a `tool_result`'s `result` as its result parts serialized by `JSON.stringify`, e.g.
`[{"$mid": 21, "value": "file contents"}]`. The agent should see the text, not that JSON.
Standard library only: the history replay and the sessions use it without the MCP SDK.
"""

from __future__ import annotations

import json
from typing import Any

#: The MCP server through which the agent calls the chat client's own tools (`bridge.tools`). Its
#: name shows in tool titles (`mcp__vscode_tools__…`) and in the notes the OpenAI door writes.
CLIENT_TOOL_SERVER = "vscode_tools"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _part_text(part: Any) -> str | None:
    """The text of one VS Code result part (`LanguageModelTextPart.toJSON()` and look-alikes)."""
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type") in (None, "text"):
        for key in ("value", "text"):
            value = part.get(key)
            if isinstance(value, str):
                return value
    return None


def tool_result_text(result: Any) -> str:
    """The text an agent should see for a `tool_result`'s `result` (upstream passed the JSON on:
    B13 in docs/upstream.md).

    A JSON string is itself; a list of result parts (`[{"$mid": 21, "value": "…"}]`, or
    `{"type": "text", "value"|"text": …}` parts) is their texts joined by newlines, non-text parts
    rendered as compact JSON; a single text part or a `{"content": [parts]}` object is read the
    same way; anything else is compact JSON.
    """
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        return "\n".join(
            text if (text := _part_text(p)) is not None else _compact(p) for p in result
        )
    if isinstance(result, dict):
        if (text := _part_text(result)) is not None:
            return text
        if isinstance(result.get("content"), list) and set(result) == {"content"}:
            return tool_result_text(result["content"])
    return _compact(result)


AGENT_ACTION_APPROVED = "Approved"
"""The one text the extension's `symposium-agent-action` tool returns, and only on approval
(the extension's `invoke()` runs only after the person approved). VS Code's Skip hands the caller a
canned text instead ("The user chose to skip the tool call, …"), which must not approve."""


def agent_action_approved(result: Any) -> bool:
    """Whether a `symposium-agent-action` tool result is the extension's approval: exactly one
    text part (`LanguageModelTextPart.toJSON()`, i.e. `{"$mid": n, "value": …}`, or a
    `{"type": "text", "value"|"text": …}` look-alike) whose text is exactly `Approved`. Anything
    else — Skip's text, an error, empty content, other text, another shape — is not approval."""
    if not isinstance(result, list) or len(result) != 1:
        return False
    part = result[0]
    if not isinstance(part, dict):
        return False
    return _part_text(part) == AGENT_ACTION_APPROVED


def describe_received(result: Any, limit: int = 300) -> str:
    """A bounded rendering of what the client sent, for the audit log."""
    text = _compact(result)
    return text if len(text) <= limit else text[: limit - 1] + "…"
