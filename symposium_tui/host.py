"""The bridge hosted in the console's process, and the console socket VS Code's relay reaches.

`build_hosted()` assembles the core with what a person configured — the settings-backed approval
policy, the audit log, and Bypass answers persisted to the settings file — and returns it as a
`Hosted`: the one typed object the console holds (the bridge, the settings store, the settings
file's load error). `ConsoleHost` listens on
`<runtime dir>/console.sock` (directory 0700, socket 0600); every connection is one vscodelm
JSON-RPC connection with its own history, exactly as if it were a stdio process — unless its first
line is a `console/hello`: then it is a console attaching (`symposium_tui.console_protocol`,
reached through `symposium-tui attach` and `symposium-tui link`), or a `link/hello`: an ACP front
door linking in (`symposium_tui.acp_link`), or a `hook/hello`: a CLI's hook asking
(`symposium_tui.hook_link`). Peers of another uid are refused
(checked by the kernel's peer credentials), and nothing listens on TCP.

`run_console()` is the console process from start to exit: the app's first frame, then the hosted
bridge and its socket, the lifeline that fails closed when the terminal goes, and the clean-up.
The bridge is imported where it is built, not with this module: the console draws its first frame
before pydantic and the core are loaded.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import socket
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge.jsonrpc import LINE_LIMIT
from bridge.lines import OverlongLine, read_line
from bridge.paths import runtime_dir
from bridge.settings import Settings, SettingsError, SettingsStore
from bridge.tasks import TaskSupervisor

if TYPE_CHECKING:
    from collections.abc import Iterable

    from bridge.approvals import ConsoleHandle
    from bridge.audit import AuditLog
    from bridge.core import Bridge
    from bridge.openai import OpenAIServer
    from symposium_tui.notify import Notifier

log = logging.getLogger(__name__)


DEFAULT_HOLD_TIMEOUT = 600.0  # seconds `serve` holds an approval for a console


class HostError(Exception):
    pass


def audit_path() -> Path:
    from bridge.paths import audit_path as path

    return path()


@dataclass
class Hosted:
    """What the console hosts: the bridge and the settings it was built from."""

    bridge: Bridge
    settings_store: SettingsStore
    settings_error: str | None = None  # the settings file could not be used (shown, not fixed)
    notifier: Notifier | None = None  # `[notify]`: pending approvals announced elsewhere

    @property
    def audit(self) -> AuditLog | None:
        """The approval audit log, when the bridge keeps one."""
        return self.bridge.approvals.audit

    async def close(self) -> None:
        """Stop the notifier and the bridge's agents, then close the audit log."""
        if self.notifier is not None:
            await self.notifier.close()
        await self.bridge.close()
        if self.audit is not None:
            self.audit.close()


def build_hosted(
    *,
    cwd: str | None = None,
    event_log: str | None = None,
    bridge_options: dict[str, Any] | None = None,
    settings_store: SettingsStore | None = None,
    audit: bool = True,
    hold: bool = False,
    approval_timeout: float | None = None,
) -> Hosted:
    """The core with the person's settings: policy, persisted bypass, audit log, preferences.

    `hold` keeps approvals pending while no console is attached (`serve`); `approval_timeout`
    (else the `approval_timeout` preference, else 600 s when holding) denies what no console
    answered in time."""
    from bridge import events as ev
    from bridge.approvals import ApprovalBroker
    from bridge.audit import AuditLog
    from bridge.config import BridgeConfig
    from bridge.core import Bridge

    bus = ev.EventBus()
    if event_log:
        bus.subscribe(ev.JsonlEventLog(event_log))
    store = settings_store if settings_store is not None else SettingsStore()
    settings = Settings(path=store.path)
    settings_error: str | None = None
    try:
        settings = store.load()
    except SettingsError as exc:
        settings_error = str(exc)
        log.error("settings not loaded: %s", exc)
    for warning in settings.warnings:  # an ignored key, a bypass that is not applied
        log.warning("settings: %s", warning)

    def persist_bypass(agent: str) -> None:
        store.set_agent_bypass(agent, True)

    timeout = approval_timeout
    if timeout is None:
        preferred = settings.prefs.approval_timeout
        if preferred is not None:
            timeout = float(preferred)
        elif hold:
            timeout = DEFAULT_HOLD_TIMEOUT
    timeout = timeout or None  # 0: wait for ever
    broker = ApprovalBroker(
        bus,
        audit=AuditLog(audit_path()) if audit else None,
        persist_bypass=persist_bypass,
        hold=hold,
        timeout=timeout,
    )
    broker.apply_settings(settings)
    options = settings.prefs.bridge_options()
    notifier = None
    if settings.notify is not None:
        from symposium_tui.notify import Notifier

        notifier = Notifier.for_broker(settings.notify, broker)
    options.update(bridge_options or {})
    bridge = Bridge(BridgeConfig(cwd=cwd or "", **options), bus=bus, approvals=broker)
    return Hosted(bridge, store, settings_error, notifier)


