"""The ACP front door's cost: a client through `symposium-tui acp` vs the same client on the agent.

Two measurements, each against a baseline taken in the same run, interleaved round by round:

1. **Streaming**: `session/update`s per second of a long reply (20,000 one-word
   `agent_message_chunk`s) reaching the client, from `session/prompt` sent to its response read.
   Target: through the proxy >= 0.9x direct.
2. **Round trip**: one short `session/prompt` (one chunk, then `end_turn`), sent to its response
   read, 300 times. Target: added latency (median through the proxy - median direct) <= 1 ms.

Beside them, in the same rounds, the floor for any process between client and agent on this
machine: the same stream through a byte-copying relay (`byte_relay.c`, built with `cc` when one is
installed, and `byte_relay.py`), which parses nothing. The streaming figure is the median of the
interleaved pairs' ratios (proxy round i / direct round i), with the relays' medians in its note.

The agent is the suite's surface agent (tests/agents/surface_agent.py, on the SDK's agent side);
the client is the SDK's own JSON-RPC connection (`acp.stdio.spawn_stdio_connection`) counting the
updates as they arrive. No console runs (the usual headless case; the console link only adds
events, which nothing subscribes to here). Run from the repository root:

    .venv/bin/python tests/bench/bench_acp_proxy.py        # ~30-60 s
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_vscodelm_common import child_pids, cpu_seconds
from tests.bench.report import pairs, ratio_row, row, spread

REPO = Path(__file__).resolve().parents[2]
SURFACE = str(REPO / "tests" / "agents" / "surface_agent.py")
DIRECT = [sys.executable, SURFACE]
PROXIED = [sys.executable, "-m", "symposium_tui", "acp", "--", sys.executable, SURFACE]
RELAY_PY = [sys.executable, str(REPO / "tests" / "bench" / "byte_relay.py"), *DIRECT]
CHUNKS = 20_000
ROUNDS = 7
TRIPS = 300


class Counter:
    def __init__(self) -> None:
        self.updates = 0
        self.pid = 0  # the process the client spawned (the agent, or what stands before it)

    async def __call__(self, method: str, params: Any, is_notification: bool) -> Any:
        if method == "session/update":
            self.updates += 1
        return None


async def session(argv: list[str]):
    from acp.stdio import spawn_stdio_connection

    counter = Counter()
    cm = spawn_stdio_connection(counter, argv[0], *argv[1:], env=dict(os.environ), cwd=str(REPO))
    conn, proc = await cm.__aenter__()
    await conn.send_request(
        "initialize",
        {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "bench"}},
    )
    new = await conn.send_request("session/new", {"cwd": str(REPO), "mcpServers": []})
    counter.pid = proc.pid
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


def side_cpu(pid: int) -> dict[str, float]:
    """CPU seconds so far of this process (the client), the process it spawned, and that one's
    child (the agent behind a proxy or relay)."""
    split = {"client": time.process_time(), "spawned": cpu_seconds(pid)}
    children = child_pids(pid)
    if children:
        split["agent behind it"] = sum(map(cpu_seconds, children))
    return split


def c_relay(tmp: str) -> tuple[list[str] | None, str]:
    """The C byte relay built into `tmp` (its argv), or None and why not."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None, "no C compiler installed"
    binary = os.path.join(tmp, "byte_relay")
    source = str(REPO / "tests" / "bench" / "byte_relay.c")
    built = subprocess.run(
        [cc, "-O2", "-pthread", source, "-o", binary], capture_output=True, text=True
    )
    if built.returncode != 0:
        return None, f"cc failed: {built.stderr.strip()[:100]}"
    return [binary, *DIRECT], ""


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:  # no settings, no audit log of the person's
        os.environ["SYMPOSIUM_CONFIG_DIR"] = os.path.join(tmp, "config")
        os.environ["SYMPOSIUM_RUNTIME_DIR"] = os.path.join(tmp, "run")
        relay_c, no_c = c_relay(tmp)
        argvs = {"direct": DIRECT, "proxy": PROXIED, "relay (Python)": RELAY_PY}
        if relay_c is not None:
            argvs["relay (C)"] = relay_c
        sides = {}
        for name, argv in argvs.items():
            sides[name] = await session(argv)
        # warm up every side (imports, first turn)
        for _cm, conn, _counter, sid in sides.values():
            for _ in range(20):
                await round_trip(conn, sid)
            await conn.send_request("session/prompt", prompt(sid, "stream 2000"))

        rates: dict[str, list[float]] = {name: [] for name in sides}
        cpu: dict[str, dict[str, float]] = {name: {} for name in sides}
        for _ in range(ROUNDS):
            for name, (_cm, conn, counter, sid) in sides.items():
                before = side_cpu(counter.pid)
                rates[name].append(await stream_rate(conn, counter, sid))
                for who, seconds in side_cpu(counter.pid).items():
                    cpu[name][who] = cpu[name].get(who, 0.0) + seconds - before.get(who, 0.0)
        trips: dict[str, list[float]] = {"direct": [], "proxy": []}
        for _ in range(TRIPS):
            for name in trips:
                _cm, conn, _counter, sid = sides[name]
                trips[name].append(await round_trip(conn, sid))
        for cm, *_ in sides.values():
            await cm.__aexit__(None, None, None)

    ratio = pairs(rates["proxy"], rates["direct"])[0]
    print(f"streaming ({CHUNKS} updates, {ROUNDS} interleaved rounds; ratio: median of the pairs):")
    for name, values in rates.items():
        print(
            f"  {name:15} best {max(values):8.0f} updates/s   (rounds: {', '.join(f'{r:.0f}' for r in values)})"
        )
    print(f"  CPU per update ({ROUNDS * CHUNKS} updates per side, /proc):")
    for name, split in cpu.items():
        per = ", ".join(
            f"{who} {seconds / (ROUNDS * CHUNKS) * 1e6:.1f} us" for who, seconds in split.items()
        )
        print(f"    {name:15} {per}")
    floors = []
    for name in ("relay (C)", "relay (Python)"):
        if name in rates:
            floor = pairs(rates[name], rates["direct"])[0]
            floors.append(f"a byte-copying relay in {name[7:-1]} {floor:.2f}x")
            print(f"  {name:15} {floor:.2f}x direct (the floor for any process in between)")
    if relay_c is None:
        floors.append(f"the C relay not measured: {no_c}")
    print(
        f"  proxy           {ratio:.2f}x direct   target >= 0.9x   {'OK' if ratio >= 0.9 else 'MISSED'}"
    )
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
    ratio_row(
        "ACP proxy streaming, updates/s",
        baseline="client <-> agent direct",
        ratio=ratio,
        target=0.9,
        subject=rates["proxy"],
        against=rates["direct"],
        at_least=True,
        note="same run: " + ", ".join(floors),
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
