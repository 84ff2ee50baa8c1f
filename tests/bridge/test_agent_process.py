"""The agent process's exit code is known as soon as its exit is seen, before asyncio reaps it;
whoever waits on the agent hears of its exit at that moment."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys

from bridge.agents.process import AgentProcess, _peek_exit_code


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


async def test_exit_callbacks_are_called_once_as_the_exit_is_seen_unless_taken_back(tmp_path):
    code = "import sys; sys.stdin.read(); sys.exit(7)"
    process = AgentProcess(sys.executable, ["-c", code], cwd=str(tmp_path))
    stdin, _ = await process.start()
    heard: list[tuple[str, bool, int | None]] = []
    process.on_exit(lambda: heard.append(("kept", process.exited.is_set(), process.returncode)))
    forget = process.on_exit(lambda: heard.append(("taken back", True, None)))
    forget()
    assert heard == []  # nothing before the exit
    stdin.close()  # the agent reads to the end of its input, then exits with 7
    await asyncio.wait_for(process.exited.wait(), 30)
    assert heard == [("kept", True, 7)]
    await process.close()
    assert heard == [("kept", True, 7)]
