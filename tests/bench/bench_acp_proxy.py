"""The ACP front door's cost: a client through `symposium-tui acp` vs the same client on the agent.

Two measurements, each against a baseline taken in the same run, interleaved round by round:

1. **Streaming**: `session/update`s per second of a long reply (20,000 one-word
   `agent_message_chunk`s) reaching the client, from `session/prompt` sent to its response read.
   Target: through the proxy >= 0.9x direct.
2. **Round trip**: one short `session/prompt` (one chunk, then `end_turn`), sent to its response
   read, 300 times. Target: added latency (median through the proxy - median direct) <= 1 ms.

The agent is the suite's surface agent (tests/agents/surface_agent.py, on the SDK's agent side);
the client is the SDK's own JSON-RPC connection (`acp.stdio.spawn_stdio_connection`) counting the
updates as they arrive. No console runs (the usual headless case; the console link only adds
events, which nothing subscribes to here). Run from the repository root:

    .venv/bin/python tests/bench/bench_acp_proxy.py        # ~30-60 s
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.report import pairs, row, spread

REPO = Path(__file__).resolve().parents[2]
SURFACE = str(REPO / "tests" / "agents" / "surface_agent.py")
DIRECT = [sys.executable, SURFACE]
PROXIED = [sys.executable, "-m", "symposium_tui", "acp", "--", sys.executable, SURFACE]
CHUNKS = 20_000
ROUNDS = 5
TRIPS = 300


class Counter:
    def __init__(self) -> None:
        self.updates = 0

    async def __call__(self, method: str, params: Any, is_notification: bool) -> Any:
        if method == "session/update":
            self.updates += 1
        return None


async def session(argv: list[str]):
    from acp.stdio import spawn_stdio_connection

    counter = Counter()
    cm = spawn_stdio_connection(counter, argv[0], *argv[1:], env=dict(os.environ), cwd=str(REPO))
    conn, _proc = await cm.__aenter__()
    await conn.send_request(
        "initialize",
        {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "bench"}},
    )
    new = await conn.send_request("session/new", {"cwd": str(REPO), "mcpServers": []})
    return cm, conn, counter, new["sessionId"]


def prompt(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


async def stream_rate(conn: Any, counter: Counter, session_id: str) -> float:
    counter.updates = 0
    started = time.perf_counter()
    await conn.send_request("session/prompt", prompt(session_id, f"stream {CHUNKS}"))
    took = time.perf_counter() - started
    assert counter.updates == CHUNKS, counter.updates
    return CHUNKS / took


async def round_trip(conn: Any, session_id: str) -> float:
    started = time.perf_counter()
    await conn.send_request("session/prompt", prompt(session_id, "hi"))
    return time.perf_counter() - started


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:  # no settings, no audit log of the person's
        os.environ["SYMPOSIUM_CONFIG_DIR"] = os.path.join(tmp, "config")
        os.environ["SYMPOSIUM_RUNTIME_DIR"] = os.path.join(tmp, "run")
        sides = {}
        for name, argv in (("direct", DIRECT), ("proxy", PROXIED)):
            sides[name] = await session(argv)
        # warm up both (imports, first turn)
        for _cm, conn, _counter, sid in sides.values():
            for _ in range(20):
                await round_trip(conn, sid)
            await conn.send_request("session/prompt", prompt(sid, "stream 2000"))

        rates: dict[str, list[float]] = {"direct": [], "proxy": []}
        for _ in range(ROUNDS):
            for name, (_cm, conn, counter, sid) in sides.items():
                rates[name].append(await stream_rate(conn, counter, sid))
        trips: dict[str, list[float]] = {"direct": [], "proxy": []}
        for _ in range(TRIPS):
            for name, (_cm, conn, _counter, sid) in sides.items():
                trips[name].append(await round_trip(conn, sid))
        for cm, *_ in sides.values():
            await cm.__aexit__(None, None, None)

    direct, proxy = max(rates["direct"]), max(rates["proxy"])
    ratio = proxy / direct
    print(f"streaming ({CHUNKS} updates, best of {ROUNDS}):")
    print(
        f"  direct  {direct:10.0f} updates/s   (rounds: {', '.join(f'{r:.0f}' for r in rates['direct'])})"
    )
    print(
        f"  proxy   {proxy:10.0f} updates/s   (rounds: {', '.join(f'{r:.0f}' for r in rates['proxy'])})"
    )
    print(f"  ratio   {ratio:.2f}x   target >= 0.9x   {'OK' if ratio >= 0.9 else 'MISSED'}")
    d_med = statistics.median(trips["direct"]) * 1000
    p_med = statistics.median(trips["proxy"]) * 1000
    added = p_med - d_med
    print(f"session/prompt round trip ({TRIPS} each, interleaved):")
    print(
        f"  direct  median {d_med:.3f} ms   p90 {statistics.quantiles(trips['direct'], n=10)[-1] * 1000:.3f} ms"
    )
    print(
        f"  proxy   median {p_med:.3f} ms   p90 {statistics.quantiles(trips['proxy'], n=10)[-1] * 1000:.3f} ms"
    )
    print(f"  added   {added:.3f} ms   target <= 1 ms   {'OK' if added <= 1.0 else 'MISSED'}")
    _, low, high, n = pairs(rates["proxy"], rates["direct"])
    row(
        "ACP proxy streaming, updates/s",
        baseline="client <-> agent direct",
        target=">= 0.9x",
        result=ratio,
        unit="x",
        met=ratio >= 0.9,
        low=low,
        high=high,
        samples=n,
        note="best round of each",
    )
    diffs = [(p - d) * 1000 for p, d in zip(trips["proxy"], trips["direct"])]
    _, low, high, n = spread(diffs)
    row(
        "ACP proxy added time per session/prompt",
        baseline="client <-> agent direct",
        target="<= 1 ms",
        result=added,
        unit="ms",
        met=added <= 1.0,
        low=low,
        high=high,
        samples=n,
    )


if __name__ == "__main__":
    asyncio.run(main())
