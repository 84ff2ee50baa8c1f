"""The `vscode_tools` MCP server, driven by the real `mcp` SDK clients (streamable HTTP and stdio).

No mocks: every test starts a real `ClientToolServer` (uvicorn on 127.0.0.1, a real unix socket)
and talks to it the way agents do — the SDK's HTTP client, or the SDK's stdio client spawning
`python -m bridge.mcp_shim`.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from bridge.protocol import ToolDefinition
from bridge.tools import ClientToolServer, ToolResult, tool_result_text

HANG_GUARD = 20  # seconds; a hang fails the test instead of the suite
REPO = Path(__file__).resolve().parents[2]

READ = ToolDefinition(
    name="read_file",
    description="Read a file",
    inputSchema={
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
)
SEARCH = ToolDefinition(
    name="search", description="Search the workspace", inputSchema={"type": "object"}
)
LOOSE = ToolDefinition(
    name="loose", description="A tool whose client sent no usable schema", inputSchema="nope"
)

# The raw opening of a handshake-era MCP session, for tests that play the agent by hand.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "agent", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
CALL_READ = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "read_file", "arguments": {}},
}


class Handler:
    """A session's tool-call handler that records what reaches it."""

    def __init__(self, result: ToolResult | None = None, *, block: bool = False) -> None:
        self.result = result or ToolResult(text="ok")
        self.block = block
        self.calls: list[tuple[str, dict]] = []
        self.entered = anyio.Event()
        self.cancelled = anyio.Event()

    async def __call__(self, name: str, arguments: dict) -> ToolResult:
        self.calls.append((name, arguments))
        self.entered.set()
        if self.block:
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                self.cancelled.set()
                raise
        return self.result


class Notifications:
    """A client message handler that collects server notifications by method."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self._arrived = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, Exception):
            return
        self.methods.append(message.method)
        self._arrived.set()

    async def wait_for(self, method: str, count: int = 1) -> None:
        while self.methods.count(method) < count:
            self._arrived = anyio.Event()
            await self._arrived.wait()


@pytest.fixture
async def server():
    # its own private socket folder (under the system's temporary folder: a socket path has
    # room for about 100 bytes, which a test's own tmp_path can exceed)
    tool_server = ClientToolServer()
    await tool_server.start()
    try:
        yield tool_server
    finally:
        with anyio.fail_after(HANG_GUARD):
            await tool_server.stop()


def http_client(tool_server: ClientToolServer, key: str, **kwargs: Any) -> Client:
    """An SDK client the way today's agents connect: streamable HTTP, initialize handshake."""
    kwargs.setdefault("mode", "legacy")
    return Client(tool_server.http_server(key)["url"], **kwargs)


def shim_client(tool_server: ClientToolServer, key: str, **kwargs: Any) -> Client:
    """An SDK stdio client spawning exactly the command the bridge offers in session/new."""
    spec = tool_server.stdio_server(key)
    kwargs.setdefault("mode", "legacy")
    return Client(
        StdioServerParameters(command=spec["command"], args=spec["args"], cwd=REPO), **kwargs
    )


async def wait_connected(tool_server: ClientToolServer, key: str, count: int = 1) -> None:
    """Wait until `count` clients can hear a tools/list_changed (an HTTP client opens its GET stream late)."""
    while tool_server.connected(key) < count:
        await anyio.sleep(0.01)


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text


# --- tools/list ---------------------------------------------------------------------------------------


async def test_tools_list_serves_the_registered_tools_and_a_non_object_schema_becomes_an_object(
    server,
):
    with anyio.fail_after(HANG_GUARD):
        server.register("s1", Handler(), [READ, SEARCH, LOOSE])
        async with http_client(server, "s1") as client:
            assert client.server_info is not None and client.server_info.name == "vscode_tools"
            assert client.server_capabilities.tools is not None
            assert client.server_capabilities.tools.list_changed is True
            assert (
                client.session.instructions
                == "Tools provided by the chat client, bridged to the agent"
            )
            listed = (await client.list_tools()).tools

    assert [(t.name, t.description, t.input_schema) for t in listed] == [
        ("read_file", "Read a file", READ.inputSchema),
        ("search", "Search the workspace", {"type": "object"}),
        ("loose", "A tool whose client sent no usable schema", {"type": "object"}),
    ]


