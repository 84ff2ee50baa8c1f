"""The console process from start to exit (`symposium-tui`, `symposium-tui console`).

The app's first frame, then the hosted bridge and its console socket, the lifeline that fails
closed when the terminal goes, and the clean-up. The bridge is imported where it is built
(`symposium_tui.hosting.hosted.build_hosted`), not with this module: the console draws its first
frame before pydantic and the core are loaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge.settings import Settings
from symposium_tui.hosting.console_socket import ConsoleHost, another_console_listening
from symposium_tui.hosting.hosted import Hosted, build_hosted
from symposium_tui.hosting.lifeline import Lifeline
from symposium_tui.wire.transport import console_name

if TYPE_CHECKING:
    from bridge.core import Bridge
    from bridge.openai import OpenAIServer
    from symposium_tui.app import SymposiumApp

log = logging.getLogger(__name__)


def run_console(
    *,
    cwd: str | None = None,
    mouse: bool = True,
    event_log: str | None = None,
    bridge_options: dict[str, Any] | None = None,
    openai: str | None = None,
    api_key: str | None = None,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
) -> int:
    """`symposium-tui` / `symposium-tui console`: the app first, then the bridge and the console
    socket right after its first frame (so the console shows up as fast as a bare Textual app).
    With `openai` ("HOST:PORT") the same bridge also serves the OpenAI-compatible API."""
    return asyncio.run(
        _run_console(
            cwd=cwd,
            mouse=mouse,
            event_log=event_log,
            bridge_options=bridge_options,
            openai=openai,
            api_key=api_key,
            allowed_hosts=tuple(allowed_hosts),
            allowed_origins=tuple(allowed_origins),
        )
    )


class BridgeStart:
    """What the console starts right after its first frame — the hosted bridge, the console
    socket and, with `openai` ("HOST:PORT"), the OpenAI-compatible API — and what it started, for
    the lifeline and the clean-up. `connect` is the app's."""

    def __init__(
        self,
        *,
        cwd: str | None,
        event_log: str | None,
        bridge_options: dict[str, Any] | None,
        openai: str | None,
        api_key: str | None,
        allowed_hosts: tuple[str, ...],
        allowed_origins: tuple[str, ...],
    ) -> None:
        self.cwd = cwd
        self.event_log = event_log
        self.bridge_options = bridge_options
        self.openai = openai
        self.api_key = api_key
        self.allowed_hosts = allowed_hosts
        self.allowed_origins = allowed_origins
        self.hosts: list[ConsoleHost] = []  # known to the lifeline before the app has it
        self.servers: list[OpenAIServer] = []
        self.on_serving: Callable[[str], None] = lambda url: None  # the OpenAI API's URL

    async def connect(self) -> tuple[Hosted, ConsoleHost | None]:
        hosted = build_hosted(
            cwd=self.cwd, event_log=self.event_log, bridge_options=self.bridge_options
        )
        bridge = hosted.bridge
        host = ConsoleHost(bridge)
        self.hosts.append(host)
        # Held for the app until it attaches its own handle: a relayed request that asks
        # permission in between is a card waiting for the queue, not "no console attached".
        host.early_handle = bridge.approvals.attach(console_name())
        try:
            await host.start()
            if self.openai:
                await self._serve_openai(bridge)
        except BaseException:
            await host.stop()
            await hosted.close()
            raise
        from bridge.core import settle_heap

        settle_heap()  # after the first frame: the console is drawn before this runs
        return hosted, host

    async def _serve_openai(self, bridge: Bridge) -> None:
        from bridge.openai import OpenAIServer

        assert self.openai is not None
        server = OpenAIServer(
            bridge,
            self.openai,
            api_key=self.api_key,
            allowed_hosts=self.allowed_hosts,
            allowed_origins=self.allowed_origins,
        )
        await server.start()
        self.servers.append(server)
        self.on_serving(server.url)


def _lifeline(app: SymposiumApp, start: BridgeStart) -> Lifeline:
    """A closed SSH session (SIGHUP, or the terminal reporting a hang-up) or a `kill` (SIGTERM):
    what this console held is denied and its socket removed at once, then it leaves as Ctrl+Q
    does — within 2 seconds whatever the terminal does (symposium_tui/hosting/lifeline.py)."""

    def current_host() -> ConsoleHost | None:
        return app.host if app.host is not None else (start.hosts[0] if start.hosts else None)

    def fail_closed(why: str) -> None:
        log.warning("leaving (%s): denying what this console holds", why)
        host = current_host()
        for handle in (app.handle, host.early_handle if host is not None else None):
            if handle is not None:
                handle.detach()
        if host is not None:
            host.abandon()

    def socket_path() -> Path | None:
        host = current_host()
        return host.path if host is not None else None

    def last_resort() -> None:
        """From the deadline thread, the event loop stuck: audit what is still pending as denied
        (it is: nobody will ever approve it), then kill the agents we started."""
        bridge = app.hosted.bridge if app.hosted is not None else None
        if bridge is None:
            return
        with contextlib.suppress(Exception):
            bridge.approvals.audit_pending_as_denied(
                "the console went away: its terminal closed (forced exit)"
            )
        for session in bridge.all_sessions():
            if session.process is not None:
                session.process.kill_now()

    return Lifeline(
        asyncio.get_running_loop(),
        fail_closed,
        app.exit,
        socket_path=socket_path,
        kill_agents=last_resort,
    )


async def _run_console(
    *,
    cwd: str | None,
    mouse: bool,
    event_log: str | None,
    bridge_options: dict[str, Any] | None = None,
    openai: str | None = None,
    api_key: str | None = None,
    allowed_hosts: tuple[str, ...] = (),
    allowed_origins: tuple[str, ...] = (),
) -> int:
    from symposium_tui.app import SymposiumApp

    taken = another_console_listening()
    if taken is not None:
        print(
            f"symposium-tui: another Symposium console is already running (socket {taken})",
            file=sys.stderr,
        )
        return 1
    preferences = Settings.load_quietly().prefs
    if not preferences.mouse:
        mouse = False
    start = BridgeStart(
        cwd=cwd,
        event_log=event_log,
        bridge_options=bridge_options,
        openai=openai,
        api_key=api_key,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )
    app = SymposiumApp(connect=start.connect, arm_delay=preferences.arm_delay)
    start.on_serving = app.openai_urls.append
    lifeline = _lifeline(app, start)
    lifeline.install()
    try:
        await app.run_async(mouse=mouse)
    finally:
        lifeline.uninstall()
        for server in start.servers:
            await server.stop()
        if app.host is not None:
            await app.host.stop()
        if app.hosted is not None:
            await app.hosted.close()
        lifeline.finished.set()
    if start.servers:
        print(
            f"symposium-tui: served the OpenAI-compatible API on {start.servers[0].url}",
            file=sys.stderr,
        )
    return app.return_code or 0
