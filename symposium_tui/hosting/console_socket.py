"""The console socket: `<runtime dir>/console.sock` (directory 0700, socket 0600).

`ConsoleHost` listens there; every connection is one vscodelm JSON-RPC connection with its own
history, exactly as if it were a stdio process — unless its first line is a `console/hello`: then
it is a console attaching (`symposium_tui.wire.attached_console`, reached through
`symposium-tui attach` and `symposium-tui link`), or a `link/hello`: an ACP front door linking in
(`symposium_tui.wire.acp_door`), or a `hook/hello`: a CLI's hook asking
(`symposium_tui.wire.hook_door`). Peers of another uid are refused (checked by the kernel's peer
credentials), and nothing listens on TCP.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import socket
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge.jsonrpc import line_limit
from bridge.lines import OverlongLine, read_line
from bridge.paths import runtime_dir
from bridge.tasks import TaskSupervisor

if TYPE_CHECKING:
    from bridge.approvals import ConsoleHandle
    from bridge.core import Bridge

log = logging.getLogger(__name__)


class HostError(Exception):
    pass


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
        # Whether this host made its socket file (then it removes it as it leaves, unless
        # another console answers there by then).
        self._made = False

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
                self._on_client, path=str(self.path), limit=line_limit(), start_serving=False
            )
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        self._made = True
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
            atexit.register(self._remove_socket)

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
            from symposium_tui.wire import acp_door
            from symposium_tui.wire.attached_console import is_hello, serve_console

            if is_hello(first):
                await serve_console(self.bridge.approvals, reader, writer, first.rstrip(b"\n"))
                return
            if self.consoles_only:
                self.refused += 1
                return
            if acp_door.is_hello(first):  # an ACP front door linking in (`symposium-tui acp`)
                await acp_door.serve_link(self.bridge, reader, writer, first)
                return
            from symposium_tui.wire import hook_door

            if hook_door.is_hello(first):  # a CLI's hook (`symposium-tui hook claude|codex|gemini`)
                await hook_door.serve_hook(self.bridge, reader, writer, first)
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
        self._remove_socket()
        for task in list(self._clients):
            task.cancel()

    def _remove_socket(self) -> None:
        """Remove the socket file, once this host no longer listens on it — unless a console
        started while this one was leaving has put its own there and answers on it (the file
        cannot tell: a new socket may get the inode the old one freed)."""
        if not self._made:
            return
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(0.5)
        try:
            probe.connect(str(self.path))
        except OSError:
            with contextlib.suppress(OSError):
                self.path.unlink()  # nobody answers there: ours, or stale
        finally:
            probe.close()

    async def stop(self) -> None:
        """No new connection, the socket file removed, every connection ended (a start under way
        too): nothing of this host runs when this returns."""
        await self._tasks.close()
        server, self._server = self._server, None
        if server is not None:
            server.close()
            # Gone before anything in flight is answered: an endpoint relaying here sees the
            # console leaving (`ConsoleSwitch`) before its client can send the next request.
            self._remove_socket()
        for task in list(self._clients):
            task.cancel()
        if self._clients:
            await asyncio.gather(*self._clients, return_exceptions=True)
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)


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
