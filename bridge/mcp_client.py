"""Reaching an MCP server with the official `mcp` client: one connection helper, one paged
`tools/list`, one way to word a failure. Eliza's tool commands and the OpenAI door's tool catalog
both use it. The `mcp` SDK costs over a second to import, so it is imported only inside the calls.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

__all__ = ["McpTarget", "connect", "error_text", "list_tools"]


@dataclass(frozen=True)
class McpTarget:
    """Where an MCP server is and how to reach it, whatever settings format described it."""

    type: Literal["stdio", "sse", "http"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    #: A streamable-HTTP read timeout (seconds): long tool calls stream their answer slowly.
    read_timeout: float = 300.0


@contextlib.asynccontextmanager
async def connect(target: McpTarget, errlog: TextIO | None = None) -> AsyncIterator[Any]:
    """An initialized `mcp.Client` for `target`; a stdio server's stderr goes to `errlog` (or
    nowhere)."""
    from mcp import Client

    if target.type == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=target.command, args=list(target.args), env=dict(target.env) or None
        )
        with contextlib.ExitStack() as stack:
            sink = errlog if errlog is not None else stack.enter_context(open(os.devnull, "w"))  # noqa: SIM115
            async with Client(stdio_client(params, errlog=sink)) as client:
                yield client
    elif target.type == "sse":
        from mcp.client.sse import sse_client

        async with Client(sse_client(target.url, headers=dict(target.headers) or None)) as client:
            yield client
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        timeout = httpx2.Timeout(30.0, read=target.read_timeout)
        async with (
            httpx2.AsyncClient(headers=dict(target.headers), timeout=timeout) as http,
            Client(streamable_http_client(target.url, http_client=http)) as client,
        ):
            yield client


async def list_tools(client: Any) -> list[Any]:
    """Every tool the server offers, following `nextCursor` until the last page."""
    tools: list[Any] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def error_text(exc: BaseException) -> str:
    """A failure as one line for a person: the first leaf of an exception group, its message or,
    when it has none, its type's name."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc).strip() or type(exc).__name__