# --- tools/call ---------------------------------------------------------------------------------------


async def test_a_call_with_or_without_the_claude_prefix_reaches_the_handler_unprefixed(server):
    handler = Handler(ToolResult(text="hello from the file"))
    with anyio.fail_after(HANG_GUARD):
        server.register("s1", handler, [READ, SEARCH])
        async with http_client(server, "s1") as client:
            plain = await client.call_tool("read_file", {"path": "a.txt"})
            prefixed = await client.call_tool("mcp__vscode_tools__read_file", {"path": "b.txt"})
            no_arguments = await client.call_tool("search")

    assert handler.calls == [
        ("read_file", {"path": "a.txt"}),
        ("read_file", {"path": "b.txt"}),
        ("search", {}),
    ]
    for result in (plain, prefixed, no_arguments):
        assert text_of(result) == "hello from the file"
        assert result.is_error is False


async def test_the_handlers_error_result_reaches_the_agent_as_is_error(server):
    with anyio.fail_after(HANG_GUARD):
        server.register("s1", Handler(ToolResult(text="permission denied", is_error=True)), [READ])
        async with http_client(server, "s1") as client:
            result = await client.call_tool("read_file", {"path": "/etc/shadow"})

    assert text_of(result) == "permission denied"
    assert result.is_error is True


async def test_an_unknown_tool_is_an_mcp_error_and_never_reaches_the_handler(server):
    handler = Handler()
    with anyio.fail_after(HANG_GUARD):
        server.register("s1", handler, [READ])
        async with http_client(server, "s1") as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("mcp__vscode_tools__write_file", {"path": "x"})

    assert raised.value.error.code == types.INVALID_PARAMS
    assert "tool 'write_file' not found" in raised.value.error.message
    assert handler.calls == []


@pytest.mark.parametrize("transport", ["http", "shim"])
async def test_two_concurrent_calls_both_reach_the_handler_before_either_returns(server, transport):
    both_arrived = anyio.Event()
    arrivals: list[str] = []

    async def handler(name: str, arguments: dict) -> ToolResult:
        arrivals.append(arguments["path"])
        if len(arrivals) == 2:
            both_arrived.set()
        # If the SDK ran tools/call one at a time, the first call would wait here forever.
        with anyio.fail_after(5):
            await both_arrived.wait()
        return ToolResult(text=f"read {arguments['path']}")

    results: dict[str, str] = {}
    with anyio.fail_after(HANG_GUARD):
        server.register("s1", handler, [READ])
        connect = http_client if transport == "http" else shim_client
        async with connect(server, "s1") as client:

            async def call(path: str) -> None:
                results[path] = text_of(await client.call_tool("read_file", {"path": path}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "a.txt")
                tg.start_soon(call, "b.txt")

    assert sorted(arrivals) == ["a.txt", "b.txt"]
    assert results == {"a.txt": "read a.txt", "b.txt": "read b.txt"}


# --- cancellation -------------------------------------------------------------------------------------


async def test_a_call_the_agent_cancels_cancels_the_handler(server):
    handler = Handler(block=True)
    with anyio.fail_after(HANG_GUARD):
        server.register("s1", handler, [READ])
        async with http_client(server, "s1") as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "read_file", {"path": "a.txt"})
                await handler.entered.wait()
                tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled for the request
            await handler.cancelled.wait()
            # The session is still usable afterwards.
            assert [t.name for t in (await client.list_tools()).tools] == ["read_file"]


