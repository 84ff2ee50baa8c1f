"""The tool-call log itself: one line per call, drawn with Textual's line API.

`ToolLogView.render_line(y)` draws line y of a filtered index of sequence numbers into the state's
bounded `ToolCallStore`, with strips cached by (entry, version, width, cursor). Nothing is a widget
per entry, so 100,000 entries cost one list of ints; new and updated entries are folded into the
index incrementally from the store's change journal.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

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
from symposium_tui.widgets.toollog.filter import ToolFilter

SOURCE_WORDS = {AGENT_SOURCE: "agent", CLIENT_SOURCE: "client", PERMISSION_SOURCE: "perm"}
OK_STATUSES = frozenset({"completed", "allow_once", "allow_always"})
BAD_STATUSES = frozenset({"failed", "reject_once", "reject_always", "cancelled"})
STATUS_WIDTH = max(map(len, OK_STATUSES | BAD_STATUSES | {"in_progress", "pending"}))
_MIN_TITLE = 16  # cells of a call's title kept on a narrow pane, other columns giving way


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
        # Columns, with the order they give way in when the pane is narrow: the title (what the
        # call is) keeps at least `_MIN_TITLE` cells while anything else can go instead.
        session_w = 14 if width >= 76 else 10
        optional: list[tuple[int, str, Style]] = [
            (4, format_clock(entry.ts), self._style("time")),
            (
                2,
                set_cell_size(
                    _shorten(session_name(entry.connection, entry.session_id), session_w),
                    session_w,
                ),
                self._style("session"),
            ),
            (
                1,
                set_cell_size(SOURCE_WORDS.get(entry.source, entry.source), 6),
                self._style("source"),
            ),
            (3, set_cell_size(entry.kind, 8), Style()),
            (5, set_cell_size(status, STATUS_WIDTH), status_style),
            (
                0,
                set_cell_size(format_duration(entry.duration) if entry.finished else "…", 6),
                self._style("time"),
            ),
        ]
        used = 1 + sum(cell_len(text) + 1 for _, text, _ in optional)
        for gone in range(5):  # the status stays
            if width - used >= _MIN_TITLE:
                break
            kept = [column for column in optional if column[0] != gone]
            used -= sum(cell_len(text) + 1 for rank, text, _ in optional if rank == gone)
            optional = kept
        cols: list[tuple[str, Style]] = [("▶" if cursor_kind else " ", Style())]
        for _, text, style in optional:
            cols.extend(((text, style), (" ", Style())))
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
