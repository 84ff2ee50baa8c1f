"""How much routing a request costs, against baselines measured in the same run.

    .venv/bin/python tests/bench/bench_routing.py [--messages 10000] [--repeats 25]

1. `HistoryTracker.route()` of a 10,000-message request that commits the previous exchange of a
   session with ~10,000 committed messages, against `json.loads` of the same request line.
   Target: ratio <= 1.0 (routing must cost less than reading the request did).
2. The same routing with 100 live sessions of the same agent (other conversations, committed
   lengths spread over 0..2,000) against 1 live session. Target: ratio <= 1.2.

Each timed request is parsed afresh (json.loads + pydantic, untimed), as the bridge does, so its
strings carry no cached hashes from an earlier run. Times are this process's CPU time (so other
work on a shared machine disturbs them less than wall-clock time would); medians over the repeats.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bridge.history import DecisionKind, HistoryTracker
from bridge.protocol import Message, TextPart
from bridge.vscodelm.wire import ChatResponseParams
from tests.bench.report import pairs, row

AGENT = '{"deterministic":false,"kind":"eliza"}'
WORDS = [
    "the",
    "agent",
    "reads",
    "a",
    "file",
    "then",
    "edits",
    "the",
    "function",
    "and",
    "runs",
    "tests",
    "again",
    "until",
    "they",
    "pass",
]


def text(rng: random.Random, lo: int = 4, hi: int = 60) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def conversation(rng: random.Random, n: int, tag: str) -> list[dict[str, Any]]:
    """n wire messages, alternating user/assistant, a tool round trip every 50 messages; last is user."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        if i == n - 1 or i % 2 == 0:
            if i % 50 == 2 and i > 0:
                out.append(
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "toolCallId": f"c{i - 1}",
                                "result": [{"$mid": 21, "value": text(rng)}],
                            }
                        ],
                    }
                )
            else:
                out.append(
                    {
                        "role": "user",
                        "content": [{"type": "text", "value": f"{tag} {i}: {text(rng)}"}],
                    }
                )
        elif i % 50 == 1:
            out.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "value": text(rng)},
                        {
                            "type": "tool_call",
                            "toolCallId": f"c{i}",
                            "toolName": "read_file",
                            "parameters": {
                                "path": f"src/m{i}.py",
                                "lines": [1, 200],
                                "follow": True,
                            },
                        },
                    ],
                }
            )
        else:
            out.append({"role": "assistant", "content": [{"type": "text", "value": text(rng)}]})
    return out


def request_line(messages: list[dict[str, Any]]) -> str:
    params = {"modelId": "elizacp", "messages": messages, "agent": {"eliza": {}}}
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "lm/provideLanguageModelChatResponse",
            "params": params,
        }
    )


def parse(line: str) -> list[Message]:
    return ChatResponseParams.model_validate(json.loads(line)["params"]).messages


def replay_reply(tracker: HistoryTracker, sid: str, msg: Message) -> None:
    for part in msg.content:
        if isinstance(part, TextPart):  # streamed in chunks, as agents do
            for i in range(0, len(part.value), 40):
                tracker.record_part(sid, TextPart(value=part.value[i : i + 40]))
        else:
            tracker.record_part(sid, part)
    tracker.complete(sid)


def prepare_main(tracker: HistoryTracker, lines: list[str]) -> None:
    """Bring `tracker` to: committed = first n-4 messages, provisional = [user, its reply]."""
    first, second = (parse(line) for line in lines)
    d = tracker.route(AGENT, first[:-1])
    replay_reply(tracker, d.session_id, first[-1])
    d = tracker.route(AGENT, second[:-1])
    assert d.kind is DecisionKind.COMMIT, d.reason
    replay_reply(tracker, d.session_id, second[-1])


def timed_route(tracker: HistoryTracker, line: str) -> tuple[float, str]:
    messages = parse(line)
    gc.collect()
    t0 = time.process_time()
    d = tracker.route(AGENT, messages)
    elapsed = time.process_time() - t0
    assert d.kind is DecisionKind.COMMIT, d.reason
    return elapsed, d.session_id


def timed_loads(line: str) -> float:
    gc.collect()
    t0 = time.process_time()
    json.loads(line)
    return time.process_time() - t0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--messages", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--sessions", type=int, default=100)
    args = ap.parse_args()
    n = args.messages
    rng = random.Random(1)

    conv = conversation(rng, n, "main")
    # Setup: request conv[:n-5] answered by conv[n-5], request conv[:n-3] answered by conv[n-3];
    # the timed request is all of conv and commits that last exchange.
    setup_lines = [request_line(conv[: n - 4]), request_line(conv[: n - 2])]
    line = request_line(conv)
    others = [
        request_line(conversation(rng, rng.choice((3, 3, 9, 41, 401, 1201, 2001)), f"other{k}"))
        for k in range(args.sessions - 1)
    ]
    print(f"request: {n} messages, {len(line) / 1e6:.2f} MB of JSON")

    # Tracker with 100 sessions: 99 other conversations, each answered once and continued once
    # (so most have something committed), then the main one; it is removed and rebuilt per repeat.
    crowded = HistoryTracker()
    for other in others:
        msgs = parse(other)
        d = crowded.route(AGENT, msgs[:-2])
        replay_reply(crowded, d.session_id, msgs[-2])
        if len(msgs) > 3:
            crowded.route(AGENT, msgs)  # commits; the new user message stays provisional
    assert len(crowded) == args.sessions - 1, len(crowded)

    def one_session() -> None:
        alone = HistoryTracker()
        prepare_main(alone, setup_lines)
        single.append(timed_route(alone, line)[0])

    def hundred_sessions() -> None:
        prepare_main(crowded, setup_lines)
        assert len(crowded) == args.sessions
        elapsed, sid = timed_route(crowded, line)
        many.append(elapsed)
        crowded.remove(sid)

    loads: list[float] = []
    single: list[float] = []
    many: list[float] = []
    for i in range(args.repeats):
        loads.append(timed_loads(line))
        for measure in (
            (one_session, hundred_sessions) if i % 2 else (hundred_sessions, one_session)
        ):
            measure()

    ms = lambda xs: statistics.median(xs) * 1e3  # noqa: E731
    r1 = ms(single) / ms(loads)
    r2 = ms(many) / ms(single)
    print(f"json.loads of the request            median {ms(loads):7.2f} ms")
    print(f"route(), 1 live session              median {ms(single):7.2f} ms")
    print(f"route(), {args.sessions} live sessions          median {ms(many):7.2f} ms")
    print()
    print(
        f"RATIO route / json.loads             {r1:5.2f}x   (target <= 1.00x)  {'OK' if r1 <= 1.0 else 'OVER'}"
    )
    print(
        f"RATIO {args.sessions} sessions / 1 session        {r2:5.2f}x   (target <= 1.20x)  {'OK' if r2 <= 1.2 else 'OVER'}"
    )
    for figure, baseline, subject, base, ratio, target in (
        ("routing a 10,000-message request", "json.loads of it", single, loads, r1, 1.0),
        (
            f"routing with {args.sessions} live sessions",
            "1 live session",
            many,
            single,
            r2,
            1.2,
        ),
    ):
        _, low, high, n = pairs(subject, base)
        row(
            figure,
            baseline=baseline,
            target=f"<= {target:.2f}x",
            result=ratio,
            unit="x",
            met=ratio <= target,
            low=low,
            high=high,
            samples=n,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
