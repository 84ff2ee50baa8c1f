"""Is the console still answering keys while the bridge publishes ~1,000 events a second?

    .venv/bin/python tests/bench/bench_console_load.py [--seconds 30] [--rate 1000] [--prefill 100000]
    .venv/bin/python tests/bench/bench_console_load.py --seconds 180   # memory over the last minute

A real `Bridge`'s event bus feeds a `ConsoleState` and both panes (`SessionsPane`, `ToolLogPane`,
in a `TabbedContent` as the console has them), in a headless Textual app at 80×24. The tool log is
first filled to its capacity (100,000 calls), and the load is then run untimed until the history
decisions and ended sessions are at their capacities too, so the run shows whether memory stays
flat once the oldest of everything is being dropped. Then, for `--seconds`, a task publishes `--rate` events a second
in batches every 10 ms — streamed parts, agent tool calls and their updates, client tool round
trips, permissions, history decisions of requests that finish, sessions ending and starting — while
a key is pressed every ~250 ms (up/down in the tool log for the first half, `[`/`]` in the session
inspector for the second).

For each key it measures, from the moment the key event is posted to the app:
  handled — until the pane's action ran;
  painted — until the next screen update after that.
The baseline is the same measurement on the same app with no load, taken first in the same run.
It prints the distributions (p50/p90/p99/max and a histogram), the ratio of the loaded p50/p99 to
the baseline's, the event rate achieved, and the resident memory every few seconds; with `--seconds`
of 90 or more, the spread of the resident memory over the last minute (target: within 5 MB, flat
at capacity; use 180: the session pane, hidden until half time, catches up once when shown) and
what the tool log's byte budget holds. It reports; it does not gate (exit 0).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Footer, TabbedContent, TabPane

from bridge import events as ev
from bridge.config import BridgeConfig
from bridge.core import Bridge
from symposium_tui.state import ConsoleState
from symposium_tui.widgets.sessions import SessionsPane
from symposium_tui.widgets.toollog import ToolLogPane, ToolLogView
from tests.bench.report import row

AGENT_KEY = '{"deterministic":false,"kind":"eliza"}'
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
    "the",
    "tests",
    "again",
    "until",
    "they",
    "pass",
]


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class ConsoleApp(App[None]):
    def __init__(self, state: ConsoleState, bridge: Bridge) -> None:
        super().__init__()
        self.state = state
        self.bridge = bridge

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="toolcalls", id="tabs"):
            with TabPane("Sessions", id="sessions"):
                yield SessionsPane(self.state, self.bridge)
            with TabPane("Tool calls", id="toolcalls"):
                yield ToolLogPane(self.state)
        yield Footer()


class Load:
    """Synthesises what a busy bridge publishes: several connections, each with a live session
    whose requests stream parts, call tools and ask permissions; sessions end and new ones start."""

    def __init__(self, bus: ev.EventBus, connections: int = 4) -> None:
        self.bus = bus
        self.rng = random.Random(7)
        self.conns = [f"vscodelm-{i + 1}" for i in range(connections)]
        self.session_no = dict.fromkeys(self.conns, 0)
        self.request_no = 0
        self.call_no = 0
        self.live: dict[str, dict[str, Any]] = {}  # connection -> {sid, rid, committed, open calls}
        self.published = 0
        for conn in self.conns:
            self._new_session(conn)

    def publish(self, event: ev.Event) -> None:
        self.published += 1
        self.bus.publish(event)

    def _text(self, lo: int = 3, hi: int = 12) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(lo, hi)))

    def _decision(self, conn: str, kind: str, committed: int) -> None:
        s = self.live[conn]
        self.request_no += 1
        s["rid"] = self.request_no
        self.publish(
            ev.HistoryDecided(
                connection=conn,
                request_id=s["rid"],
                decision={
                    "seq": self.request_no,
                    "session_id": s["sid"],
                    "kind": kind,
                    "agent_key": AGENT_KEY,
                    "committed_len": committed,
                    "new_messages": [
                        {"role": "user", "content": [{"type": "text", "value": self._text()}]}
                    ],
                    "prompt_start": 0,
                    "mismatch_index": None,
                    "expected": None,
                    "received": None,
                    "candidates": 1,
                    "reason": "synthetic load",
                },
            )
        )

    def _new_session(self, conn: str) -> None:
        old = self.live.get(conn)
        if old is not None:
            self.publish(
                ev.SessionEnded(connection=conn, session_id=old["sid"], reason="benchmark churn")
            )
        self.session_no[conn] += 1
        sid = f"s{self.session_no[conn]}"
        self.live[conn] = {"sid": sid, "rid": None, "committed": 0, "calls": []}
        self._decision(conn, "new_session", 0)
        self.publish(ev.SessionStarted(connection=conn, session_id=sid, agent="eliza"))

    def _next_request(self, conn: str) -> None:
        s = self.live[conn]
        self.publish(
            ev.RequestFinished(
                connection=conn, request_id=s["rid"], session_id=s["sid"], outcome="complete"
            )
        )
        s["committed"] += 2
        self._decision(conn, "commit", s["committed"])

    def step(self) -> None:
        """One event (or a related pair), drawn from a realistic mix."""
        conn = self.rng.choice(self.conns)
        s = self.live[conn]
        r = self.rng.random()
        if r < 0.50:
            self.publish(
                ev.PartStreamed(
                    connection=conn,
                    request_id=s["rid"],
                    session_id=s["sid"],
                    part={"type": "text", "value": self._text() + " "},
                )
            )
        elif r < 0.85:
            if s["calls"] and self.rng.random() < 0.5:
                call = s["calls"].pop(0)
                self.publish(
                    ev.ToolCallSeen(
                        connection=conn,
                        session_id=s["sid"],
                        tool_call_id=call,
                        status=self.rng.choice(("completed", "completed", "failed")),
                        content=self._text(5, 40),
                    )
                )
            else:
                self.call_no += 1
                call = f"call-{self.call_no}"
                s["calls"].append(call)
                self.publish(
                    ev.ToolCallSeen(
                        connection=conn,
                        session_id=s["sid"],
                        tool_call_id=call,
                        title=self._text(2, 5),
                        kind=self.rng.choice(("read", "edit", "execute", "search")),
                        status="in_progress",
                        raw_input={"path": f"src/{self.call_no}.py"},
                    )
                )
        elif r < 0.93:
            self.call_no += 1
            call = f"vsc-{self.call_no}"
            self.publish(
                ev.ClientToolCall(
                    connection=conn,
                    session_id=s["sid"],
                    tool_call_id=call,
                    tool_name="vscode_readFile",
                    arguments={"path": "README.md"},
                )
            )
            self.publish(
                ev.ClientToolCall(
                    connection=conn,
                    session_id=s["sid"],
                    tool_call_id=call,
                    tool_name="vscode_readFile",
                    status="completed",
                    result=self._text(5, 30),
                )
            )
        elif r < 0.97:
            self.call_no += 1
            approval = f"a{self.call_no}"
            self.publish(
                ev.ApprovalRequested(
                    connection=conn,
                    approval_id=approval,
                    session_id=s["sid"],
                    agent="eliza",
                    tool_call={
                        "toolCallId": f"p{self.call_no}",
                        "title": "run the tests",
                        "kind": "execute",
                    },
                    options=[],
                )
            )
            self.publish(
                ev.ApprovalResolved(
                    connection=conn,
                    approval_id=approval,
                    session_id=s["sid"],
                    agent="eliza",
                    outcome=self.rng.choice(("allow_once", "reject_once")),
                    resolver="policy",
                )
            )
        elif r < 0.995:  # about 25 requests a second over all connections
            self._next_request(conn)
        else:
            self._new_session(conn)


def prefill(state: ConsoleState, n: int) -> None:
    """Fill the tool log to `n` finished calls shaped like the load's (not timed), so that memory
    measured under load compares like with like as the oldest calls are dropped."""
    rng = random.Random(11)
    words = lambda lo, hi: " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))  # noqa: E731
    handle = state.handle
    t0 = time.time() - n * 0.001
    for i in range(n):
        handle(
            ev.ToolCallSeen(
                connection="vscodelm-0",
                session_id=f"s{i % 8}",
                tool_call_id=f"pre-{i}",
                title=words(2, 5),
                kind=rng.choice(("read", "edit", "execute", "search")),
                status="completed",
                raw_input={"path": f"src/{i}.py"},
                content=words(5, 40),
                ts=t0 + i * 0.001,
            )
        )


class KeyProbe:
    """Times key events from posting to the pane's action and to the next screen update."""

    def __init__(self, app: App[None]) -> None:
        self.app = app
        self.posted: float | None = None
        self.handled: float | None = None
        self.painted: float | None = None
        self._done = asyncio.Event()
        display = app._display

        def timed_display(*args: Any, **kwargs: Any) -> Any:
            result = display(*args, **kwargs)
            if self.handled is not None and self.painted is None:
                self.painted = time.perf_counter()
                self._done.set()
            return result

        app._display = timed_display  # type: ignore[method-assign]

    def action_ran(self) -> None:
        if self.posted is not None and self.handled is None:
            self.handled = time.perf_counter()

    async def press(self, key: str, timeout: float = 2.0) -> tuple[float | None, float | None]:
        """(handled, painted) in ms; None for what did not happen within `timeout`."""
        self.handled = self.painted = None
        self._done.clear()
        self.posted = time.perf_counter()
        self.app.post_message(events.Key(key, None))
        try:
            await asyncio.wait_for(self._done.wait(), timeout)
        except TimeoutError:
            pass
        ms = lambda t: None if t is None else (t - self.posted) * 1000  # noqa: E731
        return ms(self.handled), ms(self.painted)


