"""The sessions and history inspector: the pane that lays out its views and follows the selection.

Top: every session of every connection (`session_table.py`). Bottom left: the timeline of history
decisions of the selected session (or of all sessions, `a`; `decision_table.py`). Bottom right: the
selected session's history as it was at the selected decision, and that decision's evidence
(`detail.py`).

`[` and `]` scrub back and forward through the decisions; the history shown is the one recorded at
each (the state keeps a snapshot per decision). `o` opens a wire trace or JSONL event log
(`file_bar.py`) and shows its replayed decisions the same way; `c` goes back to the live bridge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.widgets import DataTable, Input, Static

from symposium_tui.state import ConsoleState, DecisionRecord, session_name
from symposium_tui.widgets.sessions.common import key_from_row, row_key, set_text, short_path
from symposium_tui.widgets.sessions.decision_table import DecisionTable, record_for_row
from symposium_tui.widgets.sessions.detail import DecisionDetail
from symposium_tui.widgets.sessions.file_bar import FileBar, SourceLine
from symposium_tui.widgets.sessions.session_table import SessionTable
from symposium_tui.widgets.state_pane import StatePane

if TYPE_CHECKING:
    from bridge.core import Bridge

__all__ = ["SessionsPane"]


class SessionsPane(StatePane):
    """Sessions, their history and the decisions that shaped it; live or replayed from a file."""

    SHOWS = ("sessions", "decisions")
    BINDINGS = [
        Binding("left_square_bracket", "scrub(-1)", "Earlier", tooltip="The decision before"),
        Binding("right_square_bracket", "scrub(1)", "Later", tooltip="The decision after"),
        Binding(
            "a",
            "toggle_all",
            "All/this session",
            tooltip="Every session's decisions, or this one's",
        ),
        Binding("o", "open_file", "Open trace", tooltip="Replay an event log file"),
        Binding("c", "close_file", "Live", tooltip="Back to the live bridge (after o)"),
        Binding("escape", "cancel_open", "Cancel", show=False, tooltip="Close the open-a-file bar"),
    ]

    state: var[ConsoleState] = var(cast("ConsoleState", None), init=False, bindings=True)
    """The source shown: the live bridge's state, or one replayed from a file ("Live" goes back)."""

    all_sessions: var[bool] = var(False, init=False)
    """The timeline shows every session's decisions, not only the selected session's."""

    file_bar_open: var[bool] = var(False, init=False, bindings=True)
    """The open-a-file bar is shown (Esc closes it)."""

    COMPONENT_CLASSES = {
        "sessions--heading",
        "sessions--muted",
        "sessions--provisional",
        "sessions--provisional-heading",
        "sessions--new_session",
        "sessions--continue",
        "sessions--commit",
        "sessions--cancel",
        "sessions--error",
        "sessions--diff",
        "sessions--role-user",
        "sessions--role-assistant",
        "sessions--state-ended",
        "sessions--state-streaming",
        "sessions--state-approval",
    }

    DEFAULT_CSS = """
    SessionsPane {
        height: 1fr;
        layout: vertical;
        & > .sessions--heading { text-style: bold; color: $text-primary; }
        & > .sessions--muted { color: $text-muted; }
        & > .sessions--provisional { color: $text-warning; text-style: italic; }
        & > .sessions--provisional-heading { color: $text-warning; text-style: bold italic; }
        & > .sessions--new_session { color: $text-accent; text-style: bold; }
        & > .sessions--continue { color: $foreground; }
        & > .sessions--commit { color: $text-success; text-style: bold; }
        & > .sessions--cancel { color: $text-error; text-style: bold reverse; }
        & > .sessions--error { color: $text-error; text-style: bold; }
        & > .sessions--diff { color: $text-error; text-style: bold underline; }
        & > .sessions--role-user { color: $text-secondary; }
        & > .sessions--role-assistant { color: $text-primary; }
        & > .sessions--state-ended { color: $text-muted; text-style: italic; }
        & > .sessions--state-streaming { color: $text-success; }
        & > .sessions--state-approval { color: $text-warning; text-style: bold; }

        #sessions-top { dock: top; height: auto; }
        #sessions-source { height: 1; background: $panel; color: $foreground; padding: 0 1; }
        #sessions-table { height: 7; }
        #sessions-bar { height: 1; background: $panel; }
        #sessions-bar Static { width: 1fr; padding: 0 1; }
        #sessions-bar #sessions-timeline-title { width: 32; }
        #sessions-bar.-all #sessions-timeline-title { width: 46; }
        #sessions-bottom { height: 1fr; }
        #decisions-table { width: 32; height: 1fr; }
        #sessions-bottom.-all #decisions-table { width: 46; }
        #sessions-detail { width: 1fr; height: 1fr; padding: 0 1; }
        #sessions-detail:focus { background: $boost; }
        &.-no-color DataTable > .datatable--cursor { text-style: bold reverse; }
    }
    """

    def __init__(
        self,
        state: ConsoleState,
        bridge: Bridge | None = None,
        *,
        id: str | None = None,  # noqa: A002
        classes: str | None = None,
    ) -> None:
        super().__init__(state, id=id, classes=classes)
        self.bridge = bridge
        self.selected_key: tuple[str, str] | None = None
        # The decision looked at (scrubbed back to); None: the latest of the selected session.
        self.as_of: DecisionRecord | None = None
        self._shown: Any = None
        self._styles: dict[str, Style] | None = None
        self._detail_scheduled = False

    # --- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The session table comes first so that focusing "the first focusable widget" of the pane
        # lands on it; the source line and the open bar are docked above it.
        yield SessionTable(id="sessions-table")
        with Horizontal(id="sessions-bar"):
            yield Static(id="sessions-timeline-title")
            yield Static(id="sessions-detail-title")
        with Horizontal(id="sessions-bottom"):
            yield DecisionTable(id="decisions-table")
            yield DecisionDetail(id="sessions-detail")
        with Vertical(id="sessions-top"):
            yield SourceLine(id="sessions-source")
            yield FileBar(id="sessions-open")

    @property
    def sessions_table(self) -> SessionTable:
        return self.query_one("#sessions-table", SessionTable)

    @property
    def decisions_table(self) -> DecisionTable:
        return self.query_one("#decisions-table", DecisionTable)

    def on_mount(self) -> None:
        if self.app.no_color:
            self.add_class("-no-color")
        self._setup_decision_columns()
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        self.refresh_from_state()

    def _theme_changed(self, theme: Any) -> None:
        # Every cell is redrawn in the new colours: forget what the rows show, keep the rows.
        self._styles = None
        self.sessions_table.forget_cells()
        self.decisions_table.forget_cells()
        self._shown = None
        self.call_after_refresh(self.refresh_from_state)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None

    @property
    def styles_map(self) -> dict[str, Style]:
        styles = self._styles
        if styles is None:
            styles = {
                c.split("--", 1)[1]: self.get_component_rich_style(c, partial=True)
                for c in self.COMPONENT_CLASSES
            }
            self._styles = styles
        return styles

    # --- updates ---------------------------------------------------------------------------------

    def update_from_state(self) -> None:
        self._update_sessions_table()
        self._update_decisions_table()
        self._update_detail()
        self._update_source_line()

    def _update_source_line(self) -> None:
        self.query_one(SourceLine).show(self.state, live=self.state is self.live_state)

    def on_resize(self) -> None:
        # The columns fit the width the table has once this resize is laid out.
        self.call_after_refresh(self._update_sessions_table)

    def _update_sessions_table(self) -> None:
        table = self.sessions_table
        sessions = self.state.sessions
        table.show(sessions, self.styles_map, getattr(self.app, "settings", None))
        if self.selected_key is None or self.selected_key not in sessions:
            if sessions:
                first = next(iter(sessions))
                self._select_session(first, move_cursor=True)
            else:
                self.selected_key = None
        elif table.row_count and table.cursor_row != table.get_row_index(
            row_key(self.selected_key)
        ):
            # Rebuilt for a new width: the cursor stays on the session shown.
            table.move_to_session(self.selected_key)

    def _decision_scope(self) -> tuple[Any, ...]:
        return ("all",) if self.all_sessions else ("session", self.selected_key, id(self.state))

    def _setup_decision_columns(self) -> None:
        self.decisions_table.set_scope(self._decision_scope(), all_sessions=self.all_sessions)

    def _visible_decisions(self) -> list[DecisionRecord]:
        if self.all_sessions:
            return list(self.state.decisions)
        if self.selected_key is None:
            return []
        return self.state.session_decisions(self.selected_key)

    def _update_decisions_table(self) -> None:
        table = self.decisions_table
        fresh = self._decision_scope() != table.scope
        if fresh:
            self._setup_decision_columns()
        at_end = table.row_count == 0 or table.cursor_row >= table.row_count - 1
        added = table.show(self._visible_decisions(), self.styles_map)
        if not table.row_count:
            return
        target: int | None = None
        if fresh:
            # A new scope opens on the decision being looked at, else the session's latest.
            shown = self.as_of
            if shown is None and self.selected_key is not None:
                mine = self.state.session_decisions(self.selected_key)
                shown = mine[-1] if mine else None
            target = table.row_count - 1
            if shown is not None and table.shows(shown):
                target = table.get_row_index(str(shown.index))
        elif added and not self.all_sessions and (self.as_of is None or at_end):
            # Following the session's newest decision, unless the user scrubbed back.
            self.as_of = None
            target = table.row_count - 1
        if target is not None and target != table.cursor_row:
            with table.prevent(DataTable.RowHighlighted):
                table.move_cursor(row=target, animate=False)

    def _update_detail(self) -> None:
        key = self.selected_key
        rec = self.state.sessions.get(key) if key is not None else None
        record = self.as_of
        decisions = self.state.session_decisions(key) if key is not None else []
        shown = record or (decisions[-1] if decisions else None)
        signature = (
            id(self.state),
            key,
            rec.version if rec is not None else None,
            id(shown),
            shown.outcome if shown is not None else None,
            self._styles is not None,
        )
        if signature == self._shown:
            return
        self._shown = signature
        styles = self.styles_map
        scope = (
            "all sessions" if self.all_sessions else (session_name(*key) if key else "no session")
        )
        set_text(
            self.query_one("#sessions-timeline-title", Static),
            Text.assemble(("Decisions", "bold"), f" · {scope}"),
            layout=False,
        )
        title = self.query_one("#sessions-detail-title", Static)
        detail = self.query_one(DecisionDetail)
        if key is None or (rec is None and shown is None):
            set_text(title, Text("History", style="bold"), layout=False)
            detail.show_nothing(styles)
            return
        set_text(
            title,
            Text.assemble(("History", "bold"), self._position(key, record, shown)),
            layout=False,
        )
        detail.show(self.state, key, rec, shown, styles)

    def _position(
        self, key: tuple[str, str], record: DecisionRecord | None, shown: DecisionRecord | None
    ) -> str:
        """` · decision 2/5 (scrubbed back)` in the history's title, or the session's name."""
        session_decisions = self.state.session_decisions(key)
        if shown is None or shown not in session_decisions:
            return f" · {session_name(*key)}"
        n = session_decisions.index(shown) + 1
        scrubbed = record is not None and record is not session_decisions[-1]
        return f" · decision {n}/{len(session_decisions)}" + (
            " (scrubbed back)" if scrubbed else ""
        )

    # --- selection -------------------------------------------------------------------------------

    def _select_session(self, key: tuple[str, str], *, move_cursor: bool = False) -> None:
        changed = key != self.selected_key
        self.selected_key = key
        if changed:
            self.as_of = None
        if move_cursor:
            self.sessions_table.move_to_session(key)

    @on(DataTable.RowHighlighted, "#sessions-table")
    def _session_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = key_from_row(event.row_key.value)
        if key is None or key not in self.state.sessions:
            return
        if key != self.selected_key:
            self._select_session(key)
            self._update_decisions_table()
            self._schedule_detail()

    @on(DataTable.RowHighlighted, "#decisions-table")
    def _decision_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        table = self.decisions_table
        if event.cursor_row != table.cursor_row:
            return  # a stale highlight (rows were added and the cursor moved since)
        record = record_for_row(self.state.decisions, event.row_key.value)
        if record is None:
            return
        self.as_of = (
            None if event.cursor_row >= table.row_count - 1 and not self.all_sessions else record
        )
        if record.key in self.state.sessions and record.key != self.selected_key:
            self.selected_key = record.key
            self._select_session(record.key, move_cursor=True)
        self._schedule_detail()

    def _schedule_detail(self) -> None:
        """Redraw the history after the moved cursor has been painted: the key is answered at
        once, and keys pressed in a burst redraw the history once."""
        if not self._detail_scheduled:
            self._detail_scheduled = True
            self.call_after_refresh(self._deferred_detail)

    def _deferred_detail(self) -> None:
        self._detail_scheduled = False
        self._update_detail()

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "sessions-table":
            self.decisions_table.focus()
        else:
            self.query_one("#sessions-detail").focus()

    # --- actions ---------------------------------------------------------------------------------

    def action_scrub(self, delta: int) -> None:
        table = self.decisions_table
        if not table.row_count:
            return
        row = max(0, min(table.row_count - 1, table.cursor_row + delta))
        table.move_cursor(row=row, animate=False)

    def action_toggle_all(self) -> None:
        self.all_sessions = not self.all_sessions

    def watch_all_sessions(self, all_sessions: bool) -> None:
        self.query_one("#sessions-bottom").set_class(all_sessions, "-all")
        self.query_one("#sessions-bar").set_class(all_sessions, "-all")
        self.as_of = None
        self._shown = None
        self._update_decisions_table()
        self._update_detail()

    def action_open_file(self) -> None:
        self.file_bar_open = True
        self.query_one("#sessions-open-path", Input).focus()

    def action_cancel_open(self) -> None:
        if self.file_bar_open:
            self.file_bar_open = False
            self.sessions_table.focus()

    def watch_file_bar_open(self, file_bar_open: bool) -> None:
        self.query_one("#sessions-open").set_class(file_bar_open, "-open")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close_file":
            return self.state is not self.live_state
        if action == "cancel_open":  # otherwise escape belongs to the app
            return self.is_attached and self.file_bar_open
        return True

    def action_close_file(self) -> None:
        if self.state is not self.live_state:
            self.show_state(self.live_state)

    @on(FileBar.Loaded)
    def _file_loaded(self, event: FileBar.Loaded) -> None:
        event.stop()
        self._loaded(event.state)

    def _loaded(self, state: ConsoleState) -> None:
        self.file_bar_open = False
        self.show_state(state)
        self.decisions_table.focus()
        self.notify(
            f"Replayed {len(state.decisions)} request(s) from {short_path(state.name)}",
            title="Replay",
        )

    def show_state(self, state: ConsoleState) -> None:
        """Show another source (a replayed file, or the live bridge again)."""
        self.state = state
        self.selected_key = None
        self.as_of = None
        self._shown = None
        self.sessions_table.clear_rows()
        self.decisions_table.scope = None
        self.refresh_from_state()
