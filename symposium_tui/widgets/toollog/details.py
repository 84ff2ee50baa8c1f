"""The details of one tool call, as the details panel shows them: what it was, who decided it,
its input and its output."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

from symposium_tui.state import (
    ToolEntry,
    format_clock,
    format_duration,
)


def describe_entry(entry: ToolEntry) -> Text:
    """The details of one tool call: what it was, its input and its output."""
    text = Text()
    text.append(entry.title, style="bold")
    text.append(f"\n{entry.source} tool call · kind {entry.kind} · status ")
    text.append(entry.status, style="bold")
    text.append(f"\nsession {entry.session_label} · id {entry.tool_call_id or '—'}")
    text.append(f"\nstarted {format_clock(entry.ts, millis=True)}")
    if entry.finished:
        text.append(f" · took {format_duration(entry.duration)}")
    else:
        text.append(" · still running")
    if entry.detail:
        extra = {k: v for k, v in entry.detail.items() if v not in (None, "", [])}
        resolver, rule = extra.pop("resolver", None), extra.pop("rule", None)
        if resolver is not None:
            extra["decided"] = _decided(str(resolver), rule)
        if extra:
            text.append("\n" + " · ".join(f"{k} {v}" for k, v in extra.items()))
    text.append("\n\nInput\n", style="bold underline")
    text.append(_pretty(entry.input) or "(none)")
    text.append("\n\nOutput\n", style="bold underline")
    text.append(
        _pretty(entry.output) or "(none yet)"
        if not entry.finished
        else _pretty(entry.output) or "(none)"
    )
    return text


def _decided(resolver: str, rule: Any) -> str:
    """Who settled a permission, a rule told from a person: `by rule 2 (line 9): deny
    command=rm` (the whole rule, as the audit log names it), `by a person (you@host)`."""
    from symposium_tui.state.formatting import decided_by

    rule = str(rule) if rule else None
    if resolver == "policy" and rule and rule.startswith("rule"):
        return f"by {rule}"
    if resolver == "console" and rule and rule.startswith("answered by "):
        return decided_by(resolver, None, rule.removeprefix("answered by "))
    return decided_by(resolver, rule)


def _pretty(value: Any, limit: int = 20_000) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        out = value
    else:
        try:
            out = json.dumps(value, indent=2, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            out = repr(value)
    return out if len(out) <= limit else out[:limit] + f"\n… ({len(out) - limit} more characters)"
