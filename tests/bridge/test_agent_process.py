"""The agent process's exit code is known as soon as its exit is seen, before asyncio reaps it;
whoever waits on the agent hears of its exit at that moment."""

from __future__ import annotations

import asyncio
import os
import re
import select
import signal
import subprocess
import sys

from bridge.agents.process import STDERR_LINE_LIMIT, AgentProcess, _peek_exit_code


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


LONG_STDERR = """
import sys
sys.stderr.write("x" * 1_000_000 + "\\n")
sys.stderr.write("after the long one\\n")
sys.stderr.write("y" * 70_000)
sys.stderr.flush()
"""


async def test_a_stderr_line_past_the_readers_limit_is_cut_and_the_next_lines_still_arrive(
    tmp_path,
):
    """An agent's stderr line longer than the reader holds keeps its start (cut to the kept
    length, saying how much more there was) and costs none of the lines after it; an
    unterminated last line past the limit is cut the same way."""
    lines: list[str] = []
    process = AgentProcess(
        sys.executable, ["-c", LONG_STDERR], cwd=str(tmp_path), on_stderr=lines.append
    )
    await process.start()
    try:
        await asyncio.wait_for(process.exited.wait(), 30)
        while len(lines) < 3:
            await asyncio.sleep(0.01)
    finally:
        await process.close()
    first, second, third = lines
    for line, length, char in ((first, 1_000_000, "x"), (third, 70_000, "y")):
        kept, rest = line.split(" … (")
        assert kept == char * STDERR_LINE_LIMIT
        found = re.fullmatch(r"(\d+) more characters(?:, then (\d+) bytes not read)?\)", rest)
        assert found is not None, rest
        more, unread = int(found[1]), int(found[2] or 0)
        assert len(kept) + more + unread == length  # every byte accounted for
        if line is first:
            assert unread > 0  # far past what the reader holds: read only in part
    assert second == "after the long one"


# --- an ACP call to the agent (`AgentLink.call`) waits in its caller's own task ------------------


async def _agent_reading_stdin(tmp_path, code: str = "import sys; sys.stdin.read(); sys.exit(7)"):
    from bridge.sessions.agent import AgentLink

    process = AgentProcess(sys.executable, ["-c", code], cwd=str(tmp_path))
    stdin, _ = await process.start()
    link = AgentLink(None, "s1", None, "test agent")  # type: ignore[arg-type]
    link.process = process
    return link, process, stdin


async def test_an_acp_call_fails_as_the_agent_exits_and_its_caller_goes_on_uncancelled(tmp_path):
    """The call waits in the caller's task (no task of its own): the exit cancels it there, and
    the caller gets the agent's exit, not a cancellation, with no cancel left pending on it."""
    from bridge.sessions.stream import SessionFailed

    link, process, stdin = await _agent_reading_stdin(tmp_path)
    try:
        unanswered = asyncio.get_running_loop().create_future()
        stdin.close()  # the agent reads to the end of its input, then exits with 7
        try:
            await link.call(unanswered)
        except SessionFailed as exc:
            assert "exited with code 7" in str(exc)
        else:
            raise AssertionError("the call outlived the agent")
        current = asyncio.current_task()
        assert current is not None and current.cancelling() == 0
        assert unanswered.cancelled()  # the abandoned call is given up
        await asyncio.sleep(0)  # still free to wait: nothing cancels this task later
        more = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(more.set_result, "later")
        assert await more == "later"
    finally:
        await process.close()


async def test_an_acp_call_answered_returns_its_answer_and_a_later_exit_leaves_the_caller_be(
    tmp_path,
):
    link, process, stdin = await _agent_reading_stdin(tmp_path)
    try:
        answered = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(answered.set_result, {"stopReason": "end_turn"})
        assert await link.call(answered) == {"stopReason": "end_turn"}
        stdin.close()
        await asyncio.wait_for(process.exited.wait(), 30)
        # the exit, seen after the call returned, cancels nothing of the caller's
        after = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(0.05, after.set_result, "next step")
        assert await after == "next step"
    finally:
        await process.close()


