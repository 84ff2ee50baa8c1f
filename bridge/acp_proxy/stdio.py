"""`symposium-tui acp`: the ACP proxy on this process's stdin/stdout."""

from __future__ import annotations

from typing import Any

from bridge.acp_proxy.proxy import AcpProxy
from bridge.core import Bridge


async def serve_stdio(bridge: Bridge, spec: Any, *, configure: Any = None) -> int:
    """`symposium-tui acp`: the proxy on this process's stdin/stdout."""
    from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
    from acp.stdio import stdio_streams

    reader, writer = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    proxy = AcpProxy(bridge, spec)
    if configure is not None:
        configure(proxy)
    try:
        await proxy.serve(reader, writer)
    finally:
        await bridge.close()
    return 0
