"""Owners for background tasks.

A task started with `asyncio.ensure_future` and no reference can be garbage-collected mid-flight
(asyncio keeps only a weak reference to it), can outlive the object that started it, and loses its
exception ("Task exception was never retrieved", at best, whenever it is collected). Every
background task of the bridge is started through the `TaskSupervisor` of the object it belongs to
(an agent session, an agent process, the bridge, an ACP proxy connection): it is referenced while
it runs, a failure nobody awaits is logged when it happens, and `close()` cancels what still runs
and waits for it, so nothing outlives its owner.

Not `asyncio.TaskGroup`: a group lives inside one `async with` block and cancels all its tasks
when one fails. These owners are objects whose tasks start from their methods, over their whole
life, and must not take each other down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["OwnerClosed", "TaskSupervisor"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class OwnerClosed(RuntimeError):
    """A task was started for an owner that has closed."""


class TaskSupervisor:
    """The background tasks one object started."""

    def __init__(self, owner: str) -> None:
        self.owner = owner  # named when a task fails
        self._tasks: set[asyncio.Task[Any]] = set()
        self.closed = False

    def start(
        self, coro: Coroutine[Any, Any, T], *, name: str | None = None, log_failure: bool = True
    ) -> asyncio.Task[T]:
        """Run `coro` as a task of this owner. Its exception is logged unless `log_failure` is
        False: for a task whose outcome its starter reads (awaits it, or adds a callback)."""
        if self.closed:
            coro.close()
            raise OwnerClosed(f"{self.owner} is closed: no new task")
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished if log_failure else self._tasks.discard)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("%s: background task %s failed", self.owner, task.get_name(), exc_info=exc)

    def __len__(self) -> int:
        return len(self._tasks)

    def running(self) -> list[asyncio.Task[Any]]:
        """The tasks still running."""
        return [t for t in self._tasks if not t.done()]

    async def close(self) -> None:
        """Cancel every task still running and wait until each has ended; no new task starts.

        A task the owner woke while closing (a future it resolved) takes that step first. The task
        calling `close()`, when it is one of these (a session closing itself from its own turn), is
        neither cancelled nor waited for: it is on its way out.
        """
        self.closed = True
        await asyncio.sleep(0)
        current = asyncio.current_task()
        tasks = [t for t in self._tasks if t is not current and not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
