"""Conversation spaces: one `ConnectionCore` (a history tracker and its agent sessions) per
(principal, `user`, `x-conversation-id`), bounded by count and by idle time."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bridge.history import MatchPolicy

if TYPE_CHECKING:
    from bridge.core import Bridge

log = logging.getLogger(__name__)

SpaceKey = tuple[str, str | None, str | None]


class ConversationSpaces:
    """The open spaces, least recently used first. Beyond `max_spaces`, and after `space_idle`
    seconds unused, a space is closed (its agent sessions stopped) — never one `busy` names (the
    ids of the cores with an exchange running), nor the newest."""

    def __init__(
        self,
        bridge: Bridge,
        busy: Callable[[], set[int]],
        *,
        max_spaces: int,
        space_idle: float,
    ) -> None:
        self.bridge = bridge
        self.busy = busy
        self.max_spaces = max_spaces
        self.space_idle = space_idle
        self.cores: OrderedDict[SpaceKey, Any] = OrderedDict()
        self.closing: set[asyncio.Task[None]] = set()
        self._used: dict[SpaceKey, float] = {}
        self._sweep: asyncio.TimerHandle | None = None

    def open(self, key: SpaceKey) -> Any:
        """The space's core (a new one if it has none, or its core was closed), marked used."""
        core = self.cores.get(key)
        if core is None or core.name not in self.bridge.connections:
            core = self.bridge.open_connection("openai", MatchPolicy.EXTEND)
            self.cores[key] = core
        self.cores.move_to_end(key)
        self._used[key] = time.monotonic()
        self.prune()
        return core

    def prune(self) -> None:
        now = time.monotonic()
        busy = self.busy()
        over = len(self.cores) - self.max_spaces
        for key in list(self.cores)[:-1]:
            core = self.cores[key]
            idle = now - self._used.get(key, now) >= self.space_idle
            if over <= 0 and not idle:
                break  # (the rest were used more recently)
            if id(core) in busy:
                continue
            del self.cores[key]
            self._used.pop(key, None)
            over -= 1
            log.info("conversation space %s closed (%s)", core.name, "idle" if idle else "limit")
            task = asyncio.ensure_future(core.close())
            self.closing.add(task)
            task.add_done_callback(self.closing.discard)
        if self.cores and self._sweep is None:  # one timer at a time, for idle spaces
            with contextlib.suppress(RuntimeError):  # (no running loop: a direct call)
                self._sweep = asyncio.get_running_loop().call_later(self.space_idle, self._swept)

    def _swept(self) -> None:
        self._sweep = None
        self.prune()

    async def close(self) -> None:
        if self._sweep is not None:
            self._sweep.cancel()
        for core in list(self.cores.values()):
            await core.close()
        self.cores.clear()
        if self.closing:
            await asyncio.wait(set(self.closing))
