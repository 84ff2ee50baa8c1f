"""A console whose terminal goes away leaves, promptly, whatever state its UI driver is in.

An SSH session that drops (SIGHUP), a terminal that reports end of input or an I/O error, or a
`kill` (SIGTERM) must not leave a console nobody can see, holding the socket every relayed request
goes to. Textual's shutdown writes to the terminal (restoring modes, clearing the screen); when
that terminal is gone or stalled, those writes can block forever — and with them an asyncio
signal handler that needs the event loop to run. So:

* the signal reaches a thread started with the lifeline through the interpreter's wakeup fd
  (`signal.set_wakeup_fd`): the C-level handler writes the signal's number to a pipe from
  whichever thread the kernel delivered it to. A Python-level handler would not do: it runs only
  in the main thread, which a terminal nobody reads can hold in a write forever while the signal
  went to another thread. Nothing runs in a handler (no lock taken, no thread started: the main
  thread may be interrupted while holding threading's own locks); the lifeline's thread does the
  rest;
* the handler asks the event loop (thread-safe) to fail closed at once — every approval this
  console holds denied and audited, the console socket closed and removed, relayed clients
  answered — and then to exit the app as Ctrl+Q would;
* and it starts a deadline: if the process has not finished `deadline` seconds later, a thread
  does what can be done without the loop (remove the socket, kill the agents we started) and
  ends the process. What the console held is denied either way: its clients' connections close
  with the process, and relayed requests get the relay's -32000;
* a watcher thread turns a hang-up or error on the terminal itself (POLLHUP/POLLERR on stdin,
  no signal needed) into the same SIGHUP path.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEADLINE = 1.5
"""Seconds from the terminal's loss (or SIGTERM) to the forced exit, within the 2 s promised."""


class Lifeline:
    def __init__(
        self,
        loop: Any,
        fail_closed: Callable[[str], None],
        exit_app: Callable[[], None],
        *,
        socket_path: Callable[[], Path | None],
        kill_agents: Callable[[], None],
        deadline: float = DEADLINE,
    ) -> None:
        self.loop = loop
        self.fail_closed = fail_closed
        self.exit_app = exit_app
        self.socket_path = socket_path
        self.kill_agents = kill_agents
        self.deadline = deadline
        self.finished = threading.Event()  # set when the process is about to end normally
        self._fired = threading.Event()
        self._previous: dict[int, Any] = {}
        self._wake: tuple[int, int] | None = None  # (read, write): a signal's byte, EOF to stop
        self._why = ""  # what the terminal watcher saw (a signal names itself in its byte)
        self._previous_wakeup: int | None = None  # the wakeup fd before ours (None: not ours)

    # --- installing ---------------------------------------------------------------------------

    def install(self) -> None:
        self._wake = os.pipe()
        os.set_blocking(self._wake[1], False)
        threading.Thread(target=self._on_wake, name="exit-deadline", daemon=True).start()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            self._previous[sig] = signal.signal(sig, self._on_signal)
        try:  # every signal with a Python handler now writes its number here, in any thread
            self._previous_wakeup = signal.set_wakeup_fd(self._wake[1], warn_on_full_buffer=False)
        except ValueError:  # not the main thread: the handler writes the byte itself
            self._previous_wakeup = None
        with contextlib.suppress(OSError, ValueError):
            if os.isatty(0):
                threading.Thread(target=self._watch_terminal, name="tty-watch", daemon=True).start()

    def uninstall(self) -> None:
        if self._previous_wakeup is not None:
            with contextlib.suppress(ValueError):
                signal.set_wakeup_fd(self._previous_wakeup)
            self._previous_wakeup = None
        for sig, previous in self._previous.items():
            with contextlib.suppress(Exception):
                signal.signal(sig, previous)
        self._previous.clear()
        if self._wake is not None:
            with contextlib.suppress(OSError):
                os.close(self._wake[1])  # the waiting thread reads the end and returns

    # --- what happens --------------------------------------------------------------------------

    def _on_signal(self, signum: int, frame: Any) -> None:
        # The wakeup fd has already carried the signal (see install); without it, the byte.
        if self._wake is not None and self._previous_wakeup is None:
            with contextlib.suppress(OSError):
                os.write(self._wake[1], bytes([signum]))

    def fire(self, why: str) -> None:
        """From a thread (not a signal handler): leave, as a signal would make it."""
        self._why = why
        if self._wake is not None:
            with contextlib.suppress(OSError):
                os.write(self._wake[1], b"\0")

    def _on_wake(self) -> None:
        """The lifeline's own thread: waits for a signal's (or the watcher's) byte, asks the event
        loop to fail closed and exit, and ends the process if it has not finished in time."""
        assert self._wake is not None
        read_end = self._wake[0]
        leaving = {0, signal.SIGTERM, signal.SIGHUP}  # 0: the terminal watcher's `fire`
        while True:  # other signals' numbers arrive here too (a resize): not ours
            try:
                byte = os.read(read_end, 1)
            except OSError:
                return
            if not byte or self.finished.is_set():
                with contextlib.suppress(OSError):
                    os.close(read_end)
                return  # uninstalled: the process is ending on its own
            if byte[0] in leaving:
                break
        why = signal.Signals(byte[0]).name if byte[0] else (self._why or "terminal closed")
        self._fired.set()
        with contextlib.suppress(RuntimeError):  # the loop is already closed
            self.loop.call_soon_threadsafe(self._leave, why)
        self._enforce_deadline()

    def _leave(self, why: str) -> None:
        try:
            self.fail_closed(why)
        except Exception:
            log.exception("failing closed after %s", why)
        self.exit_app()

    def _watch_terminal(self) -> None:
        """POLLHUP/POLLERR/POLLNVAL on stdin (polled for nothing else): the terminal is gone."""
        poller = select.poll()
        poller.register(0, 0)  # only the conditions always reported
        while not self.finished.is_set() and not self._fired.is_set():
            try:
                events = poller.poll(500)
            except (OSError, ValueError):
                return
            if any(ev & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _, ev in events):
                self.fire("terminal closed")
                return

    def _enforce_deadline(self) -> None:
        if self.finished.wait(self.deadline):
            return
        # The event loop did not finish in time (the terminal blocks it): what can be done
        # without it, then leave. Relayed clients see their connection close (→ -32000).
        # Nothing is logged here: with no handler configured a warning goes to stderr — the very
        # terminal that is stuck — and the main thread may be blocked inside a handler's lock.
        try:
            path = self.socket_path()
        except Exception:
            path = None
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()
        with contextlib.suppress(Exception):
            self.kill_agents()
        os._exit(0)
