"""The approval hop: how long the bridge adds between an agent's permission request and a console
seeing it, and between the console's answer and the agent receiving it.

    .venv/bin/python tests/bench/bench_approval_hop.py [--rounds 300]

In one process: a real Bridge with a console attached to its approval broker, and the built-in
Eliza (a real ACP agent on the SDK, over in-memory streams) prompted `ask permission to step N`.
An observer on the ACP connection timestamps the raw `session/request_permission` arriving and the
raw response leaving; a bus subscriber timestamps the `approval_requested` event; the console
answers the moment it sees the event.

- hop 1: request_permission arriving → approval_requested published   (target: median ≤ 2 ms)
- hop 2: console answer → response written to the agent              (target: median ≤ 2 ms)

Baseline, measured in the same run: the same two hops for the bare ACP SDK client answering the
permission request directly in its handler (arrival → handler entered; handler returns → response
written) — what the SDK itself costs, so the ratio shows what the broker adds. Exit code 0 always.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bridge import events as ev  # noqa: E402
from bridge.config import BridgeConfig  # noqa: E402
from bridge.core import Bridge  # noqa: E402
from bridge.protocol import Message, TextPart  # noqa: E402
from bridge.sessions import ResponseStream  # noqa: E402
from tests.bench.report import row, spread  # noqa: E402


def ms(values: list[float]) -> str:
    values = sorted(values)
    return f"median {statistics.median(values) * 1000:.3f} ms, p90 {values[int(len(values) * 0.9)] * 1000:.3f} ms"


async def through_bridge(rounds: int) -> tuple[list[float], list[float]]:
    bridge = Bridge(BridgeConfig(cwd=tempfile.mkdtemp()))
    handle = bridge.approvals.attach("bench")
    core = bridge.open_connection("bench")
    arrived: dict[Any, float] = {}
    published: list[tuple[float, float]] = []
    answered: dict[str, float] = {}
    hop2: list[float] = []
    pending_ids: dict[Any, str] = {}  # ACP request id -> approval id

    def on_event(event: ev.Event) -> None:
        if isinstance(event, ev.ApprovalRequested):
            now = time.perf_counter()
            if arrived:  # the observer is installed after the first round
                rid = next(reversed(arrived))
                published.append((arrived[rid], now))
                pending_ids[rid] = event.approval_id
            answered[event.approval_id] = time.perf_counter()
            handle.answer(event.approval_id, "approve")

    bridge.bus.subscribe(on_event)

    def observer(event: Any) -> None:
        msg = event.message
        now = time.perf_counter()
        if (
            event.direction.value == "incoming"
            and msg.get("method") == "session/request_permission"
        ):
            arrived[msg["id"]] = now
        elif (
            event.direction.value == "outgoing" and "result" in msg and msg.get("id") in pending_ids
        ):
            hop2.append(now - answered[pending_ids.pop(msg["id"])])

    messages: list[Message] = []
    for i in range(rounds + 5):
        messages.append(
            Message(role="user", content=[TextPart(value=f"ask permission to step {i}")])
        )
        parts: list[dict] = []
        stream = ResponseStream(i, parts.append)
        request = core.make_request(i, {"eliza": {"deterministic": True}}, list(messages), [])
        await core.chat(request, stream)
        if i == 0:
            session = next(iter(core.sessions.values()))
            session.conn._conn.add_observer(observer)
        messages.append(
            Message(role="assistant", content=[TextPart(value=p["value"]) for p in parts])
        )
    await bridge.close()
    hop1 = [b - a for a, b in published[5:]]
    return hop1, hop2[5:]


async def bare_sdk(rounds: int) -> tuple[list[float], list[float]]:
    import acp
    from acp.schema import AllowedOutcome, RequestPermissionResponse

    from bridge.agents.eliza import connect_in_memory

    arrived: dict[Any, float] = {}
    hop1: list[float] = []
    returned: list[float] = []
    hop2: list[float] = []

    class Client:
        async def session_update(self, **kwargs: Any) -> None:
            return None

        async def request_permission(self, options: list[Any], **kwargs: Any) -> Any:
            hop1.append(time.perf_counter() - arrived[next(reversed(arrived))])
            returned.append(time.perf_counter())
            return RequestPermissionResponse(
                outcome=AllowedOutcome(outcome="selected", option_id=options[0].option_id)
            )

    def observer(event: Any) -> None:
        msg = event.message
        now = time.perf_counter()
        if (
            event.direction.value == "incoming"
            and msg.get("method") == "session/request_permission"
        ):
            arrived[msg["id"]] = now
        elif (
            event.direction.value == "outgoing"
            and "result" in msg
            and msg.get("id") in arrived
            and returned
        ):
            hop2.append(now - returned[-1])

    agent = await connect_in_memory(Client(), deterministic=True)
    conn = agent.conn
    conn._conn.add_observer(observer)
    await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
    session = await conn.new_session(cwd=tempfile.mkdtemp(), mcp_servers=[])
    for i in range(rounds + 5):
        await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block(f"ask permission to step {i}")]
        )
    await agent.close()
    return hop1[5:], hop2[5:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    b1, b2 = asyncio.run(through_bridge(args.rounds))
    s1, s2 = asyncio.run(bare_sdk(args.rounds))
    print(
        f"approval hop 1 (request arriving -> pending event published): {ms(b1)}   [target median <= 2 ms]"
    )
    print(f"   bare SDK (request arriving -> handler entered):          {ms(s1)}")
    print(
        f"approval hop 2 (answer -> response written to the agent):   {ms(b2)}   [target median <= 2 ms]"
    )
    print(f"   bare SDK (handler returns -> response written):          {ms(s2)}")
    print(
        f"ratio vs bare SDK: hop 1 {statistics.median(b1) / statistics.median(s1):.2f}x, hop 2 {statistics.median(b2) / statistics.median(s2):.2f}x"
    )
    for name, bridge, bare in (
        ("approval hop: request -> card event", b1, s1),
        ("approval hop: answer -> agent", b2, s2),
    ):
        median, low, high, n = spread([x * 1000 for x in bridge])
        row(
            name,
            baseline=f"bare ACP SDK handler ({statistics.median(bare) * 1000:.3f} ms)",
            target="<= 2 ms",
            result=median,
            unit="ms",
            met=median <= 2.0,
            low=low,
            high=high,
            samples=n,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
