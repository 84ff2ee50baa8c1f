"""Starting an agent: from an agent spec to a pair of byte streams that speak ACP.

Every front door reaches its agent the same way — the built-in Eliza through in-memory streams,
Claude Code's adapter and external commands as a process (`process.AgentProcess`, its stderr lines
with the agent's own env values redacted) — and then puts
its own ACP connection on top of the streams: the stateless front doors an
`acp.ClientSideConnection` (`sessions.AgentSession`), the ACP front door a raw, forwarding one
(`bridge.acp_proxy`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bridge.protocol import ClaudeCodeAgent, ElizaAgent, ExternalAgent, StdioServer

CLAUDE_CODE_COMMAND = ("npx", ["-y", "@zed-industries/claude-agent-acp@latest"])


class LaunchError(Exception):
    """The agent could not be started (the message says why, for a person)."""


@dataclass
class LaunchedAgent:
    writer: asyncio.StreamWriter  # towards the agent
    reader: asyncio.StreamReader  # from the agent
    process: Any  # an AgentProcess, or None for the built-in Eliza
    close: Callable[[], Awaitable[None]]  # stops the agent (its process group, or its task)
    secrets: list[str] = field(default_factory=list)  # its env values: never shown or sent on


def command_for(spec: Any) -> tuple[str, list[str], dict[str, str]]:
    """The command line and added environment of an agent that runs as a process."""
    if isinstance(spec, ClaudeCodeAgent):
        command, args = CLAUDE_CODE_COMMAND
        return command, list(args), {}
    assert isinstance(spec, ExternalAgent)
    server = spec.server
    if not isinstance(server, StdioServer):
        raise LaunchError(
            f"{server.type.upper()} transport is not supported for agents; use a command"
        )
    return server.command, list(server.args), {e.name: e.value for e in server.env}


async def launch(
    spec: Any, *, cwd: str, on_stderr: Callable[[str], None] | None = None
) -> LaunchedAgent:
    """Start the agent `spec` names; raises LaunchError when it cannot be started."""
    if isinstance(spec, ElizaAgent):
        from bridge.agents.eliza import start_in_memory

        streams = start_in_memory(deterministic=spec.deterministic)
        return LaunchedAgent(streams.writer, streams.reader, None, streams.close)
    from bridge.agents.process import AgentProcess, AgentStartError
    from bridge.redact import redact_text

    command, args, env = command_for(spec)
    secrets = [str(v) for v in env.values()]

    # An agent may print its own key: the process redacts every stderr line before it is kept,
    # logged or passed to `on_stderr`.
    process = AgentProcess(
        command, args, env=env, cwd=cwd, on_stderr=on_stderr, secret_values=secrets
    )
    try:
        writer, reader = await process.start()
    except AgentStartError as exc:
        raise LaunchError(redact_text(str(exc), secrets)) from exc
    return LaunchedAgent(writer, reader, process, process.close, process.secrets)
