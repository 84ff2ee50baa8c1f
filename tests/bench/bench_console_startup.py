"""Console start-up: process spawn → first frame on the terminal, against a minimal Textual app.

    .venv/bin/python tests/bench/bench_console_startup.py [--runs 10]

Each app runs in a fresh pseudo-terminal of 80×24 (as in a person's terminal, or over SSH), and
the clock stops when the first frame's text has been written to it: `no pending approvals` (the
console's header) or `minimal app ready` (a Static in a bare `App` with a Header and a Footer).
The console is `symposium-tui console --no-mouse` with empty settings, as on a first start (with
`--rules`, settings holding a person's rules, `RULES`):
bridge, approval broker, audit log, console socket and every pane included. The app is then
asked to quit (Ctrl+Q) and reaped, untimed.

Compared, interleaved, in the same run: the console and the minimal app. Target:
median(console) / median(minimal) <= 1.5. Medians over the runs, after one untimed warm-up of
each. Exit code is always 0: this reports, it does not gate.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.report import DOCUMENTED_DENY_RULE, ratio_row

TARGET = 1.5
# With `--rules`: the documented deny rule (docs/approval-rules.md), whose examples the console
# checks when it reads the settings, one of them (`cd x && rm -rf build`) with the full shell
# parser; and allow rules beside it.
RULES = (
    DOCUMENTED_DENY_RULE
    + """
[[rules]]
action = "allow"
command = ["git status", "git diff", "git log"]

[[rules]]
action = "allow"
kind = "fetch"
url = "https://docs.python.org/3/"
"""
)
PY = sys.executable
SCRIPT = str(Path(PY).parent / "symposium-tui")
MINIMAL = """
from textual.app import App
from textual.widgets import Footer, Header, Static

class Minimal(App):
    def compose(self):
        yield Header()
        yield Static("minimal app ready")
        yield Footer()

Minimal().run(mouse=False)
"""
ANSI = re.compile(rb"\x1b\[[0-9;?<>=$]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def time_first_frame(
    argv: list[str], marker: bytes, env: dict[str, str], timeout: float = 60.0
) -> float:
    """Seconds from spawn until `marker` is on the pseudo-terminal."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    elapsed = None
    deadline = t0 + timeout
    try:
        while time.perf_counter() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            seen += chunk
            if marker in ANSI.sub(b"", seen):
                elapsed = time.perf_counter() - t0
                break
        if elapsed is None:
            raise RuntimeError(
                f"{argv[-1] if len(argv) < 4 else argv[:3]}: no first frame; got {ANSI.sub(b'', seen)[-300:]!r}"
            )
        os.write(master, b"\x11")  # Ctrl+Q
        end = time.perf_counter() + 10
        while proc.poll() is None and time.perf_counter() < end:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    os.read(master, 65536)
                except OSError:
                    break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--rules",
        action="store_true",
        help="each run's fresh config folder starts with a person's rules (RULES), not empty",
    )
    args = parser.parse_args()
    settings = RULES if args.rules else None
    with tempfile.TemporaryDirectory(prefix="symposium-bench-") as home:
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"}
        env.pop("NO_COLOR", None)
        console_env = dict(env)
        minimal = [PY, "-c", MINIMAL]
        results: dict[str, list[float]] = {"console": [], "minimal": []}
        for run in range(args.runs + 1):
            # A fresh config and runtime dir every run: a first start, no stale socket.
            console_env["SYMPOSIUM_CONFIG_DIR"] = os.path.join(home, f"config-{run}")
            console_env["SYMPOSIUM_RUNTIME_DIR"] = os.path.join(home, f"run-{run}")
            if settings is not None:
                os.makedirs(console_env["SYMPOSIUM_CONFIG_DIR"])
                Path(console_env["SYMPOSIUM_CONFIG_DIR"], "settings.toml").write_text(settings)
            c = time_first_frame(
                [SCRIPT, "console", "--no-mouse"], b"no pending approvals", console_env
            )
            m = time_first_frame(minimal, b"minimal app ready", env)
            if run:  # run 0 warms the caches
                results["console"].append(c)
                results["minimal"].append(m)
    console = statistics.median(results["console"])
    baseline = statistics.median(results["minimal"])
    ratio = console / baseline
    print(f"runs: {args.runs} (after one warm-up), 80x24 pseudo-terminal")
    print(
        f"minimal Textual app     median {baseline * 1000:7.1f} ms   (min {min(results['minimal']) * 1000:.1f})"
    )
    print(
        f"symposium-tui console   median {console * 1000:7.1f} ms   (min {min(results['console']) * 1000:.1f})"
    )
    print(f"ratio {ratio:.2f}x (target <= {TARGET}x): {'OK' if ratio <= TARGET else 'OVER'}")
    ratio_row(
        "console first frame (80x24)" + (", a person's rules" if args.rules else ""),
        baseline="a minimal Textual app",
        ratio=ratio,
        target=TARGET,
        subject=results["console"],
        against=results["minimal"],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
