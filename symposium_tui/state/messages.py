"""History messages as the console shows them, in either of their two shapes.

History messages come in two shapes: `bridge.protocol.Message` objects (from the live tracker)
and wire dicts (from decision events and replayed files). The panes only read them through
`message_parts`, so neither is ever converted into the other.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["agent_name", "compact_json", "field_of", "message_parts", "message_text"]


def field_of(obj: Any, name: str, default: Any = None) -> Any:
    """`obj[name]` for a wire dict, `obj.name` for a model object."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def message_parts(msg: Any) -> tuple[str, list[tuple[str, str]]]:
    """`(role, [(kind, text), ...])` for a message in either shape; runs of text parts merged.

    kind is "text", "tool_call" or "tool_result"; text is what a person reads for it.
    """
    role = str(field_of(msg, "role", "?"))
    out: list[tuple[str, str]] = []
    run: list[str] = []
    for part in field_of(msg, "content", None) or ():
        kind = field_of(part, "type")
        if kind == "text":
            run.append(str(field_of(part, "value", "")))
            continue
        if run:
            out.append(("text", "".join(run)))
            run = []
        if kind == "tool_call":
            params = compact_json(field_of(part, "parameters"))
            out.append(
                (
                    "tool_call",
                    f"{field_of(part, 'toolName', '?')}({params}) [{field_of(part, 'toolCallId', '')}]",
                )
            )
        elif kind == "tool_result":
            out.append(
                (
                    "tool_result",
                    f"[{field_of(part, 'toolCallId', '')}] {compact_json(field_of(part, 'result'))}",
                )
            )
        else:
            out.append(("text", compact_json(part if isinstance(part, dict) else repr(part))))
    if run:
        out.append(("text", "".join(run)))
    return role, out


def message_text(msg: Any) -> str:
    """The message as one string (used to find where two messages first differ)."""
    _role, parts = message_parts(msg)
    return "\n".join(text for _, text in parts)


def compact_json(value: Any) -> str:
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
