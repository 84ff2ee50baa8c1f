"""Keys that came before what they are for: before the console's screen is up, or for a tab whose
pane comes with the bridge while it is still starting. Kept in order and handed on once it is there.
Under load the bridge can take seconds to come; a person who pressed F3 and started typing loses
nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.binding import Binding
from textual.widgets import Static

if TYPE_CHECKING:
    from symposium_tui.app import SymposiumApp

STARTING = "Starting the bridge… what you type here now is kept for it."


class EarlyKeys:
    """The keys kept while the bridge starts (`holding` is False once there is nothing to wait
    for: a console given its bridge, or one that only attaches to hosts)."""

    def __init__(self, app: SymposiumApp, *, holding: bool) -> None:
        self.app = app
        self._keys: list[tuple[str, str | None]] | None = [] if holding else None

    def hold(self, key: events.Key) -> bool:
        """Keep a key that came too early: before the console's screen is up (any key), or, while
        the bridge starts, one typed in a tab whose pane comes with it (not the F-keys and other
        keys that work anywhere). True when it was kept."""
        early = self._keys
        if early is None:
            return False
        app = self.app
        alive = app._alive()
        if alive and (
            len(app.screen_stack) > 1
            or app._active_tab() == "approvals"
            or key.key in self._anywhere_keys()
        ):
            return False
        early.append((key.key, key.character))
        if alive:
            typed = "".join(c or "" for _, c in early if c and c.isprintable())
            for note in app._main.query(".starting").results(Static):
                note.update(STARTING + (f"\nKept: {typed}" if typed else ""))
        return True

    def _anywhere_keys(self) -> set[str]:
        return {
            key
            for binding in self.app.BINDINGS
            if isinstance(binding, Binding) and binding.priority
            for key in binding.key.split(",")
        }

    def replay_screen_keys(self) -> None:
        """The screen is up: keys that came before it go on now; those for a pane still to come
        stay kept until the bridge brings it."""
        early = self._keys or []
        self._keys = None
        for key, character in early:
            self.app.post_message(events.Key(key, character))
        if self.app.bridge is None:
            self._keys = []

    def replay(self) -> None:
        """Hand the keys kept so far on, in order, to what has the focus now."""
        early, self._keys = self._keys or [], None
        for key, character in early:
            self.app.post_message(events.Key(key, character))