async def test_cancelling_the_caller_of_an_acp_call_is_a_cancel_not_an_agent_failure(tmp_path):
    link, process, stdin = await _agent_reading_stdin(tmp_path)
    try:
        unanswered = asyncio.get_running_loop().create_future()
        caller = asyncio.ensure_future(link.call(unanswered))
        await asyncio.sleep(0)  # the call is waiting
        caller.cancel()
        try:
            await caller
        except asyncio.CancelledError:
            pass
        else:
            raise AssertionError("the cancelled call returned")
        assert caller.cancelled()
    finally:
        stdin.close()
        await process.close()


async def test_a_call_to_an_agent_already_gone_is_never_sent(tmp_path):
    from bridge.sessions.stream import SessionFailed

    link, process, stdin = await _agent_reading_stdin(tmp_path)
    stdin.close()
    await asyncio.wait_for(process.exited.wait(), 30)
    sent: list[str] = []

    async def prompt() -> None:
        sent.append("session/prompt")

    try:
        await link.call(prompt())
    except SessionFailed as exc:
        assert "exited with code 7" in str(exc)
    else:
        raise AssertionError("a call to an exited agent returned")
    assert sent == []
    await process.close()


async def test_an_agents_output_ends_as_it_exits_and_closing_it_leaves_no_pipe_open(tmp_path):
    """Its stdout is a pipe of our own (read without asyncio's subprocess transport): the reader
    sees the end of the output when the agent exits, and closing the process leaves none of its
    pipes open here, whether or not the agent got to the end of its output."""

    def open_fds() -> set[str]:
        return set(os.listdir("/proc/self/fd"))

    before = open_fds()
    process = AgentProcess(sys.executable, ["-c", "print('bye')"], cwd=str(tmp_path))
    _, stdout = await process.start()
    assert await asyncio.wait_for(stdout.read(), 30) == b"bye\n"  # to its end
    await process.close(grace=5)
    process = AgentProcess(sys.executable, ["-c", "import time; time.sleep(60)"], cwd=str(tmp_path))
    await process.start()
    await process.close(grace=5)
    deadline = asyncio.get_running_loop().time() + 30
    while open_fds() - before and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)  # a transport closes its pipe on the loop's next pass
    assert open_fds() - before == set()


GRANDCHILD_HOLDS_STDERR = """
import os, subprocess, sys
# A process of its own session and without the agent's environment (so not one of the agent's
# leftovers), holding the agent's stderr open.
child = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(120)"],
    start_new_session=True, env={}, stdout=subprocess.DEVNULL,
)
print(child.pid, flush=True)
"""


async def test_closing_an_agent_closes_its_stderr_even_while_something_outside_it_holds_it(
    tmp_path,
):
    """A process outside the agent's group (not one of its leftovers) may keep the agent's stderr
    open after the agent is gone: closing the agent closes our end of it anyway (and asyncio's
    transport of the process with it), so no pipe of it stays open here, to be closed at exit on
    a loop gone by then ("Event loop is closed")."""
    before = set(os.listdir("/proc/self/fd"))
    process = AgentProcess(sys.executable, ["-c", GRANDCHILD_HOLDS_STDERR], cwd=str(tmp_path))
    _, stdout = await process.start()
    holder = int(await asyncio.wait_for(stdout.readline(), 30))
    try:
        await process.close(grace=0.5)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while set(os.listdir("/proc/self/fd")) - before and loop.time() < deadline:
            await asyncio.sleep(0.02)  # a transport closes its pipe on the loop's next pass
        assert set(os.listdir("/proc/self/fd")) - before == set()
        assert os.path.exists(f"/proc/{holder}")  # it still holds the other end
    finally:
        os.kill(holder, signal.SIGKILL)
