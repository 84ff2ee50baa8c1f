"""Streaming through the `openai` SDK: content characters/s of a long reply made of many small
agent chunks, with the front door coalescing chunks into fewer SSE events against one SSE event
per agent chunk, measured in the same run.

    .venv/bin/python tests/bench/bench_openai_stream_sdk.py [--chunks 20000] [--repeats 3]

The test echo agent streams N chunks `c<i> ` (about 6 characters each). The `openai` SDK parses
every SSE event into a `ChatCompletionChunk` (pydantic), which costs far more per event than the
bridge spends per chunk, so a reader that consumes one event per chunk falls behind. Two server
processes, alternated, a fresh agent each repeat, start-up excluded:

- coalescing (the default): each SSE write carries every part that arrived since the last one;
- one event per chunk: the same server with coalescing off (`--no-coalesce`).

The clock runs from `create()` to the end of the stream. Target: coalescing ≥ 2× one event per
chunk (content characters/s, medians). Exit code 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_openai_common import BridgeServer, bench_settings
from tests.bench.report import pairs, row

TARGET = 2.0


def run(config: Path, chunks: int, coalesce: bool) -> tuple[float, int, int]:
    import openai

    server = BridgeServer(config, *([] if coalesce else ["--no-coalesce"]))
    try:
        with openai.OpenAI(
            base_url=f"http://127.0.0.1:{server.port}/v1", api_key="x", max_retries=0
        ) as client:
            messages = [{"role": "user", "content": "stream 10"}]
            warm = "".join(
                c.choices[0].delta.content or ""
                for c in client.chat.completions.create(
                    model="echo", messages=messages, stream=True
                )
            )
            messages += [
                {"role": "assistant", "content": warm},
                {"role": "user", "content": f"stream {chunks}"},
            ]
            t0 = time.perf_counter()
            chars = events = 0
            for chunk in client.chat.completions.create(
                model="echo", messages=messages, stream=True
            ):
                events += 1
                if chunk.choices:
                    chars += len(chunk.choices[0].delta.content or "")
            elapsed = time.perf_counter() - t0
        expected = sum(len(f"c{i} ") for i in range(chunks))
        if chars != expected:
            raise RuntimeError(f"got {chars} characters, expected {expected}")
        return chars / elapsed, events, chars
    finally:
        server.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    config = bench_settings()
    results: dict[bool, list[tuple[float, int, int]]] = {True: [], False: []}
    for r in range(args.repeats):
        for coalesce in (True, False) if r % 2 == 0 else (False, True):
            rate, events, chars = run(config, args.chunks, coalesce)
            results[coalesce].append((rate, events, chars))
            print(
                f"  {'coalescing' if coalesce else 'per chunk':10s} {rate:10.0f} chars/s in {events} events",
                flush=True,
            )
    on = statistics.median(x[0] for x in results[True])
    off = statistics.median(x[0] for x in results[False])
    print(
        f"coalescing:          median {on:.0f} content chars/s, median {statistics.median(x[1] for x in results[True]):.0f} SSE events"
    )
    print(
        f"one event per chunk: median {off:.0f} content chars/s, median {statistics.median(x[1] for x in results[False]):.0f} SSE events"
    )
    ratio = on / off
    print(f"ratio: {ratio:.2f} (target >= {TARGET}): {'OK' if ratio >= TARGET else 'MISSED'}")
    _, low, high, n = pairs([x[0] for x in results[True]], [x[0] for x in results[False]])
    row(
        "OpenAI SDK stream with coalescing, chars/s",
        baseline="one event per chunk",
        target=f">= {TARGET}x",
        result=ratio,
        unit="x",
        met=ratio >= TARGET,
        low=low,
        high=high,
        samples=n,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
