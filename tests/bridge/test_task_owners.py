"""Every background task of the bridge has an owner: it is referenced while it runs, its failure is
logged (never lost), and it is cancelled and waited for when its owner closes — a session, an agent
process, the bridge, an ACP proxy connection."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
from typing import Any

import pytest

from bridge import events as ev
from bridge.agents.process import AgentProcess
from bridge.config import BridgeConfig
from bridge.core import Bridge
from bridge.protocol import Message, ToolDefinition
from bridge.render import AGENT_ACTION_TOOL
from bridge.sessions import ResponseStream, SessionFailed
from bridge.tasks import OwnerClosed, TaskSupervisor
from tests.support.lmclient import echo_agent
from tests.support.tasks import running_since
from tests.support.waiting import until

ELIZA = {"eliza": {"deterministic": True}}
AGENT_ACTION = ToolDefinition(
    name=AGENT_ACTION_TOOL,
    description="Ask the user to approve an action of the agent",
    inputSchema={"type": "object"},
)


def user(text: str) -> Message:
    return Message.model_validate({"role": "user", "content": [{"type": "text", "value": text}]})


# --- the supervisor -------------------------------------------------------------------------------


async def test_a_failing_background_task_is_logged_with_its_owner_and_never_lost(
    caplog, lost_exceptions
):
    tasks = TaskSupervisor("session test/s1")

    async def fails() -> None:
        raise ValueError("the agent sent nonsense")

    with caplog.at_level(logging.ERROR, logger="bridge.tasks"):
        task = tasks.start(fails(), name="turn 1")
        await asyncio.wait({task})
        await until(lambda: len(tasks) == 0, what="the failed task forgotten")
    del task
    gc.collect()
    await asyncio.sleep(0)  # the loop reports what it collected on its next turn
    failure = [r for r in caplog.records if r.name == "bridge.tasks"]
    assert len(failure) == 1
    assert failure[0].getMessage() == "session test/s1: background task turn 1 failed"
    assert failure[0].exc_info is not None
    assert "the agent sent nonsense" in str(failure[0].exc_info[1])
    assert lost_exceptions == []


async def test_closing_cancels_and_waits_for_every_task_and_starts_no_new_one(lost_exceptions):
    tasks = TaskSupervisor("owner")
    cleaned: list[str] = []

    async def runs_until_cancelled(name: str) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0)  # cleanup that takes a step of its own
            cleaned.append(name)

    started = [tasks.start(runs_until_cancelled(n), name=n) for n in ("a", "b")]
    await asyncio.sleep(0)
    await tasks.close()
    assert all(t.cancelled() for t in started)
    assert sorted(cleaned) == ["a", "b"]
    assert tasks.running() == []

    async def never_runs() -> None:
        raise AssertionError("started after its owner closed")

    with pytest.raises(OwnerClosed, match="owner is closed"):
        tasks.start(never_runs())
    gc.collect()
    await asyncio.sleep(0)
    assert lost_exceptions == []


async def test_a_task_woken_while_its_owner_closes_takes_that_step_first():
    tasks = TaskSupervisor("owner")
    answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    got: list[str] = []

    async def waits_for_the_answer() -> None:
        got.append(await answer)

    tasks.start(waits_for_the_answer())
    await asyncio.sleep(0)
    answer.set_result("denied")  # the owner resolves it as it closes (a pending round trip)
    await tasks.close()
    assert got == ["denied"]


async def test_a_task_closing_its_own_owner_is_not_cancelled_by_it():
    tasks = TaskSupervisor("owner")
    other = tasks.start(asyncio.Event().wait())
    steps: list[str] = []

    async def closes_its_owner() -> None:
        await tasks.close()
        steps.append("went on after closing")

    closer = tasks.start(closes_its_owner())
    await closer
    assert steps == ["went on after closing"] and other.cancelled()


# --- real owners ----------------------------------------------------------------------------------


# An agent that leaves a grandchild behind: detached, without the agent's mark (a clean
# environment), holding the agent's stderr open, so the stderr reader never sees its end.
HOLDS_STDERR = """
import os, subprocess, sys, time
keeper = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(120)"],
    env={}, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
)
print("keeper", keeper.pid, file=sys.stderr, flush=True)
time.sleep(120)
"""


async def test_closing_an_agent_process_ends_its_stderr_reader_and_exit_watcher(tmp_path):
    before = asyncio.all_tasks()
    lines: list[str] = []
    process = AgentProcess(
        sys.executable, ["-c", HOLDS_STDERR], cwd=str(tmp_path), on_stderr=lines.append
    )
    await process.start()
    keeper = 0
    try:
        await until(lambda: bool(lines), what="the agent's stderr read")
        keeper = int(lines[0].split()[1])
        assert len(running_since(before)) == 2  # its stderr reader and its exit watcher
        await process.close()
        assert running_since(before) == []
        assert process.exited.is_set()
    finally:
        if keeper:
            os.kill(keeper, signal.SIGKILL)


async def test_closing_the_bridge_ends_its_idle_reaper(tmp_path):
    before = asyncio.all_tasks()
    bridge = Bridge(BridgeConfig(cwd=str(tmp_path), idle_timeout=600))
    core = bridge.open_connection("test")
    parts: list[dict[str, Any]] = []
    await core.chat(
        core.make_request(1, ELIZA, [user("hello")], []), ResponseStream(1, parts.append)
    )
    assert parts
    assert any("_reap_idle" in name for name in running_since(before))
    await core.close()  # the client went away; then the process shuts down
    await bridge.close()
    assert running_since(before) == []


async def test_a_session_closed_while_its_agent_starts_leaves_no_task_and_no_agent(tmp_path):
    gate = tmp_path / "gate"
    bridge = Bridge(BridgeConfig(cwd=str(tmp_path), idle_timeout=None))
    core = bridge.open_connection("test")
    before = asyncio.all_tasks()
    stream = ResponseStream(1, lambda part: None)
    request = core.make_request(1, echo_agent("--start-gate", str(gate)), [user("hi")], [])
    chat = asyncio.ensure_future(core.chat(request, stream))
    try:
        await until(lambda: (tmp_path / "gate.starting").exists(), what="the agent starting")
        (session,) = core.sessions.values()
        process = session.process
        assert process is not None and session.state == "starting"
        await core.close()
        assert running_since(before, chat) == []
        assert process.exited.is_set() and session.state == "dead"
        with pytest.raises(SessionFailed, match="agent session closed: connection closed"):
            await chat
    finally:
        gate.touch()
        await bridge.close()


async def test_a_session_closed_while_the_client_is_asked_cancels_the_approval_and_ends_the_round_trip(
    tmp_path,
):
    bridge = Bridge(BridgeConfig(cwd=str(tmp_path), idle_timeout=None))
    resolved: list[ev.ApprovalResolved] = []
    bridge.bus.subscribe(
        lambda e: resolved.append(e) if isinstance(e, ev.ApprovalResolved) else None
    )
    core = bridge.open_connection("test")
    before = asyncio.all_tasks()
    parts: list[dict[str, Any]] = []
    request = core.make_request(1, ELIZA, [user("ask permission to deploy")], [AGENT_ACTION])
    try:
        # No console: the client is asked, by a tool call that ends the request.
        await core.chat(request, ResponseStream(1, parts.append))
        assert [p["toolName"] for p in parts if p["type"] == "tool_call"] == [AGENT_ACTION_TOOL]
        assert len(bridge.approvals.pending) == 1
        assert any("ApprovalBroker._ask_client" in name for name in running_since(before))
        await core.close()
        assert running_since(before) == []
        assert bridge.approvals.pending == {}
        assert [(e.outcome, e.resolver, e.reason) for e in resolved] == [
            ("cancelled", "vscode", "the client abandoned the request")
        ]
    finally:
        await bridge.close()


# --- a request's submission, once the request has its answer --------------------------------------


def errors(caplog: Any) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR]


async def test_closing_a_session_while_its_agent_starts_logs_no_error(tmp_path, caplog):
    """The request fails "agent session closed": its answer, not a failure of its submission."""
    gate = tmp_path / "gate"
    bridge = Bridge(BridgeConfig(cwd=str(tmp_path), idle_timeout=None))
    core = bridge.open_connection("test")
    request = core.make_request(1, echo_agent("--start-gate", str(gate)), [user("hi")], [])
    chat = asyncio.ensure_future(core.chat(request, ResponseStream(1, lambda part: None)))
    try:
        with caplog.at_level(logging.DEBUG):
            await until(lambda: (tmp_path / "gate.starting").exists(), what="the agent starting")
            await core.close()
            with pytest.raises(SessionFailed, match="agent session closed: connection closed"):
                await chat
            await bridge.close()
        assert errors(caplog) == []
    finally:
        gate.touch()
        await bridge.close()


async def test_closing_a_session_mid_turn_logs_no_error(tmp_path, caplog):
    bridge = Bridge(BridgeConfig(cwd=str(tmp_path), idle_timeout=None))
    core = bridge.open_connection("test")
    parts: list[dict[str, Any]] = []
    request = core.make_request(1, echo_agent(), [user("stream 1000 0.05")], [])
    chat = asyncio.ensure_future(core.chat(request, ResponseStream(1, parts.append)))
    try:
        with caplog.at_level(logging.DEBUG):
            await until(lambda: bool(parts), what="the reply streaming")
            await core.close()
            with pytest.raises(SessionFailed, match="agent session closed: connection closed"):
                await chat
            await bridge.close()
        assert errors(caplog) == []
    finally:
        await bridge.close()


async def test_a_submission_that_fails_after_its_request_was_answered_is_logged(
    tmp_path, caplog, monkeypatch, lost_exceptions
):
    """A cancel answers at once while the agent starts; should the submission then fail for a
    reason of its own (a bug, here), that is logged, with its traceback."""
    from bridge.sessions import AgentSession, RequestCancelled

    started = AgentSession._ensure_started

    async def then_a_bug(self: AgentSession, request: Any) -> None:
        await started(self, request)
        raise KeyError("a bug after the agent started")

    monkeypatch.setattr(AgentSession, "_ensure_started", then_a_bug)
    gate = tmp_path / "gate"
    bridge = Bridge(BridgeConfig(cwd=str(tmp_path), idle_timeout=None))
    core = bridge.open_connection("test")
    request = core.make_request(1, echo_agent("--start-gate", str(gate)), [user("hi")], [])
    chat = asyncio.ensure_future(core.chat(request, ResponseStream(1, lambda part: None)))
    try:
        with caplog.at_level(logging.DEBUG):
            await until(lambda: (tmp_path / "gate.starting").exists(), what="the agent starting")
            assert core.cancel(1, "Request cancelled: stopped")
            with pytest.raises(RequestCancelled):
                await chat
            gate.touch()
            await until(lambda: errors(caplog), what="the failure logged")
        (record,) = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert record.name == "bridge.sessions"
        assert "submission" in record.getMessage()
        assert record.exc_info is not None and isinstance(record.exc_info[1], KeyError)
    finally:
        gate.touch()
        await core.close()
        await bridge.close()
    gc.collect()
    await asyncio.sleep(0)
    assert lost_exceptions == []
