"""The base of the panes that show a `ConsoleState`: redraw when a topic they show changed, and
only while on screen — a pane in a hidden tab remembers it is stale and catches up when shown."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.widget import Widget

from symposium_tui.state import ConsoleState

__all__ = ["StatePane"]


class StatePane(Widget):
    """Subclasses name the topics they show (`SHOWS`) and draw in `update_from_state()`.

    Textual calls `on_mount`/`on_unmount`/`on_show` of every class in the MRO, so a subclass's own
    handlers run beside these without calling `super()`."""

    SHOWS: ClassVar[tuple[str, ...]] = ()
    DEFAULT_CLASSES = "state-pane"  # how the tabs find it (`ConsoleTabs`)

    def __init__(
        self, state: ConsoleState, *, id: str | None = None, classes: str | None = None
    ) -> None:  # noqa: A002
        super().__init__(id=id, classes=classes)
        self.live_state = state  # the state this pane listens to (`state` may be a replayed one)
        self.state = state
        self._remove_listener: Callable[[], None] | None = None
        self._stale = False

    def on_mount(self) -> None:
        self._remove_listener = self.live_state.add_listener(self._state_changed)

    def on_unmount(self) -> None:
        if self._remove_listener is not None:
            self._remove_listener()
            self._remove_listener = None

    def on_show(self) -> None:
        if self._stale:
            self.refresh_from_state()

    def catch_up(self) -> None:
        """Its tab is shown: draw what changed while it was hidden. (Textual's Show does not reach
        a pane every time its tab is shown again, and while the tab's layout is being made the
        pane is not yet on screen.)"""
        if self._stale and self.is_attached:
            self._stale = False
            self.update_from_state()

    def _state_changed(self, topic: str) -> None:
        if topic in self.SHOWS and self.state is self.live_state:
            self.call_later(self.refresh_from_state)

    def refresh_from_state(self) -> None:
        """Redraw now, or when next shown if the pane is in a hidden tab."""
        if not self.is_attached:
            return
        if not self.is_on_screen and self.is_mounted:
            self._stale = True
            return
        self._stale = False
        self.update_from_state()

    def update_from_state(self) -> None:
        """Draw what the state holds now."""
        raise NotImplementedError
