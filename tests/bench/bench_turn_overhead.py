"""Per-turn overhead of the vscodelm endpoint against driving the same agent with the ACP SDK.

    .venv/bin/python tests/bench/bench_turn_overhead.py [--turns 200] [--repeats 3]

The test echo agent (`tests/agents/echo_agent.py`, an external process on the official SDK)
answers each prompt with one short chunk (`ECHO: q<i>`). The same prompts go to it two ways, in
one run, interleaved turn by turn (who goes first alternates), a fresh agent (and endpoint) per
repeat:

- bridge: a stdio client of `symposium-tui vscodelm` (the venv's console script). Each turn
  continues the conversation the way VS Code does: the request carries the whole history (every
  earlier prompt and reply) plus the new prompt, so each one is parsed, routed (the previous
  exchange committed) and prompted into the same agent session.
- direct: the ACP SDK client (`acp.spawn_agent_process`) sending `session/prompt` with the same
  text to the same agent binary.

Turn time: request written -> response complete (the JSON-RPC response line read, for the bridge;
`session/prompt` returned, for the SDK). Agent start-up is excluded from both: two warm-up turns
start the agent (and the bridge's session) and are not timed.

Two floors run in the same rounds, interleaved with the others: `floor_translator.py` (a
translator with no history, routing, rules, events or models) parsing nothing, and parsing each
request line whole. They show what any separate process in between costs here, and what decoding
the whole conversation every turn would.

Target: median(bridge turn) / median(direct turn) <= 1.2. Exit code is always 0. `--endpoint CMD`
runs another endpoint command line (e.g. a patched copy) for A/B comparisons.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_vscodelm_common import (
    ECHO_AGENT,
    SCRIPT,
    Failed,
    LmStdio,
    assistant,
    child_pids,
    cpu_seconds,
    load_average,
    ms,
    p90,
    text_of,
    user,
)
from tests.bench.report import ratio_row

TARGET = 1.2
FLOOR = str(Path(__file__).resolve().parent / "floor_translator.py")
FLOORS = {
    "a translator that parses nothing": [sys.executable, FLOOR],
    "one that parses each line whole": [sys.executable, FLOOR, "--parse"],
}
WARMUP = 2


def thirds(times: list[float]) -> tuple[float, float]:
    """The median turn of the first and of the last third of one conversation's turns."""
    third = max(1, len(times) // 3)
    return statistics.median(times[:third]), statistics.median(times[-third:])


def thirds_ms(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    """The medians, over the repeats, of each conversation's `thirds`, in milliseconds."""
    return (
        statistics.median(first for first, _ in pairs) * 1000,
        statistics.median(last for _, last in pairs) * 1000,
    )


class TextClient:
    """The bare ACP SDK client: keeps the text of the current prompt's chunks."""

    def __init__(self) -> None:
        self.text: list[str] = []

    def on_connect(self, conn: Any) -> None:
        return None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", None) == "agent_message_chunk":
            self.text.append(getattr(update.content, "text", ""))

    async def request_permission(self, **kwargs: Any) -> Any:
        raise NotImplementedError


class Agent:
    """Which agent both sides talk to: the echo agent (default), or fast-agent (`--agent fast-agent`,
    a third-party agent with a real turn's machinery, `--model passthrough` echoing the prompt)."""

    def __init__(self, kind: str, cwd: str) -> None:
        self.kind = kind
        if kind == "fast-agent":
            from tests.agents.install import fast_agent

            home = Path(cwd) / "fast-agent-home"
            home.mkdir(exist_ok=True)
            launch = fast_agent(home)
            self.command, self.args, self.env = launch.command, list(launch.args), dict(launch.env)
        else:
            self.command, self.args, self.env = sys.executable, [ECHO_AGENT], {}

    def wire(self) -> dict[str, Any]:
        return {
            "name": self.kind,
            "command": self.command,
            "args": self.args,
            "env": [{"name": k, "value": v} for k, v in self.env.items()],
        }

    def expected(self, prompt: str) -> str:
        return prompt if self.kind == "fast-agent" else f"ECHO: {prompt}"


class BridgeConversation:
    def __init__(self, argv: list[str], cwd: str, env: dict[str, str], agent: Agent) -> None:
        self.client = LmStdio(argv, cwd=cwd, env=env)
        self.history: list[dict[str, Any]] = []
        self.agent = agent

    def turn(self, prompt: str) -> float:
        self.history.append(user(prompt))
        reply, seconds = self.client.chat(self.history, agent=self.agent.wire())
        text = text_of(reply.parts)
        if text.strip() != self.agent.expected(prompt):
            raise Failed(f"bridge: unexpected reply {text!r} to {prompt!r}")
        self.history.append(assistant(reply.parts))
        return seconds


@contextlib.asynccontextmanager
async def direct_session(
    agent: Agent, cwd: str, env: dict[str, str]
) -> AsyncIterator[tuple[Callable[[str], Awaitable[float]], int]]:
    """The baseline both benchmarks measure against: the bare ACP SDK client driving the same
    agent binary in one session. Yields a timed turn (checked against the agent's expected reply)
    and the agent's pid."""
    import acp
    from acp.schema import ClientCapabilities

    client = TextClient()
    async with acp.spawn_agent_process(
        client,
        agent.command,
        *agent.args,
        cwd=cwd,
        env={**env, **agent.env},
        transport_kwargs={"stderr": subprocess.DEVNULL, "limit": 64 * 1024 * 1024},
    ) as (conn, proc):
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
        session = await conn.new_session(cwd=cwd, mcp_servers=[])

        async def turn(prompt: str) -> float:
            client.text.clear()
            t0 = time.perf_counter()
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(prompt)])
            seconds = time.perf_counter() - t0
            if "".join(client.text).strip() != agent.expected(prompt):
                raise Failed(f"direct: unexpected reply {''.join(client.text)!r} to {prompt!r}")
            return seconds

        yield turn, proc.pid


