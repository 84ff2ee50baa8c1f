"""Approving from another machine: latency over ssh, and exactly-once under load.

    .venv/bin/python tests/bench/bench_remote.py [--rounds 60] [--total 1000]

Everything is real: an OpenSSH server on a loopback port (tests/support/sshd.py: throwaway keys,
its own config), `symposium-tui serve` per fake host (its own runtime and config dirs, reached
only through ssh), VS Code-like clients (`symposium-tui vscodelm` relaying to that serve) asking
the built-in Eliza `ask permission to deploy N`, and consoles attached with the same links
`symposium-tui attach` uses (`ssh HOST symposium-tui link`).

1. card latency: the approval created on the host (the broker receiving the agent's request) →
   the card arriving at the attached console. Target over ssh: median ≤ 50 ms.
2. answer latency: the console writing its answer → the host's broker settling the approval (the
   agent's pending request resolved; the audit entry's time). Target over ssh: median ≤ 50 ms.
   Also printed: answer → the settlement notification back at the console (the round trip).
   Baseline for 1 and 2, same run: the same link straight to the host's console socket (`local`,
   no ssh); the ratio is ssh / direct.
3. 1,000 approvals across three hosts, two consoles each attached to all three over ssh, both
   answering every card the moment they see it: every approval settled exactly once, every one
   in its host's audit log, every client request answered once.

Host and console share a clock (one machine), so the cross-process times are comparable. Exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from symposium_tui.wire.host_link import HostLink  # noqa: E402
from symposium_tui.wire.transport import Target  # noqa: E402
from tests.bench.report import row, spread  # noqa: E402
from tests.support.lmclient import user  # noqa: E402
from tests.support.remote import ServeProcess  # noqa: E402
from tests.support.sshd import start_sshd  # noqa: E402


def stats(values: list[float]) -> str:
    values = sorted(values)
    return (
        f"median {statistics.median(values) * 1000:7.2f} ms, "
        f"p90 {values[int(len(values) * 0.9)] * 1000:7.2f} ms (n={len(values)})"
    )


def host_id(approval_id: str) -> str:
    """The id in the host's audit log (over `link`, ids are `<socket>_<id>`)."""
    return approval_id.rsplit("_", 1)[-1]


class Console:
    """Links to some hosts, recording when each card and each settlement arrived."""

    def __init__(self, name: str, targets: list[Target], *, answer: bool) -> None:
        self.name = name
        self.answer = answer
        self.cards: dict[tuple[str, str], float] = {}  # (host, approval id) → arrival
        self.created: dict[tuple[str, str], float] = {}
        self.sent: dict[tuple[str, str], float] = {}
        self.settled: Counter[tuple[str, str]] = Counter()
        self.settled_at: dict[tuple[str, str], float] = {}
        self.winners: dict[tuple[str, str], str] = {}
        self.arrived = asyncio.Event()
        self.links = [HostLink(f"h{i}", t, self._on, name=name) for i, t in enumerate(targets, 1)]

    def _on(self, kind: str, link: HostLink, payload: dict[str, Any]) -> None:
        now = time.time()
        if kind == "requested":
            key = (link.label, payload["approvalId"])
            self.cards[key] = now
            self.created[key] = payload["created"]
            self.arrived.set()
            if self.answer:
                self.sent[key] = time.time()
                link.answer(payload["approvalId"], "approve")
        elif kind == "resolved":
            key = (link.label, payload["approvalId"])
            self.settled[key] += 1
            self.settled_at[key] = now
            self.winners[key] = payload.get("by") or ""

    async def start(self) -> None:
        for link in self.links:
            link.start()
        for link in self.links:
            await asyncio.wait_for(link.wait_up(), 60)

    async def stop(self) -> None:
        for link in self.links:
            await link.stop()


async def latency(serve: ServeProcess, target: Target, rounds: int) -> dict[str, list[float]]:
    console = Console("bench@laptop", [target], answer=True)
    await console.start()
    client = await serve.client()
    before = {r["approval_id"] for r in serve.audit()}
    try:
        for i in range(rounds):
            response = await asyncio.wait_for(
                client.chat([user(f"ask permission to deploy {i}")]), 60
            )
            assert "Permission granted" in response.text, response.text
    finally:
        await client.close()
        await console.stop()
    decided = {r["approval_id"]: r["ts"] for r in serve.audit() if r["approval_id"] not in before}
    keys = [k for k in console.cards if host_id(k[1]) in decided]
    return {
        "card": [console.cards[k] - console.created[k] for k in keys],
        "answer": [decided[host_id(k[1])] - console.sent[k] for k in keys],
        "round trip": [console.settled_at[k] - console.sent[k] for k in keys],
    }


