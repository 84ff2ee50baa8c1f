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

Its rooms: `endpoint` (one session's MCP server and tools), `server` (the listener hosting them all)
and `framing` (the stdio framing the shim's socket speaks).
"""

from bridge.tool_results import tool_result_text
from bridge.tools.endpoint import (
    CALL_META,
    CLAUDE_TOOL_PREFIX,
    SERVER_NAME,
    ToolCallHandler,
    ToolResult,
    agent_call_id,
)
from bridge.tools.server import ClientToolServer

__all__ = [
    "CALL_META",
    "CLAUDE_TOOL_PREFIX",
    "SERVER_NAME",
    "ClientToolServer",
    "ToolCallHandler",
    "ToolResult",
    "agent_call_id",
    "tool_result_text",
]
