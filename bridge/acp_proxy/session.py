"""What the ACP proxy remembers of one ACP session: only what the console shows and the approvals
need (the ACP client and its agent keep the conversation itself)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bridge.acp_updates import ToolCallTracker


@dataclass
class ProxySession:
    """What the proxy remembers of one ACP session: only what the console shows."""

    id: str
    cwd: str | None = None  # from session/new, load or resume: relative paths in rules resolve here
    turns: int = 0
    turn: str | None = None  # the running turn's event id (`<session>#<n>`)
    tools: ToolCallTracker = field(default_factory=ToolCallTracker)  # its calls not yet ended
    notices: list[str] = field(default_factory=list)  # denials, told at the next prompt


def prompt_text(blocks: Any) -> str:
    """A prompt's content blocks as the console shows the turn's question: text as it is, a
    resource or other block by its kind."""
    parts = []
    for block in blocks if isinstance(blocks, list) else ():
        if isinstance(block, dict):
            if block.get("type") == "text":
                parts.append(str(block.get("text") or ""))
            elif block.get("type") in ("resource_link", "resource"):
                uri = block.get("uri") or (block.get("resource") or {}).get("uri") or ""
                parts.append(f"[{block['type']} {uri}]")
            else:
                parts.append(f"[{block.get('type')}]")
    return "\n".join(parts)
