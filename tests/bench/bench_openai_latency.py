"""Added latency per request of the OpenAI front door over a bare ACP round trip to the same agent.

    .venv/bin/python tests/bench/bench_openai_latency.py [--requests 200] [--repeats 3]

The test echo agent answers `ECHO: <prompt>` in one chunk. Measured two ways, alternated, a fresh
agent each repeat, start-up excluded (a warm-up request first):

- bridge: `POST /v1/chat/completions` (not streamed) to the front door in a server process of its
  own, from a raw keep-alive HTTP client (no SDK on the clock; each request is encoded before the
  clock starts). Each request continues the
  conversation (the whole history is sent, as OpenAI clients do), so every one goes through the
  history tracker, commits the previous exchange and prompts the same agent session.
- bare: `session/prompt` with the ACP SDK client straight to the agent, until the prompt returns.

`--tools N` sends N function tools in every request, as OpenAI clients resend the tools they
offer with each one (shaped like `bench_history_length.py`'s: ~1.5 KB each); the bridge hands them
to the agent as its `vscode_tools` MCP server, so each request also checks whether they changed.

Added latency = median(bridge round trip) − median(bare round trip). Target: ≤ 2 ms. Exit code 0.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_history_length import client_tools
from tests.bench.bench_openai_common import BridgeServer, RawHttp, bare_session, bench_settings
from tests.bench.report import row, spread

TARGET_MS = 2.0


def openai_tools(n: int) -> list[dict[str, Any]]:
    """N function tools in the Chat Completions form."""
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t["description"],
                "parameters": t["inputSchema"],
            },
        }
        for t in client_tools(n) or []
    ]


def bridge_round_trips(config: Path, n: int, tools: int = 0) -> list[float]:
    server = BridgeServer(config)
    http = RawHttp(server.port)
    extra: dict[str, Any] = {"tools": openai_tools(tools)} if tools else {}
    try:
        messages = [{"role": "user", "content": "warm up"}]
        http.send("/v1/chat/completions", {"model": "echo", "messages": messages, **extra})
        reply = http.read_json()["choices"][0]["message"]["content"]
        times = []
        for i in range(n):
            messages = [
                *messages,
                {"role": "assistant", "content": reply},
                {"role": "user", "content": f"q{i}"},
            ]
            request = http.encode(
                "/v1/chat/completions", {"model": "echo", "messages": messages, **extra}
            )
            t0 = time.perf_counter()  # from the request's first byte sent (encoded already)
            http.send_encoded(request)
            body = http.read_json()
            times.append(time.perf_counter() - t0)
            reply = body["choices"][0]["message"]["content"]
            if reply != f"ECHO: q{i}":
                raise RuntimeError(f"unexpected reply {reply!r}")
        return times
    finally:
        http.close()
        server.close()


async def bare_round_trips(n: int) -> list[float]:
    import acp
    from acp.schema import ClientCapabilities

    _client, cwd, cm = bare_session()
    async with cm as (conn, _proc):
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("warm up")])
        times = []
        for i in range(n):
            t0 = time.perf_counter()
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(f"q{i}")])
            times.append(time.perf_counter() - t0)
        return times


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--tools", type=int, default=0, help="function tools sent with every request (default 0)"
    )
    args = parser.parse_args()
    config = bench_settings()
    bridge: list[float] = []
    bare: list[float] = []
    for r in range(args.repeats):
        order = ("bridge", "bare") if r % 2 == 0 else ("bare", "bridge")
        for kind in order:
            if kind == "bridge":
                bridge += bridge_round_trips(config, args.requests, args.tools)
            else:
                bare += asyncio.run(bare_round_trips(args.requests))
    mb, ma = statistics.median(bridge) * 1e3, statistics.median(bare) * 1e3
    added = mb - ma
    with_tools = f", {args.tools} client tools" if args.tools else ""
    print(
        f"requests: {len(bridge)} through the bridge{with_tools}, {len(bare)} bare ACP round trips"
    )
    print(
        f"bridge round trip: median {mb:.3f} ms (p90 {statistics.quantiles(bridge, n=10)[-1] * 1e3:.3f} ms)"
    )
    print(
        f"bare ACP round trip: median {ma:.3f} ms (p90 {statistics.quantiles(bare, n=10)[-1] * 1e3:.3f} ms)"
    )
    print(
        f"added latency per request: {added:.3f} ms (target <= {TARGET_MS} ms): {'OK' if added <= TARGET_MS else 'MISSED'}"
    )
    _, low, high, n = spread([(b - a) * 1e3 for b, a in zip(bridge, bare)])
    row(
        "OpenAI added latency" + with_tools,
        baseline="bare ACP round trip",
        target=f"<= {TARGET_MS} ms",
        result=added,
        unit="ms",
        met=added <= TARGET_MS,
        low=low,
        high=high,
        samples=n,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
