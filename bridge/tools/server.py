"""`ClientToolServer`: the process-wide listener that hosts every agent session's endpoint.

Streamable HTTP on 127.0.0.1 (uvicorn in the bridge's own event loop) at `/<token>/mcp`, behind the
Host / Origin / Content-Type guard, and a unix socket (0600 in a 0700 directory) for
`python -m bridge.mcp_shim SOCKET TOKEN`. It registers and unregisters the endpoints, swaps a
session's tools and waits for the agent to list them again, and stops promptly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import uvicorn
from anyio.streams.buffered import BufferedByteReceiveStream

from bridge.httpguard import GuardPolicy, HttpGuard
from bridge.protocol import ToolDefinition
from bridge.tools.endpoint import (
    EXCHANGE_KEY,
    SERVER_NAME,
    Endpoint,
    HttpExchange,
    SocketSession,
    ToolCallHandler,
    canonical,
    mcp_tools,
)
from bridge.tools.framing import serve_stdio_framing

log = logging.getLogger("bridge.tools")

_TOKEN_LINE_TIMEOUT = 10.0
"""How long a unix-socket peer has to present its token line."""
_GRACEFUL_SHUTDOWN = 1  # seconds
"""uvicorn's grace for connections still open after every endpoint has been torn down."""
_RELIST_WAIT = 1.0
"""How long a prompt waits for the agent to list the client's tools again after they changed."""
_RELIST_QUIET = 0.1
"""... and for the agent's MCP client to go quiet after that."""


class _UvicornServer(uvicorn.Server):
    # uvicorn would take over SIGINT/SIGTERM for the whole process; the bridge owns its signals.
    def capture_signals(self) -> contextlib.AbstractContextManager[None]:  # type: ignore[override]  # uvicorn's is a generator context manager; any context manager does
        return contextlib.nullcontext()


# --- the process-wide server ------------------------------------------------------------------------