def ensure_private_dir(path: Path) -> Path:
    from bridge.paths import make_private_dir, unsafe_dir_reason

    reason = unsafe_dir_reason(path)  # before anything follows a symlink someone else planted
    if reason is not None:
        raise HostError(reason)
    make_private_dir(path)
    reason = unsafe_dir_reason(path)
    if reason is not None:
        raise HostError(reason)
    st = path.stat()
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def peer_uid(sock: socket.socket) -> int | None:
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


def endpoints_dir() -> Path:
    """Where headless endpoints listen for consoles (`<runtime dir>/endpoints/<pid>.sock`)."""
    return runtime_dir() / "endpoints"


class ConsoleHost:
    """The console socket. With `consoles_only` (a headless endpoint's own socket in
    `endpoints_dir()`), only the console protocol is served there: it is how a console reaches
    the approvals a headless endpoint holds, never a way in for VS Code traffic."""

    def __init__(
        self, bridge: Bridge, path: Path | None = None, *, consoles_only: bool = False
    ) -> None:
        self.bridge = bridge
        self.path = path or runtime_dir() / "console.sock"
        self.consoles_only = consoles_only
        self._server: asyncio.AbstractServer | None = None
        self._clients: set[asyncio.Task[Any]] = set()
        self.refused = 0
        # The console's handle on the broker while the app has none yet (`run_console`): a
        # relayed request that asks permission in between waits for the queue.
        self.early_handle: ConsoleHandle | None = None
        self._tasks = TaskSupervisor(f"console socket {self.path}")  # a start under way

    @property
    def running(self) -> bool:
        return self._server is not None

    async def start(self) -> None:
        ensure_private_dir(self.path.parent)
        if self.path.exists() or self.path.is_symlink():
            if await self._someone_listening():
                raise HostError(
                    f"another Symposium console is already running (socket {self.path})"
                )
            self.path.unlink()  # a stale socket left by a console that died
        old_umask = os.umask(0o177)
        try:
            # Not serving yet: made without a step of the loop in between, so a start cancelled
            # (by `stop()`) never leaves a listening socket nobody holds.
            self._server = await asyncio.start_unix_server(
                self._on_client, path=str(self.path), limit=LINE_LIMIT, start_serving=False
            )
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        await self._server.start_serving()
        log.debug("console listening on %s", self.path)  # serve prints it once

    def start_soon(self) -> None:
        """`start()` from synchronous code on the running loop, without waiting for it (`stop()`
        ends a start still under way). A socket that cannot be made is logged and the process
        serves on without it; one that was made is removed by `stop()`, or when the process exits
        without it."""

        async def start() -> None:
            try:
                await self.start()
            except (HostError, OSError) as exc:
                log.warning("no socket for consoles: %s", exc)
                return
            atexit.register(lambda: self.path.unlink(missing_ok=True))

        self._tasks.start(start(), name="start")

    async def _someone_listening(self) -> bool:
        try:
            _, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(self.path)), 1.0)
        except (TimeoutError, OSError):
            return False
        writer.close()
        return True

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if uid != os.getuid():
            self.refused += 1
            log.warning("refused a console connection from uid %s", uid)
            writer.close()
            return
        task = asyncio.current_task()
        assert task is not None
        self._clients.add(task)
        try:
            try:
                line = await read_line(reader)
            except (ConnectionError, OSError):
                line = b""
            if isinstance(line, OverlongLine):
                log.warning("refused a connection whose first line is over %d bytes", line.limit)
                return
            first = line
            if not first:
                return  # a probe: someone checking that a console is running
            from bridge.vscodelm import serve_connection
            from symposium_tui import acp_link
            from symposium_tui.console_protocol import is_hello, serve_console

            if is_hello(first):
                await serve_console(self.bridge.approvals, reader, writer, first.rstrip(b"\n"))
                return
            if self.consoles_only:
                self.refused += 1
                return
            if acp_link.is_hello(first):  # an ACP front door linking in (`symposium-tui acp`)
                await acp_link.serve_link(self.bridge, reader, writer, first)
                return
            from symposium_tui import hook_link

            if hook_link.is_hello(first):  # a CLI's hook (`symposium-tui hook claude|codex|gemini`)
                await hook_link.serve_hook(self.bridge, reader, writer, first)
                return
            await serve_connection(
                self.bridge,
                reader,
                writer,
                kind="vscode",
                preread=[first.rstrip(b"\n")],
                shutdown_message="The Symposium console closed while answering this request; send it again to continue without it",
            )
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("console connection failed")
        finally:
            self._clients.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    def abandon(self) -> None:
        """Stop at once, from inside the event loop without awaiting anything (the console's
        terminal is gone): no new connection, the socket file removed, every relayed connection
        ended — what it had in flight is answered with the shutdown error."""
        server = self._server
        if server is not None:
            server.close()
        with contextlib.suppress(OSError):
            self.path.unlink()
        for task in list(self._clients):
            task.cancel()

    async def stop(self) -> None:
        """No new connection, the socket file removed, every connection ended (a start under way
        too): nothing of this host runs when this returns."""
        await self._tasks.close()
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for task in list(self._clients):
            task.cancel()
        if self._clients:
            await asyncio.gather(*self._clients, return_exceptions=True)
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)
            with contextlib.suppress(OSError):
                self.path.unlink()


