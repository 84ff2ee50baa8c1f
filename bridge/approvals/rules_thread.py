"""The rules thread: rule decisions made off the event loop, each within a deadline.

Parsing a long command (bashlex, pure Python) takes long enough to stall every session's stream if
it ran on the loop; `rules_decision` runs it on one daemon thread and, when it takes longer than
the deadline, leaves the request to a person (a bypass does not apply).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import queue
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from bridge.approvals.model import ApprovalContext
from bridge.approvals.policy import Policy
from bridge.rules import Decision

log = logging.getLogger(__name__)
T = TypeVar("T")


DECISION_DEADLINE = 2.0  # seconds one rule decision may take before a person is asked
SWITCH_INTERVAL = 0.001  # seconds between the interpreter's thread switches while one runs


class RulesThread:
    """One daemon thread that makes rule decisions, in order, off the event loop: parsing a command
    (bashlex, pure Python) lets the loop run between the interpreter's thread switches, and one
    thread keeps bashlex (not thread-safe) to itself. Daemon: a decision still running never
    keeps the process from exiting."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[
            tuple[Callable[[], Any], asyncio.AbstractEventLoop, asyncio.Future[Any]]
        ] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.paused_gc = False  # the garbage collector is paused for the decision running

    def resume_gc(self) -> None:
        """The collector runs again (a decision past its deadline does not keep it paused)."""
        if self.paused_gc:
            self.paused_gc = False
            gc.enable()

    def run(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        """`fn()`'s result, as a future of the running loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="rules", daemon=True)
                self._thread.start()
        self._queue.put((fn, loop, future))
        return future

    def _work(self) -> None:
        while True:
            fn, loop, future = self._queue.get()
            if future.cancelled():
                continue  # its deadline passed while it waited
            # No cyclic garbage collection while it decides: parsing a long command allocates
            # enough to set off a full collection, which holds every thread (the event loop
            # too) for tens of milliseconds. What it leaves is mostly freed by reference counts
            # when it returns; the collector runs again after.
            # And the interpreter hands the lock between threads every millisecond rather than
            # every 5: the event loop waits at most that long for its turn while a parse runs.
            self.paused_gc = gc.isenabled()
            if self.paused_gc:
                gc.disable()
            interval = sys.getswitchinterval()
            sys.setswitchinterval(min(interval, SWITCH_INTERVAL))
            try:
                result, error = fn(), None
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                result, error = None, exc
            finally:
                sys.setswitchinterval(interval)
                self.resume_gc()
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:
                pass  # its loop is closed


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


RULES_THREAD = RulesThread()


async def rules_decision(policy: Policy, ctx: ApprovalContext, deadline: float) -> Decision:
    """The rules' decision, made on the rules thread so that parsing a long command never holds
    the event loop (other sessions keep streaming); when it takes longer than `deadline` seconds,
    a person is asked (a bypass does not apply)."""
    if ctx.client_tool:
        return Decision(None)
    decided = RULES_THREAD.run(lambda: policy.rules_decision(ctx))
    try:
        # `asyncio.timeout`, not `wait_for`: on Python 3.11 `wait_for` swallows a cancel that
        # arrives as its future finishes, and the cancelled request would wait for a card.
        async with asyncio.timeout(deadline):
            return await decided
    except TimeoutError:
        RULES_THREAD.resume_gc()
        log.warning("the rules did not decide %r in time: a person is asked", ctx.title[:80])
        return Decision("ask", why=f"ask: the rules did not decide within {deadline:g} s")
