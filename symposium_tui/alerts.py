"""Telling a person something is pending wherever they are: the bell and the terminal's title.

The title says how many approvals are pending and, for a moment after a new card, flashes what is
asked; with nothing pending the terminal gets its own title back (xterm's title stack, where the
terminal has one). A headless app has no terminal: `bells` and `titles` say what would have been
shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer

__all__ = ["TerminalAlerts"]

FLASHES = 6  # title changes per new card: what is asked, the steady title, … (every 0.5 s)


class TerminalAlerts:
    """The console's bell and terminal title."""

    def __init__(self, app: App[Any], name: str, *, enabled: bool = True) -> None:
        self.app = app
        self.name = name  # the title with nothing pending
        self.enabled = enabled  # off: no bell, no flashing (the pending count still shows)
        self.pending = 0
        self.bells = 0  # rung for new cards
        self.title = ""  # what the terminal's title is now
        self.titles: list[str] = []  # every title given, in order
        self._pushed = False  # the terminal's own title saved on its title stack
        self._flash: Timer | None = None

    def steady_title(self) -> str:
        pending = self.pending
        return f"({pending}) {self.name} — approval pending" if pending else self.name

    def set_pending(self, pending: int) -> None:
        self.pending = pending
        if pending == 0:
            self.stop_flash()
        self.set_title(self.steady_title())

    def new_card(self, agent: str, title: str) -> None:
        """Ring the bell and flash what is asked in the title."""
        if not self.enabled:
            return
        self.bells += 1
        self.app.bell()
        self.stop_flash()
        flashes = iter(range(FLASHES))

        def flash() -> None:
            n = next(flashes, None)
            if n is None:
                self.stop_flash()
                return
            self.set_title(f"⚠ {agent} asks: {title}" if n % 2 == 0 else self.steady_title())

        flash()
        self._flash = self.app.set_interval(0.5, flash)

    def stop_flash(self) -> None:
        if self._flash is not None:
            self._flash.stop()
            self._flash = None
            self.set_title(self.steady_title())

    def restore(self) -> None:
        """Leaving: no flash, and the terminal's own title back where it can."""
        if self._flash is not None:
            self._flash.stop()
            self._flash = None
        self.set_title(self.name)

    def set_title(self, title: str) -> None:
        """The terminal's title says when something is pending; otherwise it is left alone."""
        if title == self.title:
            return
        self.title = title
        self.titles.append(title)
        if title == self.name and not self._pushed:
            return  # nothing pending yet: leave the terminal's own title alone
        if not self._pushed:
            self._write("\x1b[22;2t")  # save the terminal's own title (xterm and most others)
            self._pushed = True
        self._write(f"\x1b]2;{title}\x07")
        if title == self.name:
            # Nothing pending any more: give the terminal its own title back where it can (where it
            # cannot, the title at least no longer claims that something is pending).
            self._write("\x1b[23;2t")
            self._pushed = False

    def _write(self, data: str) -> None:
        driver = self.app._driver
        if driver is not None and not self.app.is_headless:
            driver.write(data)
            driver.flush()
