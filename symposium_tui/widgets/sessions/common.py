"""What the sessions views share: the words for each kind of decision, row keys, short labels, and
the table they are drawn in."""

from __future__ import annotations

import json
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.widgets import DataTable, Static

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


class KeyedTable(DataTable[Any]):
    """A `DataTable` brought up to date in place, by row key, several times a second.

    A DataTable keys what it has drawn (cells, row lines, screen lines, row renderables) by its
    update count, which every added, removed or changed cell moves on. What was drawn at an earlier
    count is never read again, yet it stays until the caches' own bounds push it out (10,000 cells,
    1,000 lines and rows): about 10 MB held for nothing, still filling minutes after the table
    was first shown. A subclass calls `drop_stale_drawing(count)` with the count it started an
    update at; when the update changed anything, what was drawn before it is dropped, so the
    caches hold only what the frames since the last change drew.
    """

    STALE_CACHES = (
        "_cell_render_cache",
        "_row_render_cache",
        "_line_cache",
        "_row_renderable_cache",
    )
    """The DataTable caches whose keys hold the update count."""

    @property
    def update_count(self) -> int:
        """Moves on whenever a row or cell is added, removed or changed."""
        return self._update_count

    def drop_stale_drawing(self, since: int) -> None:
        """Forget what was drawn before the rows changed (if they changed since `since`)."""
        if self._update_count == since:
            return
        for name in self.STALE_CACHES:
            getattr(self, name).clear()


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
