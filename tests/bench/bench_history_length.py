"""Turn cost against conversation length: a turn at a 2,000-message history vs at a 10-message one.

    .venv/bin/python tests/bench/bench_history_length.py [--turns 30] [--repeats 3] [--long 2000]

VS Code sends the whole conversation with every request. One `symposium-tui vscodelm` endpoint
(stdio, as the extension runs it) carries two conversations with the test echo agent
(`tests/agents/echo_agent.py`), each turn a full-history request the way VS Code sends it:

- short: a history of 10 messages before its first timed turn;
- long: a history of `--long` (2,000) messages before its first timed turn.

Both grow by two messages a turn (so the short one ends near 10 + 2*turns). Beside them, the same
prompts go to the same agent binary through the ACP SDK (`session/prompt`), the baseline for the
bridge's added time. The three are interleaved turn by turn (the order rotates), after two
untimed warm-up turns each (agent start-up, and the long history's first request, which starts its
session and validates all 2,000 messages, are not timed).

Turn time: request written -> JSON-RPC response line read (bridge); `session/prompt` returned (SDK).

Targets: median(long turn) / median(short turn) <= 1.15; added time per turn (bridge median minus
direct median) <= 0.5 ms at both lengths. The client's own `json.dumps` of the request is off the
clock; the endpoint's `json.loads` of it is on it. Exit code is always 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_turn_overhead import Agent, TextClient
from tests.bench.bench_vscodelm_common import SCRIPT, Failed, LmStdio, assistant, ms, text_of, user

RATIO_TARGET = 1.15
ADDED_TARGET_MS = 0.5
WARMUP = 2


def preloaded(n: int, tag: str) -> list[dict[str, Any]]:
    """A history of `n` messages (user/assistant pairs in the echo agent's style, ending with the
    agent's reply), as a client would have it after n/2 turns."""
    out: list[dict[str, Any]] = []
    for i in range(n // 2):
        out.append(user(f"{tag} earlier {i}"))
        out.append(assistant([{"type": "text", "value": f"ECHO: {tag} earlier {i}"}]))
    return out


class Conversation:
    def __init__(self, client: LmStdio, agent: Agent, history: list[dict[str, Any]]) -> None:
        self.client = client
        self.agent = agent
        self.history = history

    def turn(self, prompt: str, check: bool = True) -> float:
        self.history.append(user(prompt))
        reply, seconds = self.client.chat(self.history, agent=self.agent.wire())
        text = text_of(reply.parts)
        # The first request of a preloaded history replays it to the new agent session.
        if check and text.strip() != self.agent.expected(prompt):
            raise Failed(f"bridge: unexpected reply {text[:80]!r} to {prompt!r}")
        self.history.append(assistant(reply.parts))
        return seconds


async def run_repeat(
    turns: int, long_len: int, cwd: str, env: dict[str, str], times: dict[str, list[float]]
) -> None:
    import acp
    from acp.schema import ClientCapabilities

    agent = Agent("echo", cwd)
    client = LmStdio([SCRIPT, "vscodelm"], cwd=cwd, env=env)
    sdk = TextClient()
    try:
        short = Conversation(client, agent, preloaded(10, "short"))
        long = Conversation(client, agent, preloaded(long_len, "long"))
        async with acp.spawn_agent_process(
            sdk,
            agent.command,
            *agent.args,
            cwd=cwd,
            env={**env, **agent.env},
            transport_kwargs={"stderr": subprocess.DEVNULL, "limit": 64 * 1024 * 1024},
        ) as (conn, _proc):
            await conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
            )
            session = await conn.new_session(cwd=cwd, mcp_servers=[])

            async def direct(prompt: str) -> float:
                sdk.text.clear()
                t0 = time.perf_counter()
                await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(prompt)])
                seconds = time.perf_counter() - t0
                if "".join(sdk.text).strip() != agent.expected(prompt):
                    raise Failed(f"direct: unexpected reply {''.join(sdk.text)!r} to {prompt!r}")
                return seconds

            for i in range(WARMUP):
                short.turn(f"warm-up {i}", check=i > 0)
                long.turn(f"warm-up {i}", check=i > 0)
                await direct(f"warm-up {i}")
            for i in range(turns):
                prompt = f"q{i}"
                order = ("short", "long", "direct")
                order = order[i % 3 :] + order[: i % 3]
                for which in order:
                    if which == "direct":
                        times["direct"].append(await direct(prompt))
                    elif which == "short":
                        times["short"].append(short.turn(prompt))
                    else:
                        times["long"].append(long.turn(prompt))
    finally:
        client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30, help="timed turns per repeat, each way")
    parser.add_argument("--repeats", type=int, default=3, help="fresh endpoint and agents")
    parser.add_argument("--long", type=int, default=2000, help="the long history's length")
    args = parser.parse_args()
    if not os.path.exists(SCRIPT):
        print(f"history length: {SCRIPT} not found (is the project installed in this venv?)")
        return 0
    times: dict[str, list[float]] = {"short": [], "long": [], "direct": []}
    with tempfile.TemporaryDirectory(prefix="bench-history-") as cwd:
        env = {
            **os.environ,
            "SYMPOSIUM_RUNTIME_DIR": os.path.join(cwd, "run"),
            "SYMPOSIUM_CONFIG_DIR": os.path.join(cwd, "config"),
        }
        for r in range(args.repeats):
            asyncio.run(run_repeat(args.turns, args.long, cwd, env, times))
            last = {k: v[-args.turns :] for k, v in times.items()}
            print(
                f"  repeat {r + 1}: short {ms(last['short'])}; long {ms(last['long'])}; "
                f"direct {ms(last['direct'])}",
                flush=True,
            )
    short, long, direct = (statistics.median(times[k]) for k in ("short", "long", "direct"))
    ratio = long / short
    added_short = (short - direct) * 1000
    added_long = (long - direct) * 1000
    print(
        f"history length ({args.turns} turns x {args.repeats} repeats each, interleaved; echo agent)"
    )
    print(f"  short (10-message history, +2 a turn):         {ms(times['short'])}")
    print(f"  long ({args.long}-message history, +2 a turn):     {ms(times['long'])}")
    print(f"  direct (ACP SDK client -> same agent binary):  {ms(times['direct'])}")
    ok_ratio = "ok" if ratio <= RATIO_TARGET else "OVER TARGET"
    print(
        f"history length: long/short turn ratio {ratio:.2f}x (target <= {RATIO_TARGET:g}x) {ok_ratio}"
    )
    for name, added in (("short", added_short), ("long", added_long)):
        verdict = "ok" if added <= ADDED_TARGET_MS else "OVER TARGET"
        print(
            f"history length: added per turn at the {name} history {added:.3f} ms "
            f"(target <= {ADDED_TARGET_MS:g} ms) {verdict}"
        )
    return 0


if __name__ == "__main__":
    try:
        main()
    except Failed as exc:
        print(f"history length: benchmark failed: {exc}")
    sys.exit(0)
