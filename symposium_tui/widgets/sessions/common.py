"""What the sessions views share: the words for each kind of decision, row keys, short labels."""

from __future__ import annotations

import json
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

KIND_WORDS = {
    "new_session": "new session",
    "continue": "continue",
    "commit": "commit",
    "cancel": "cancel",
    "error": "error",
    "turn": "ACP turn",  # the ACP front door: the client keeps its session, no decision to make
}


def kind_style(kind: str, styles: dict[str, Style]) -> Style:
    return styles.get(kind, Style())


def set_text(widget: Static, text: Text, *, layout: bool = True) -> None:
    """Update a Static only when what it shows changed (a layout pass costs the whole screen)."""
    if getattr(widget, "_symposium_text", None) == text:
        return
    widget._symposium_text = text  # type: ignore[attr-defined]  # what it shows, cached on the widget
    widget.update(text, layout=layout)


def row_key(key: tuple[str, str]) -> str:
    return f"{key[0]}\x1f{key[1]}"


def key_from_row(value: Any) -> tuple[str, str] | None:
    if not isinstance(value, str) or "\x1f" not in value:
        return None
    conn, sid = value.split("\x1f", 1)
    return (conn, sid)


def short_label(label: str, width: int = 14) -> str:
    return label if len(label) <= width else "…" + label[-(width - 1) :]


def short_path(path: str, width: int = 40) -> str:
    return path if len(path) <= width else "…" + path[-(width - 1) :]


def json_id(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
