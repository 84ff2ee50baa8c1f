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


@linux
async def test_a_request_line_longer_than_asyncios_read_is_handed_on_whole_in_one_read():
    """A 400 KB line (VS Code's tools and a long history) in a widened pipe: the endpoint's reader
    takes it in one read and its `LineFeed` hands it on whole, in that read's callback (asyncio's
    own 256 KiB reads would buffer it in pieces for a later pass of the loop)."""
    import asyncio

    from bridge.lines import LineFeed
    from bridge.vscodelm.stdio import read_lines_from

    if _pipe_max() < MiB and os.geteuid() != 0:
        pytest.skip("this system caps pipes below 1 MiB")
    r, w = os.pipe()
    assert widen_pipe(r)
    line = b'{"jsonrpc":"2.0","id":1,"params":{"x":"' + b"a" * 400_000 + b'"}}'
    taken: list[bytes] = []

    def take(got: bytes) -> bool:
        taken.append(got)
        return True

    reader = LineFeed(limit=8 * MiB)
    reader.arm(take)
    os.write(w, line + b"\n")  # all of it in the pipe before the first read
    transport = await read_lines_from(reader, os.fdopen(r, "rb", buffering=0))
    try:
        deadline = asyncio.get_running_loop().time() + 30
        # read off the pipe: handed on, or else buffered (in pieces) to be read out later
        while not taken and len(reader._buffer) <= len(line):
            assert asyncio.get_running_loop().time() < deadline, "the line was never read"
            await asyncio.sleep(0.01)
        assert (len(taken), reader.taken) == (1, 1)
        assert taken[0] == line
        assert not reader._buffer  # nothing left over to read out later
    finally:
        transport.close()
        os.close(w)