def hold_for_consoles(bridge: Bridge) -> ConsoleHost | None:
    """With `approval_timeout` set in the preferences, a headless endpoint holds what it cannot
    ask anyone about (its client offered no round trip) for a console to attach — `symposium-tui
    attach` reaches it through its own socket, `<runtime dir>/endpoints/<pid>.sock` — until that
    timeout denies it. Without the preference it denies at once (decision 11), as VS Code expects
    of an endpoint nobody watches, and no socket is made (None). The returned host's socket is
    starting; the caller stops it when the endpoint ends."""
    preferred = Settings.load_quietly().prefs.approval_timeout
    if not preferred:
        return None
    broker = bridge.approvals
    broker.timeout = float(preferred)
    broker.hold_unasked = True
    host = ConsoleHost(bridge, endpoints_dir() / f"{os.getpid()}.sock", consoles_only=True)
    host.start_soon()
    return host


async def serve_forever(
    hosted: Hosted, host: ConsoleHost, openai: OpenAIServer | None = None
) -> None:
    """`symposium-tui serve`: the host without a UI, until a signal."""
    import signal

    await host.start()
    if openai is not None:  # a bridge.openai.OpenAIServer, not started yet
        try:
            await openai.start()
        except BaseException:
            await host.stop()
            raise
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    from bridge.core import settle_heap

    settle_heap()
    print(f"symposium-tui serve: serving on {host.path}", flush=True)
    broker = hosted.bridge.approvals
    if broker.timeout:
        print(
            f"symposium-tui serve: approvals wait up to {broker.timeout:g} s for a console "
            "(symposium-tui attach)",
            flush=True,
        )
    if openai is not None:
        print(f"symposium-tui serve: OpenAI-compatible API on {openai.url}", flush=True)
    try:
        await stop.wait()
    finally:
        if openai is not None:
            await openai.stop()
        await host.stop()
        await hosted.close()


# --- the console process ----------------------------------------------------------------------------


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


def another_console_listening() -> str | None:
    """The socket path when a console already answers on it (a cheap check before drawing)."""
    path = runtime_dir() / "console.sock"
    if not path.exists():
        return None
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except OSError:
        return None  # stale: the host replaces it
    finally:
        probe.close()
    return str(path)


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
    import sys

    from symposium_tui.app import SymposiumApp
    from symposium_tui.lifeline import Lifeline
    from symposium_tui.links import console_name

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

    servers: list[OpenAIServer] = []
    hosts: list[ConsoleHost] = []

    async def connect() -> tuple[Hosted, ConsoleHost | None]:
        hosted = build_hosted(cwd=cwd, event_log=event_log, bridge_options=bridge_options)
        bridge = hosted.bridge
        host = ConsoleHost(bridge)
        hosts.append(host)  # known to the lifeline before the app has it
        # Held for the app until it attaches its own handle: a relayed request that asks
        # permission in between is a card waiting for the queue, not "no console attached".
        host.early_handle = bridge.approvals.attach(console_name())
        try:
            await host.start()
            if openai:
                from bridge.openai import OpenAIServer

                server = OpenAIServer(
                    bridge,
                    openai,
                    api_key=api_key,
                    allowed_hosts=allowed_hosts,
                    allowed_origins=allowed_origins,
                )
                await server.start()
                servers.append(server)
                app.openai_urls.append(server.url)
        except BaseException:
            await host.stop()
            await hosted.close()
            raise
        from bridge.core import settle_heap

        settle_heap()  # after the first frame: the console is drawn before this runs
        return hosted, host

    app = SymposiumApp(connect=connect, arm_delay=preferences.arm_delay)

    def current_host() -> ConsoleHost | None:
        return app.host if app.host is not None else (hosts[0] if hosts else None)

    # A closed SSH session (SIGHUP, or the terminal reporting a hang-up) or a `kill` (SIGTERM):
    # what this console held is denied and its socket removed at once, then it leaves as Ctrl+Q
    # does — within 2 seconds whatever the terminal does (symposium_tui/lifeline.py).
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

    lifeline = Lifeline(
        asyncio.get_running_loop(),
        fail_closed,
        app.exit,
        socket_path=socket_path,
        kill_agents=last_resort,
    )
    lifeline.install()
    try:
        await app.run_async(mouse=mouse)
    finally:
        lifeline.uninstall()
        for server in servers:
            await server.stop()
        if app.host is not None:
            await app.host.stop()
        if app.hosted is not None:
            await app.hosted.close()
        lifeline.finished.set()
    if servers:
        print(
            f"symposium-tui: served the OpenAI-compatible API on {servers[0].url}", file=sys.stderr
        )
    return app.return_code or 0