async def test_a_call_whose_http_request_is_dropped_cancels_the_handler(server):
    handler = Handler(block=True)
    server.register("s1", handler, [READ])
    url = server.http_server("s1")["url"]
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with anyio.fail_after(HANG_GUARD):
        async with httpx2.AsyncClient(timeout=HANG_GUARD) as http:
            init = await http.post(url, headers=headers, json=INITIALIZE)
            assert init.status_code == 200
            session = {
                **headers,
                "mcp-session-id": init.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18",
            }
            assert (await http.post(url, headers=session, json=INITIALIZED)).status_code == 202
            async with http.stream("POST", url, headers=session, json=CALL_READ) as response:
                assert response.status_code == 200
                await handler.entered.wait()
            # Leaving the stream unread closes the connection: the agent went away mid-call.
            await handler.cancelled.wait()


async def test_unregister_cancels_pending_calls_and_closes_the_endpoint(server):
    handler = Handler(block=True)
    with anyio.fail_after(HANG_GUARD):
        server.register("s1", handler, [READ])
        url = server.http_server("s1")["url"]
        async with http_client(server, "s1") as client:
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    with pytest.raises(MCPError):
                        await client.call_tool("read_file", {"path": "a.txt"})

                tg.start_soon(call)
                await handler.entered.wait()
                server.unregister("s1")
            await handler.cancelled.wait()
        async with httpx2.AsyncClient() as http:
            assert (await http.post(url, json={})).status_code == 404


# --- tools/list_changed -------------------------------------------------------------------------------


async def test_a_changed_schema_under_the_same_names_is_announced_and_an_unchanged_list_is_not(
    server,
):
    notifications = Notifications()
    uri_schema = {"type": "object", "properties": {"uri": {"type": "string"}}}
    changed_read = READ.model_copy(update={"inputSchema": uri_schema})
    with anyio.fail_after(HANG_GUARD):
        server.register("s1", Handler(), [READ, SEARCH])
        async with http_client(server, "s1", message_handler=notifications) as client:
            await client.list_tools()
            await wait_connected(server, "s1")

            assert server.set_tools("s1", [READ, SEARCH]) is False
            assert server.set_tools("s1", [SEARCH, READ]) is False  # order alone is no change
            assert server.set_tools("s1", [changed_read, SEARCH]) is True
            await notifications.wait_for("notifications/tools/list_changed")
            listed = {t.name: t.input_schema for t in (await client.list_tools()).tools}
            assert listed["read_file"] == changed_read.inputSchema

            # Unchanged again: nothing more is sent (a ping round trip flushes anything in flight).
            assert server.set_tools("s1", [changed_read, SEARCH]) is False
            await anyio.sleep(0.2)
            await client.list_tools()
            assert notifications.methods.count("notifications/tools/list_changed") == 1

            # A description-only change counts too.
            assert (
                server.set_tools(
                    "s1", [changed_read, SEARCH.model_copy(update={"description": "Find"})]
                )
                is True
            )
            await notifications.wait_for("notifications/tools/list_changed", count=2)


async def test_the_very_definitions_of_the_last_request_are_no_change_and_rebuild_nothing(server):
    """A client resends its whole tool list with each request; the vscodelm door hands over the
    very objects it validated before when the list is the same bytes. Equal copies, a new order
    and a changed schema are compared as before."""
    server.register("s1", Handler(), [READ, SEARCH])
    endpoint = server._endpoints["s1"]
    listed = endpoint.tools
    assert server.set_tools("s1", [READ, SEARCH]) is False
    assert endpoint.tools is listed  # not rebuilt, not compared
    copies = [READ.model_copy(), SEARCH.model_copy()]
    assert server.set_tools("s1", copies) is False
    assert endpoint.tools is not listed and endpoint.tools == listed
    assert server.set_tools("s1", copies) is False
    changed = READ.model_copy(update={"inputSchema": {"type": "object", "properties": {}}})
    assert server.set_tools("s1", [changed, *copies[1:]]) is True
    assert server.set_tools("s1", copies) is True  # and back again: a change too
    assert server.set_tools("s1", [copies[1], copies[0]]) is False


