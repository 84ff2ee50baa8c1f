"""The MCP stdio framing (newline-delimited JSON-RPC) over a byte stream: how an endpoint is served
to `bridge.mcp_shim` on the server's unix socket."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.server.lowlevel.server import Server
from mcp.shared.message import SessionMessage

from bridge.tools.endpoint import MAX_MESSAGE_BYTES

log = logging.getLogger("bridge.tools")


async def serve_stdio_framing(
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
                    line = await reader.receive_until(b"\n", MAX_MESSAGE_BYTES)
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
                        MAX_MESSAGE_BYTES,
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
