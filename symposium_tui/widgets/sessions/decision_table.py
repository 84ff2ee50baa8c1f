"""The timeline of history decisions: one session's, or every session's (with a Session column).

Each row is a decision marked new session / continue / commit / cancel with its request's outcome;
rows are added and updated by key, never cleared and refilled while the scope stays the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.widgets.data_table import RowDoesNotExist

from symposium_tui.state import DecisionRecord, session_name
from symposium_tui.widgets.sessions.common import KIND_WORDS, KeyedTable, kind_style, short_label

SESSION_SCOPE_COLUMNS = (("#", "index"), ("Decision", "kind"), ("Outcome", "outcome"))
ALL_SCOPE_COLUMNS = (
    ("#", "index"),
    ("Session", "session"),
    ("Decision", "kind"),
    ("Outcome", "outcome"),
)


def decision_row(
    record: DecisionRecord, styles: dict[str, Style], *, all_sessions: bool
) -> tuple[Any, ...]:
    """The cells of one decision: its number, (its session,) its kind and its outcome."""
    kind = Text(KIND_WORDS.get(record.kind, record.kind), style=kind_style(record.kind, styles))
    if record.recorded_kind:
        kind.append(" *", style=styles.get("error", Style(bold=True)))
    outcome = record.outcome or "…"
    if record.stop_reason and record.stop_reason not in ("end_turn", "cancelled"):
        outcome = f"{outcome}: {record.stop_reason}"
    outcome_cell = Text(
        outcome,
        style=styles.get("error", Style())
        if outcome == "error"
        else styles.get("muted", Style())
        if outcome == "cancelled"
        else Style(),
    )
    if all_sessions:
        return (
            str(record.index),
            short_label(session_name(record.connection, record.session_id), 14),
            kind,
            outcome_cell,
        )
    return (str(record.index), kind, outcome_cell)


def record_for_row(decisions: Sequence[DecisionRecord], value: Any) -> DecisionRecord | None:
    """The decision a row key names (its index), if it is still kept."""
    try:
        index = int(value)
    except (TypeError, ValueError):
        return None
    if not decisions:
        return None
    # Timeline indexes are consecutive among kept decisions.
    pos = index - decisions[0].index
    if 0 <= pos < len(decisions) and decisions[pos].index == index:
        return decisions[pos]
    for record in decisions:
        if record.index == index:
            return record
    return None


class DecisionTable(KeyedTable):
    """Decisions, one row each, keyed by the decision's index."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, cursor_type="row")
        self._cells: dict[str, tuple[Any, ...]] = {}
        self.scope: Any = None
        """What the rows are of: `("all",)` or `("session", key, state id)`; None: set it again."""
        self.all_sessions = False

    def set_scope(self, scope: Any, *, all_sessions: bool) -> None:
        """Start again with the columns of a scope (every session's decisions, or one's)."""
        self.clear(columns=True)
        self.all_sessions = all_sessions
        for label, key in ALL_SCOPE_COLUMNS if all_sessions else SESSION_SCOPE_COLUMNS:
            self.add_column(label, key=key)
        self._cells.clear()
        self.scope = scope

    def forget_cells(self) -> None:
        """Redraw every cell next time (the theme changed): the rows stay."""
        self._cells = dict.fromkeys(self._cells, ())

    def shows(self, record: DecisionRecord) -> bool:
        return str(record.index) in self._cells

    def show(self, records: Sequence[DecisionRecord], styles: dict[str, Style]) -> bool:
        """Bring the rows to `records`, touching only the cells that changed; True if a row was
        added."""
        since = self.update_count
        wanted = {str(r.index): r for r in records}
        for gone in [k for k in self._cells if k not in wanted]:
            del self._cells[gone]
            try:
                self.remove_row(gone)
            except RowDoesNotExist:
                pass
        added = False
        columns = [
            key for _, key in (ALL_SCOPE_COLUMNS if self.all_sessions else SESSION_SCOPE_COLUMNS)
        ]
        for key, record in wanted.items():
            cells = decision_row(record, styles, all_sessions=self.all_sessions)
            old = self._cells.get(key)
            if old is None:
                self.add_row(*cells, key=key)
                added = True
            elif old != cells:
                for column, new, was in zip(columns, cells, old or (None,) * len(cells)):
                    if new != was:
                        self.update_cell(key, column, new)
            self._cells[key] = cells
        self.drop_stale_drawing(since)
        return added
