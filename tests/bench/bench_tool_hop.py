"""The client-tool hop: an agent's MCP `tools/call` to the bridge's `vscode_tools` server -> the
`tool_call` part written to the client, against the same call to a plain MCP server.

    .venv/bin/python tests/bench/bench_tool_hop.py [--rounds 120]

Nothing in the bridge is instrumented. A tiny ACP agent (this file, `--agent`; official SDK) keeps
one MCP client (the `mcp` SDK's `Client`, streamable HTTP) open to each of two servers and, when
prompted, takes `time.perf_counter()` right before `call_tool(...)`:

- bridge: the `vscode_tools` server the bridge offered it in `session/new` (`symposium-tui
  vscodelm`, the venv's console script, driven by a stdio client that sends the tool definition
  with each request). The stdio client timestamps the line of the `tool_call` part as soon as it
  has read it; the next request carries the tool result, and the agent's reply reports its
  timestamp. hop = part line read - call issued.
- plain (baseline): an `mcp.server.mcpserver.MCPServer` in a process of its own (this file,
  `--plain-server`, uvicorn on a 127.0.0.1 TCP socket set up like the bridge's), whose `probe` tool
  returns `perf_counter()` taken as its handler is entered. hop = handler entered - call issued.

Both clocks are CLOCK_MONOTONIC (`perf_counter` on Linux), so timestamps of different processes
compare. The two kinds of call alternate in the same agent session, through the same endpoint;
the first rounds (connection set-up, first imports) are not counted.

Target: median bridge hop <= 5 ms. Exit code is always 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.report import row, spread

TARGET_MS = 5.0
WARMUP = 3
PROBE = {
    "name": "probe",
    "description": "Returns at once",
    "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
}


# --- the plain MCP server (--plain-server) ----------------------------------------------------------


def plain_server() -> int:
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("plain", log_level="WARNING")

    @server.tool()
    async def probe(n: int = 0) -> str:
        """Returns the moment it was entered."""
        return repr(time.perf_counter())

    # As the bridge's own listener: a socket that says it is TCP, so uvicorn sets TCP_NODELAY.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", access_log=False, ws="none", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
    return 0


# --- the agent (--agent PLAIN_URL) ----------------------------------------------------------------


class HopAgent:
    """Prompts: `hop bridge <n>` calls vscode_tools::probe and replies `T0 <t0>` once the call
    returns; `hop plain <n>` calls the plain server's probe and replies `PLAIN <t0> <t1>`."""

    def __init__(self, plain_url: str) -> None:
        self.conn: Any = None
        self.urls: dict[str, str] = {"plain": plain_url}
        self.clients: dict[str, Any] = {}
        self.holders: list[asyncio.Task[Any]] = []  # the tasks holding each client open
        self.stop = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
        from acp.schema import AgentCapabilities, InitializeResponse, McpCapabilities

        return InitializeResponse(
            protocol_version=protocol_version,
            agent_capabilities=AgentCapabilities(
                mcp_capabilities=McpCapabilities(http=True, sse=False)
            ),
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> Any:
        from acp.schema import NewSessionResponse

        for server in mcp_servers or []:
            if getattr(server, "type", None) == "http" and server.name == "vscode_tools":
                self.urls["bridge"] = server.url
        return NewSessionResponse(session_id=f"hop-{uuid.uuid4().hex[:8]}")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None

    async def _hold(self, url: str, ready: asyncio.Future[Any]) -> None:
        from mcp import Client

        try:
            async with Client(url) as client:
                ready.set_result(client)
                await self.stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    async def client(self, which: str) -> Any:
        if which not in self.clients:
            ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self.holders.append(asyncio.ensure_future(self._hold(self.urls[which], ready)))
            self.clients[which] = await ready
        return self.clients[which]

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> Any:
        import acp
        from acp.schema import PromptResponse

        words = " ".join(getattr(b, "text", "") for b in prompt).split()
        if words[:2] == ["hop", "bridge"] or words[:2] == ["hop", "plain"]:
            client = await self.client(words[1])
            t0 = time.perf_counter()
            result = await client.call_tool("probe", {"n": int(words[2])})
            text = "".join(getattr(c, "text", "") for c in result.content)
            reply = f"T0 {t0!r}" if words[1] == "bridge" else f"PLAIN {t0!r} {text}"
        else:
            reply = "?"
        await self.conn.session_update(
            session_id=session_id, update=acp.update_agent_message_text(reply)
        )
        return PromptResponse(stop_reason="end_turn")


def run_agent(plain_url: str) -> int:
    import acp

    agent = HopAgent(plain_url)
    try:
        asyncio.run(acp.run_agent(agent))
    finally:
        agent.stop.set()
    return 0


# --- the benchmark ------------------------------------------------------------------------------


def main() -> int:
    from tests.bench.bench_vscodelm_common import (
        SCRIPT,
        Failed,
        LmStdio,
        assistant,
        load_average,
        ms,
        p90,
        text_of,
        tool_result,
        user,
    )

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=120, help="timed calls of each kind (default 120)"
    )
    args = parser.parse_args()
    if not os.path.exists(SCRIPT):
        print(f"tool hop: {SCRIPT} not found (is the project installed in this venv?)")
        return 0

    load_before = load_average()
    bridge_hops: list[float] = []
    plain_hops: list[float] = []
    bridge_turns: list[float] = []  # for information: request sent -> tool_call part read
    with tempfile.TemporaryDirectory(prefix="bench-tool-hop-") as cwd:
        env = {
            **os.environ,
            "SYMPOSIUM_RUNTIME_DIR": os.path.join(cwd, "run"),
            "SYMPOSIUM_CONFIG_DIR": os.path.join(cwd, "config"),
        }
        plain = subprocess.Popen(
            [sys.executable, __file__, "--plain-server"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=cwd,
        )
        client = None
        try:
            assert plain.stdout is not None
            line = plain.stdout.readline()
            if not line.startswith("PORT "):
                raise Failed(f"the plain MCP server did not start: {line!r}")
            plain_url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"
            agent = {
                "name": "hop",
                "command": sys.executable,
                "args": [__file__, "--agent", plain_url],
                "env": [],
            }
            client = LmStdio(cwd=cwd, env=env)
            history: list[dict[str, Any]] = []
            tools = [PROBE]

            def turn(prompt: dict[str, Any] | list[dict[str, Any]]) -> tuple[Any, float]:
                history.extend(prompt if isinstance(prompt, list) else [prompt])
                reply, seconds = client.chat(history, agent=agent, tools=tools)
                history.append(assistant(reply.parts))
                return reply, seconds

            def bridge_round(i: int) -> tuple[float, float]:
                rid, t_sent = client.send_chat(
                    [*history, user(f"hop bridge {i}")], agent=agent, tools=tools
                )
                history.append(user(f"hop bridge {i}"))
                reply = client.read_reply(rid)
                history.append(assistant(reply.parts))
                calls = [
                    (p, t)
                    for p, t in zip(reply.parts, reply.part_times)
                    if p["type"] == "tool_call"
                ]
                if len(calls) != 1 or calls[0][0]["toolName"] != "probe":
                    raise Failed(f"bridge: expected one probe tool_call, got {reply.parts!r}")
                part, t_part = calls[0]
                answer, _ = turn(tool_result(part["toolCallId"], "ok"))
                text = text_of(answer.parts)
                if not text.startswith("T0 "):
                    raise Failed(f"bridge: unexpected reply {text!r}")
                return t_part - float(text.split()[1]), t_part - t_sent

            def plain_round(i: int) -> float:
                reply, _ = turn(user(f"hop plain {i}"))
                text = text_of(reply.parts)
                if not text.startswith("PLAIN "):
                    raise Failed(f"plain: unexpected reply {text!r}")
                _, t0, t1 = text.split()
                return float(t1) - float(t0)

            for i in range(WARMUP + args.rounds):
                order = ("bridge", "plain") if i % 2 == 0 else ("plain", "bridge")
                for kind in order:
                    if kind == "bridge":
                        hop, to_part = bridge_round(i)
                        if i >= WARMUP:
                            bridge_hops.append(hop)
                            bridge_turns.append(to_part)
                    else:
                        hop = plain_round(i)
                        if i >= WARMUP:
                            plain_hops.append(hop)
        finally:
            if client is not None:
                client.close()
            plain.terminate()
            try:
                plain.wait(10)
            except subprocess.TimeoutExpired:
                plain.kill()
                plain.wait()

    mb, mp = statistics.median(bridge_hops) * 1000, statistics.median(plain_hops) * 1000
    print(
        f"tool hop ({args.rounds} calls of each kind, alternated in one agent session; MCP over streamable HTTP on 127.0.0.1)"
    )
    print(
        f"  bridge: tools/call issued by the agent -> tool_call part read by the stdio client: {ms(bridge_hops)}"
    )
    print(
        f"  plain MCPServer: tools/call issued -> tool handler entered:                         {ms(plain_hops)}"
    )
    print(
        f"  the bridge adds {mb - mp:.3f} ms (median) over the plain server's hop; ratio {mb / mp:.2f}x, p90 ratio "
        f"{p90(bridge_hops) / p90(plain_hops):.2f}x"
    )
    print(
        f"  for information: request sent -> tool_call part read (the agent's turn up to the call included): {ms(bridge_turns)}"
    )
    print(f"  {load_before} before, {load_average()} after")
    verdict = "ok" if mb <= TARGET_MS else "OVER TARGET"
    print(
        f"tool hop: bridge median {mb:.3f} ms (p90 {p90(bridge_hops) * 1000:.3f} ms) vs plain MCP server {mp:.3f} ms "
        f"(p90 {p90(plain_hops) * 1000:.3f} ms) (target: bridge median <= {TARGET_MS:g} ms) {verdict}"
    )
    _, low, high, count = spread([x * 1000 for x in bridge_hops])
    row(
        "client tool hop (agent's tools/call -> tool_call part)",
        baseline=f"a plain MCP server's hop ({mp:.3f} ms)",
        target=f"<= {TARGET_MS:g} ms",
        result=mb,
        unit="ms",
        met=mb <= TARGET_MS,
        low=low,
        high=high,
        samples=count,
    )
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--plain-server"]:
        sys.exit(plain_server())
    if sys.argv[1:2] == ["--agent"]:
        sys.exit(run_agent(sys.argv[2]))
    from tests.bench.bench_vscodelm_common import Failed

    try:
        main()
    except Failed as exc:
        print(f"tool hop: benchmark failed: {exc}")
    sys.exit(0)
