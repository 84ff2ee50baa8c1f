"""The synthetic `vscode_tools` MCP server: the chat client's own tools, offered to the agent.

Architecture decision 8. One `ClientToolServer` per bridge process hosts one MCP
endpoint per agent session, reachable two ways:

* streamable HTTP on 127.0.0.1 (uvicorn running in the bridge's own event loop), at
  `/<unguessable token>/mcp`, for agents that accept `type: http` MCP servers;
* a unix socket (file 0600 in a 0700 directory) for `python -m bridge.mcp_shim SOCKET TOKEN`, a
  standard-library relay that agents which only launch stdio MCP servers spawn.

Every endpoint is its own lowlevel `mcp` `Server`, so sessions are isolated by construction: a
client of one token can neither see nor call another session's tools. Both protocol eras of the
SDK are served — the 2025 handshake era that today's agents speak, and the 2026-07-28
per-request era (where `tools/list_changed` travels on `subscriptions/listen` streams).

A `tools/call` awaits the session's handler with no timeout; the handler's awaitable is cancelled
when the agent cancels the request (`notifications/cancelled`), when the HTTP request that carries
the call is dropped, when the MCP connection ends, and when the endpoint is unregistered or the
server stops.

`import mcp` is slow (about a second); only import this module once an agent session needs it.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import secrets
import shutil
import socket
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
import uvicorn
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from bridge.httpguard import GuardPolicy, HttpGuard
from bridge.protocol import ToolDefinition
from bridge.tool_results import tool_result_text

__all__ = [
    "CLAUDE_TOOL_PREFIX",
    "SERVER_NAME",
    "ClientToolServer",
    "ToolCallHandler",
    "ToolResult",
    "tool_result_text",
]

log = logging.getLogger(__name__)

SERVER_NAME = "vscode_tools"
SERVER_INSTRUCTIONS = "Tools provided by the chat client, bridged to the agent"
CLAUDE_TOOL_PREFIX = f"mcp__{SERVER_NAME}__"
"""Claude Code sometimes calls a tool by its qualified name; upstream strips it (`a113b9e9`)."""

_MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""Largest JSON-RPC message accepted (HTTP body or one stdio line): tool arguments can carry files."""
_TOKEN_LINE_TIMEOUT = 10.0
"""How long a unix-socket peer has to present its token line."""
_GRACEFUL_SHUTDOWN = 1  # seconds
"""uvicorn's grace for connections still open after every endpoint has been torn down."""
_DRAIN_TIMEOUT = 1.0
"""How long an endpoint being closed waits for cancelled calls' answers to reach its clients."""
_RELIST_WAIT = 1.0
"""How long a prompt waits for the agent to list the client's tools again after they changed."""
_RELIST_QUIET = 0.1
"""... and for the agent's MCP client to go quiet after that."""
_LONG_REQUESTS = frozenset({"tools/call", "subscriptions/listen"})
"""Requests that may stay open for long: they do not keep the agent's MCP client from being quiet."""
_EXCHANGE_KEY = "symposium.http_exchange"

CALL_META: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("vscode_tools_call_meta")
"""The `_meta` of the MCP `tools/call` being handled, for the handler (which runs in the same task):
the agent's id for the call (Claude Code: `claudecode/toolUseId`) ties an ACP permission request to
a call this server really received."""


def agent_call_id(meta: Any) -> str | None:
    """The agent's own id for an MCP tool call, from the call's `_meta`, when it says one."""
    if not isinstance(meta, dict):
        return None
    for key in ("claudecode/toolUseId", "toolCallId", "tool_call_id", "acp/toolCallId"):
        value = meta.get(key)
        if isinstance(value, str) and value:
            return value
    return None


"""ASGI scope key under which the router hands an `_HttpExchange` to the tools/call handler."""


@dataclass
class ToolResult:
    text: str
    is_error: bool = False


ToolCallHandler = Callable[[str, dict[str, Any]], Awaitable[ToolResult]]
"""`(unprefixed tool name, arguments) -> result`; may wait as long as the client takes."""


