"""The text of a session's history and of a cancel's evidence (Rich `Text`, no widgets).

The history is shown as the tracker holds it: committed messages, then the provisional exchange
set apart. A cancel's evidence is the first mismatching message of each side, side by side.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text

from symposium_tui.state import message_parts, message_text

__all__ = ["render_evidence_side", "render_history"]

MAX_LINES_PER_MESSAGE = 6
MAX_MESSAGES_SHOWN = 200


def render_history(
    committed: list[Any],
    provisional: list[Any],
    styles: dict[str, Style],
    *,
    mark_index: int | None = None,
) -> Text:
    """The conversation as the tracker holds it: committed messages, then the provisional
    exchange under its own label, in italics, with a dotted gutter (readable without colour)."""
    out = Text()
    shown_committed = committed[-MAX_MESSAGES_SHOWN:]
    skipped = len(committed) - len(shown_committed)
    out.append(
        f"Committed · {len(committed)} message{'s' if len(committed) != 1 else ''}\n",
        style=styles.get("heading", Style(bold=True)),
    )
    if skipped:
        out.append(
            f"  … {skipped} earlier messages not shown\n", style=styles.get("muted", Style())
        )
    if not committed:
        out.append("  (nothing committed yet)\n", style=styles.get("muted", Style()))
    for i, msg in enumerate(shown_committed, start=skipped):
        _append_message(out, i, msg, "│", Style(), styles, mark=i == mark_index)
    prov_style = styles.get("provisional", Style(italic=True))
    out.append(
        f"Provisional · {len(provisional)} message{'s' if len(provisional) != 1 else ''} "
        "· not yet confirmed by the client\n",
        style=styles.get("provisional-heading", Style(italic=True, bold=True)),
    )
    if not provisional:
        out.append("  (no provisional exchange)\n", style=styles.get("muted", Style()))
    base = len(committed)
    for j, msg in enumerate(provisional):
        _append_message(out, base + j, msg, "┊", prov_style, styles, mark=base + j == mark_index)
    out.rstrip()
    return out


def _append_message(
    out: Text,
    index: int,
    msg: Any,
    gutter: str,
    style: Style,
    styles: dict[str, Style],
    *,
    mark: bool = False,
) -> None:
    role, parts = message_parts(msg)
    role_style = styles.get(f"role-{role}", Style(bold=True)) + style
    out.append(f"{index:>3} {gutter} ", style=styles.get("muted", Style()) + style)
    out.append(f"{role}", style=role_style + Style(bold=True))
    if mark:
        out.append("  ◀ first mismatch", style=styles.get("cancel", Style(bold=True)))
    out.append("\n")
    lines: list[tuple[str, str]] = []
    for kind, text in parts:
        for line in text.splitlines() or [""]:
            lines.append((kind, line))
    if not lines:
        lines = [("text", "(empty)")]
    for kind, line in lines[:MAX_LINES_PER_MESSAGE]:
        prefix = {"tool_call": "⚙ ", "tool_result": "↳ "}.get(kind, "")
        out.append(f"    {gutter} ", style=styles.get("muted", Style()) + style)
        out.append(prefix + line + "\n", style=style)
    if len(lines) > MAX_LINES_PER_MESSAGE:
        out.append(
            f"    {gutter} … {len(lines) - MAX_LINES_PER_MESSAGE} more lines\n",
            style=styles.get("muted", Style()) + style,
        )


def _first_difference(a: str, b: str) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def render_evidence_side(
    title: str, msg: Any, other: Any, styles: dict[str, Style], *, window: int = 400
) -> Text:
    """One side of a cancel's evidence: the message, with the text from the first character that
    differs from the other side marked (underlined and bold, so it shows without colour too)."""
    out = Text()
    out.append(title + "\n", style=styles.get("heading", Style(bold=True)))
    if msg is None:
        out.append(
            "(the request ended here: nothing in this place)",
            style=styles.get("muted", Style(italic=True)),
        )
        return out
    role, _ = message_parts(msg)
    out.append(f"role {role}\n", style=styles.get("muted", Style()))
    text = message_text(msg)
    other_text = message_text(other) if other is not None else ""
    if other is not None and role != message_parts(other)[0]:
        out.append(
            "(the roles differ)\n", style=styles.get("diff", Style(bold=True, underline=True))
        )
    at = _first_difference(text, other_text)
    start = max(0, at - window // 2)
    if start:
        out.append(f"…[{start} chars] ", style=styles.get("muted", Style()))
    out.append(text[start:at])
    rest = text[at : start + window]
    if rest:
        out.append(rest, style=styles.get("diff", Style(bold=True, underline=True)))
    elif at == len(text) and other is not None and len(other_text) > len(text):
        out.append("⟂ (ends here)", style=styles.get("diff", Style(bold=True, underline=True)))
    if len(text) > start + window:
        out.append(
            f" …[{len(text) - start - window} more chars]", style=styles.get("muted", Style())
        )
    return out
