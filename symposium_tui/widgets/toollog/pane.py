"""The tool-call log's pane: the status line and the filter bar above the log, the details of the
selected call below it.

The log is built on Textual's line API (Toolong's approach, `view.py`): nothing is a widget per
entry, and new and updated entries are folded in at most ten times a second (the state coalesces
its notifications).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import var
from textual.widgets import Input, Select, Static

from symposium_tui.state import (
    PERMISSION_SOURCE,
    ConsoleState,
    ToolEntry,
)
from symposium_tui.widgets.state_pane import StatePane
from symposium_tui.widgets.toollog.details import describe_entry
from symposium_tui.widgets.toollog.filter import SOURCES, ToolFilter
from symposium_tui.widgets.toollog.view import SOURCE_WORDS, ToolLogView


class ToolLogPane(StatePane):
    """The tool-call log with its filter bar and a details panel for the selected call."""

    SHOWS = ("toolcalls",)
    BINDINGS = [
        Binding(
            "f",
            "toggle_filters",
            "Filter",
            tooltip="Open the filter bar at its search box "
            "(Shift+Tab: session, kind, status); again to close it",
        ),
        Binding(
            "slash",
            "search",
            "Search",
            tooltip="Search whole words (rm finds rm -rf and /bin/rm, not run); "
            "* inside words (rm* finds rmdir, *rm* any word with rm)",
        ),
        Binding("x", "clear_filters", "Clear filter"),
        Binding("enter", "toggle_details", "Details", tooltip="The selected call in full"),
        Binding(
            "escape", "close", "Close", show=False, tooltip="Close the details or the filter bar"
        ),
    ]

    details_open: var[bool] = var(False, init=False, bindings=True)
    """The details panel shows the selected call in full."""

    filters_open: var[bool] = var(False, init=False, bindings=True)
    """The filter bar is shown."""

    DEFAULT_CSS = """
    ToolLogPane {
        height: 1fr;
        layout: vertical;
        #toollog-top { dock: top; height: auto; }
        #toollog-status { height: 1; background: $panel; color: $foreground; padding: 0 1; }
        #toollog-filters { height: 1; display: none; background: $panel; }
        #toollog-filters.-open { display: block; }
        #toollog-filters Select { width: 1fr; max-width: 24; margin-right: 1; }
        #toollog-filters Input { width: 1fr; }
        #toollog-details { dock: bottom; height: 45%; min-height: 6; display: none; border-top: solid $primary; background: $surface; padding: 0 1; }
        #toollog-details.-open { display: block; }
    }
    """

    def __init__(
        self, state: ConsoleState, *, id: str | None = None, classes: str | None = None
    ) -> None:  # noqa: A002
        super().__init__(state, id=id, classes=classes)
        self._search_timer: Any = None

    def compose(self) -> ComposeResult:
        # The log comes first so that focusing "the first focusable widget" of the pane lands on it;
        # the status line and filter bar are docked above it, the details below.
        yield ToolLogView(self.state, id="toollog-view")
        with Vertical(id="toollog-top"):
            yield Static(id="toollog-status")
            with Horizontal(id="toollog-filters"):
                yield Select(
                    [("all sessions", "")],
                    value="",
                    allow_blank=False,
                    compact=True,
                    id="filter-session",
                )
                yield Select(
                    [("all kinds", "")], value="", allow_blank=False, compact=True, id="filter-kind"
                )
                yield Select(
                    [("all statuses", "")],
                    value="",
                    allow_blank=False,
                    compact=True,
                    id="filter-status",
                )
                yield Input(placeholder="words, * wildcard", compact=True, id="filter-search")
        with VerticalScroll(id="toollog-details", can_focus=True):
            yield Static(id="toollog-detail-text")

    @property
    def view(self) -> ToolLogView:
        return self.query_one(ToolLogView)

    def on_mount(self) -> None:
        self.view.sync()
        self._update_status()

    def update_from_state(self) -> None:
        self.view.sync()
        if self.filters_open:
            self._refresh_filter_options()
        self._update_status()

    def _update_status(self) -> None:
        view = self.view
        total = len(self.state.tools)
        shown = len(view.index)
        counts = (
            f"{shown:,} of {total:,}"
            if view.filter.active
            else f"{total:,} call{'s' * (total != 1)}"
        )
        where = "following" if view.follow else "paused · end to follow"
        status = Text.assemble(
            ("Tool calls ", "bold"),
            counts,
            " · ",
            view.filter.describe(),
            " · ",
            (where, "italic"),
        )
        static = self.query_one("#toollog-status", Static)
        if getattr(static, "_symposium_text", None) != status:
            static._symposium_text = status  # type: ignore[attr-defined]  # what it shows, cached on the widget
            static.update(status, layout=False)

    # --- details ---------------------------------------------------------------------------------

    @on(ToolLogView.CursorMoved)
    def _cursor_moved(self, message: ToolLogView.CursorMoved) -> None:
        self._update_status()
        if self.details_open:
            self._show_details(message.entry)

    def _show_details(self, entry: ToolEntry | None) -> None:
        body = describe_entry(entry) if entry is not None else Text("No tool call selected.")
        self.query_one("#toollog-detail-text", Static).update(body)

    def action_toggle_details(self) -> None:
        self.details_open = not self.details_open

    def watch_details_open(self, details_open: bool) -> None:
        self.query_one("#toollog-details").set_class(details_open, "-open")
        if details_open:
            self._show_details(self.view.selected)
            self.call_after_refresh(self._keep_cursor_visible)

    def _keep_cursor_visible(self) -> None:
        view = self.view
        if view.cursor >= 0:
            view._move_to(view.cursor)

    # --- filters ---------------------------------------------------------------------------------

    def _refresh_filter_options(self) -> None:
        state = self.state
        kinds = [
            (f"{SOURCE_WORDS[s]} calls" if s != PERMISSION_SOURCE else "permissions", s)
            for s in SOURCES
        ]
        kinds += [(k, k) for k in sorted(state.tool_kinds) if k not in SOURCES]
        wanted = {
            "#filter-session": [("all sessions", "")] + [(s, s) for s in state.tool_sessions],
            "#filter-kind": [("all kinds", ""), *kinds],
            "#filter-status": [("all statuses", "")]
            + [(s, s) for s in sorted(state.tool_statuses)],
        }
        for selector, options in wanted.items():
            select = self.query_one(selector, Select)
            current = select.value
            if isinstance(current, str) and current and all(v != current for _, v in options):
                # What the view filters on stays offered, and shown, while it is chosen — a
                # session whose calls have all left the log included (its view is empty).
                options.insert(1, (current, current))
            if getattr(select, "_symposium_options", None) == options:
                continue
            with select.prevent(Select.Changed):
                select.set_options(options)
                select.value = current if any(v == current for _, v in options) else ""
            select._symposium_options = options  # type: ignore[attr-defined]  # what it offers, cached on the widget

    def action_toggle_filters(self) -> None:
        if self.filters_open and not self.view.filter.active:
            self.filters_open = False
            self.view.focus()
            return
        # The search box first (what a person pressing "Filter" types into); the session, kind
        # and status lists are before it (Shift+Tab).
        self.action_search()

    def watch_filters_open(self, filters_open: bool) -> None:
        self.query_one("#toollog-filters").set_class(filters_open, "-open")

    def action_search(self) -> None:
        self.filters_open = True
        self._refresh_filter_options()
        search = self.query_one("#filter-search", Input)
        search.focus()
        search.select_all()  # typing replaces the last search

    def action_clear_filters(self) -> None:
        for selector in ("#filter-session", "#filter-kind", "#filter-status"):
            select = self.query_one(selector, Select)
            with select.prevent(Select.Changed):
                select.value = ""
        search = self.query_one("#filter-search", Input)
        with search.prevent(Input.Changed):
            search.value = ""
        self.filters_open = False
        self._apply_filter()
        self.view.focus()

    def _escape_target(self) -> str | None:
        """What escape closes: the details, or the filter bar (leaving it if a filter is set)."""
        if not self.is_attached:
            return None
        if self.details_open:
            return "details"
        if self.filters_open:
            bar = self.query_one("#toollog-filters")
            focused = self.app.focused
            if not self.view.filter.active or (
                focused is not None and bar in focused.ancestors_with_self
            ):
                return "bar"
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close":  # with nothing to close, escape belongs to the app
            return self._escape_target() is not None
        return True

    def action_close(self) -> None:
        target = self._escape_target()
        if target == "details":
            self.details_open = False
        elif target == "bar" and not self.view.filter.active:
            self.filters_open = False
        self.view.focus()

    def _apply_filter(self) -> None:
        value = {}
        for name in ("session", "kind", "status"):
            v = self.query_one(f"#filter-{name}", Select).value
            value[name] = v if isinstance(v, str) else ""
        search = self.query_one("#filter-search", Input).value
        flt = ToolFilter(value["session"], value["kind"], value["status"], search)
        view = self.view
        view.follow = True
        view.set_filter(flt)
        self._update_status()

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self._apply_filter()

    @on(Input.Changed, "#filter-search")
    def _search_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._search_timer is not None:
            self._search_timer.stop()
        self._search_timer = self.set_timer(0.3, self._apply_filter)

    @on(Input.Submitted, "#filter-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        self._apply_filter()
        self.view.focus()

    def focus_log(self) -> None:
        self.view.focus()
