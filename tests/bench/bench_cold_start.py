"""Cold start of the vscodelm endpoint: spawn -> answer to the first `lm/provideTokenCount`.

    .venv/bin/python tests/bench/bench_cold_start.py [--spawns 20]

VS Code spawns `symposium-tui vscodelm` lazily and its first request is often a token count, so
that answer must not wait for asyncio, pydantic and the ACP SDK (`bridge/vscodelm/fastpath.py` answers it
while a thread imports them). For each spawn the request is written to stdin right after the
spawn, and the clock stops when the response line has been read; stdin is then closed and the
process reaped (untimed; its exit time is reported for information).

Compared, interleaved, in the same run:
- `symposium-tui vscodelm`            (the venv's console script, as the extension runs it)
- `python -m symposium_tui vscodelm`  (same interpreter)
- `python -c pass`                    (baseline: spawn -> exit of a bare interpreter)

Target: median(console script) / median(python -c pass) <= 5x. Medians over the spawns, after
two untimed warm-up rounds. Exit code is always 0: this reports, it does not gate.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.report import ratio_row

TARGET = 5.0
PY = sys.executable
SCRIPT = str(Path(PY).parent / "symposium-tui")
REQUEST = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "lm/provideTokenCount",
            "params": {"modelId": "m", "text": "hello, world " * 8},
        }
    )
    + "\n"
).encode()


def time_baseline(cwd: str) -> tuple[float, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [PY, "-c", "pass"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
    )
    proc.wait()
    t1 = time.perf_counter()
    return t1 - t0, t1 - t0


def time_endpoint(argv: list[str], cwd: str) -> tuple[float, float]:
    """Seconds from spawn to the token-count answer, and from spawn to exit after EOF."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(REQUEST)
    proc.stdin.flush()
    line = proc.stdout.readline()
    t1 = time.perf_counter()
    proc.stdin.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    t2 = time.perf_counter()
    proc.stdout.close()
    try:
        reply = json.loads(line)
    except ValueError:
        raise SystemExit(
            f"{argv}: no JSON answer, got {line!r} (exit code {proc.returncode})"
        ) from None
    if reply.get("id") != 1 or not isinstance(reply.get("result"), int):
        raise SystemExit(f"{argv}: unexpected answer {reply!r}")
    return t1 - t0, t2 - t0


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--spawns", type=int, default=20, help="timed spawns of each command (default 20)"
    )
    args = parser.parse_args()

    if not os.path.exists(SCRIPT):
        print(
            f"cold start: console script {SCRIPT} not found (is the project installed in this venv?)"
        )
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as cwd:  # as VS Code: not the repo
        cases = {
            "python -c pass": lambda: time_baseline(cwd),
            "symposium-tui vscodelm": lambda: time_endpoint([SCRIPT, "vscodelm"], cwd),
            "python -m symposium_tui vscodelm": lambda: time_endpoint(
                [PY, "-m", "symposium_tui", "vscodelm"], cwd
            ),
        }
        names = list(cases)
        answer: dict[str, list[float]] = {n: [] for n in names}
        exit_: dict[str, list[float]] = {n: [] for n in names}
        for round_ in range(args.spawns + 2):
            order = (
                names[round_ % len(names) :] + names[: round_ % len(names)]
            )  # rotate who goes first
            for name in order:
                a, e = cases[name]()
                if round_ >= 2:  # two warm-up rounds (page cache, .pyc files)
                    answer[name].append(a)
                    exit_[name].append(e)

    base = statistics.median(answer["python -c pass"])
    print(f"cold start ({args.spawns} spawns each, interleaved; interpreter {PY})")
    print(f"  baseline python -c pass: median {ms(base)} (min {ms(min(answer['python -c pass']))})")
    for name in names[1:]:
        med = statistics.median(answer[name])
        ratio = med / base
        verdict = "ok" if ratio <= TARGET else "OVER TARGET"
        print(
            f"cold start {name}: median {ms(med)} vs python -c pass {ms(base)} -> ratio {ratio:.2f}x "
            f"(target <= {TARGET:g}x) {verdict}   [min {ms(min(answer[name]))}, max {ms(max(answer[name]))}; "
            f"exit after EOF: median {ms(statistics.median(exit_[name]))}]"
        )
        if name == "symposium-tui vscodelm":
            ratio_row(
                "vscodelm cold start -> first answer",
                baseline="python -c pass",
                ratio=ratio,
                target=TARGET,
                subject=answer[name],
                against=answer["python -c pass"],
            )
    return 0


if __name__ == "__main__":
    try:
        main()
    except SystemExit as exc:
        if exc.code not in (None, 0):
            print(f"cold start: benchmark failed: {exc.code}")
    sys.exit(0)
