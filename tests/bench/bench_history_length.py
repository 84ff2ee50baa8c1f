"""Turn cost against conversation length: a turn at a 2,000-message history vs at a 10-message one.

    .venv/bin/python tests/bench/bench_history_length.py [--turns 30] [--repeats 3] [--long 2000]

VS Code sends the whole conversation with every request. One `symposium-tui vscodelm` endpoint
(stdio, as the extension runs it) carries two conversations with the test echo agent
(`tests/agents/echo_agent.py`), each turn a full-history request written as the extension writes
it (`JSON.stringify`: compact, UTF-8 as is):

- short: a history of 10 messages before its first timed turn;
- long: a history of `--long` (2,000) messages before its first timed turn.

Both grow by two messages a turn (so the short one ends near 10 + 2*turns). Two baselines, in the
same run:

- direct: the same prompts to the same agent binary through the ACP SDK (`session/prompt`), the
  baseline for the bridge's added time;
- null: the very same request lines written to a process that only takes each line in (off its
  stdin pipe, set up as the endpoint sets up its own: pipe widened, heap kept) and answers it with
  one short line, decoding nothing. Its long-minus-short difference is what moving the longer line
  from the client into a process costs, whatever that process then does with it.

All five are interleaved turn by turn (the order rotates), after two untimed warm-up turns each
(agent start-up, and the long history's first request, which starts its session and decodes and
validates all 2,000 messages, are not timed).

Turn time: request written -> JSON-RPC response line read (bridge); `session/prompt` returned (SDK);
line written -> answer line read (null). The client's own `json.dumps` of the request is off the
clock; the endpoint's reading and decoding of it is on it.

`--tools N`: every request also carries N tool definitions in `options.tools`, as VS Code offers
its tools with each request of an agent-mode chat (~1.5 KB each with their schemas: 80 are ~120
KB, resent unchanged every turn); the rows then name them.

Targets: median(long turn) / median(short turn) <= 1.15; added time per turn (bridge median minus
direct median) <= 0.5 ms at both lengths. Both are also printed net of the longer line's transport
(null long minus null short). `--endpoint CMD` runs another endpoint command line (A/B a patched
or older bridge, e.g. `env PYTHONPATH=/path/to/old/tree .venv/bin/python -m symposium_tui
vscodelm`). Exit code is always 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_turn_overhead import Agent, direct_session
from tests.bench.bench_vscodelm_common import (
    SCRIPT,
    Failed,
    LmStdio,
    assistant,
    load_average,
    ms,
    text_of,
    user,
)
from tests.bench.report import ratio_row, row, spread

RATIO_TARGET = 1.15
ADDED_TARGET_MS = 0.5
WARMUP = 2
ANSWER = b'{"jsonrpc":"2.0","id":0,"result":{}}\n'


def preloaded(n: int, tag: str) -> list[dict[str, Any]]:
    """A history of `n` messages (user/assistant pairs in the echo agent's style, ending with the
    agent's reply), as a client would have it after n/2 turns."""
    out: list[dict[str, Any]] = []
    for i in range(n // 2):
        out.append(user(f"{tag} earlier {i}"))
        out.append(assistant([{"type": "text", "value": f"ECHO: {tag} earlier {i}"}]))
    return out


def client_tools(n: int) -> list[dict[str, Any]] | None:
    """N tool definitions shaped like VS Code's own (a paragraph of description, an object
    schema whose properties are described): ~1.5 KB each."""
    if not n:
        return None
    return [
        {
            "name": f"tool_{i}",
            "description": f"Tool {i}: " + "does one thing in the workspace, with care. " * 6,
            "inputSchema": {
                "type": "object",
                "properties": {
                    f"param_{j}": {
                        "type": "string",
                        "description": "what this parameter means and when to give it " * 3,
                    }
                    for j in range(6)
                },
                "required": ["param_0"],
            },
        }
        for i in range(n)
    ]


class Conversation:
    def __init__(
        self,
        client: LmStdio,
        agent: Agent,
        history: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
    ) -> None:
        self.client = client
        self.agent = agent
        self.history = history
        self.tools = tools
        self.prompt = ""
        self.rid = 0
        self.line = b""

    def prepare(self, prompt: str) -> bytes:
        """The next request's line (encoded off the clock)."""
        self.prompt = prompt
        self.history.append(user(prompt))
        self.rid, self.line = self.client.encode_chat(
            self.history, agent=self.agent.wire(), tools=self.tools
        )
        return self.line

    def send(self, check: bool = True) -> float:
        t0 = self.client.write(self.line)
        reply = self.client.read_reply(self.rid)
        text = text_of(reply.parts)
        # The first request of a preloaded history replays it to the new agent session.
        if check and text.strip() != self.agent.expected(self.prompt):
            raise Failed(f"bridge: unexpected reply {text[:80]!r} to {self.prompt!r}")
        self.history.append(assistant(reply.parts))
        return reply.done_at - t0

    def turn(self, prompt: str, check: bool = True) -> float:
        self.prepare(prompt)
        return self.send(check)


class NullEndpoint:
    """This script run with `--null`: it takes lines in and answers each with one short line."""

    def __init__(self, cwd: str, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--null"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )

    def send(self, line: bytes) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        t0 = time.perf_counter()
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        seconds = time.perf_counter() - t0
        if answer != ANSWER:
            raise Failed(f"null endpoint: unexpected answer {answer[:80]!r}")
        return seconds

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=15)


def page_faults(pid: int) -> int:
    """A process's minor + major page faults so far (Linux; 0 elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[7]) + int(fields[9])


def serve_null() -> None:
    """Read stdin's lines whole and answer each; decode nothing."""
    from bridge.vscodelm.stdio import keep_heap, widen_pipe

    widen_pipe(0)
    keep_heap()
    pending: list[bytes] = []
    while chunk := os.read(0, 1 << 20):
        start = 0
        while (nl := chunk.find(b"\n", start)) >= 0:
            pending.append(chunk[start:nl])
            line = b"".join(pending)
            pending.clear()
            if line:
                os.write(1, ANSWER)
            start = nl + 1
        if start < len(chunk):
            pending.append(chunk[start:])


async def run_repeat(
    endpoint: list[str],
    turns: int,
    long_len: int,
    cwd: str,
    env: dict[str, str],
    times: dict[str, list[float]],
    faults: list[float],
    conversations: int = 2,
    tools: list[dict[str, Any]] | None = None,
) -> None:
    agent = Agent("echo", cwd)
    client = LmStdio(endpoint, cwd=cwd, env=env, compact=True)
    null = NullEndpoint(cwd, env)
    try:
        short = Conversation(client, agent, preloaded(10, "short"), tools)
        long = Conversation(client, agent, preloaded(long_len, "long"), tools)
        # More conversations in the same endpoint, each taking an untimed turn every round:
        # alternately long and short, as a person's several chats would be.
        others = [
            Conversation(
                client, agent, preloaded(long_len if k % 2 == 0 else 10, f"other{k}"), tools
            )
            for k in range(conversations - 2)
        ]
        async with direct_session(agent, cwd, env) as (direct, _agent_pid):
            for i in range(WARMUP):
                short.turn(f"warm-up {i}", check=i > 0)
                long.turn(f"warm-up {i}", check=i > 0)
                for other in others:
                    other.turn(f"warm-up {i}", check=i > 0)
                await direct(f"warm-up {i}")
                null.send(short.line)
                null.send(long.line)
            order = ("short", "long", "direct", "null short", "null long")
            faults_before = page_faults(client.proc.pid)
            for i in range(turns):
                prompt = f"q{i}"
                lines = {"null short": short.prepare(prompt), "null long": long.prepare(prompt)}
                for other in others:
                    other.turn(prompt)
                for which in order[i % 5 :] + order[: i % 5]:
                    if which == "direct":
                        times[which].append(await direct(prompt))
                    elif which == "short":
                        times[which].append(short.send())
                    elif which == "long":
                        times[which].append(long.send())
                    else:
                        times[which].append(null.send(lines[which]))
            faults.append((page_faults(client.proc.pid) - faults_before) / (2 * turns))
    finally:
        client.close()
        null.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30, help="timed turns per repeat, each way")
    parser.add_argument("--repeats", type=int, default=3, help="fresh endpoint and agents")
    parser.add_argument("--long", type=int, default=2000, help="the long history's length")
    parser.add_argument(
        "--endpoint",
        default=f"{SCRIPT} vscodelm",
        help="the endpoint command line (default: the venv's symposium-tui vscodelm)",
    )
    parser.add_argument(
        "--conversations",
        type=int,
        default=2,
        help="conversations in the one endpoint (default 2: the timed short and long; more are "
        "alternately long and short, each taking an untimed turn every round)",
    )
    parser.add_argument(
        "--tools",
        type=int,
        default=0,
        help="tool definitions each request carries, as VS Code sends its tools (default 0)",
    )
    parser.add_argument("--null", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.null:
        serve_null()
        return 0
    endpoint = shlex.split(args.endpoint)
    if not os.path.exists(SCRIPT):
        print(f"history length: {SCRIPT} not found (is the project installed in this venv?)")
        return 0
    keys = ("short", "long", "direct", "null short", "null long")
    times: dict[str, list[float]] = {k: [] for k in keys}
    faults: list[float] = []
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="bench-history-") as cwd:
        env = {
            **os.environ,
            "SYMPOSIUM_RUNTIME_DIR": os.path.join(cwd, "run"),
            "SYMPOSIUM_CONFIG_DIR": os.path.join(cwd, "config"),
        }
        for r in range(args.repeats):
            asyncio.run(
                run_repeat(
                    endpoint,
                    args.turns,
                    args.long,
                    cwd,
                    env,
                    times,
                    faults,
                    args.conversations,
                    client_tools(args.tools),
                )
            )
            last = {k: v[-args.turns :] for k, v in times.items()}
            print(
                f"  repeat {r + 1}: short {ms(last['short'])}; long {ms(last['long'])}; "
                f"direct {ms(last['direct'])}",
                flush=True,
            )
    med = {k: statistics.median(v) for k, v in times.items()}
    short, long, direct = med["short"], med["long"], med["direct"]
    transport = med["null long"] - med["null short"]
    print(
        f"history length ({args.turns} turns x {args.repeats} repeats each, interleaved; echo agent; "
        f"{args.conversations} conversations in the endpoint; {args.tools} client tools)"
    )
    print(f"  short (10-message history, +2 a turn):         {ms(times['short'])}")
    print(f"  long ({args.long}-message history, +2 a turn):     {ms(times['long'])}")
    print(f"  direct (ACP SDK client -> same agent binary):  {ms(times['direct'])}")
    print(f"  null, short lines (taken in, not decoded):     {ms(times['null short'])}")
    print(f"  null, long lines:                              {ms(times['null long'])}")
    print(f"  {load_before} before, {load_average()} after")
    print(
        f"history length: the endpoint's page faults per turn (both lengths) "
        f"{statistics.median(faults):.1f} median of {len(faults)} repeats"
    )
    print(
        f"history length: taking in the long line instead of the short one costs any process "
        f"{transport * 1000:.3f} ms (null endpoint)"
    )
    ratio = long / short
    net_ratio = (long - transport) / short
    suffix = (f", {args.conversations} conversations" if args.conversations != 2 else "") + (
        f", {args.tools} client tools" if args.tools else ""
    )
    ratio_row(
        f"turn at {args.long} vs 10 messages" + suffix,
        baseline="the same endpoint's 10-message turn",
        ratio=ratio,
        target=RATIO_TARGET,
        subject=times["long"],
        against=times["short"],
        note=f"net of the longer line's transport {net_ratio:.2f}x",
    )
    verdict = "ok" if ratio <= RATIO_TARGET else "OVER TARGET"
    print(
        f"history length: long/short turn ratio {ratio:.2f}x (target <= {RATIO_TARGET:g}x) "
        f"{verdict}; net of taking in the longer line {net_ratio:.2f}x"
    )
    for name, bridge, extra in (("short", short, 0.0), ("long", long, transport)):
        added = (bridge - direct) * 1000
        verdict = "ok" if added <= ADDED_TARGET_MS else "OVER TARGET"
        diffs = [(b - d) * 1000 for b, d in zip(times[name], times["direct"])]
        _, low, high, n = spread(diffs)
        row(
            f"added time per turn, {10 if name == 'short' else args.long} messages" + suffix,
            baseline="direct ACP SDK turn",
            target=f"<= {ADDED_TARGET_MS:g} ms",
            result=added,
            unit="ms",
            met=added <= ADDED_TARGET_MS,
            low=low,
            high=high,
            samples=n,
        )
        net = f"; net of taking in the longer line {added - extra * 1000:.3f} ms" if extra else ""
        print(
            f"history length: added per turn at the {name} history {added:.3f} ms "
            f"(target <= {ADDED_TARGET_MS:g} ms) {verdict}{net}"
        )
    return 0


if __name__ == "__main__":
    try:
        main()
    except Failed as exc:
        print(f"history length: benchmark failed: {exc}")
    sys.exit(0)
