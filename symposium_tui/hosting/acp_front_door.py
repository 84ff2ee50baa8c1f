"""`symposium-tui acp`: the ACP front door's process, linked to a running console when there is one.

It runs its agent itself, with or without a console (`bridge.acp_proxy`); its line into a console
is `symposium_tui.wire.acp_console`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any


def agent_spec(agent: str | None, command: list[str]) -> Any:
    """The agent `symposium-tui acp` forwards to, as the bridge's agent spec: `--agent NAME` or
    the command after `--` (exits with status 2 when neither or both are given, or the name is
    unknown)."""
    if command and command[0] == "--":
        command = command[1:]
    if bool(command) == bool(agent):
        print(
            "symposium-tui acp: name the agent: --agent NAME (see `symposium-tui registry list`) "
            "or -- COMMAND ARGS…",
            file=sys.stderr,
        )
        raise SystemExit(2)
    from bridge.protocol import ElizaAgent, parse_agent

    if command:
        return parse_agent(
            {"name": os.path.basename(command[0]), "command": command[0], "args": command[1:]}
        )
    if agent in ("elizacp", "eliza"):
        return ElizaAgent()
    if agent == "claude_code":
        return parse_agent("claude_code")
    from bridge import registry
    from bridge.settings import Settings

    assert agent is not None
    try:
        resolved = registry.resolve(agent, Settings.load_quietly())
    except registry.ResolveError as exc:
        print(f"symposium-tui acp: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    return parse_agent({**resolved, "id": agent})


def run(
    spec: Any, *, cwd: str | None, event_log: str | None, bridge_options: dict[str, Any]
) -> int:
    """Serve the ACP client on stdio until it leaves, linked to a console while one runs."""
    from bridge.acp_proxy import serve_stdio
    from bridge.scheduling import schedule_as_relay
    from symposium_tui.hosting.hosted import build_hosted
    from symposium_tui.wire.acp_console import ConsoleLink

    # A relay between the client and its agent: never takes the CPU from either on a wake-up.
    schedule_as_relay()

    async def main() -> int:
        # No timeout of its own: a card waits in the linked console, whose timeout denies it
        # (and audits that, once); without a console the client's own UI is asked.
        hosted = build_hosted(
            cwd=cwd,
            event_log=event_log,
            bridge_options=bridge_options,
            approval_timeout=0,
        )
        if hosted.settings_error:
            print(f"symposium-tui: {hosted.settings_error}", file=sys.stderr)
        bridge = hosted.bridge
        link = ConsoleLink(bridge)

        def configure(proxy: Any) -> None:
            link.proxy = proxy
            proxy.before_session = link.check

        try:
            await link.check()
            return await serve_stdio(bridge, spec, configure=configure)
        finally:
            await link.close()

    return asyncio.run(main())
