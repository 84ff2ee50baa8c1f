"""The tool-call log: every tool call the bridge saw, one line each, filterable and searchable.

Built on Textual's line API (Toolong's approach): `ToolLogView.render_line(y)` draws line y of a
filtered index of sequence numbers into the state's bounded `ToolCallStore`, with strips cached by
(entry, version, width, cursor). Nothing is a widget per entry, so 100,000 entries cost one list of
ints; new and updated entries are folded into the index incrementally from the store's change
journal, at most ten times a second (the state coalesces its notifications).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, Select, Static

from symposium_tui.state import (
    AGENT_SOURCE,
    CLIENT_SOURCE,
    PERMISSION_SOURCE,
    ConsoleState,
    ToolEntry,
    format_clock,
    format_duration,
    session_name,
)
from symposium_tui.widgets.state_pane import StatePane

__all__ = ["ToolFilter", "ToolLogPane", "ToolLogView"]

SOURCES = (AGENT_SOURCE, CLIENT_SOURCE, PERMISSION_SOURCE)
SOURCE_WORDS = {AGENT_SOURCE: "agent", CLIENT_SOURCE: "client", PERMISSION_SOURCE: "perm"}
OK_STATUSES = frozenset({"completed", "allow_once", "allow_always"})
BAD_STATUSES = frozenset({"failed", "reject_once", "reject_always", "cancelled"})
STATUS_WIDTH = max(map(len, OK_STATUSES | BAD_STATUSES | {"in_progress", "pending"}))


def search_pattern(text: str) -> re.Pattern[str] | None:
    """The search box's text as a pattern on whole words: `rm` finds `rm -rf build` and the
    program of `/bin/rm x`, not `run the tests`; a phrase (`git log`) its words in that order;
    `*` stands for any letters or digits, so `rm*` finds `rmdir` and `*test*` any text containing
    `test`. None for an empty search. Case does not matter."""
    needle = " ".join(text.split()).lower()
    if not needle:
        return None
    body = r"\w*".join(re.escape(part) for part in needle.split("*"))
    return re.compile(rf"(?<!\w){body}(?!\w)")


class ToolFilter:
    """Which entries the log shows: a session, a source or kind, a status, and a search text
    (matched on whole words, `search_pattern`)."""

    __slots__ = ("_needle", "_pattern", "kind", "search", "session", "status")

    def __init__(
        self, session: str = "", kind: str = "", status: str = "", search: str = ""
    ) -> None:
        self.session = session
        self.kind = (
            kind  # a source ("agent", "client", "permission") or an ACP kind ("execute", ...)
        )
        self.status = status
        self.search = search
        self._needle = search.strip().lower()
        self._pattern = search_pattern(search)

    @property
    def active(self) -> bool:
        return bool(self.session or self.kind or self.status or self._needle)

    def matches(self, entry: ToolEntry) -> bool:
        if self.session and entry.session_label != self.session:
            return False
        if self.kind and not (
            entry.source == self.kind if self.kind in SOURCES else entry.kind == self.kind
        ):
            return False
        if self.status and entry.status != self.status:
            return False
        return self._pattern is None or self._pattern.search(entry.haystack()) is not None

    def describe(self) -> str:
        parts = []
        if self.session:
            parts.append(f"session {self.session}")
        if self.kind:
            parts.append(f"kind {self.kind}")
        if self.status:
            parts.append(f"status {self.status}")
        if self._needle:
            parts.append(f'search "{self.search.strip()}"')
        return ", ".join(parts) if parts else "no filter"


class ToolLogView(ScrollView, can_focus=True):
    """The lines of the log; a cursor selects one entry."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,g", "first", "First", show=False),
        Binding("end,G", "last", "Last (follow)", show=False),
    ]

    COMPONENT_CLASSES = {
        "toollog--cursor",
        "toollog--cursor-blurred",
        "toollog--time",
        "toollog--session",
        "toollog--ok",
        "toollog--bad",
        "toollog--busy",
        "toollog--source",
    }

    DEFAULT_CSS = """
    ToolLogView {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
        background: $surface;
        & > .toollog--cursor { background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold; }
        & > .toollog--cursor-blurred { background: $block-cursor-blurred-background; color: $block-cursor-blurred-foreground; text-style: bold; }
        & > .toollog--time { color: $text-muted; }
        & > .toollog--session { color: $text-secondary; }
        & > .toollog--source { color: $text-accent; }
        & > .toollog--ok { color: $text-success; }
        & > .toollog--bad { color: $text-error; text-style: bold; }
        & > .toollog--busy { color: $text-warning; }
    }
    """

    class CursorMoved(Message):
        def __init__(self, entry: ToolEntry | None) -> None:
            super().__init__()
            self.entry = entry

    def __init__(self, state: ConsoleState, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.state = state
        self.filter = ToolFilter()
        self.index: list[int] = []  # sequence numbers of the entries shown, ascending
        self.cursor = -1  # position in `index`
        self.follow = True  # keep the cursor on the newest entry
        self._change_cursor = -1  # the store's change number we have folded in; -1: rebuild
        self._strips: LRUCache[tuple[Any, ...], Strip] = LRUCache(1024)
        self._styles: dict[str, Style] | None = None
        self._selected_version = -1

    # --- the index -------------------------------------------------------------------------------

    @property
    def selected(self) -> ToolEntry | None:
        if 0 <= self.cursor < len(self.index):
            return self.state.tools.get(self.index[self.cursor])
        return None

    def set_filter(self, flt: ToolFilter) -> None:
        self.filter = flt
        self._change_cursor = -1
        self.sync()

    def sync(self) -> None:
        """Fold the store's new and changed entries into the index, then redraw."""
        store = self.state.tools
        before = self.selected
        changes = store.changes_since(self._change_cursor) if self._change_cursor >= 0 else None
        if changes is None:
            self._rebuild()
        else:
            self._apply(changes)
        self._change_cursor = store.change_no
        # Entries dropped from the store leave from the front of the index.
        dropped = bisect_left(self.index, store.first_seq)
        if dropped:
            del self.index[:dropped]
            self.cursor = max(0, self.cursor - dropped) if self.cursor >= 0 else -1
            if not self.follow:
                self.scroll_to(y=max(0, self.scroll_y - dropped), animate=False, immediate=True)
        count = len(self.index)
        if count == 0:
            self.cursor = -1
        elif self.follow or self.cursor < 0:
            self.cursor = count - 1
        else:
            self.cursor = min(self.cursor, count - 1)
        if self.virtual_size.height != count:
            self.virtual_size = Size(0, count)
        if self.follow:
            self.scroll_to(
                y=max(0, count - self.scrollable_content_region.height),
                animate=False,
                immediate=True,
            )
        self.refresh()
        if self.selected is not before or (
            before is not None and self._selected_version != before.version
        ):
            self._announce()

    def _announce(self) -> None:
        entry = self.selected
        self._selected_version = entry.version if entry is not None else -1
        self.post_message(self.CursorMoved(entry))

    def _rebuild(self) -> None:
        store = self.state.tools
        keep = self.selected
        flt = self.filter
        if flt.active:
            self.index = [e.seq for e in store if flt.matches(e)]
        else:
            self.index = list(range(store.first_seq, store.next_seq))
        if keep is not None and not self.follow:
            pos = bisect_left(self.index, keep.seq)
            self.cursor = min(pos, len(self.index) - 1)
        self._strips.clear()

    def _apply(self, changes: list[int]) -> None:
        store = self.state.tools
        flt = self.filter
        index = self.index
        last = index[-1] if index else -1
        for seq in sorted(set(changes)):
            entry = store.get(seq)
            if entry is None:
                continue
            matches = flt.matches(entry)
            if seq > last:  # the common case: a new entry at the end
                if matches:
                    index.append(seq)
                    last = seq
                continue
            pos = bisect_left(index, seq)
            present = pos < len(index) and index[pos] == seq
            if matches and not present:
                index.insert(pos, seq)
                if pos <= self.cursor:
                    self.cursor += 1
            elif present and not matches:
                del index[pos]
                if pos < self.cursor:
                    self.cursor -= 1

    # --- drawing ---------------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None
        self._strips.clear()

    def on_focus(self) -> None:
        self.refresh()

    def on_resize(self) -> None:
        self._strips.clear()
        if self.follow:
            self.scroll_to(
                y=max(0, len(self.index) - self.scrollable_content_region.height),
                animate=False,
                immediate=True,
            )
        elif self.cursor >= 0:
            self._move_to(self.cursor)

    def on_blur(self) -> None:
        self.refresh()

    def _style(self, name: str) -> Style:
        styles = self._styles
        if styles is None:
            styles = {
                c.split("--")[1]: self.get_component_rich_style(c, partial=True)
                for c in self.COMPONENT_CLASSES
            }
            if self.app.no_color:  # without colours the cursor is drawn reversed
                styles["cursor"] += Style(reverse=True)
            self._styles = styles
        return styles[name]

    def render_line(self, y: int) -> Strip:
        _scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        row = scroll_y + y
        base = self.rich_style
        if row >= len(self.index) or width <= 0:
            return Strip.blank(width, base)
        entry = self.state.tools.get(self.index[row])
        if entry is None:
            return Strip.blank(width, base)
        is_cursor = row == self.cursor
        cursor_kind = (2 if self.has_focus else 1) if is_cursor else 0
        key = (entry.seq, entry.version, width, cursor_kind)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._render_entry(entry, width, base, cursor_kind)
            self._strips[key] = strip
        return strip

    def _render_entry(self, entry: ToolEntry, width: int, base: Style, cursor_kind: int) -> Strip:
        status = entry.status
        if status in OK_STATUSES:
            status_style = self._style("ok")
        elif status in BAD_STATUSES:
            status_style = self._style("bad")
        else:
            status_style = self._style("busy")
        # Columns, narrowest first to go when the pane is narrow.
        session_w = 14 if width >= 76 else 10
        cols: list[tuple[str, Style]] = [
            ("▶" if cursor_kind else " ", Style()),
            (format_clock(entry.ts), self._style("time")),
            (" ", Style()),
            (
                set_cell_size(
                    _shorten(session_name(entry.connection, entry.session_id), session_w),
                    session_w,
                ),
                self._style("session"),
            ),
            (" ", Style()),
            (set_cell_size(SOURCE_WORDS.get(entry.source, entry.source), 6), self._style("source")),
            (" ", Style()),
            (set_cell_size(entry.kind, 8), Style()),
            (" ", Style()),
            (set_cell_size(status, STATUS_WIDTH), status_style),
            (" ", Style()),
            (
                set_cell_size(format_duration(entry.duration) if entry.finished else "…", 6),
                self._style("time"),
            ),
            (" ", Style()),
        ]
        used = sum(cell_len(text) for text, _ in cols)
        title = entry.title.replace("\n", " ")
        cols.append(
            (
                _fit(title, max(0, width - used)),
                Style(bold=entry.source == PERMISSION_SOURCE),
            )
        )
        line_style = base
        if cursor_kind:
            line_style = base + self._style("cursor" if cursor_kind == 2 else "cursor-blurred")
        segments = []
        for text, style in cols:
            if cursor_kind:
                # The cursor's colours win; the status keeps only its bold/italic so it still reads.
                segments.append(
                    Segment(text, line_style + Style(bold=style.bold, italic=style.italic))
                )
            else:
                segments.append(Segment(text, base + style))
        return Strip(segments, width).crop_extend(0, width, line_style)

    # --- moving ----------------------------------------------------------------------------------

    def _move_to(self, position: int) -> None:
        count = len(self.index)
        if count == 0:
            return
        position = max(0, min(count - 1, position))
        self.cursor = position
        self.follow = position == count - 1
        height = max(1, self.scrollable_content_region.height)
        if position < self.scroll_y:
            self.scroll_to(y=position, animate=False, immediate=True)
        elif position >= self.scroll_y + height:
            self.scroll_to(y=position - height + 1, animate=False, immediate=True)
        self.refresh()
        self._announce()

    def action_cursor(self, delta: int) -> None:
        self._move_to((self.cursor if self.cursor >= 0 else len(self.index) - 1) + delta)

    def action_page(self, direction: int) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        self._move_to(self.cursor + direction * height)

    def action_first(self) -> None:
        self._move_to(0)

    def action_last(self) -> None:
        self._move_to(len(self.index) - 1)
        self.follow = True

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.follow = False

    def on_click(self, event: events.Click) -> None:
        self.focus()
        self._move_to(int(self.scroll_y + event.y))


def _fit(text: str, width: int) -> str:
    """`text` in exactly `width` cells: cut with an ellipsis when it is longer."""
    if cell_len(text) <= width or width < 2:
        return set_cell_size(text, width)
    return set_cell_size(text, width - 1) + "…"


def _shorten(text: str, width: int) -> str:
    """Keep the end of a session label (the session id matters more than the connection)."""
    if cell_len(text) <= width:
        return text
    return "…" + text[-(width - 1) :]


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
            if getattr(select, "_symposium_options", None) == options:
                continue
            current = select.value
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
