"""Telling the panes what changed, coalesced: at most one call per topic every `delay` seconds.

Events arrive in bursts (a streamed answer is hundreds of parts); a pane redraws once per burst,
not once per event. Without a running loop (a script, a replay) every change is reported at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["TOPICS", "Coalescer", "Listener"]

TOPICS = ("sessions", "decisions", "toolcalls")

Listener = Callable[[str], None]


class Coalescer:
    """Collects the topics that changed and calls every listener with each, in TOPICS order."""

    def __init__(self, delay: float = 0.1) -> None:
        self.delay = delay
        self._listeners: list[Listener] = []
        self._dirty: set[str] = set()
        self._timer: asyncio.TimerHandle | None = None

    def add_listener(self, callback: Listener) -> Callable[[], None]:
        """`callback(topic)` is called when a topic changed. Returns a remover."""
        self._listeners.append(callback)

        def remove() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return remove

    def mark(self, topic: str) -> None:
        """`topic` changed: tell the listeners after `delay` (or now, without a loop)."""
        if topic in self._dirty:
            return
        self._dirty.add(topic)
        if self._timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        self._timer = loop.call_later(self.delay, self.flush)

    def flush(self) -> None:
        """Tell the listeners now about everything changed since the last call."""
        self.cancel()
        dirty = [t for t in TOPICS if t in self._dirty]
        self._dirty.clear()
        for topic in dirty:
            for callback in tuple(self._listeners):
                callback(topic)

    def cancel(self) -> None:
        """Stop a pending call (what changed is reported by the next `flush`)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