# --- what the agent sees of a client tool result (its text, not JSON: B13) ------------------------------------------


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- one session's endpoint ------------------------------------------------------------------------


def _input_schema(schema: Any) -> dict[str, Any]:
    """MCP requires an object schema; a non-object one (upstream made it `{}`: B12 in docs/upstream.md) says "any object"."""
    if not isinstance(schema, dict):
        return {"type": "object"}
    if "type" not in schema:
        return {"type": "object", **schema}
    return schema


def _canonical(tools: list[types.Tool]) -> dict[str, str]:
    """What an agent can observe of a tool list, independent of order (upstream compared names only: B12)."""
    return {t.name: _compact([t.description, t.input_schema]) for t in tools}


_CLIENT_TOOL_ANNOTATIONS = types.ToolAnnotations(read_only_hint=True)
"""What the agent is told of every client tool: read-only, as far as the agent is concerned.

The agent never runs these tools itself: the client does, under its own confirmation, and the
bridge already lets the agent call them without a permission round trip. Claude Code runs the MCP
calls of one model message concurrently only when the tools say `readOnlyHint`; otherwise one
after the other, each a client round trip of its own. Marked so, the calls reach the client
together, as several `tool_call` parts of one response (decision 8), and the client runs them in
the order the model wrote them."""


def _mcp_tools(definitions: list[ToolDefinition]) -> list[types.Tool]:
    tools: dict[str, types.Tool] = {}
    for d in definitions:
        # VS Code never sends duplicates; if a client does, the first definition wins.
        if d.name not in tools:
            tools[d.name] = types.Tool(
                name=d.name,
                description=d.description,
                input_schema=_input_schema(d.inputSchema),
                annotations=_CLIENT_TOOL_ANNOTATIONS,
            )
    return list(tools.values())


def _connection_of(ctx: Any) -> Any:
    """The `mcp.server.connection.Connection` a request arrived on.

    The SDK's lowlevel context only exposes it through the session (its coming `Context` has a
    public `connection`); list_changed needs the connection, which outlives any one request.
    """
    connection = getattr(ctx, "connection", None)
    if connection is None:
        connection = getattr(ctx.session, "_connection", None)
    return connection


class _HttpExchange:
    """One HTTP request to an endpoint; a tools/call it carries is cancelled when it ends unanswered."""

    def __init__(self) -> None:
        self.closed = False
        self.calls: set[anyio.CancelScope] = set()

    def close(self) -> None:
        self.closed = True
        for scope in self.calls:
            scope.cancel()


@dataclass(eq=False)
class _SocketSession:
    """One shim connection: cancelling `reader` ends it gracefully (EOF), `scope` ends it at once."""

    reader: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)


class _ToolsServer(Server[Any]):
    # The HTTP session manager builds the handshake answer with default notification options,
    # which would advertise `listChanged: false`; every connection of ours gets `true`.
    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


