"""The agent process's exit code is known as soon as its exit is seen, before asyncio reaps it."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys

from bridge.agents.process import _peek_exit_code


def _wait_for_exit(pid: int) -> None:
    fd = os.pidfd_open(pid)
    try:
        select.select([fd], [], [])  # readable once the process has exited
    finally:
        os.close(fd)


def test_an_exit_code_is_read_without_reaping_the_process():
    child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    _wait_for_exit(child.pid)
    assert _peek_exit_code(child.pid) == 3
    assert _peek_exit_code(child.pid) == 3, "reading it must not reap the process"
    assert child.wait() == 3  # still there for its owner to reap
    assert _peek_exit_code(child.pid) is None  # reaped: the owner has the code


def test_a_killed_process_reads_as_minus_its_signal():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    child.send_signal(signal.SIGKILL)
    _wait_for_exit(child.pid)
    assert _peek_exit_code(child.pid) == -signal.SIGKILL
    assert child.wait() == -signal.SIGKILL