def describe(label: str, samples: list[float]) -> dict[str, float]:
    if not samples:
        print(f"  {label}: no samples")
        return {}
    qs = (
        statistics.quantiles(samples, n=100, method="inclusive")
        if len(samples) > 1
        else [samples[0]] * 99
    )
    stats = {"p50": statistics.median(samples), "p90": qs[89], "p99": qs[98], "max": max(samples)}
    buckets = [10, 25, 50, 100, float("inf")]
    counts = [0] * len(buckets)
    for v in samples:
        counts[next(i for i, b in enumerate(buckets) if v < b)] += 1
    hist = "  ".join(
        f"<{int(b)}ms:{c}" if b != float("inf") else f">=100ms:{c}" for b, c in zip(buckets, counts)
    )
    print(
        f"  {label:8} n={len(samples):4}  p50 {stats['p50']:6.1f}  p90 {stats['p90']:6.1f}  p99 {stats['p99']:6.1f}"
        f"  max {stats['max']:6.1f} ms   [{hist}]"
    )
    return stats


async def main(
    seconds: float, rate: int, prefill_n: int, baseline_seconds: float, only: str | None = None
) -> None:
    bridge = Bridge(BridgeConfig(cwd=os.getcwd(), idle_timeout=None))
    state = ConsoleState(bridge)
    state.attach()
    t = time.perf_counter()
    prefill(state, prefill_n)
    print(
        f"prefilled {len(state.tools):,} tool calls in {time.perf_counter() - t:.1f} s (capacity {state.tools.capacity:,})"
    )
    load = Load(bridge.bus)
    if prefill_n:
        # The other stores at capacity too (history decisions, ended sessions), untimed, so that
        # the run measures a console that only replaces what it holds.
        t = time.perf_counter()
        steps = 0
        while steps < 3_000_000 and (
            len(state.decisions) < state.decision_capacity
            or len(state._ended) < state.ended_session_capacity
        ):
            load.step()
            steps += 1
        state.flush()
        print(
            f"then {steps:,} events of the load in {time.perf_counter() - t:.1f} s: "
            f"{len(state.decisions):,} decisions (capacity {state.decision_capacity:,}), "
            f"{len(state._ended):,} ended sessions (capacity {state.ended_session_capacity:,})"
        )
    app = ConsoleApp(state, bridge)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.5)
        probe = KeyProbe(app)
        view = app.query_one(ToolLogView)
        sessions = app.query_one(SessionsPane)
        for obj, name in ((view, "action_cursor"), (sessions, "action_scrub")):
            original = getattr(obj, name)

            def wrapped(*args: Any, _original: Any = original) -> Any:
                probe.action_ran()
                return _original(*args)

            setattr(obj, name, wrapped)
        view.focus()
        await pilot.pause()
        gc.collect()

        per_tab: dict[str, list[float]] = {}

        async def presses(
            duration: float, phases: list[tuple[str, tuple[str, str]]]
        ) -> tuple[list[float], list[float], int]:
            handled, painted, lost = [], [], 0
            per_tab.clear()
            end = time.perf_counter() + duration
            phase_len = duration / len(phases)
            i = 0
            while time.perf_counter() < end:
                phase = min(
                    len(phases) - 1, int((duration - (end - time.perf_counter())) / phase_len)
                )
                tab, keys = phases[phase]
                if app.query_one("#tabs", TabbedContent).active != tab:
                    app.query_one("#tabs", TabbedContent).active = tab
                    await pilot.pause(0.2)
                    target = view if tab == "toolcalls" else sessions.decisions_table
                    target.focus()
                    while not target.has_focus:
                        await pilot.pause(0.05)
                    await pilot.pause(0.2)
                    i = 0  # each pair starts with the key that moves away from the end
                h, p = await probe.press(keys[i % 2])
                i += 1
                if h is None:
                    lost += 1
                else:
                    handled.append(h)
                    if p is not None:
                        painted.append(p)
                        per_tab.setdefault(tab, []).append(p)
                await asyncio.sleep(random.uniform(0.2, 0.3))
            return handled, painted, lost

        phases = [
            ("toolcalls", ("up", "down")),
            ("sessions", ("left_square_bracket", "right_square_bracket")),
        ]
        phases = [p for p in phases if only in (None, p[0])]
        # Some history first, so that the baseline's keys have decisions to scrub through.
        for _ in range(rate * 2):
            load.step()
        state.flush()
        await pilot.pause(0.3)
        print(f"\nbaseline: no load, {baseline_seconds:.0f} s")
        base_h, base_p, base_lost = await presses(baseline_seconds, phases)
        b_handled = describe("handled", base_h)
        b_painted = describe("painted", base_p)

        app.query_one("#tabs", TabbedContent).active = "toolcalls"
        await pilot.pause(0.2)
        view.focus()
        view.action_last()
        stop = asyncio.Event()
        memory: list[tuple[float, float]] = []
        started = time.perf_counter()

        async def generate() -> None:
            tick = 0.01
            per_tick = rate * tick
            owed = 0.0
            next_at = time.perf_counter()
            while not stop.is_set():
                owed += per_tick
                while owed >= 1:
                    load.step()
                    owed -= 1
                next_at += tick
                delay = next_at - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                else:
                    await asyncio.sleep(0)
                    if delay < -0.5:  # fell far behind: do not try to catch up in a burst
                        next_at = time.perf_counter()

        async def sample_memory() -> None:
            while not stop.is_set():
                memory.append((time.perf_counter() - started, rss_mb()))
                await asyncio.sleep(1.0)

        before = load.published
        rss_start = rss_mb()
        tasks = [asyncio.ensure_future(generate()), asyncio.ensure_future(sample_memory())]
        print(f"\nunder load: {rate} events/s for {seconds:.0f} s")
        handled, painted, lost = await presses(seconds, phases)
        stop.set()
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - started
        l_handled = describe("handled", handled)
        l_painted = describe("painted", painted)
        for tab, samples in per_tab.items():
            describe(f"  {tab}", samples)
        if lost or base_lost:
            print(f"  keys not handled within 2 s: {lost} under load, {base_lost} at baseline")
        published = load.published - before
        print(
            f"\nevents published: {published:,} in {elapsed:.1f} s = {published / elapsed:,.0f}/s (target {rate}/s)"
        )
        print(
            f"tool log: {len(state.tools):,} calls held, {state.tools.dropped:,} dropped; "
            f"{len(state.decisions):,} decisions; {len(state.sessions)} sessions; shown {len(view.index):,} lines"
        )
        print(
            "resident memory (MB): "
            + "  ".join(f"{t:4.0f}s {m:6.1f}" for t, m in memory[:: max(1, len(memory) // 8)])
        )
        peak = max(m for _, m in memory) if memory else rss_start
        half = [m for t, m in memory if t >= elapsed / 2]
        print(
            f"  at load start {rss_start:.1f}, peak {peak:.1f}, growth over the second half "
            f"{(max(half) - min(half)) if half else 0:.1f} MB"
        )
        last = [m for t, m in memory if t >= elapsed - 60]
        if elapsed >= 90 and last:
            spread = max(last) - min(last)
            print(
                f"  over the last minute at capacity: {min(last):.1f}-{max(last):.1f} MB, "
                f"spread {spread:.1f} MB  target <= 5 MB (flat)  {'met' if spread <= 5 else 'MISSED'}"
                f"  (tool log {state.tools.bytes / 2**20:.1f} MiB of {state.tools.max_bytes / 2**20:.0f})"
            )
            row(
                "console RSS over the last minute at capacity",
                baseline=f"{min(last):.1f} MB",
                target="spread <= 5 MB",
                result=spread,
                unit="MB",
                met=spread <= 5,
                low=min(last),
                high=max(last),
                samples=len(last),
            )
        else:
            print("  (run with --seconds 180 for the last-minute flatness figure)")
        if b_painted and l_painted:
            print(
                f"\nratio loaded/baseline, painted: p50 {l_painted['p50'] / b_painted['p50']:.2f}x, "
                f"p99 {l_painted['p99'] / b_painted['p99']:.2f}x; "
                f"share of keys painted within 100 ms under load: "
                f"{sum(1 for v in painted if v < 100) / len(painted):.1%} (target: all)"
            )
        del b_handled, l_handled
    await bridge.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--prefill", type=int, default=100_000)
    parser.add_argument("--baseline-seconds", type=float, default=6.0)
    parser.add_argument(
        "--only", choices=("toolcalls", "sessions"), help="press keys in one pane only"
    )
    args = parser.parse_args()
    asyncio.run(main(args.seconds, args.rate, args.prefill, args.baseline_seconds, args.only))
