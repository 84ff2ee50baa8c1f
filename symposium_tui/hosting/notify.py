"""`[notify] command = [...]`: run a command for each new pending approval.

The command is run directly (never through a shell) with three arguments appended: the agent, the
host and the tool call's title — e.g. `command = ["notify-send", "Symposium asks"]` runs
`notify-send "Symposium asks" claude-code devbox "Run the tests"`. Commands run one at a time,
in order, each at most `timeout` seconds (then killed); at most `burst` of them in a row, then no
more than one per `interval` seconds. A card settled before its turn comes (answered, withdrawn,
timed out) is skipped: nobody is told about something that no longer waits. A failing command is
logged and never affects the approval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from bridge.scheduling import spawning
from bridge.settings import NotifyConfig
from bridge.tasks import TaskSupervisor

log = logging.getLogger(__name__)


class Notifier:
    def __init__(
        self,
        config: NotifyConfig,
        host: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.config = config
        self.host = host
        self._clock = clock
        self._sleep = sleep
        self._queue: deque[tuple[str, str, str]] = deque()  # (approval id, agent, title)
        self._pending: set[str] = set()
        self._wake: asyncio.Event | None = None
        self._tasks = TaskSupervisor("notifier")  # the one runner; a failure is logged
        self._task: asyncio.Task[None] | None = None
        self._tokens = float(config.burst)
        self._refilled = clock()
        self.runs = 0
        self.skipped = 0

    @classmethod
    def for_broker(cls, config: NotifyConfig, broker: Any) -> Notifier:
        notifier = cls(config, broker.host_name)
        broker.bus.subscribe(notifier.on_event)
        return notifier

    def on_event(self, event: Any) -> None:
        kind = getattr(event, "type", "")
        if kind == "approval_requested":
            self.card(event.approval_id, event.agent, event.tool_call.get("title") or "")
        elif kind == "approval_resolved":
            self._pending.discard(event.approval_id)

    def card(self, approval_id: str, agent: str, title: str) -> None:
        if self._tasks.closed:
            return
        self._pending.add(approval_id)
        self._queue.append((approval_id, agent, title))
        if self._task is None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return
            self._wake = asyncio.Event()
            self._task = self._tasks.start(self._run(), name="runner")
            self._task.add_done_callback(self._ended)
        assert self._wake is not None
        self._wake.set()

    def _ended(self, task: asyncio.Task[None]) -> None:
        # Only a failure ends the runner before `close()` (logged by the supervisor): the next
        # card starts a new one.
        if self._task is task:
            self._task = None

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            while not self._queue:
                self._wake.clear()
                await self._wake.wait()
            approval_id, agent, title = self._queue.popleft()
            if approval_id not in self._pending:
                self.skipped += 1  # settled before its turn: nothing to tell
                continue
            await self._take_token()
            if approval_id not in self._pending:
                self.skipped += 1  # settled while it waited for the rate limit
                self._tokens += 1  # its run was not used
                continue
            self._pending.discard(approval_id)
            await self._spawn(agent, title)

    async def _take_token(self) -> None:
        cfg = self.config
        while True:
            now = self._clock()
            if cfg.interval > 0:
                self._tokens = min(
                    float(cfg.burst), self._tokens + (now - self._refilled) / cfg.interval
                )
            else:
                self._tokens = float(cfg.burst)
            self._refilled = now
            if self._tokens >= 1:
                self._tokens -= 1
                return
            await self._sleep((1 - self._tokens) * cfg.interval)

    async def _spawn(self, agent: str, title: str) -> None:
        argv = [*self.config.command, agent, self.host, title]
        try:
            with spawning():  # scheduled as without a relay, when the ACP door runs this
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.PIPE,
                )
        except (OSError, ValueError) as exc:  # ValueError: a NUL in an argument
            log.warning("notify command %r could not start: %s", argv[0], exc)
            return
        self.runs += 1
        try:
            # Not `asyncio.wait_for`: on Python 3.11 it returns the result, and swallows the cancel,
            # when the command ends just as `close()` cancels the runner (which then never ends).
            async with asyncio.timeout(self.config.timeout):
                _, err = await proc.communicate()
        except asyncio.CancelledError:  # closing: the run ends with us
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.shield(proc.wait())
            raise
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            log.warning("notify command %r killed after %g s", argv[0], self.config.timeout)
            return
        if proc.returncode:
            log.warning(
                "notify command %r failed (exit %s): %s",
                argv[0],
                proc.returncode,
                err.decode(errors="replace").strip()[:500],
            )

    async def close(self) -> None:
        """No more commands: a command still running is killed, and the runner has ended when
        this returns."""
        await self._tasks.close()
        self._task = None
