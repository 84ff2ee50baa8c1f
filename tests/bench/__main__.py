"""Every benchmark, one table: `python -m tests.bench` from the repository root.

    .venv/bin/python -m tests.bench [--only NAME ...] [--out DIR] [--timeout S]

Runs each script of `tests/bench/` in turn (a fresh process each; nothing else should run on the
machine meanwhile), collects the figures it reports (`tests/bench/report.py`: one `BENCH-ROW`
line per figure), and prints one table: figure, baseline (measured in the same run), target,
result (median, with the range it moved over across the interleaved baseline/subject pairs or
repeats), met. The 1-minute load average is recorded before and after every script.

A benchmark that cannot run here (a missing tool, a crash, a time-out) keeps its rows, each saying
why, so no figure silently drops out of the table. The table is written as JSON and Markdown to
`--out` (default `.cache/bench/`, both as `latest.*` and under the run's UTC time); the README's
benchmark section quotes the last quiet-machine table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "tests" / "bench"
sys.path.insert(0, str(REPO))

from tests.bench.report import PREFIX  # noqa: E402


@dataclass(frozen=True)
class Bench:
    """One script, the arguments that give it at least five interleaved pairs, and the figures
    it reports (named here too, so a script that cannot run still has its rows)."""

    script: str
    figures: tuple[str, ...]
    args: tuple[str, ...] = ()
    needs: tuple[str, ...] = field(default=())  # programs it cannot run without


BENCHES = (
    Bench(
        "bench_acp_proxy.py",
        ("ACP proxy streaming, updates/s", "ACP proxy added time per session/prompt"),
    ),
    Bench("bench_console_startup.py", ("console first frame (80x24)",)),
    Bench(
        "bench_console_startup.py", ("console first frame (80x24), a person's rules",), ("--rules",)
    ),
    Bench(
        "bench_routing.py", ("routing a 10,000-message request", "routing with 100 live sessions")
    ),
    Bench("bench_turn_overhead.py", ("turn overhead (echo agent)",)),
    Bench(
        "bench_history_length.py",
        (
            "turn at 2000 vs 10 messages",
            "added time per turn, 10 messages",
            "added time per turn, 2000 messages",
        ),
    ),
    Bench(
        "bench_history_length.py",
        (
            "turn at 2000 vs 10 messages, 4 conversations",
            "added time per turn, 10 messages, 4 conversations",
            "added time per turn, 2000 messages, 4 conversations",
        ),
        ("--conversations", "4"),
    ),
    Bench(
        "bench_history_length.py",
        (
            "turn at 2000 vs 10 messages, 80 client tools",
            "added time per turn, 10 messages, 80 client tools",
            "added time per turn, 2000 messages, 80 client tools",
        ),
        ("--tools", "80"),
    ),
    Bench("bench_openai_latency.py", ("OpenAI added latency",)),
    Bench(
        "bench_openai_latency.py",
        ("OpenAI added latency, 80 client tools",),
        ("--tools", "80"),
    ),
    Bench("bench_openai_stream_raw.py", ("OpenAI raw stream, chunks/s",)),
    Bench(
        "bench_openai_stream_sdk.py",
        ("OpenAI SDK stream with coalescing, chars/s",),
        ("--repeats", "5"),
    ),
    Bench("bench_openai_concurrent.py", ("OpenAI p99 with 50 conversations at once",)),
    Bench("bench_streaming.py", ("vscodelm stream, parts/s",)),
    Bench("bench_relay.py", ("vscodelm relayed into a console, parts/s",)),
    Bench("bench_cold_start.py", ("vscodelm cold start -> first answer",)),
    Bench("bench_rules.py", ("1,000 rules, per ordinary decision",)),
    Bench(
        "bench_approval_hop.py",
        ("approval hop: request -> card event", "approval hop: answer -> agent"),
    ),
    Bench("bench_tool_hop.py", ("client tool hop (agent's tools/call -> tool_call part)",)),
    Bench(
        "bench_registry.py",
        ("`registry resolve-agent`", "`resolve-agent claude`", "`registry list`"),
    ),
    Bench(
        "bench_hooks.py",
        (
            "hook, edit, no console",
            "hook, bash, no console",
            "hook, compound bash, no console",
            "hook, bash, console",
            "hook start -> card, beyond process start",
        ),
    ),
    Bench(
        "bench_rule_bounds.py",
        (
            "a 1 MB command, decided (asked)",
            "the loop's longest stall while a 54 KB command is decided",
        ),
    ),
    Bench(
        "bench_openai_memory.py",
        ("`serve --openai` RSS after 10,000 conversations",),
    ),
    Bench(
        "bench_console_load.py",
        ("console RSS over the last minute at capacity",),
        ("--seconds", "120"),
    ),
    Bench(
        "bench_remote.py",
        ("approval card over ssh", "approval answer over ssh"),
        needs=("/usr/sbin/sshd",),
    ),
)


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def missing(bench: Bench) -> str | None:
    for need in bench.needs:
        if not (os.path.exists(need) if os.path.isabs(need) else shutil.which(need)):
            return f"{need} is not installed"
    if not (BENCH / bench.script).exists():
        return "the script is missing"
    return None


def run(bench: Bench, timeout: float) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows a script reported (each figure it did not report: a row saying why)."""
    info: dict[str, Any] = {"script": bench.script, "load_before": load_average()}
    reason = missing(bench)
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    if reason is None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        # start-up figures are of a normal install, which keeps its bytecode
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        try:
            proc = subprocess.run(
                [sys.executable, str(BENCH / bench.script), *bench.args],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            out = proc.stdout
            for line in out.splitlines():
                if line.startswith(PREFIX):
                    rows.append(json.loads(line[len(PREFIX) :]))
            if proc.returncode != 0:
                tail = (proc.stderr or out).strip().splitlines()[-1:] or ["no output"]
                reason = f"exited with code {proc.returncode}: {tail[0][:200]}"
            elif not rows:
                tail = out.strip().splitlines()[-1:] or ["no output"]
                reason = f"reported no figure: {tail[0][:200]}"
        except subprocess.TimeoutExpired:
            reason = f"did not finish within {timeout:.0f} s"
    info["seconds"] = round(time.monotonic() - started, 1)
    info["load_after"] = load_average()
    reported = {r["figure"] for r in rows}
    for figure in bench.figures:
        if figure not in reported:
            rows.append(
                {
                    "figure": figure,
                    "baseline": "",
                    "target": "",
                    "result": None,
                    "unit": "",
                    "met": False,
                    "low": None,
                    "high": None,
                    "samples": None,
                    "note": f"could not run: {reason or 'the script did not report this figure'}",
                }
            )
    for r in rows:
        r["script"] = bench.script
    return rows, info


def number(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    text = f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"
    return f"{text}{unit if unit == 'x' else ' ' + unit}"


def result_cell(r: dict[str, Any]) -> str:
    if r["result"] is None:
        return r["note"]
    cell = number(r["result"], r["unit"])
    if r.get("low") is not None and r.get("high") is not None:
        cell += f" ({number(r['low'], r['unit'])}–{number(r['high'], r['unit'])})"
    if r.get("note"):
        cell += f"; {r['note']}"
    return cell


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        f"Benchmarks, {meta['when']} (load average {meta['load_before']:.2f} before, "
        f"{meta['load_after']:.2f} after; {meta['cores']} cores)",
        "",
        "| figure | baseline (same run) | target | result: median (range) | met |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        met = "yes" if r["met"] else ("—" if r["result"] is None else "**no**")
        lines.append(
            f"| {r['figure']} | {r['baseline']} | {r['target']} | {result_cell(r)} | {met} |"
        )
    met = sum(1 for r in rows if r["met"])
    lines += ["", f"{met} of {len(rows)} figures met their targets."]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="script names (or parts of them) to run")
    parser.add_argument("--out", default=str(REPO / ".cache" / "bench"))
    parser.add_argument("--timeout", type=float, default=600.0, help="per script, seconds")
    args = parser.parse_args()
    chosen = [b for b in BENCHES if not args.only or any(name in b.script for name in args.only)]
    meta: dict[str, Any] = {
        "when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": os.cpu_count(),
        "load_before": load_average(),
        "python": sys.version.split()[0],
        "scripts": [],
    }
    rows: list[dict[str, Any]] = []
    for bench in chosen:
        print(f"{bench.script} …", file=sys.stderr, flush=True)
        got, info = run(bench, args.timeout)
        rows += got
        meta["scripts"].append(info)
        for r in got:
            print(f"  {r['figure']}: {result_cell(r)}", file=sys.stderr, flush=True)
    meta["load_after"] = load_average()
    table = markdown(rows, meta)
    print(table)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    document = json.dumps({"meta": meta, "rows": rows}, indent=2, ensure_ascii=False) + "\n"
    for name in (f"bench-{stamp}", "latest"):
        (out / f"{name}.json").write_text(document, encoding="utf-8")
        (out / f"{name}.md").write_text(table, encoding="utf-8")
    print(f"written: {out / 'latest.json'} and {out / 'latest.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