@dataclass(eq=False)
class _Endpoint:
    key: str
    token: str
    handler: ToolCallHandler
    tools: list[types.Tool]
    server: _ToolsServer = field(init=False)
    manager: StreamableHTTPSessionManager = field(init=False)
    listen: ListenHandler = field(init=False)
    bus: InMemorySubscriptionBus = field(default_factory=InMemorySubscriptionBus)
    ready: anyio.Event = field(default_factory=anyio.Event)
    closed: bool = False
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    # Handshake-era connections that can be told about tool-list changes, and the HTTP sessions
    # among them whose standing GET stream (where such notifications travel) is open.
    connections: set[Any] = field(default_factory=set)
    get_streams: Counter[str] = field(default_factory=Counter)
    listeners: int = 0
    calls: set[anyio.CancelScope] = field(default_factory=set)
    exchanges: set[_HttpExchange] = field(default_factory=set)
    sockets: set[_SocketSession] = field(default_factory=set)
    # Set when the agent lists the tools again after a change was announced (None: nothing
    # announced); an agent that once let an announcement go unanswered is not waited for again.
    relisted: anyio.Event | None = None
    ignores_list_changed: bool = False
    busy: int = 0  # MCP requests being answered, but for _LONG_REQUESTS
    last_seen: float = 0.0  # when one last started or ended (time.monotonic)

    def __post_init__(self) -> None:
        self.listen = ListenHandler(self.bus)
        self.server = _ToolsServer(
            SERVER_NAME,
            version=_version(),
            instructions=SERVER_INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=self._listen,
        )
        self.server.middleware.append(self._track_connection)
        self.manager = StreamableHTTPSessionManager(
            app=self.server,
            security_settings=TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
            ),
            # An agent may stay silent for hours between tool calls; the session lives as long as
            # the endpoint does (unregister/stop end it) instead of expiring under the agent.
            session_idle_timeout=None,
            max_request_body_size=_MAX_MESSAGE_BYTES,
        )

    # MCP handlers ---------------------------------------------------------------------------------

    async def _track_connection(self, ctx: Any, call_next: Any) -> Any:
        if getattr(ctx, "method", None) in _LONG_REQUESTS:
            return await self._track(ctx, call_next)
        self.busy += 1
        self.last_seen = time.monotonic()
        try:
            return await self._track(ctx, call_next)
        finally:
            self.busy -= 1
            self.last_seen = time.monotonic()

    async def _track(self, ctx: Any, call_next: Any) -> Any:
        connection = _connection_of(ctx)
        if (
            connection is not None
            and connection not in self.connections
            and connection.has_standalone_channel
            and connection.protocol_version not in MODERN_PROTOCOL_VERSIONS
            and not self.closed
        ):
            self.connections.add(connection)
            connection.exit_stack.callback(self.connections.discard, connection)
        return await call_next(ctx)

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        if self.relisted is not None:
            self.relisted.set()
        return types.ListToolsResult(tools=list(self.tools))

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = params.name.removeprefix(CLAUDE_TOOL_PREFIX)
        if not any(t.name == name for t in self.tools):
            raise MCPError(code=types.INVALID_PARAMS, message=f"tool '{name}' not found")
        request = getattr(ctx, "request", None)
        exchange = getattr(request, "scope", {}).get(_EXCHANGE_KEY) if request is not None else None
        result: ToolResult | None = None
        with anyio.CancelScope() as scope:
            self.calls.add(scope)
            if exchange is not None:
                exchange.calls.add(scope)
                if exchange.closed:
                    scope.cancel()
            if self.closed:
                scope.cancel()
            token = CALL_META.set(dict(params.meta or {}) if params.meta else {})
            try:
                result = await self.handler(name, dict(params.arguments or {}))
            except Exception as exc:  # the handler's failure is the agent's tool error, not ours
                log.exception("client tool handler failed for %r", name)
                raise MCPError(
                    code=types.INTERNAL_ERROR, message=f"tool '{name}' failed: {exc}"
                ) from exc
            finally:
                CALL_META.reset(token)
                self.calls.discard(scope)
                if exchange is not None:
                    exchange.calls.discard(scope)
        if result is None:
            # Our own cancellation (dropped HTTP request, endpoint gone). A peer's
            # notifications/cancelled is not caught here: the SDK cancels the request itself.
            raise MCPError(code=types.INTERNAL_ERROR, message="tool invocation cancelled")
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)],
            is_error=bool(result.is_error),
        )

    async def _listen(self, ctx: Any, params: types.SubscriptionsListenRequestParams) -> Any:
        counts = bool(params.notifications.tools_list_changed)
        self.listeners += counts
        try:
            return await self.listen(ctx, params)
        finally:
            self.listeners -= counts

    # notifications ---------------------------------------------------------------------------------

    def _notifiable(self) -> list[Any]:
        return [
            c
            for c in self.connections
            if c.initialized.is_set()
            and (c.session_id is None or self.get_streams[c.session_id] > 0)
        ]

    def connected(self) -> int:
        return len(self._notifiable()) + self.listeners

    async def announce_tools_changed(self) -> None:
        for connection in list(self.connections):
            if connection.initialized.is_set():
                await connection.send_tool_list_changed()  # best-effort, never raises
        await self.bus.publish(ToolsListChanged())

    # teardown ----------------------------------------------------------------------------------------

    def begin_close(self) -> None:
        """Refuse new work, cancel pending calls (their clients get an error answer) and end the
        shim connections and listen streams gracefully."""
        self.closed = True
        for scope in self.calls:
            scope.cancel()
        for session in self.sockets:
            session.reader.cancel()
        self.listen.close()

    async def close(self) -> None:
        """Tear the endpoint down: gracefully first, then by force.

        Cancelling the SDK's session tasks while a request is still being answered makes the SDK
        wait (up to a second) on a write nobody reads, so the cancelled calls' answers are given
        time to go out before the HTTP sessions are cut.
        """
        self.begin_close()
        with anyio.move_on_after(_DRAIN_TIMEOUT):
            while self.exchanges or self.sockets:
                await anyio.sleep(0.01)
        self.abort()

    def abort(self) -> None:
        self.closed = True
        for scope in [self.scope, *self.calls]:
            scope.cancel()
        for session in self.sockets:
            session.scope.cancel()
        self.listen.close()


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("symposium-tui")
    except Exception:
        return "0"


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
        self._endpoints: dict[str, _Endpoint] = {}
        self._by_token: dict[str, _Endpoint] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._runner: Any = None
        self._uvicorn: _UvicornServer | None = None
        self._http_done = False
        self._closing: set[_Endpoint] = set()
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
            self.socket_path = (
                self._socket_dir / f"vscode-tools-{os.getpid()}-{secrets.token_hex(4)}.sock"
            )
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
        ep = _Endpoint(
            key=key, token=secrets.token_urlsafe(24), handler=handler, tools=_mcp_tools(tools)
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

    async def _close_endpoint(self, ep: _Endpoint) -> None:
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
        new = _mcp_tools(tools)
        if _canonical(new) == _canonical(ep.tools):
            ep.tools = new  # same content; keep the client's order
            return False
        ep.tools = new
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

    async def _run_endpoint(self, ep: _Endpoint) -> None:
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
        exchange = _HttpExchange()
        scope[_EXCHANGE_KEY] = exchange
        ep.exchanges.add(exchange)
        try:
            await ep.manager.handle_request(scope, receive, send)
        finally:
            ep.exchanges.discard(exchange)
            exchange.close()

    async def _serve_get(
        self, ep: _Endpoint, session_id: str, scope: dict[str, Any], receive: Any, send: Any
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
            session = _SocketSession()
            with session.scope:
                ep.sockets.add(session)
                try:
                    await _serve_stdio_framing(ep.server, reader, stream, session.reader)
                finally:
                    ep.sockets.discard(session)


async def _serve_stdio_framing(
    server: Server[Any],
    reader: BufferedByteReceiveStream,
    stream: anyio.abc.ByteSendStream,
    reader_scope: anyio.CancelScope,
) -> None:
    """Run an MCP server session over newline-delimited JSON-RPC (the MCP stdio framing)."""
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_lines() -> None:
        # Cancelling `reader_scope` is how the bridge hangs up: the session sees end of input.
        with reader_scope, read_send:
            while True:
                try:
                    line = await reader.receive_until(b"\n", _MAX_MESSAGE_BYTES)
                except (
                    anyio.EndOfStream,
                    anyio.IncompleteRead,
                    anyio.BrokenResourceError,
                    anyio.ClosedResourceError,
                ):
                    return
                except anyio.DelimiterNotFound:
                    log.warning(
                        "vscode_tools stdio client sent a line over %d bytes; closing",
                        _MAX_MESSAGE_BYTES,
                    )
                    return
                if not line.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:
                    await read_send.send(exc)
                    continue
                await read_send.send(SessionMessage(message))

    async def write_lines() -> None:
        async with write_recv:
            async for item in write_recv:
                data = (
                    item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                )
                try:
                    await stream.send(data)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_lines)
        tg.start_soon(write_lines)
        await server.run(read_recv, write_send, server.create_initialization_options())
        tg.cancel_scope.cancel()


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
