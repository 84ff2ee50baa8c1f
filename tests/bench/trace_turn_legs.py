"""Where a bridged turn's time goes, leg by leg, in `bench_turn_overhead.py`'s own rounds.

    .venv/bin/python tests/bench/trace_turn_legs.py [--turns 300] [--repeats 1]

A diagnostic, not a row of the table. It runs the turn-overhead benchmark with the endpoint and
the floor that parses nothing each started under a recorder: before the program runs, the
recorder wraps `os.read`, `os.write` and the selector's `select` (what asyncio's pipe transports
and loop call) to note when each returns, and writes the notes out at exit. Every turn of each
process is then cut into its legs, on its own clock:

- request: the request line read from stdin -> the prompt written to the agent;
- busy after: the prompt written -> the process waiting for the agent with nothing left to do;
- agent: the prompt written -> the agent's first bytes read back;
- answer: those bytes read -> the last line written to the client (the answer);

and the medians are printed side by side. What the endpoint adds beyond the floor is in the
request leg on 2026-11-29 (190 us against 62 us; the agent and answer legs are the floor's): see
tests/bench/README.md.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import runpy
import selectors
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LEGS = ("request", "busy after", "agent", "answer", "whole")


def record(out: str) -> None:
    """Note when each read, write and select of this process returns (written to `out` at exit)."""
    clock = time.perf_counter
    notes: list[tuple[Any, ...]] = []
    read, write, select = os.read, os.write, selectors.EpollSelector.select

    def timed_read(fd: int, n: int) -> bytes:
        data = read(fd, n)
        notes.append((clock(), "read", fd, len(data)))
        return data

    def timed_write(fd: int, data: Any) -> int:
        written = write(fd, data)
        notes.append((clock(), "write", fd, written))
        return written

    def timed_select(self: Any, timeout: float | None = None) -> Any:
        called = clock()
        ready = select(self, timeout)
        notes.append((clock(), "select", -1, len(ready), called))
        return ready

    os.read, os.write = timed_read, timed_write  # type: ignore[assignment]
    selectors.EpollSelector.select = timed_select  # type: ignore[method-assign]

    def save() -> None:
        with open(out, "w") as f:
            json.dump(notes, f)

    atexit.register(save)


def legs(notes: list[list[Any]], skip: int = 20) -> dict[str, float]:
    """The median microseconds of each leg over the turns after the first `skip`."""
    turns: list[list[list[Any]]] = []
    for note in notes:
        if note[1] == "read" and note[2] == 0 and note[3] > 0:
            turns.append([note])
        elif turns:
            turns[-1].append(note)
    spans: dict[str, list[float]] = {name: [] for name in LEGS}
    for turn in turns[skip:]:
        start = turn[0][0]
        prompt = next((n for n in turn if n[1] == "write" and n[2] > 2), None)
        if prompt is None:
            continue
        back = next((n for n in turn if n[1] == "read" and n[2] > 2 and n[0] > prompt[0]), None)
        answer = [n for n in turn if n[1] == "write" and n[2] == 1]
        if back is None or not answer:
            continue
        # the wait that the agent's answer ended began when the process had nothing left to do
        idle = max((n[4] for n in turn if n[1] == "select" and n[0] <= back[0]), default=back[0])
        for name, span in zip(
            LEGS,
            (
                prompt[0] - start,
                idle - prompt[0],
                back[0] - prompt[0],
                answer[-1][0] - back[0],
                answer[-1][0] - start,
            ),
            strict=True,
        ):
            spans[name].append(span * 1e6)
    return {name: statistics.median(v) if v else float("nan") for name, v in spans.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--record", metavar="OUT", help=argparse.SUPPRESS)
    parser.add_argument("--run", choices=("endpoint", "floor"), help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.record:  # inside the recorded process
        record(args.record)
        if args.run == "floor":
            sys.argv = [str(Path(__file__).with_name("floor_translator.py")), *rest]
            runpy.run_path(sys.argv[0], run_name="__main__")
            return 0
        sys.path.insert(0, str(ROOT))
        from symposium_tui.start import main as start

        sys.argv = ["symposium-tui", "vscodelm"]
        return start()

    sys.path.insert(0, str(ROOT))
    import tests.bench.bench_turn_overhead as bench

    with tempfile.TemporaryDirectory(prefix="bench-legs-") as out:
        notes = {"endpoint": os.path.join(out, "endpoint.json")}
        notes["floor that parses nothing"] = os.path.join(out, "floor.json")
        me = [sys.executable, __file__, "--record"]
        floor = [*me, notes["floor that parses nothing"], "--run", "floor"]
        bench.FLOORS = {"a translator that parses nothing": floor}
        endpoint = " ".join([*me, notes["endpoint"], "--run", "endpoint"])
        sys.argv = [bench.__file__, "--turns", str(args.turns), "--repeats", "1"]
        sys.argv += ["--endpoint", endpoint]
        for r in range(args.repeats):
            bench.main()
            print(f"legs, repeat {r + 1} (median us per turn, on each process's own clock):")
            print(f"  {'':28}" + "".join(f"{name:>12}" for name in LEGS))
            for who, path in notes.items():
                with open(path) as f:
                    medians = legs(json.load(f))
                print(f"  {who:28}" + "".join(f"{medians[name]:>12.1f}" for name in LEGS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
