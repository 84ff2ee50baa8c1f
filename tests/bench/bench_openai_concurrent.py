"""Independent conversations at once: 50 concurrent conversations against 1 at a time, same run.

    .venv/bin/python tests/bench/bench_openai_concurrent.py [--conversations 50] [--turns 6] [--think 0.2]

The front door runs in a server process of its own (as `symposium-tui serve` would) with the
built-in Eliza, made to take `--think` seconds before each answer (the agent's own time: what a
model spends thinking; asleep, not on the CPU). Each conversation is a raw keep-alive HTTP client
(no SDK on the clock) that sends `--turns` non-streamed chat completions one after another, each
continuing its conversation (the whole history, our replies included — every request goes
through the history tracker's EXTEND policy). The conversations share a system prompt, so the
bridge has to tell them apart by their whole transcript. Each conversation's first request (its
agent session starting) is not timed.

- baseline: 1 conversation at a time;
- concurrent: `--conversations` conversations at once.

Printed: requests/s and p50/p99 latency of both, and the ratio. Target: p99(concurrent) <=
2 x p99(1 at a time) + the agent's own time — concurrent conversations wait for each other only
for the bridge's own work, never for each other's agent time. Every answer is checked (each
conversation must get its own Eliza answer; a request superseded or answered empty fails the run).
Exit code 0 (it reports; it does not gate).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.report import row

REPO = Path(__file__).resolve().parents[2]
SYSTEM = {"role": "system", "content": "You are a patient listener."}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --- the server process -----------------------------------------------------------------------------


async def _serve(config: str, think: float) -> None:
    sys.path.insert(0, str(REPO))
    from bridge.agents import eliza
    from bridge.config import BridgeConfig
    from bridge.core import Bridge, settle_heap
    from bridge.openai import OpenAIServer
    from bridge.openai.catalog import Catalog

    reply = eliza.ElizaAgent._reply

    async def thinking(self, session, text):  # the agent's own time, asleep
        await asyncio.sleep(think)
        return await reply(self, session, text)

    eliza.ElizaAgent._reply = thinking
    bridge = Bridge(BridgeConfig(cwd=config, max_agents=None))
    server = OpenAIServer(bridge, "127.0.0.1:0", catalog=Catalog(Path(config) / "settings.toml"))
    await server.start()
    settle_heap()
    print(f"PORT {server.port}", flush=True)
    import signal

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop()
    await bridge.close()


# --- the clients -------------------------------------------------------------------------------------


class Conversation:
    def __init__(self, port: int, index: int) -> None:
        self.port = port
        self.index = index
        self.messages = [SYSTEM]
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def turn(self, text: str) -> float:
        assert self.reader is not None and self.writer is not None
        self.messages.append({"role": "user", "content": text})
        data = json.dumps({"model": "eliza", "messages": self.messages}).encode()
        t0 = time.perf_counter()
        self.writer.write(
            (
                f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:{self.port}\r\n"
                f"content-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n"
            ).encode()
            + data
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = next(
            int(v)
            for k, _, v in (x.partition(":") for x in lines[1:])
            if k.lower() == "content-length"
        )
        body = await self.reader.readexactly(length)
        elapsed = time.perf_counter() - t0
        if " 200 " not in lines[0]:
            raise RuntimeError(f"conversation {self.index}: {lines[0]}: {body[:300]!r}")
        content = json.loads(body)["choices"][0]["message"]["content"]
        if not content:
            raise RuntimeError(f"conversation {self.index}: an empty answer")
        self.messages.append({"role": "assistant", "content": content})
        return elapsed

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def run(port: int, conversations: int, turns: int) -> tuple[list[float], float]:
    convs = [Conversation(port, i) for i in range(conversations)]
    for c in convs:
        await c.open()
    # Each conversation's first request starts its agent session: not timed.
    await asyncio.gather(*(c.turn(f"I am conversation {c.index}.") for c in convs))
    latencies: list[float] = []

    async def drive(c: Conversation) -> None:
        for t in range(turns):
            latencies.append(await c.turn(f"My mother says {c.index} times {t}."))

    t0 = time.perf_counter()
    await asyncio.gather(*(drive(c) for c in convs))
    wall = time.perf_counter() - t0
    for c in convs:
        if f"I am conversation {c.index}." not in json.dumps(c.messages):
            raise RuntimeError("a conversation lost its history")
        c.close()
    return latencies, wall


def start_server(think: float) -> tuple[subprocess.Popen[str], int]:
    config = Path(tempfile.mkdtemp(prefix="symposium-bench-conc-"))
    (config / "settings.toml").write_text("")
    env = {
        **os.environ,
        "SYMPOSIUM_CONFIG_DIR": str(config),
        "SYMPOSIUM_RUNTIME_DIR": str(config / "run"),
    }
    proc = subprocess.Popen(
        [sys.executable, __file__, "serve", str(config), str(think)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=str(config),
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        raise RuntimeError(f"bridge server did not start: {line!r}")
    return proc, int(line.split()[1])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--think", type=float, default=0.2)
    args = parser.parse_args()
    proc, port = start_server(args.think)
    try:
        single, single_wall = asyncio.run(run(port, 1, args.turns * 5))
        many, many_wall = asyncio.run(run(port, args.conversations, args.turns))
    finally:
        proc.terminate()
        proc.wait(10)
    rps1 = len(single) / single_wall
    rpsn = len(many) / many_wall
    p99_1, p99_n = percentile(single, 0.99), percentile(many, 0.99)
    target = 2 * p99_1 + args.think
    ok = p99_n <= target
    print(f"agent's own time per answer: {args.think * 1000:.0f} ms")
    print(
        f"1 conversation:   {len(single)} requests, {rps1:7.1f} req/s, "
        f"p50 {statistics.median(single) * 1000:7.1f} ms, p99 {p99_1 * 1000:7.1f} ms"
    )
    print(
        f"{args.conversations} conversations: {len(many)} requests, {rpsn:7.1f} req/s, "
        f"p50 {statistics.median(many) * 1000:7.1f} ms, p99 {p99_n * 1000:7.1f} ms"
    )
    print(
        f"throughput {rpsn / rps1:.1f}x; p99 {p99_n / p99_1:.2f}x of 1 at a time; "
        f"target p99 <= 2 x p99(1) + agent time = {target * 1000:.1f} ms: "
        f"{'met' if ok else 'NOT met'}"
    )
    row(
        f"OpenAI p99 with {args.conversations} conversations at once",
        baseline=f"1 at a time (p99 {p99_1 * 1000:.1f} ms)",
        target=f"<= 2 x p99(1) + agent time = {target * 1000:.1f} ms",
        result=p99_n * 1000,
        unit="ms",
        met=ok,
        samples=len(many),
    )
    return 0


if __name__ == "__main__" and len(sys.argv) >= 2 and sys.argv[1] == "serve":
    asyncio.run(_serve(sys.argv[2], float(sys.argv[3])))
elif __name__ == "__main__":
    sys.exit(main())
