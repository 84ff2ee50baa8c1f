"""The sessions and history inspector.

Top: every session of every connection (a DataTable updated by row key, Dolphie-style: changed
cells, new rows, removed rows — never cleared and refilled). Bottom left: the timeline of history
decisions of the selected session (or of all sessions, `a`), each marked new session / continue /
commit / cancel with its request's outcome. Bottom right: the selected session's history as it was
at the selected decision — committed messages, then the provisional exchange set apart — and that
decision's evidence; for a cancel, the first mismatching message of each side side by side.

`[` and `]` scrub back and forward through the decisions; the history shown is the one recorded at
each (the state keeps a snapshot per decision). `o` opens a wire trace or JSONL event log and shows
its replayed decisions the same way; `c` goes back to the live bridge.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, cast

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import var
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import RowDoesNotExist

from bridge.settings import agent_display_name
from symposium_tui.state import (
    ConsoleState,
    DecisionRecord,
    SessionRecord,
    format_clock,
    message_parts,
    message_text,
    session_name,
)
from symposium_tui.state.formatting import LONG_SESSION_ID
from symposium_tui.widgets.fit import available_width, clip, fit_widths, natural_widths
from symposium_tui.widgets.state_pane import StatePane

if TYPE_CHECKING:
    from bridge.core import Bridge

__all__ = ["SessionsPane", "render_evidence_side", "render_history"]

KIND_WORDS = {
    "new_session": "new session",
    "continue": "continue",
    "commit": "commit",
    "cancel": "cancel",
    "error": "error",
    "turn": "ACP turn",  # the ACP front door: the client keeps its session, no decision to make
}
SESSION_COLUMNS = (
    ("Session", "session"),
    ("Agent", "agent"),
    ("State", "state"),
    ("Committed", "committed"),
    ("Prov.", "provisional"),
    ("Last decision", "last"),
)
SESSION_FLOORS = (10, 8, 9, 9, 5, 13)  # below these the table scrolls sideways
MAX_LINES_PER_MESSAGE = 6
MAX_MESSAGES_SHOWN = 200


def _kind_style(kind: str, styles: dict[str, Style]) -> Style:
    return styles.get(kind, Style())


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
        #sessions-open { height: 1; display: none; }
        #sessions-open.-open { display: block; }
        #sessions-open Input { width: 1fr; }
        #sessions-open Static { width: auto; padding: 0 1; background: $panel; }
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
        #sessions-evidence { height: auto; display: none; }
        #sessions-evidence.-cancel { display: block; }
        #sessions-evidence Static { width: 1fr; height: auto; border: round $error; padding: 0 1; }
        #sessions-history { height: auto; margin-top: 1; }
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
        self.as_of: DecisionRecord | None = (
            None  # None: the latest decision of the selected session
        )
        self._session_cells: dict[str, tuple[Any, ...]] = {}
        self._decision_cells: dict[str, tuple[Any, ...]] = {}
        self._decision_scope: Any = None
        self._shown: Any = None
        self._styles: dict[str, Style] | None = None
        self._detail_scheduled = False
        self._session_widths: list[int] | None = None

    # --- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The session table comes first so that focusing "the first focusable widget" of the pane
        # lands on it; the source line and the open bar are docked above it.
        yield DataTable(id="sessions-table", cursor_type="row", zebra_stripes=False)
        with Horizontal(id="sessions-bar"):
            yield Static(id="sessions-timeline-title")
            yield Static(id="sessions-detail-title")
        with Horizontal(id="sessions-bottom"):
            yield DataTable(id="decisions-table", cursor_type="row")
            with VerticalScroll(id="sessions-detail", can_focus=True):
                yield Static(id="sessions-decision")
                with Horizontal(id="sessions-evidence"):
                    yield Static(id="evidence-expected")
                    yield Static(id="evidence-received")
                yield Static(id="sessions-reason")
                yield Static(id="sessions-history")
        with Vertical(id="sessions-top"):
            yield Static(id="sessions-source")
            with Horizontal(id="sessions-open"):
                yield Static("Open trace or event log:")
                yield Input(
                    placeholder="path, then enter (escape cancels)",
                    compact=True,
                    id="sessions-open-path",
                )

    @property
    def sessions_table(self) -> DataTable:
        return self.query_one("#sessions-table", DataTable)

    @property
    def decisions_table(self) -> DataTable:
        return self.query_one("#decisions-table", DataTable)

    def on_mount(self) -> None:
        if self.app.no_color:
            self.add_class("-no-color")
        self._setup_decision_columns()
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        self.refresh_from_state()

    def _theme_changed(self, theme: Any) -> None:
        # Every cell is redrawn in the new colours: forget what the rows show, keep the rows.
        self._styles = None
        self._session_cells = dict.fromkeys(self._session_cells, ())
        self._decision_cells = dict.fromkeys(self._decision_cells, ())
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
        state = self.state
        live = state is self.live_state
        counts = (
            f"{len(state.sessions)} session{'s' if len(state.sessions) != 1 else ''} · "
            f"{len(state.decisions)} decision{'s' if len(state.decisions) != 1 else ''}"
        )
        if live:
            line = Text.assemble(("Live bridge", "bold"), " · ", counts)
        else:
            notes = f" · {'; '.join(state.notes)}" if state.notes else ""
            line = Text.assemble(
                ("Replay ", "bold"),
                (os.path.basename(state.name), "bold italic"),
                " · ",
                counts,
                notes,
            )
        self._set(self.query_one("#sessions-source", Static), line, layout=False)

    def _session_row(self, rec: SessionRecord) -> tuple[Any, ...]:
        state_word = rec.state
        styles = self.styles_map
        state_cell = Text(state_word, style=styles.get(f"state-{state_word}", Style()))
        last = rec.last_decision
        last_cell = (
            Text(KIND_WORDS.get(last.kind, last.kind), style=_kind_style(last.kind, styles))
            if last is not None
            else Text("—")
        )
        return (
            rec.label,
            agent_display_name(rec.agent, getattr(self.app, "settings", None)),
            state_cell,
            str(len(rec.committed)),
            str(len(rec.provisional)),
            last_cell,
        )

    def on_resize(self) -> None:
        # The columns fit the width the table has once this resize is laid out.
        self.call_after_refresh(self._update_sessions_table)

    def _update_sessions_table(self) -> None:
        table = self.sessions_table
        sessions = self.state.sessions
        live_keys = {_row_key(k): rec for k, rec in sessions.items()}
        rows = {row_key: self._session_row(rec) for row_key, rec in live_keys.items()}
        # Columns that fit the pane: the session and agent names give way first, with an
        # ellipsis, so that "Prov." and "Last decision" stay on an 80-column screen.
        natural = natural_widths([label for label, _ in SESSION_COLUMNS], rows.values())
        room = available_width(table, len(SESSION_COLUMNS))
        widths = natural if room is None else fit_widths(natural, room, SESSION_FLOORS)
        if widths != self._session_widths:
            self._session_widths = widths
            table.clear(columns=True)
            for (label, key), width in zip(SESSION_COLUMNS, widths):
                table.add_column(clip(label, width), key=key, width=width)
            self._session_cells.clear()
        for row_key in [k for k in self._session_cells if k not in live_keys]:
            del self._session_cells[row_key]
            try:
                table.remove_row(row_key)
            except RowDoesNotExist:
                pass
        columns = [key for _, key in SESSION_COLUMNS]
        for row_key, row in rows.items():
            cells = tuple(clip(cell, width) for cell, width in zip(row, widths))
            old = self._session_cells.get(row_key)
            if old is None:
                table.add_row(*cells, key=row_key)
            elif old != cells:
                for column, new, was in zip(columns, cells, old or (None,) * len(cells)):
                    if new != was:
                        table.update_cell(row_key, column, new)
            self._session_cells[row_key] = cells
        if self.selected_key is None or self.selected_key not in sessions:
            if sessions:
                first = next(iter(sessions))
                self._select_session(first, move_cursor=True)
            else:
                self.selected_key = None
        elif table.row_count and table.cursor_row != table.get_row_index(
            _row_key(self.selected_key)
        ):
            # Rebuilt for a new width: the cursor stays on the session shown.
            with table.prevent(DataTable.RowHighlighted):
                table.move_cursor(row=table.get_row_index(_row_key(self.selected_key)))

    def _setup_decision_columns(self) -> None:
        table = self.decisions_table
        table.clear(columns=True)
        cols: tuple[tuple[str, str], ...]
        if self.all_sessions:
            cols = (
                ("#", "index"),
                ("Session", "session"),
                ("Decision", "kind"),
                ("Outcome", "outcome"),
            )
        else:
            cols = (("#", "index"), ("Decision", "kind"), ("Outcome", "outcome"))
        for label, key in cols:
            table.add_column(label, key=key)
        self._decision_cells.clear()
        self._decision_scope = (
            ("all",) if self.all_sessions else ("session", self.selected_key, id(self.state))
        )

    def _decision_row(self, record: DecisionRecord) -> tuple[Any, ...]:
        styles = self.styles_map
        kind = Text(
            KIND_WORDS.get(record.kind, record.kind), style=_kind_style(record.kind, styles)
        )
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
        if self.all_sessions:
            return (
                str(record.index),
                _short_label(session_name(record.connection, record.session_id), 14),
                kind,
                outcome_cell,
            )
        return (str(record.index), kind, outcome_cell)

    def _visible_decisions(self) -> list[DecisionRecord]:
        if self.all_sessions:
            return list(self.state.decisions)
        if self.selected_key is None:
            return []
        return self.state.session_decisions(self.selected_key)

    def _update_decisions_table(self) -> None:
        scope = ("all",) if self.all_sessions else ("session", self.selected_key, id(self.state))
        fresh = scope != self._decision_scope
        if fresh:
            self._setup_decision_columns()
        table = self.decisions_table
        records = self._visible_decisions()
        at_end = table.row_count == 0 or table.cursor_row >= table.row_count - 1
        wanted = {str(r.index): r for r in records}
        for row_key in [k for k in self._decision_cells if k not in wanted]:
            del self._decision_cells[row_key]
            try:
                table.remove_row(row_key)
            except RowDoesNotExist:
                pass
        added = False
        columns = (
            ("index", "session", "kind", "outcome")
            if self.all_sessions
            else ("index", "kind", "outcome")
        )
        for row_key, record in wanted.items():
            cells = self._decision_row(record)
            old = self._decision_cells.get(row_key)
            if old is None:
                table.add_row(*cells, key=row_key)
                added = True
            elif old != cells:
                for column, new, was in zip(columns, cells, old or (None,) * len(cells)):
                    if new != was:
                        table.update_cell(row_key, column, new)
            self._decision_cells[row_key] = cells
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
            if shown is not None and str(shown.index) in wanted:
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
        decisions = self._visible_scope_decisions()
        latest = decisions[-1] if decisions else None
        shown_record = record or latest
        signature = (
            id(self.state),
            key,
            rec.version if rec is not None else None,
            id(shown_record),
            shown_record.outcome if shown_record is not None else None,
            self._styles is not None,
        )
        if signature == self._shown:
            return
        self._shown = signature
        styles = self.styles_map
        title = self.query_one("#sessions-detail-title", Static)
        timeline_title = self.query_one("#sessions-timeline-title", Static)
        scope = (
            "all sessions" if self.all_sessions else (session_name(*key) if key else "no session")
        )
        self._set(timeline_title, Text.assemble(("Decisions", "bold"), f" · {scope}"), layout=False)
        decision_view = self.query_one("#sessions-decision", Static)
        evidence = self.query_one("#sessions-evidence")
        history = self.query_one("#sessions-history", Static)
        if key is None or (rec is None and shown_record is None):
            self._set(title, Text("History", style="bold"), layout=False)
            self._set(
                decision_view,
                Text(
                    "No sessions yet. They appear here as requests arrive.",
                    style=styles.get("muted", Style()),
                ),
            )
            evidence.remove_class("-cancel")
            self._set(self.query_one("#sessions-reason", Static), Text())
            self._set(history, Text())
            return
        position = ""
        session_decisions = self.state.session_decisions(key)
        if shown_record is not None and shown_record in session_decisions:
            n = session_decisions.index(shown_record) + 1
            scrubbed = record is not None and record is not session_decisions[-1]
            position = f" · decision {n}/{len(session_decisions)}" + (
                " (scrubbed back)" if scrubbed else ""
            )
        self._set(
            title,
            Text.assemble(("History", "bold"), position or f" · {session_name(*key)}"),
            layout=False,
        )
        head, rest = self._describe_decision(
            rec, shown_record if shown_record in session_decisions else None
        )
        self._set(decision_view, head)
        self._set(self.query_one("#sessions-reason", Static), rest)
        cancel = (
            shown_record
            if shown_record is not None
            and shown_record.kind == "cancel"
            and shown_record in session_decisions
            else None
        )
        if cancel is not None:
            d = cancel.decision
            mismatch = d.get("mismatch_index")
            self._set(
                self.query_one("#evidence-expected", Static),
                render_evidence_side(
                    f"expected #{mismatch} (provisional)",
                    d.get("expected"),
                    d.get("received"),
                    styles,
                ),
            )
            self._set(
                self.query_one("#evidence-received", Static),
                render_evidence_side(
                    f"received #{mismatch} (request)", d.get("received"), d.get("expected"), styles
                ),
            )
        evidence.set_class(cancel is not None, "-cancel")
        if shown_record is not None and shown_record in session_decisions:
            committed, provisional = self.state.history_at(key, shown_record)
        else:
            committed, provisional = self.state.history_at(key, None)
        mark = (
            shown_record.decision.get("mismatch_index")
            if shown_record is not None and shown_record.kind == "cancel"
            else None
        )
        self._set(history, render_history(committed, provisional, styles, mark_index=mark))

    def _set(self, widget: Static, text: Text, *, layout: bool = True) -> None:
        """Update a Static only when what it shows changed (a layout pass costs the whole screen)."""
        if getattr(widget, "_symposium_text", None) == text:
            return
        widget._symposium_text = text  # type: ignore[attr-defined]  # what it shows, cached on the widget
        widget.update(text, layout=layout)

    def _visible_scope_decisions(self) -> list[DecisionRecord]:
        if self.selected_key is None:
            return []
        return self.state.session_decisions(self.selected_key)

    def _describe_decision(
        self, rec: SessionRecord | None, record: DecisionRecord | None
    ) -> tuple[Text, Text]:
        """The decision's headline, and the rest of its evidence (shown under a cancel's two sides)."""
        styles = self.styles_map
        muted = styles.get("muted", Style())
        head, rest = Text(), Text()
        if rec is not None and len(rec.session_id) > LONG_SESSION_ID:
            # Its name (`zed-3 …9f2c`) is short: the whole id, as the client and the logs say it.
            head.append(f"session {rec.session_id} of {rec.connection}\n", style=muted)
        if rec is not None and rec.end_reason:
            head.append(f"session ended: {rec.end_reason}\n", style=muted)
        if record is None:
            head.append("No decision recorded for this session.", style=muted)
            return head, rest
        head.append(
            f" {KIND_WORDS.get(record.kind, record.kind).upper()} ",
            style=_kind_style(record.kind, styles) + Style(bold=True),
        )
        head.append(
            f" #{record.index} · request {_json_id(record.request_id)} · {format_clock(record.ts)} · "
            f"{record.outcome or 'in flight'}"
        )
        if record.stop_reason:
            head.append(f" · stop reason {record.stop_reason}")
        d = record.decision
        if record.kind == "turn":  # a stateful ACP session: nothing was routed or replayed
            rest.append(f"turn {d.get('seq', '?')} · {len(record.provisional)} message(s)\n")
            rest.append(record.reason, style=muted)
            if record.error:
                rest.append(f"\nerror: {record.error}", style=styles.get("error", Style()))
            return head, rest
        rest.append(
            f"committed {record.committed_len} · provisional {len(record.provisional)} · "
            f"{d.get('candidates', 0)} matching"
        )
        if d.get("prompt_start"):
            rest.append(f" · {d['prompt_start']} already sent to the agent")
        rest.append("\n")
        rest.append(record.reason, style=muted)
        if record.error and record.kind != "error":
            rest.append(f"\nerror: {record.error}", style=styles.get("error", Style()))
        if record.recorded_kind:
            rest.append(
                f"\n* the live bridge decided {KIND_WORDS.get(record.recorded_kind, record.recorded_kind)} here",
                style=styles.get("error", Style(bold=True)),
            )
        if record.kind == "cancel":
            discarded = self.state.previous_provisional(record)
            if discarded is not None:
                rest.append(f"\ndiscarded a provisional exchange of {len(discarded)} message(s)")
        return head, rest

    # --- selection -------------------------------------------------------------------------------

    def _select_session(self, key: tuple[str, str], *, move_cursor: bool = False) -> None:
        changed = key != self.selected_key
        self.selected_key = key
        if changed:
            self.as_of = None
        if move_cursor:
            table = self.sessions_table
            try:
                row = table.get_row_index(_row_key(key))
            except RowDoesNotExist:
                return
            with table.prevent(DataTable.RowHighlighted):
                table.move_cursor(row=row, animate=False)

    @on(DataTable.RowHighlighted, "#sessions-table")
    def _session_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = _key_from_row(event.row_key.value)
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
        record = self._record_for_row(event.row_key.value)
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

    def _record_for_row(self, value: Any) -> DecisionRecord | None:
        try:
            index = int(value)
        except (TypeError, ValueError):
            return None
        decisions = self.state.decisions
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

    @on(Input.Submitted, "#sessions-open-path")
    def _path_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        raw = event.value.strip()
        if not raw:
            return
        self._load_file(os.path.abspath(os.path.expanduser(raw)))

    @work(thread=True, exclusive=True, group="sessions-replay")
    def _load_file(self, path: str) -> None:
        from symposium_tui.state.replay import state_from_file  # the tracker: only for a file

        try:
            state = state_from_file(path)
        except (OSError, ValueError) as exc:
            message = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.app.call_from_thread(self._load_failed, path, message)
            return
        self.app.call_from_thread(self._loaded, state)

    def _load_failed(self, path: str, message: str) -> None:
        self.notify(f"Cannot open {path}: {message}", title="Replay", severity="error")

    def _loaded(self, state: ConsoleState) -> None:
        self.file_bar_open = False
        self.show_state(state)
        self.decisions_table.focus()
        self.notify(
            f"Replayed {len(state.decisions)} request(s) from {_short_path(state.name)}",
            title="Replay",
        )

    def show_state(self, state: ConsoleState) -> None:
        """Show another source (a replayed file, or the live bridge again)."""
        self.state = state
        self.selected_key = None
        self.as_of = None
        self._shown = None
        table = self.sessions_table
        table.clear()
        self._session_cells.clear()
        self._decision_scope = None
        self.refresh_from_state()


def _row_key(key: tuple[str, str]) -> str:
    return f"{key[0]}\x1f{key[1]}"


def _key_from_row(value: Any) -> tuple[str, str] | None:
    if not isinstance(value, str) or "\x1f" not in value:
        return None
    conn, sid = value.split("\x1f", 1)
    return (conn, sid)


def _short_label(label: str, width: int = 14) -> str:
    return label if len(label) <= width else "…" + label[-(width - 1) :]


def _short_path(path: str, width: int = 40) -> str:
    return path if len(path) <= width else "…" + path[-(width - 1) :]


def _json_id(value: Any) -> str:
    import json

    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
