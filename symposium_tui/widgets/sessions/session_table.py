"""The table of every session of every connection.

It is updated by row key, Dolphie-style: changed cells, new rows, removed rows — never cleared and
refilled. Its columns fit the pane: the session and agent names give way first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from bridge.settings import agent_display_name
from symposium_tui.state import SessionRecord
from symposium_tui.widgets.fit import available_width, clip, fit_widths, natural_widths
from symposium_tui.widgets.sessions.common import KIND_WORDS, KeyedTable, kind_style, row_key

SESSION_COLUMNS = (
    ("Session", "session"),
    ("Agent", "agent"),
    ("State", "state"),
    ("Committed", "committed"),
    ("Prov.", "provisional"),
    ("Last decision", "last"),
)
SESSION_FLOORS = (10, 8, 9, 9, 5, 13)  # below these the table scrolls sideways


def session_row(rec: SessionRecord, styles: dict[str, Style], settings: Any) -> tuple[Any, ...]:
    """The cells of one session: its name, agent, state, message counts and last decision."""
    state_word = rec.state
    state_cell = Text(state_word, style=styles.get(f"state-{state_word}", Style()))
    last = rec.last_decision
    last_cell = (
        Text(KIND_WORDS.get(last.kind, last.kind), style=kind_style(last.kind, styles))
        if last is not None
        else Text("—")
    )
    return (
        rec.label,
        agent_display_name(rec.agent, settings),
        state_cell,
        str(len(rec.committed)),
        str(len(rec.provisional)),
        last_cell,
    )


class SessionTable(KeyedTable):
    """Sessions, one row each, keyed by connection and session id."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self._cells: dict[str, tuple[Any, ...]] = {}
        self._widths: list[int] | None = None

    def forget_cells(self) -> None:
        """Redraw every cell next time (the theme changed): the rows stay."""
        self._cells = dict.fromkeys(self._cells, ())

    def clear_rows(self) -> None:
        """Empty the table for another source."""
        self.clear()
        self._cells.clear()

    def show(
        self,
        sessions: Mapping[tuple[str, str], SessionRecord],
        styles: dict[str, Style],
        settings: Any,
    ) -> None:
        """Bring the rows to `sessions`, touching only the cells that changed."""
        since = self.update_count
        rows = {row_key(k): session_row(rec, styles, settings) for k, rec in sessions.items()}
        # Columns that fit the pane: the session and agent names give way first, with an
        # ellipsis, so that "Prov." and "Last decision" stay on an 80-column screen.
        natural = natural_widths([label for label, _ in SESSION_COLUMNS], rows.values())
        room = available_width(self, len(SESSION_COLUMNS))
        widths = natural if room is None else fit_widths(natural, room, SESSION_FLOORS)
        if widths != self._widths:
            self._widths = widths
            self.clear(columns=True)
            for (label, key), width in zip(SESSION_COLUMNS, widths):
                self.add_column(clip(label, width), key=key, width=width)
            self._cells.clear()
        for gone in [k for k in self._cells if k not in rows]:
            del self._cells[gone]
            try:
                self.remove_row(gone)
            except RowDoesNotExist:
                pass
        columns = [key for _, key in SESSION_COLUMNS]
        for key, row in rows.items():
            cells = tuple(clip(cell, width) for cell, width in zip(row, widths))
            old = self._cells.get(key)
            if old is None:
                self.add_row(*cells, key=key)
            elif old != cells:
                for column, new, was in zip(columns, cells, old or (None,) * len(cells)):
                    if new != was:
                        self.update_cell(key, column, new)
            self._cells[key] = cells
        self.drop_stale_drawing(since)

    def move_to_session(self, key: tuple[str, str]) -> None:
        """Put the cursor on a session's row without announcing it (the pane already knows)."""
        try:
            row = self.get_row_index(row_key(key))
        except RowDoesNotExist:
            return
        with self.prevent(DataTable.RowHighlighted):
            self.move_cursor(row=row, animate=False)
