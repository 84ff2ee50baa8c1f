"""The vscodelm endpoint's request leg in one process, warm and with the caches evicted between
turns — what `bench_turn_overhead.py` sees live, reproduced without its three processes.

    .venv/bin/python tests/bench/trace_cold_request_leg.py [--turns 200] [--evict-mb 8 ...]

A diagnostic, not a row of the table. Each turn continues one conversation as the benchmark's
client does (the whole history resent, the echo agent's reply recorded as the agent's answer), and
goes through the endpoint's own steps: `PrefixCache.predecode` and `parse`, `make_request`, the
history tracker's `route`. Before a cold turn the process writes one byte in every cache line of
an N MiB buffer, as the client and the agent do to the cache between two of the endpoint's turns
on a 2-core machine (each core has 2 MiB of L2 here, the VM a share of a 32 MiB L3). It prints each
step's median time per eviction size, and beside them what `json.loads` of the whole request line
(what a translator that parses each line does) costs in the same state.

On 2026-11-29: warm 66 us for the four steps; evicting 8 MiB, 307 us (predecode 120, parse 80,
make_request 38, route 66) — the live endpoint's thread CPU time for its whole request leg was
~450 us, its predecode 113 and parse 82. Every step costs four to seven times its warm time, even
one that does almost nothing: what a step costs follows how many distinct objects and how much
code it touches, not how much it computes. `json.loads` of the same lines took 131 us warm and
363 us evicting 8 MiB: the four steps cold cost less than decoding the line once, so what the
endpoint adds beyond a translator that parses each line whole is outside them.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bridge.config import BridgeConfig
from bridge.core import Bridge
from bridge.protocol import TextPart
from bridge.vscodelm.prefix_cache import PrefixCache
from tests.bench.bench_vscodelm_common import ECHO, assistant, user

STEPS = ("predecode", "parse", "make_request", "route")


def run(turns: int, evict_mb: int) -> dict[str, float]:
    """Median microseconds per step over the turns after the first 20 (0 MiB: warm)."""
    evict = bytearray(evict_mb << 20)
    core = Bridge(BridgeConfig(cwd="/tmp")).open_connection("vscodelm")
    cache = PrefixCache()
    history: list[dict] = []
    times: dict[str, list[float]] = {name: [] for name in (*STEPS, "all four", "json.loads")}
    gc.freeze()
    for i in range(turns):
        history.append(user(f"q{i}"))
        params = {"modelId": "m", "messages": history, "agent": ECHO}
        message = {"jsonrpc": "2.0", "id": i + 1, "params": params}
        message["method"] = "lm/provideLanguageModelChatResponse"
        line = json.dumps(message).encode()
        for n in range(0, len(evict), 64):
            evict[n] = (evict[n] + 1) & 255
        t0 = time.perf_counter_ns()
        incoming = cache.predecode(line)
        t1 = time.perf_counter_ns()
        assert incoming is not None and isinstance(incoming.params, dict)
        parsed = cache.parse(incoming.params)
        t2 = time.perf_counter_ns()
        options = parsed.options
        request = core.make_request(
            i + 1, parsed.agent, parsed.messages, options.tools, cache.reuses(parsed)
        )
        t3 = time.perf_counter_ns()
        decision = core.tracker.route(request.agent_key, request.messages, None, request.reuses)
        t4 = time.perf_counter_ns()
        for n in range(0, len(evict), 64):
            evict[n] = (evict[n] + 1) & 255
        t5 = time.perf_counter_ns()
        json.loads(line)
        t6 = time.perf_counter_ns()
        core.tracker.record_part(decision.session_id, TextPart(value=f"ECHO: q{i}"))
        core.tracker.complete(decision.session_id)
        history.append(assistant([{"type": "text", "value": f"ECHO: q{i}"}]))
        if i >= 20:
            spans = (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0, t6 - t5)
            for name, span in zip(times, spans, strict=True):
                times[name].append(span / 1000)
    gc.unfreeze()
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--evict-mb", type=int, nargs="*", default=[0, 2, 4, 8, 16])
    args = parser.parse_args()
    names = (*STEPS, "all four", "json.loads")
    print("evicted  " + "".join(f"{name:>14}" for name in names) + "   (us, medians)")
    for mb in args.evict_mb:
        medians = run(args.turns, mb)
        label = "warm" if mb == 0 else f"{mb} MiB"
        print(f"{label:<9}" + "".join(f"{medians[name]:>14.1f}" for name in names))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
