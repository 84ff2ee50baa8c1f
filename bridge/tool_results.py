"""What a client tool's result looks like to the agent (fixes reference §8.2 B13).

VS Code sends a `tool_result`'s `result` as its result parts serialized by `JSON.stringify`, e.g.
`[{"$mid": 21, "value": "file contents"}]`. The agent should see the text, not that JSON.
Standard library only: the history replay and the sessions use it without the MCP SDK.
"""

from __future__ import annotations

import json
from typing import Any


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _part_text(part: Any) -> str | None:
    """The text of one VS Code result part (`LanguageModelTextPart.toJSON()` and look-alikes)."""
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type") in (None, "text"):
        for key in ("value", "text"):
            if isinstance(part.get(key), str):
                return part[key]
    return None


def tool_result_text(result: Any) -> str:
    """The text an agent should see for a `tool_result`'s `result` (fixes §8.2 B13).

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