async def test_a_2026_era_client_hears_list_changed_on_its_listen_stream(server):
    with anyio.fail_after(HANG_GUARD):
        server.register("s1", Handler(), [READ])
        async with http_client(server, "s1", mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            async with client.listen(tools_list_changed=True) as subscription:
                await wait_connected(server, "s1")
                assert server.set_tools("s1", [READ, SEARCH]) is True
                async for _event in subscription:
                    break
            assert [t.name for t in (await client.list_tools()).tools] == ["read_file", "search"]
            assert text_of(await client.call_tool("search", {})) == "ok"


# --- isolation ----------------------------------------------------------------------------------------


async def test_each_session_sees_only_its_own_tools_and_a_wrong_token_is_404(server):
    first, second = Handler(ToolResult(text="first")), Handler(ToolResult(text="second"))
    with anyio.fail_after(HANG_GUARD):
        server.register("s1", first, [READ])
        server.register("s2", second, [SEARCH])
        async with http_client(server, "s1") as one, http_client(server, "s2") as two:
            assert [t.name for t in (await one.list_tools()).tools] == ["read_file"]
            assert [t.name for t in (await two.list_tools()).tools] == ["search"]
            with pytest.raises(MCPError):
                await one.call_tool("search", {})
            assert text_of(await two.call_tool("search", {})) == "second"
        assert first.calls == [] and second.calls == [("search", {})]

        url = server.http_server("s1")["url"]
        token = url.split("/")[-2]
        assert len(token) >= 32  # secrets.token_urlsafe(24)
        async with httpx2.AsyncClient() as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            for wrong in (
                url.replace(token, "x" * len(token)),
                url.replace(f"/{token}/mcp", "/mcp"),
                url + "/extra",
            ):
                assert (await http.post(wrong, json=body)).status_code == 404


# --- the stdio shim -----------------------------------------------------------------------------------


async def test_the_stdio_shim_lists_and_calls_tools_and_hears_list_changed(server):
    handler = Handler(ToolResult(text="via the shim"))
    notifications = Notifications()
    with anyio.fail_after(HANG_GUARD):
        server.register("s1", handler, [READ, LOOSE])
        spec = server.stdio_server("s1")
        assert spec["command"] == sys.executable and spec["args"][:2] == ["-m", "bridge.mcp_shim"]
        assert spec["name"] == "vscode_tools" and spec["env"] == []
        socket_path = Path(spec["args"][2])
        assert stat.S_IMODE(os.stat(socket_path).st_mode) == 0o600
        assert stat.S_ISSOCK(os.stat(socket_path).st_mode)

        async with shim_client(server, "s1", message_handler=notifications) as client:
            listed = (await client.list_tools()).tools
            assert [(t.name, t.input_schema) for t in listed] == [
                ("read_file", READ.inputSchema),
                ("loose", {"type": "object"}),
            ]
            result = await client.call_tool("mcp__vscode_tools__read_file", {"path": "a.txt"})
            assert text_of(result) == "via the shim" and result.is_error is False
            assert handler.calls == [("read_file", {"path": "a.txt"})]

            await wait_connected(server, "s1")
            assert server.set_tools("s1", [READ]) is True
            await notifications.wait_for("notifications/tools/list_changed")
            assert [t.name for t in (await client.list_tools()).tools] == ["read_file"]


async def test_a_shim_whose_agent_goes_away_cancels_its_pending_call(server):
    handler = Handler(block=True)
    server.register("s1", handler, [READ])
    spec = server.stdio_server("s1")
    opening = [INITIALIZE, INITIALIZED, CALL_READ]
    with anyio.fail_after(HANG_GUARD):
        process = await anyio.open_process([spec["command"], *spec["args"]], cwd=REPO)
        async with process:
            assert process.stdin is not None
            await process.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in opening))
            await handler.entered.wait()
            # The agent exits without cancelling anything: the shim's stdin closes.
            await process.stdin.aclose()
            await handler.cancelled.wait()
            assert await process.wait() == 0