async def run_repeat(
    argv: list[str],
    turns: int,
    cwd: str,
    env: dict[str, str],
    bridge_times: list[float],
    direct_times: list[float],
    cpu: dict[str, float],
    first_last: list[tuple[float, float]],
    agent: Agent,
    floor_times: dict[str, list[float]],
    floor_thirds: dict[str, list[tuple[float, float]]],
) -> None:
    bridge = BridgeConversation(argv, cwd, env, agent)
    floors = {name: BridgeConversation(cmd, cwd, env, agent) for name, cmd in FLOORS.items()}
    try:
        async with direct_session(agent, cwd, env) as (direct_turn, agent_pid):
            for i in range(WARMUP):
                bridge.turn(f"warm-up {i}")
                await direct_turn(f"warm-up {i}")
                for floor in floors.values():
                    floor.turn(f"warm-up {i}")
            bridge_pid = bridge.client.proc.pid
            agents = child_pids(bridge_pid)
            c0 = (
                cpu_seconds(bridge_pid),
                sum(map(cpu_seconds, agents)),
                cpu_seconds(agent_pid),
                time.process_time(),
            )
            b: list[float] = []
            for i in range(turns):
                prompt = f"q{i}"
                if i % 2 == 0:
                    b.append(bridge.turn(prompt))
                    direct_times.append(await direct_turn(prompt))
                else:
                    direct_times.append(await direct_turn(prompt))
                    b.append(bridge.turn(prompt))
                for name, floor in floors.items():
                    floor_times[name].append(floor.turn(prompt))
            c1 = (
                cpu_seconds(bridge_pid),
                sum(map(cpu_seconds, agents)),
                cpu_seconds(agent_pid),
                time.process_time(),
            )
            bridge_times += b
            first_last.append(thirds(b))
            for name, times in floor_times.items():
                floor_thirds[name].append(thirds(times[-turns:]))
            cpu["bridge process"] += c1[0] - c0[0]
            cpu["agent behind the bridge"] += c1[1] - c0[1]
            cpu["agent driven directly"] += c1[2] - c0[2]
            cpu["this process (both clients)"] += c1[3] - c0[3]
    finally:
        bridge.client.close()
        for floor in floors.values():
            floor.client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--turns", type=int, default=200, help="timed turns per repeat, each way (default 200)"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="fresh agents and endpoint (default 3)"
    )
    parser.add_argument(
        "--endpoint",
        default=f"{shlex.quote(SCRIPT)} vscodelm",
        metavar="CMD",
        help="the endpoint command line, to A/B a patched bridge (default: the venv's symposium-tui vscodelm)",
    )
    parser.add_argument(
        "--agent",
        choices=("echo", "fast-agent"),
        default="echo",
        help="echo: the test echo agent (sub-millisecond turns, shows the added time); fast-agent: "
        "a third-party agent's real turn (installed by tests/agents/install.py)",
    )
    args = parser.parse_args()
    endpoint = shlex.split(args.endpoint)
    if not os.path.exists(endpoint[0]):
        print(f"turn overhead: {endpoint[0]} not found (is the project installed in this venv?)")
        return 0

    load_before = load_average()
    bridge: list[float] = []
    direct: list[float] = []
    cpu = dict.fromkeys(
        (
            "bridge process",
            "agent behind the bridge",
            "agent driven directly",
            "this process (both clients)",
        ),
        0.0,
    )
    first_last: list[tuple[float, float]] = []
    floor_times: dict[str, list[float]] = {name: [] for name in FLOORS}
    floor_thirds: dict[str, list[tuple[float, float]]] = {name: [] for name in FLOORS}
    with tempfile.TemporaryDirectory(prefix="bench-turns-") as cwd:
        # A private runtime/config dir: no console of anyone's is reached, no settings read.
        env = {
            **os.environ,
            "SYMPOSIUM_RUNTIME_DIR": os.path.join(cwd, "run"),
            "SYMPOSIUM_CONFIG_DIR": os.path.join(cwd, "config"),
        }
        agent = Agent(args.agent, cwd)
        for r in range(args.repeats):
            asyncio.run(
                run_repeat(
                    endpoint,
                    args.turns,
                    cwd,
                    env,
                    bridge,
                    direct,
                    cpu,
                    first_last,
                    agent,
                    floor_times,
                    floor_thirds,
                )
            )
            print(
                f"  repeat {r + 1}: bridge {ms(bridge[-args.turns :])}; direct {ms(direct[-args.turns :])}",
                flush=True,
            )

    n = len(bridge)
    mb, md = statistics.median(bridge), statistics.median(direct)
    ratio = mb / md
    print(
        f"turn overhead ({args.turns} turns x {args.repeats} repeats each way, interleaved; {args.agent} agent)"
    )
    print(
        f"  bridge (stdio client of symposium-tui vscodelm, full history each turn): {ms(bridge)}"
    )
    print(
        f"  direct (ACP SDK client -> same agent):                                   {ms(direct)}"
    )
    print(
        f"  added per turn: median {(mb - md) * 1000:.3f} ms; p90 ratio {p90(bridge) / p90(direct):.2f}x"
    )
    early, late = thirds_ms(first_last)
    print(
        f"  bridge turn, first third vs last third of each conversation (history grows by 2 messages a turn): "
        f"{early:.3f} ms vs {late:.3f} ms"
    )
    floors = []
    for name, times in floor_times.items():
        floor = statistics.median(times) / md
        floors.append(f"{name} {floor:.2f}x")
        first, last = thirds_ms(floor_thirds[name])
        print(
            f"  floor, {name}: {ms(times)} -> {floor:.2f}x direct; first vs last third {first:.3f} ms vs {last:.3f} ms"
        )
    print("  cpu per turn: " + ", ".join(f"{k} {v * 1e6 / n:.0f} us" for k, v in cpu.items()))
    print(f"  {load_before} before, {load_average()} after")
    verdict = "ok" if ratio <= TARGET else "OVER TARGET"
    print(
        f"turn overhead: bridge median {mb * 1000:.3f} ms vs direct ACP SDK median {md * 1000:.3f} ms -> ratio "
        f"{ratio:.2f}x (target <= {TARGET:g}x) {verdict}   [p90 {p90(bridge) * 1000:.3f} vs {p90(direct) * 1000:.3f} ms]"
    )
    ratio_row(
        f"turn overhead ({args.agent} agent)",
        baseline="direct ACP SDK turn",
        ratio=ratio,
        target=TARGET,
        subject=bridge,
        against=direct,
        note=f"adds {(mb - md) * 1000:.3f} ms; same run: " + ", ".join(floors),
    )
    return 0


if __name__ == "__main__":
    try:
        main()
    except Failed as exc:
        print(f"turn overhead: benchmark failed: {exc}")
    sys.exit(0)
