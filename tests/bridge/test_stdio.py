"""The headless endpoint's stdin: a long conversation's request line costs no more to take in
than it must (bridge.vscodelm.stdio: the pipe widened, freed memory kept rather than faulted in again)."""

from __future__ import annotations

import fcntl
import os
import socket
import sys
from pathlib import Path

import pytest

from bridge.vscodelm.stdio import widen_pipe
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


@linux
def test_the_allocator_takes_the_keep_heap_settings():
    """glibc accepts both settings (checked in a child, so this process's allocator is untouched);
    what they save is printed by tests/bench/bench_history_length.py as page faults per turn."""
    import subprocess

    code = "from bridge.vscodelm.stdio import keep_heap; print(keep_heap())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True", out


@linux
async def test_the_endpoint_widens_its_pipe_and_answers_a_long_history_turn_after_turn(tmp_path):
    lm = await LmClient.start("--cwd", str(tmp_path))
    try:
        echo = echo_agent()
        messages = []
        for i in range(1000):  # ~190 KB a request line: several times a default pipe's 64 KiB
            messages += [user(f"question {i}"), assistant(f"ECHO: question {i}")]
        messages.append(user("first"))
        first = await lm.chat(messages, agent=echo)
        assert first.error is None
        # Its client's pipe was widened by the time the endpoint answered.
        pipe = lm.proc.stdin.get_extra_info("pipe")
        if _pipe_max() >= MiB or os.geteuid() == 0:
            assert fcntl.fcntl(pipe.fileno(), fcntl.F_GETPIPE_SZ) == MiB
        messages.append(first.as_assistant())
        for i in range(10):
            messages.append(user(f"turn {i}"))
            reply = await lm.chat(messages, agent=echo)
            assert reply.text == f"ECHO: turn {i}"
            messages.append(reply.as_assistant())
    finally:
        await lm.close()