class ClientToolServer:
    """One process-wide HTTP listener on 127.0.0.1 (ephemeral port) hosting one `vscode_tools` MCP
    endpoint per agent session (and a unix socket serving the same endpoints to the stdio shim)."""

    def __init__(self, *, host: str = "127.0.0.1", socket_dir: Path | None = None) -> None:
        self.host = host
        self._socket_dir_arg = Path(socket_dir) if socket_dir is not None else None
        self._socket_dir: Path | None = None
        self._created_socket_dir = False
        self.socket_path: Path | None = None
        self.port: int | None = None
        self._endpoints: dict[str, Endpoint] = {}
        self._by_token: dict[str, Endpoint] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._runner: Any = None
        self._uvicorn: _UvicornServer | None = None
        self._http_done = False
        self._closing: set[Endpoint] = set()
        self._start_lock: anyio.Lock | None = None
        self._sockets_scope: anyio.CancelScope | None = None
        self._stopped = False
        self._stop: anyio.Event | None = None
        # Host / Origin / Content-Type before anything else (bridge/httpguard.py); the port is
        # known once bound. Agents' MCP clients send no Origin, so none is allowed.
        self.guard = GuardPolicy(host, name="vscode_tools MCP server")

    # lifecycle -----------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Listen on 127.0.0.1 (ephemeral port) and on the shim's unix socket; idempotent."""
        if self._start_lock is None:
            self._start_lock = anyio.Lock()
        async with self._start_lock:
            if self._runner is None:
                await self._start()

    async def _start(self) -> None:
        import asyncio

        if self._stopped:
            raise RuntimeError("a stopped ClientToolServer cannot be restarted")
        self._stop = anyio.Event()
        self._sockets_scope = anyio.CancelScope()
        # IPPROTO_TCP explicitly: uvicorn sets TCP_NODELAY only on sockets that say they are TCP, and
        # without it a kept-alive tool-call response waits for the peer's delayed ACK (~40 ms).
        sock = socket.socket(
            socket.AF_INET6 if ":" in self.host else socket.AF_INET,
            socket.SOCK_STREAM,
            socket.IPPROTO_TCP,
        )
        try:
            sock.bind((self.host, 0))
            self.port = sock.getsockname()[1]
            self.guard.port = self.port
            if self._socket_dir_arg is not None:
                self._socket_dir = self._socket_dir_arg
                self._socket_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            else:
                self._socket_dir = Path(tempfile.mkdtemp(prefix="symposium-tools-"))  # 0700
                self._created_socket_dir = True
            # Short: a unix socket's whole path must fit in 107 bytes, and the directory may be
            # a long one of the person's (the runtime directory).
            self.socket_path = self._socket_dir / f"t{os.getpid()}-{secrets.token_hex(4)}.sock"
            listener = await anyio.create_unix_listener(self.socket_path, mode=0o600)
        except BaseException:
            sock.close()
            self._remove_socket_files()
            raise

        config = uvicorn.Config(
            HttpGuard(self._asgi, self.guard),
            interface="asgi3",
            lifespan="off",
            proxy_headers=False,
            log_config=None,  # never reconfigure the process's logging (the console owns the screen)
            log_level="warning",
            access_log=False,
            ws="none",
            timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN,
        )
        self._uvicorn = _UvicornServer(config)
        started = anyio.Event()
        self._runner = asyncio.create_task(
            self._run(sock, listener, started), name="vscode_tools server"
        )
        await started.wait()
        # Surface a failed bind/startup here rather than at the first agent's connection.
        while not self._uvicorn.started and not self._runner.done():
            await anyio.sleep(0.005)
        if self._runner.done():
            self._runner.result()

    async def stop(self) -> None:
        """Tear every endpoint down (cancelling pending tool calls) and stop listening, promptly."""
        self._stopped = True
        if self._runner is None:
            return
        assert self._stop is not None
        self._stop.set()
        with anyio.CancelScope(shield=True):
            await self._runner
        self._runner = None

    async def __aenter__(self) -> ClientToolServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _run(
        self, sock: socket.socket, listener: anyio.abc.SocketListener, started: anyio.Event
    ) -> None:
        assert self._uvicorn is not None and self._stop is not None
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._serve_http, sock)
                tg.start_soon(self._serve_sockets, listener)
                for ep in self._endpoints.values():
                    tg.start_soon(self._run_endpoint, ep)
                started.set()
                await self._stop.wait()
                self._tg = None
                async with anyio.create_task_group() as closing:
                    for ep in [*self._endpoints.values(), *self._closing]:
                        closing.start_soon(ep.close)
                assert self._sockets_scope is not None
                self._sockets_scope.cancel()
                self._uvicorn.should_exit = True
                # uvicorn ends once its connections are done (bounded by its graceful timeout);
                # the socket clients and endpoints were cancelled above.
                with anyio.move_on_after(_GRACEFUL_SHUTDOWN + 2):
                    while not self._http_done:
                        await anyio.sleep(0.02)
                tg.cancel_scope.cancel()
        finally:
            started.set()
            self._tg = None
            with anyio.CancelScope(shield=True):
                await listener.aclose()
            self._remove_socket_files()

    def _remove_socket_files(self) -> None:
        with contextlib.suppress(OSError):
            if self.socket_path is not None:
                self.socket_path.unlink(missing_ok=True)
        if self._created_socket_dir and self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)

    async def _serve_http(self, sock: socket.socket) -> None:
        assert self._uvicorn is not None
        try:
            await self._uvicorn.serve(sockets=[sock])
        finally:
            self._http_done = True
            sock.close()

    # endpoints -------------------------------------------------------------------------------------------

    def register(self, key: str, handler: ToolCallHandler, tools: list[ToolDefinition]) -> None:
        """Open the endpoint of one agent session; `handler` runs its tool calls."""
        if key in self._endpoints:
            raise ValueError(f"a vscode_tools endpoint is already registered for {key!r}")
        if self._stopped:
            raise RuntimeError("the ClientToolServer is stopped")
        ep = Endpoint(
            key=key,
            token=secrets.token_urlsafe(24),
            handler=handler,
            tools=mcp_tools(tools),
            definitions=list(tools),
        )
        self._endpoints[key] = ep
        self._by_token[ep.token] = ep
        if self._tg is not None:
            self._tg.start_soon(self._run_endpoint, ep)

    def unregister(self, key: str) -> None:
        """Close a session's endpoint: its clients are disconnected and pending calls cancelled."""
        ep = self._endpoints.pop(key, None)
        if ep is None:
            return
        self._by_token.pop(ep.token, None)
        if self._tg is None:
            ep.abort()
            return
        ep.begin_close()
        self._closing.add(ep)
        self._tg.start_soon(self._close_endpoint, ep)

    async def _close_endpoint(self, ep: Endpoint) -> None:
        try:
            await ep.close()
        finally:
            self._closing.discard(ep)

    def http_server(self, key: str) -> dict[str, Any]:
        """The ACP `McpServer` (http) to offer in `session/new`."""
        ep = self._endpoints[key]
        if self.port is None:
            raise RuntimeError("ClientToolServer.start() has not run")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return {
            "type": "http",
            "name": SERVER_NAME,
            "url": f"http://{host}:{self.port}/{ep.token}/mcp",
            "headers": [],
        }

    def stdio_server(self, key: str) -> dict[str, Any]:
        """The ACP `McpServer` (stdio) to offer in `session/new`: the shim, relaying to our socket."""
        ep = self._endpoints[key]
        if self.socket_path is None:
            raise RuntimeError("ClientToolServer.start() has not run")
        return {
            "name": SERVER_NAME,
            "command": sys.executable,
            "args": ["-m", "bridge.mcp_shim", str(self.socket_path), ep.token],
            "env": [],
        }

    def set_tools(self, key: str, tools: list[ToolDefinition]) -> bool:
        """Replace the session's tools; True if names, descriptions or schemas changed.

        A change is announced (`notifications/tools/list_changed`) to the endpoint's connected
        MCP clients; the new list is served from the moment this returns.
        """
        ep = self._endpoints[key]
        if _same_objects(tools, ep.definitions):
            # The very definitions of the last request (the vscodelm door reuses what it validated
            # when a request repeats the tool list byte for byte): nothing to compare.
            return False
        new = mcp_tools(tools)
        signature = canonical(new)
        changed = signature != ep.signature
        ep.tools = new  # when unchanged: the same content, in the client's order
        ep.definitions = list(tools)
        ep.signature = signature
        if not changed:
            return False
        if self._tg is not None and not ep.closed:
            if ep.connected() and not ep.ignores_list_changed:
                ep.relisted = anyio.Event()
            self._tg.start_soon(ep.announce_tools_changed)
        return True

    async def wait_relisted(self, key: str, timeout: float = _RELIST_WAIT) -> bool:
        """After a change `set_tools` announced: wait (at most `timeout`) until the agent has
        listed the tools again, so that the prompt sent next meets the new list — the agent's MCP
        client re-lists on its own schedule, and the prompt travels on another channel. True when
        it did (or there was nothing to wait for). An agent that lets the wait time out (Claude Code
        ignores list_changed) is not waited for again."""
        ep = self._endpoints.get(key)
        if ep is None or ep.relisted is None:
            return True
        event = ep.relisted
        deadline = time.monotonic() + timeout
        with anyio.move_on_after(timeout):
            await event.wait()
            # Listing is where the agent starts, not where it ends: fast-agent asks again and only
            # then takes the new list. Wait for it to go quiet.
            while ep.busy or time.monotonic() - ep.last_seen < _RELIST_QUIET:
                await anyio.sleep(min(0.02, max(0.0, deadline - time.monotonic())))
        if ep.relisted is event:
            ep.relisted = None
        if not event.is_set():
            ep.ignores_list_changed = True
            log.info(
                "vscode_tools %s: the agent did not list the changed tools within %.1f s",
                key,
                timeout,
            )
        return event.is_set()

    def tools(self, key: str) -> list[ToolDefinition]:
        """The session's current tools, as served."""
        return [
            ToolDefinition(name=t.name, description=t.description or "", inputSchema=t.input_schema)
            for t in self._endpoints[key].tools
        ]

    def connected(self, key: str) -> int:
        """How many MCP clients of this endpoint a tool-list change would reach right now."""
        ep = self._endpoints.get(key)
        return ep.connected() if ep is not None else 0

    async def _run_endpoint(self, ep: Endpoint) -> None:
        with ep.scope:
            async with ep.manager.run():
                ep.ready.set()
                await anyio.sleep_forever()

    # HTTP ---------------------------------------------------------------------------------------------------

    async def _asgi(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return  # no lifespan (disabled) and no websockets (ws="none")
        parts = scope.get("path", "").split("/")
        ep = self._by_token.get(parts[1]) if len(parts) == 3 and parts[2] == "mcp" else None
        if ep is None or ep.closed:
            await _not_found(send)
            return
        with anyio.move_on_after(5):
            await ep.ready.wait()
        if ep.closed or not ep.ready.is_set():
            await _not_found(send)
            return
        method = scope.get("method")
        session_id = _header(scope, b"mcp-session-id")
        if method == "GET" and session_id is not None:
            await self._serve_get(ep, session_id, scope, receive, send)
            return
        exchange = HttpExchange()
        scope[EXCHANGE_KEY] = exchange
        ep.exchanges.add(exchange)
        try:
            await ep.manager.handle_request(scope, receive, send)
        finally:
            ep.exchanges.discard(exchange)
            exchange.close()

    async def _serve_get(
        self, ep: Endpoint, session_id: str, scope: dict[str, Any], receive: Any, send: Any
    ) -> None:
        """The standing GET stream of a handshake-era HTTP session, where list_changed travels."""
        counted = False

        async def watch(message: MutableMapping[str, Any]) -> None:
            nonlocal counted
            if (
                message["type"] == "http.response.start"
                and message["status"] == 200
                and not counted
            ):
                counted = True
                ep.get_streams[session_id] += 1
            await send(message)

        try:
            await ep.manager.handle_request(scope, receive, watch)
        finally:
            if counted:
                ep.get_streams[session_id] -= 1
                if ep.get_streams[session_id] <= 0:
                    del ep.get_streams[session_id]

    # unix socket (the stdio shim) -----------------------------------------------------------------------

    async def _serve_sockets(self, listener: anyio.abc.SocketListener) -> None:
        assert self._sockets_scope is not None
        with self._sockets_scope:
            await listener.serve(self._serve_socket_client)

    async def _serve_socket_client(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            reader = BufferedByteReceiveStream(stream)
            token = ""
            with anyio.move_on_after(_TOKEN_LINE_TIMEOUT):
                try:
                    token = (
                        (await reader.receive_until(b"\n", 512)).decode("ascii", "replace").strip()
                    )
                except (
                    anyio.EndOfStream,
                    anyio.IncompleteRead,
                    anyio.DelimiterNotFound,
                    anyio.BrokenResourceError,
                ):
                    return
            ep = self._by_token.get(token)
            if ep is None or ep.closed:
                return  # an unknown token learns nothing but a closed connection
            session = SocketSession()
            with session.scope:
                ep.sockets.add(session)
                try:
                    await serve_stdio_framing(ep.server, reader, stream, session.reader)
                finally:
                    ep.sockets.discard(session)


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _not_found(send: Any) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 404,
            "headers": [(b"content-type", b"text/plain")],
        }
    )
    await send({"type": "http.response.body", "body": b"Not Found"})


def _same_objects(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
