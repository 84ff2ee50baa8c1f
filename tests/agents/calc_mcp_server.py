"""A tiny stdio MCP server (official `mcp` SDK) that an agent can be given as one of its *own* MCP
servers — not a client tool — so that the bridge must ask permission before the agent calls it.

    python tests/agents/calc_mcp_server.py [LOG]

Tools: ``add(a, b)`` → ``"sum: <a+b>"`` (prose, not a bare number: some agents parse JSON-looking
tool text). Every call is appended to ``LOG`` (one JSON line each) when given, so a test can tell
whether the tool really ran.
"""

from __future__ import annotations

import json
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("calc")
LOG = sys.argv[1] if len(sys.argv) > 1 else None


@server.tool(structured_output=False)
def add(a: int, b: int) -> str:
    """Add two integers."""
    if LOG:
        with open(LOG, "a") as fh:
            fh.write(json.dumps({"tool": "add", "a": a, "b": b}) + "\n")
    return f"sum: {a + b}"


if __name__ == "__main__":
    server.run("stdio")
