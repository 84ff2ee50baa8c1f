"""One agent session's `vscode_tools` MCP endpoint: its own lowlevel `mcp` server and tool list.

Every endpoint is its own `Server`, so sessions are isolated by construction: a client of one token
can neither see nor call another session's tools. The endpoint answers `tools/list` and
`tools/call` (awaiting the session's handler, cancelled with the call, its HTTP request, its
connection or the endpoint), announces tool-list changes to the clients that can hear them (the
2025 handshake era's connections and the 2026-07-28 era's `subscriptions/listen` streams), and
tears down gracefully, then by force.
"""

from __future__ import annotations

import contextvars
import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from bridge.protocol import ToolDefinition

log = logging.getLogger("bridge.tools")  # one logger name for the whole server

SERVER_NAME = "vscode_tools"
SERVER_INSTRUCTIONS = "Tools provided by the chat client, bridged to the agent"
CLAUDE_TOOL_PREFIX = f"mcp__{SERVER_NAME}__"
"""Claude Code sometimes calls a tool by its qualified name; upstream strips it (`a113b9e9`)."""

MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""Largest JSON-RPC message accepted (HTTP body or one stdio line): tool arguments can carry files."""
_DRAIN_TIMEOUT = 1.0
"""How long an endpoint being closed waits for cancelled calls' answers to reach its clients."""
_LONG_REQUESTS = frozenset({"tools/call", "subscriptions/listen"})
"""Requests that may stay open for long: they do not keep the agent's MCP client from being quiet."""
EXCHANGE_KEY = "symposium.http_exchange"
"""ASGI scope key under which the router hands an `HttpExchange` to the tools/call handler."""

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


@dataclass
class ToolResult:
    text: str
    is_error: bool = False


ToolCallHandler = Callable[[str, dict[str, Any]], Awaitable[ToolResult]]
"""`(unprefixed tool name, arguments) -> result`; may wait as long as the client takes."""


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


def canonical(tools: list[types.Tool]) -> dict[str, str]:
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


def mcp_tools(definitions: list[ToolDefinition]) -> list[types.Tool]:
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


class HttpExchange:
    """One HTTP request to an endpoint; a tools/call it carries is cancelled when it ends unanswered."""

    def __init__(self) -> None:
        self.closed = False
        self.calls: set[anyio.CancelScope] = set()

    def close(self) -> None:
        self.closed = True
        for scope in self.calls:
            scope.cancel()


@dataclass(eq=False)
class SocketSession:
    """One shim connection: cancelling `reader` ends it gracefully (EOF), `scope` ends it at once."""

    reader: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)


class ToolsServer(Server[Any]):
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
class Endpoint:
    key: str
    token: str
    handler: ToolCallHandler
    tools: list[types.Tool]
    server: ToolsServer = field(init=False)
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
    exchanges: set[HttpExchange] = field(default_factory=set)
    sockets: set[SocketSession] = field(default_factory=set)
    # Set when the agent lists the tools again after a change was announced (None: nothing
    # announced); an agent that once let an announcement go unanswered is not waited for again.
    relisted: anyio.Event | None = None
    ignores_list_changed: bool = False
    busy: int = 0  # MCP requests being answered, but for _LONG_REQUESTS
    last_seen: float = 0.0  # when one last started or ended (time.monotonic)
    # The definitions `tools` was made from and its `canonical` form: a client resends its whole
    # tool list with every request (VS Code: ~100 KB of schemas), nearly always unchanged.
    definitions: list[ToolDefinition] = field(default_factory=list)
    signature: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.signature = canonical(self.tools)
        self.listen = ListenHandler(self.bus)
        self.server = ToolsServer(
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
            max_request_body_size=MAX_MESSAGE_BYTES,
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
        exchange = getattr(request, "scope", {}).get(EXCHANGE_KEY) if request is not None else None
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
