"""Relay throughput: a long streamed reply through `symposium-tui vscodelm` relaying to a running
console host, against the same endpoint serving headless (no console).

    .venv/bin/python tests/bench/bench_relay.py [--chunks 20000] [--repeats 6]

The test echo agent (`tests/agents/echo_agent.py`), prompted `stream N`, streams N chunks as fast
as it can. A stdio client (the same one for both; it `json.loads` every line, as the extension
does) counts the `lm/responsePart` notifications of its request from `symposium-tui vscodelm`
(the venv's console script), a fresh endpoint process per run:

- relay: a console host (`symposium-tui serve`) is running in this benchmark's private runtime
  dir (`SYMPOSIUM_RUNTIME_DIR`), so the endpoint relays its stdio over the console's unix socket
  (`symposium_tui/hosting/relay.py`); the bridge, and the agent, run in the host;
- headless: the endpoint with an empty runtime dir: it serves the request itself (the bridge and
  the agent under it).

Agent start-up is excluded from both: a warm-up `stream 10` starts the agent (and its session);
the timed prompt continues the conversation, and the clock runs from writing it to reading its
last part. The two alternate (who goes first alternates too); one console host serves all the
relay runs.

Target: median parts/s (relay) / median parts/s (headless) >= 0.8. Exit code is always 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_vscodelm_common import (
    SCRIPT,
    Failed,
    LmStdio,
    assistant,
    child_pids,
    cpu_seconds,
    load_average,
    p90,
    user,
)
from tests.bench.report import ratio_row

TARGET = 0.8
WARMUP = "stream 10"


class Run:
    def __init__(self, seconds: float, cpu: dict[str, float]) -> None:
        self.seconds = seconds
        self.cpu = cpu  # process role -> CPU seconds during the timed reply


class ConsoleHost:
    """`symposium-tui serve` in a private runtime dir, until closed."""

    def __init__(self, cwd: str, env: dict[str, str]) -> None:
        self.log = open(os.path.join(cwd, "serve.log"), "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [SCRIPT, "serve"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd=cwd,
            env=env,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "serving on" not in line:
            self.close()
            raise Failed(f"the console host did not start: {line!r}; log: {self.tail()}")

    def tail(self) -> str:
        try:
            with open(self.log.name, "rb") as f:
                return f.read()[-800:].decode(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def run_once(kind: str, chunks: int, cwd: str, env: dict[str, str], host: ConsoleHost) -> Run:
    client = LmStdio(cwd=cwd, env=env)
    try:
        history = [user(WARMUP)]
        warm, _ = client.chat(history)
        history += [assistant(warm.parts), user(f"stream {chunks}")]
        endpoint = client.proc.pid
        if kind == "relay":
            if child_pids(endpoint):
                raise Failed(
                    "relay: the endpoint started an agent itself (is the console host reachable?)"
                )
            pids = {
                "relay (vscodelm)": [endpoint],
                "console host": [host.proc.pid],
                "agent": child_pids(host.proc.pid),
            }
        else:
            pids = {"endpoint (vscodelm)": [endpoint], "agent": child_pids(endpoint)}
        if not pids["agent"]:
            raise Failed(f"{kind}: no agent process found")

        def cpu_now() -> dict[str, float]:
            out = {role: sum(map(cpu_seconds, ps)) for role, ps in pids.items()}
            out["stdio client"] = time.process_time()
            return out

        c0 = cpu_now()
        rid, t0 = client.send_chat(history)
        reply = client.read_reply(rid)
        c1 = cpu_now()
    finally:
        client.close()
    if len(reply.parts) != chunks:
        raise Failed(f"{kind}: expected {chunks} parts, got {len(reply.parts)}")
    return Run(reply.part_times[-1] - t0, {role: c1[role] - c0[role] for role in c0})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--chunks", type=int, default=20000, help="chunks in the timed reply (default 20000)"
    )
    parser.add_argument("--repeats", type=int, default=6, help="timed runs of each (default 6)")
    args = parser.parse_args()
    if not os.path.exists(SCRIPT):
        print(f"relay: {SCRIPT} not found (is the project installed in this venv?)")
        return 0

    load_before = load_average()
    n = args.chunks
    runs: dict[str, list[Run]] = {"relay": [], "headless": []}
    with tempfile.TemporaryDirectory(prefix="bench-relay-") as cwd:
        base = {**os.environ, "SYMPOSIUM_CONFIG_DIR": os.path.join(cwd, "config")}
        envs = {
            "relay": {**base, "SYMPOSIUM_RUNTIME_DIR": os.path.join(cwd, "run-console")},
            "headless": {**base, "SYMPOSIUM_RUNTIME_DIR": os.path.join(cwd, "run-empty")},
        }
        host = ConsoleHost(cwd, envs["relay"])
        try:
            for i in range(args.repeats):
                order = ("headless", "relay") if i % 2 == 0 else ("relay", "headless")
                for kind in order:
                    run = run_once(kind, n, cwd, envs[kind], host)
                    runs[kind].append(run)
                    cpu = ", ".join(f"{role} {v * 1e6 / n:4.1f}" for role, v in run.cpu.items())
                    print(
                        f"  run {i + 1} {kind:8}: {run.seconds * 1000:6.0f} ms {n / run.seconds:7.0f} parts/s   cpu us/part: {cpu}",
                        flush=True,
                    )
        except Failed as exc:
            raise Failed(f"{exc}; console host log: {host.tail()}") from None
        finally:
            host.close()

    def rates(kind: str) -> list[float]:
        return [n / r.seconds for r in runs[kind]]

    relay, headless = statistics.median(rates("relay")), statistics.median(rates("headless"))
    ratio = relay / headless
    cores = os.cpu_count() or 1

    def cpu_us(kind: str) -> dict[str, float]:
        return {
            role: statistics.median(r.cpu[role] for r in runs[kind]) * 1e6 / n
            for role in runs[kind][0].cpu
        }

    def pace(d: dict[str, float]) -> float:
        return max(max(d.values()), sum(d.values()) / cores)

    ur, uh = cpu_us("relay"), cpu_us("headless")
    print(f"relay throughput ({n} chunks, {args.repeats} runs each, alternated)")
    for kind, rate in (("relay", relay), ("headless", headless)):
        secs = [r.seconds for r in runs[kind]]
        print(
            f"  {kind + ':':9} median {rate:7.0f} parts/s; time per reply median {statistics.median(secs) * 1000:.0f} ms, "
            f"p90 {p90(secs) * 1000:.0f} ms (slowest run {n / max(secs):.0f} parts/s)"
        )
    print(
        f"  cpu per part (medians): relay path {sum(ur.values()):.1f} us in all ("
        + ", ".join(f"{k} {v:.1f}" for k, v in ur.items())
        + f"); headless {sum(uh.values()):.1f} us in all ("
        + ", ".join(f"{k} {v:.1f}" for k, v in uh.items())
        + ")"
    )
    print(
        f"  cpu-bound estimate for an idle {cores}-core machine (each path at the pace of its busiest process, or of all "
        f"of them sharing the cores): ratio {pace(uh) / pace(ur):.2f}x"
    )
    print(f"  {load_before} before, {load_average()} after")
    verdict = "ok" if ratio >= TARGET else "UNDER TARGET"
    print(
        f"relay throughput: relay median {relay:.0f} parts/s vs headless {headless:.0f} parts/s -> ratio {ratio:.2f}x "
        f"(target >= {TARGET:g}x) {verdict}   [{args.repeats} runs each]"
    )
    ratio_row(
        "vscodelm relayed into a console, parts/s",
        baseline="the same endpoint headless",
        ratio=ratio,
        target=TARGET,
        subject=rates("relay"),
        against=rates("headless"),
        at_least=True,
    )
    return 0


if __name__ == "__main__":
    try:
        main()
    except Failed as exc:
        print(f"relay: benchmark failed: {exc}")
    sys.exit(0)
