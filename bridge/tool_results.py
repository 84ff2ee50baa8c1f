"""What a client tool's result looks like to the agent (fixes reference §8.2 B13).

VS Code sends a `tool_result`'s `result` as its result parts serialized by `JSON.stringify`, e.g.
`[{"$mid": 21, "value": "file contents"}]`. The agent should see the text, not that JSON.
"""

from __future__ import annotations

import json
from typing import Any


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        for key in ("value", "text"):
            if isinstance(part.get(key), str):
                return part[key]
    return None


def tool_result_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        texts = []
        for part in result:
            text = _part_text(part)
            texts.append(text if text is not None else json.dumps(part, ensure_ascii=False, separators=(",", ":")))
        return "\n".join(texts)
    if isinstance(result, dict):
        text = _part_text(result)
        if text is not None:
            return text
        content = result.get("content")
        if isinstance(content, list):
            return tool_result_text(content)
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