async def test_the_default_socket_dir_is_private_and_removed_on_stop():
    tool_server = ClientToolServer()
    with anyio.fail_after(HANG_GUARD):
        await tool_server.start()
        tool_server.register("s1", Handler(), [READ])
        socket_path = Path(tool_server.stdio_server("s1")["args"][2])
        assert stat.S_IMODE(os.stat(socket_path.parent).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(socket_path).st_mode) == 0o600
        await tool_server.stop()
    assert not socket_path.exists() and not socket_path.parent.exists()


async def test_a_shim_with_a_wrong_token_gets_a_closed_connection(server):
    server.register("s1", Handler(), [READ])
    spec = server.stdio_server("s1")
    with anyio.fail_after(HANG_GUARD):
        command = [spec["command"], "-m", "bridge.mcp_shim", spec["args"][2], "wrong"]
        process = await anyio.open_process(command, cwd=REPO)
        async with process:
            assert process.stdin is not None and process.stdout is not None
            # The shim may already have been refused and gone: then its stdin is closed too.
            with contextlib.suppress(anyio.BrokenResourceError):
                await process.stdin.send(json.dumps(INITIALIZE).encode() + b"\n")
            with pytest.raises(anyio.EndOfStream):
                await process.stdout.receive()
            assert await process.wait() == 0


# --- stop ---------------------------------------------------------------------------------------------


async def test_stop_returns_promptly_while_clients_hold_streams_and_calls_open():
    tool_server = ClientToolServer()
    await tool_server.start()
    http_handler, shim_handler = Handler(block=True), Handler(block=True)
    tool_server.register("http", http_handler, [READ])
    tool_server.register("shim", shim_handler, [READ])
    with anyio.fail_after(HANG_GUARD):
        async with (
            http_client(tool_server, "http") as http,
            shim_client(tool_server, "shim") as shim,
        ):
            await wait_connected(tool_server, "http")  # the standing GET stream is open
            async with anyio.create_task_group() as tg:

                async def call(client: Client) -> None:
                    # the server goes away mid-call: whatever the client raises for that will do
                    with pytest.raises(BaseException):  # noqa: B017
                        await client.call_tool("read_file", {})

                tg.start_soon(call, http)
                tg.start_soon(call, shim)
                await http_handler.entered.wait()
                await shim_handler.entered.wait()
                await tool_server.stop()
                assert http_handler.cancelled.is_set() and shim_handler.cancelled.is_set()
                tg.cancel_scope.cancel()
    with pytest.raises(httpx2.ConnectError):
        async with httpx2.AsyncClient() as client:
            await client.post(tool_server.http_server("http")["url"], json={})


# --- tool results -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "text"),
    [
        ("plain text", "plain text"),
        ('{"a": 1}', '{"a": 1}'),  # a JSON string is itself, even when it looks like JSON
        (
            [{"$mid": 21, "value": "line one"}, {"$mid": 21, "value": "line two"}],
            "line one\nline two",
        ),
        ([{"type": "text", "value": "typed"}, {"text": "bare"}], "typed\nbare"),
        (
            [{"$mid": 21, "value": "text"}, {"mimeType": "image/png", "data": "AAA="}],
            'text\n{"mimeType":"image/png","data":"AAA="}',
        ),
        ({"$mid": 21, "value": "one part"}, "one part"),
        ({"content": [{"$mid": 21, "value": "wrapped"}]}, "wrapped"),
        ({"ok": True, "count": 2}, '{"ok":true,"count":2}'),
        ([], ""),
        (42, "42"),
        (None, "null"),
        ({"path": "é"}, '{"path":"é"}'),
    ],
)
def test_tool_result_text(result: Any, text: str) -> None:
    assert tool_result_text(result) == text
