"""The headless endpoint's stdin: a long conversation's request line costs no more to take in
than it must (bridge.stdio: the pipe widened, freed memory kept rather than faulted in again)."""

from __future__ import annotations

import fcntl
import os
import socket
import sys
from pathlib import Path

import pytest

from bridge.stdio import widen_pipe
from tests.support.lmclient import LmClient, assistant, echo_agent, user

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux pipes and /proc")
MiB = 1 << 20


def _pipe_max() -> int:
    try:
        return int(Path("/proc/sys/fs/pipe-max-size").read_text())
    except (OSError, ValueError):
        return 0


@linux
def test_a_pipe_is_widened_to_hold_a_long_line_and_a_socket_is_left_as_it_is():
    if _pipe_max() < MiB and os.geteuid() != 0:
        pytest.skip("this system caps pipes below 1 MiB")
    r, w = os.pipe()
    try:
        assert widen_pipe(r)
        assert fcntl.fcntl(w, fcntl.F_GETPIPE_SZ) == MiB
    finally:
        os.close(r)
        os.close(w)
    a, b = socket.socketpair()
    with a, b:
        assert not widen_pipe(a.fileno())


def _faults(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[7]) + int(fields[9])  # minor + major page faults


@linux
async def test_the_endpoint_takes_in_a_long_history_without_faulting_it_in_afresh_each_turn(
    tmp_path,
):
    lm = await LmClient.start("--cwd", str(tmp_path))
    try:
        echo = echo_agent()
        messages = []
        for i in range(1000):  # ~190 KB a request line
            messages += [user(f"question {i}"), assistant(f"ECHO: question {i}")]
        messages.append(user("first"))
        first = await lm.chat(messages, agent=echo)
        assert first.error is None
        # Its client's pipe was widened by the time the endpoint answered.
        pipe = lm.proc.stdin.get_extra_info("pipe")
        if _pipe_max() >= MiB or os.geteuid() == 0:
            assert fcntl.fcntl(pipe.fileno(), fcntl.F_GETPIPE_SZ) == MiB
        messages.append(first.as_assistant())
        before = _faults(lm.proc.pid)
        turns = 10
        for i in range(turns):
            messages.append(user(f"turn {i}"))
            reply = await lm.chat(messages, agent=echo)
            assert reply.text == f"ECHO: turn {i}"
            messages.append(reply.as_assistant())
        per_turn = (_faults(lm.proc.pid) - before) / turns
        # Without the allocator settings every turn faults the line's size in again (~120 here).
        assert per_turn < 30, f"{per_turn:.0f} page faults a turn"
    finally:
        await lm.close()
