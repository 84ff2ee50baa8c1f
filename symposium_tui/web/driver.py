"""Textual's web driver for the console `symposium-tui web` serves: it leaves when its browser does.

textual-serve runs one console per browser session with Textual's `WebDriver`, its terminal being
a pair of pipes to the web server. Two things keep such a process alive after nobody can see it,
which this driver changes:

* the end of its input (the server closed the pipe, or went away) ends the driver's input thread
  and nothing else: the app kept running, and drawing, for ever. Here it leaves, as on SIGTERM;
* SIGTERM posts a message to the app's queue, which an app stalled on a pipe nobody reads never
  handles. Here SIGTERM and SIGHUP go through `symposium_tui.hosting.lifeline.Lifeline`, as for
  a console in a terminal: the app is asked to exit, and the process ends `lifeline.DEADLINE`
  seconds later at the latest. The same goes for the server's "quit" (the browser session ended) and for the
  end of the input. An attached console holds nothing of its own (the approvals stay with their
  hosts), so leaving loses nothing. The deadline stays armed through the app's shutdown: an app
  told to exit while it is still mounting can fail there and never finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

from textual.drivers.web_driver import WebDriver

from symposium_tui.hosting.lifeline import Lifeline

log = logging.getLogger(__name__)


class ConsoleWebDriver(WebDriver):
    _lifeline: Lifeline | None = None

    def start_application_mode(self) -> None:
        super().start_application_mode()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):  # (the parent's SIGTERM posts a message)
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)
        self._lifeline = Lifeline(
            loop,
            lambda why: None,
            self._app.exit,
            socket_path=lambda: None,
            kill_agents=lambda: None,
        )
        self._lifeline.install()

    def run_input_thread(self) -> None:
        super().run_input_thread()
        # The input ended: the app is stopping, or the web server closed our pipe (or went away).
        # Either way the process ends within the deadline from here.
        self._leave("input ended")

    def on_meta(self, packet_type: str, payload: dict[str, object]) -> None:
        if packet_type == "quit":  # the browser session ended
            self._leave("browser session ended")
            return
        super().on_meta(packet_type, payload)

    def _leave(self, why: str) -> None:
        """Exit the app, and end the process `lifeline.DEADLINE` seconds later if it is still
        there (an app told to exit while it mounts can fail and never finish)."""
        if self._lifeline is not None:
            self._lifeline.fire(why)
        else:
            self._app.exit()
