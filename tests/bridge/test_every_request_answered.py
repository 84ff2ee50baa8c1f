"""Every request answered, on the paths where it used to leak (real endpoint subprocess, real agents
and processes):

* an agent that exits while a `setsid()` grandchild holds its pipes: the request is answered as
  soon as the agent is gone, and the grandchild (re-parented, in no group of ours) is killed;
* a line longer than the endpoint accepts: one error for it, with its own id when the id can be
  recovered, and no second bogus -32700 for the line's tail;
* `session/update`s for a session that does not exist are dropped (and logged), never streamed
  into a client's reply.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.support.lmclient import REPO, LmClient, echo_agent, user

ORPHANING_AGENT = str(REPO / "tests" / "agents" / "orphaning_agent.py")


def gone(pid: int) -> bool:
    """Dead: no such process, or a zombie nobody reaped yet (it holds nothing any more)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


async def wait_until(predicate, timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


async def test_an_agent_leaving_a_setsid_grandchild_on_its_pipes_fails_its_request_at_once(
    tmp_path: Path,
):
    pid_file = tmp_path / "grandchild.pid"
    agent = {
        "id": "orphaning",
        "name": "Orphaning",
        "command": sys.executable,
        "args": [ORPHANING_AGENT, str(pid_file)],
        "env": [],
    }
    lm = await LmClient.start("--cwd", str(tmp_path))
    try:
        # Before: the answer waited for the grandchild (an hour) to let go of the pipes.
        resp = await lm.chat([user("hello")], agent=agent, timeout=60)
        assert resp.error is not None
        assert "exited with code 4" in resp.error["message"], resp.error
        grandchild = int(pid_file.read_text())
        await wait_until(lambda: gone(grandchild))
        # the endpoint goes on serving
        ok = await lm.chat([user("still here")], agent=echo_agent())
        assert ok.text == "ECHO: still here"
    finally:
        await lm.close()
        if pid_file.exists() and not gone(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), 9)


async def test_an_over_long_line_is_answered_once_with_its_own_id(tmp_path: Path):
    """A line over the endpoint's limit (1 MiB here, `$SYMPOSIUM_MAX_MESSAGE_BYTES`; 256 MiB by
    default — the behaviour is the same, only the size differs): its request is answered with its
    own id when the id comes before the bulk, with one -32700 when it cannot be recovered, and the
    line's tail never becomes a second, bogus error. The endpoint serves what follows."""
    from tests.support.lmclient import Response

    lm = await LmClient.start(
        "--cwd", str(tmp_path), env={"SYMPOSIUM_MAX_MESSAGE_BYTES": "1048576"}
    )
    try:
        # the endpoint proper is up (not the start-up fast path)
        assert (await lm.chat([user("warm")], agent=echo_agent())).text == "ECHO: warm"
        bulk = "x" * (6 * 1024 * 1024)
        params = {
            "modelId": "m",
            "messages": [{"role": "user", "content": [{"type": "text", "value": bulk}]}],
            "agent": echo_agent(),
        }
        lm._pending[501] = Response(501)
        answered = asyncio.get_running_loop().create_future()
        lm._done[501] = answered
        method = "lm/provideLanguageModelChatResponse"
        lm.send({"jsonrpc": "2.0", "id": 501, "method": method, "params": params})
        # the id after the bulk: not recoverable
        lm.send({"jsonrpc": "2.0", "method": method, "params": params, "id": 502})
        after = await lm.chat([user("after")], agent=echo_agent())
        assert after.text == "ECHO: after"
        resp = await asyncio.wait_for(answered, 30)
        assert resp.error is not None and "too long" in resp.error["message"]
        assert resp.order == ["response"]
        stray = [m for m in lm.unsolicited if "error" in m]
        assert len(stray) == 1, stray  # the unrecoverable one, once; no tail errors
        assert stray[0]["id"] is None and stray[0]["error"]["code"] == -32700
    finally:
        await lm.close()


async def test_updates_for_a_session_that_does_not_exist_are_dropped_and_logged(tmp_path: Path):
    lm = await LmClient.start("--log", "warning", "--cwd", str(tmp_path))
    try:
        resp = await lm.chat([user("foreign 2000")], agent=echo_agent())
        assert resp.error is None
        assert resp.text == "done"  # none of the 2000 "spam" chunks
        await wait_until(lambda: any("for unknown ACP session" in line for line in lm.stderr_lines))
    finally:
        await lm.close()
    dropped = [line for line in lm.stderr_lines if "for unknown ACP session" in line]
    assert 1 <= len(dropped) <= 3  # logged, not once per update


async def test_a_cancel_during_agent_start_up_answers_at_once_and_loses_no_message(
    tmp_path: Path,
):
    """VS Code's Stop while an `npx` agent is still starting: the request is answered
    "cancelled" at once (not when the agent is up), and the user message the agent never
    received is prompted with the next request."""
    gate = tmp_path / "gate"
    agent = echo_agent("--start-gate", str(gate))
    lm = await LmClient.start("--cwd", str(tmp_path))
    try:
        first = lm.chat_start([user("first question")], agent=agent)
        await wait_until(lambda: Path(str(gate) + ".starting").exists())
        lm.cancel(1)
        # Before: the answer waited for the agent to start (here: forever).
        resp = await asyncio.wait_for(first, 30)
        assert resp.error is not None and "cancelled" in resp.error["message"]
        gate.touch()  # the agent comes up
        second = await lm.chat(
            [user("first question"), user("second question")], agent=agent, timeout=60
        )
        assert second.error is None
        assert "first question" in second.text and "second question" in second.text, second.text
    finally:
        await lm.close()