async def load(serves: list[ServeProcess], sshd: Any, total: int, per_host_parallel: int) -> None:
    targets = [
        Target.parse(s.host.name, ssh=sshd.ssh, remote_command=sshd.remote_command) for s in serves
    ]
    consoles = [Console(name, targets, answer=True) for name in ("alice@laptop", "alice@phone")]
    for console in consoles:
        await console.start()
    before = {s.host.name: {r["approval_id"] for r in s.audit()} for s in serves}
    counts = [total // len(serves) + (i < total % len(serves)) for i in range(len(serves))]
    started = time.perf_counter()
    answered: Counter[str] = Counter()
    errors: list[str] = []

    async def worker(serve: ServeProcess, jobs: list[int]) -> None:
        client = await serve.client()
        try:
            for n in jobs:
                response = await asyncio.wait_for(
                    client.chat([user(f"ask permission to deploy {serve.host.name}-{n}")]), 120
                )
                if "Permission granted (allow_once)" in response.text:
                    answered[serve.host.name] += 1
                else:
                    errors.append(response.text or str(response.error))
        finally:
            await client.close()

    tasks = []
    for serve, count in zip(serves, counts):
        jobs = list(range(count))
        for w in range(per_host_parallel):
            tasks.append(worker(serve, jobs[w::per_host_parallel]))
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    for console in consoles:
        await console.stop()

    print(f"\n3. {total} approvals, {len(serves)} hosts, 2 consoles: {elapsed:.1f} s")
    ok = True
    for serve, count in zip(serves, counts):
        name = serve.host.name
        records = [r for r in serve.audit() if r["approval_id"] not in before[name]]
        ids = Counter(r["approval_id"] for r in records)
        twice = [i for i, n in ids.items() if n > 1]
        seen = {host_id(aid) for c in consoles for (h, aid) in c.cards if h == name}
        missing = seen - set(ids)
        by = Counter(r["decider"].get("said", "") for r in records)
        line_ok = len(records) == count and not twice and not missing and answered[name] == count
        ok &= line_ok
        print(
            f"   {name:7s}: {count} asked, {answered[name]} answered to the agent, "
            f"{len(records)} decisions in its audit log ({len(ids)} distinct), "
            f"{len(twice)} decided twice, {len(missing)} cards missing from the log; "
            f"won by {dict(by)}  {'OK' if line_ok else 'FAIL'}"
        )
    for console in consoles:
        settled_twice = [k for k, n in console.settled.items() if n != 1]
        never = set(console.cards) - set(console.settled)
        ok &= not settled_twice and not never
        print(
            f"   {console.name}: saw {len(console.cards)} cards, each settled once: "
            f"{'yes' if not settled_twice and not never else f'NO ({len(settled_twice)} / {len(never)})'}"
        )
    if errors:
        ok = False
        print(f"   {len(errors)} requests not granted, e.g. {errors[0][:200]!r}")
    print(f"   exactly once: {'OK' if ok else 'FAIL'}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--total", type=int, default=1000)
    parser.add_argument("--parallel", type=int, default=4, help="client requests per host at once")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="symposium-bench-remote-"))
    sshd = start_sshd(base / "sshd", ["hostA", "hostB", "hostC"])
    serves: list[ServeProcess] = []
    try:
        serves = [await ServeProcess.start(h) for h in sshd.hosts.values()]
        host = serves[0]
        direct = Target("local", socket=host.host.runtime_dir / "console.sock")
        over_ssh = Target.parse(host.host.name, ssh=sshd.ssh, remote_command=sshd.remote_command)
        # Warm up both paths (agent start, imports) before measuring.
        await latency(host, direct, 3)
        await latency(host, over_ssh, 3)
        base_run = await latency(host, direct, args.rounds)
        ssh_run = await latency(host, over_ssh, args.rounds)
        print(f"card and answer latency, {args.rounds} approvals each (host hostA):")
        for label, key, n in (
            ("1. card: created on the host → at the console", "card", 1),
            ("2. answer: written by the console → settled on the host", "answer", 2),
            ("   answer → settlement back at the console (round trip)", "round trip", 0),
        ):
            b, s = base_run[key], ssh_run[key]
            ratio = statistics.median(s) / statistics.median(b)
            target = ""
            if n:
                verdict = "OK" if statistics.median(s) <= 0.050 else "OVER"
                target = f"  target median ≤ 50 ms: {verdict}"
            print(f"{label}")
            print(f"     direct socket (baseline): {stats(b)}")
            print(f"     over ssh:                 {stats(s)}   ratio {ratio:.2f}x{target}")
            if n:
                median, low, high, count = spread([x * 1000 for x in s])
                row(
                    f"approval {key} over ssh",
                    baseline=f"direct socket ({statistics.median(b) * 1000:.1f} ms)",
                    target="<= 50 ms",
                    result=median,
                    unit="ms",
                    met=median <= 50,
                    low=low,
                    high=high,
                    samples=count,
                )
        await load(serves, sshd, args.total, args.parallel)
    finally:
        for serve in serves:
            await serve.stop()
        sshd.stop()
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
