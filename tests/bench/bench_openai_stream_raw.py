"""Streaming throughput of the OpenAI front door, read raw, against the bare ACP SDK client.

    .venv/bin/python tests/bench/bench_openai_stream_raw.py [--chunks 20000] [--repeats 5]

The test echo agent, prompted `stream N`, streams N chunks `c<i> ` as fast as it can. Received
two ways, alternated, a fresh agent each repeat, start-up excluded (a warm-up request starts the
agent and its session; the timed request continues that conversation):

- bridge: `POST /v1/chat/completions` with `stream: true` to the front door in its own server
  process; a raw HTTP client reads the SSE body until `data: [DONE]` (no SDK, no JSON parsing on
  the clock; the content is checked afterwards);
- bare: the ACP SDK's client straight to the agent, counting `agent_message_chunk`s.

Chunks/s = N / (send → last chunk received). Target: bridge / bare ≥ 0.9. Exit code 0. The CPU
seconds per 1,000 chunks of each process are printed too (2 cores: the bridge path runs three
busy processes — agent, bridge, reader — against the bare path's two).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_openai_common import (
    BridgeServer,
    RawHttp,
    bare_session,
    bench_settings,
    cpu_seconds,
    sse_content,
)
from tests.bench.report import ratio_row

TARGET = 0.9


def bridge_run(config: Path, chunks: int, *extra: str) -> tuple[float, dict[str, float]]:
    server = BridgeServer(config, *extra)
    http = RawHttp(server.port)
    try:
        messages = [{"role": "user", "content": "stream 10"}]
        http.send("/v1/chat/completions", {"model": "echo", "messages": messages, "stream": True})
        warm = sse_content(http.read_stream())
        messages += [
            {"role": "assistant", "content": warm},
            {"role": "user", "content": f"stream {chunks}"},
        ]
        (agent,) = server.agent_pids()
        cpu0 = (time.process_time(), cpu_seconds(server.proc.pid), cpu_seconds(agent))
        t0 = time.perf_counter()
        http.send("/v1/chat/completions", {"model": "echo", "messages": messages, "stream": True})
        raw = http.read_stream()
        elapsed = time.perf_counter() - t0
        cpu1 = (time.process_time(), cpu_seconds(server.proc.pid), cpu_seconds(agent))
        text = sse_content(raw)
        expected = "".join(f"c{i} " for i in range(chunks))
        if text != expected:
            raise RuntimeError(f"content mismatch: {len(text)} chars, expected {len(expected)}")
        events = raw.count(b"\ndata: ") + 1
        cpu = {
            "reader": cpu1[0] - cpu0[0],
            "bridge": cpu1[1] - cpu0[1],
            "agent": cpu1[2] - cpu0[2],
            "events": events,
        }
        return elapsed, cpu
    finally:
        http.close()
        server.close()


async def bare_run(chunks: int) -> tuple[float, dict[str, float]]:
    import acp
    from acp.schema import ClientCapabilities

    client, cwd, cm = bare_session()
    async with cm as (conn, proc):
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("stream 10")])
        client.count, client.target, client.t_last = 0, chunks, None
        cpu0 = (time.process_time(), cpu_seconds(proc.pid))
        t0 = time.perf_counter()
        await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block(f"stream {chunks}")]
        )
        cpu1 = (time.process_time(), cpu_seconds(proc.pid))
    if client.count != chunks or client.t_last is None:
        raise RuntimeError(f"bare client got {client.count} of {chunks} chunks")
    return client.t_last - t0, {"client": cpu1[0] - cpu0[0], "agent": cpu1[1] - cpu0[1]}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    config = bench_settings()
    rates: dict[str, list[float]] = {"bridge": [], "bare": []}
    cpus: dict[str, list[dict[str, float]]] = {"bridge": [], "bare": []}
    for r in range(args.repeats):
        for kind in ("bridge", "bare") if r % 2 == 0 else ("bare", "bridge"):
            if kind == "bridge":
                elapsed, cpu = bridge_run(config, args.chunks)
            else:
                elapsed, cpu = asyncio.run(bare_run(args.chunks))
            rates[kind].append(args.chunks / elapsed)
            cpus[kind].append(cpu)
            print(f"  {kind:6s} {args.chunks / elapsed:10.0f} chunks/s", flush=True)
    bridge, bare = statistics.median(rates["bridge"]), statistics.median(rates["bare"])
    ratio = bridge / bare
    print(f"bridge (raw SSE reader): median {bridge:.0f} chunks/s")
    print(f"bare ACP SDK client:     median {bare:.0f} chunks/s")
    per_k = 1000 / args.chunks
    for kind, runs in cpus.items():
        keys = [k for k in runs[0] if k != "events"]
        line = ", ".join(
            f"{k} {statistics.median(x[k] for x in runs) * per_k * 1e3:.1f} ms" for k in keys
        )
        print(f"CPU per 1,000 chunks, {kind}: {line}")
    events = statistics.median(x["events"] for x in cpus["bridge"])
    print(
        f"SSE events for {args.chunks} chunks (coalesced when the reader is behind): median {events:.0f}"
    )
    print(
        f"ratio bridge / bare: {ratio:.2f} (target >= {TARGET}): {'OK' if ratio >= TARGET else 'MISSED'}"
    )
    ratio_row(
        "OpenAI raw stream, chunks/s",
        baseline="bare ACP client",
        ratio=ratio,
        target=TARGET,
        subject=rates["bridge"],
        against=rates["bare"],
        at_least=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
