"""A Stop pressed at once wins: VS Code sends `lm/cancel` right behind its
`lm/provideLanguageModelChatResponse` when the person presses Stop, and the request must end
cancelled whatever the endpoint was doing when the cancel arrived — still in the start-up fast path,
handing over to the asyncio endpoint, starting the agent, waiting for the first part, or relaying to
a running console.

Every test drives a real `symposium-tui vscodelm` subprocess with the extension's own messages and a
real agent process (the suite's echo agent, streaming slowly, under `acp_tap.py` so the test reads
what the agent was really sent). "Won" means: the request is answered with a cancelled error, no
part of the reply reached the client, and every prompt the agent was sent was followed by a
`session/cancel` (an agent that was never prompted trivially passes that).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.support.lmclient import ECHO_AGENT_SCRIPT, LmClient, Response, user
from tests.support.waiting import until

TAP = Path(__file__).resolve().parents[1] / "agents" / "acp_tap.py"
REPO = Path(__file__).resolve().parents[2]
SLOW = "stream 100 0.05"  # five seconds of parts unless it is cancelled
ANSWER_TIMEOUT = 60.0  # only stops a broken test from hanging


def tapped_echo(log: Path, *extra: str) -> dict[str, Any]:
    """The echo agent behind a tap, in the flat McpServer form `registry resolve-agent` prints and
    the extension sends (with its `id` in front)."""
    return {
        "id": "echo",
        "name": "Echo",
        "command": sys.executable,
        "args": [str(TAP), str(log), "--", sys.executable, ECHO_AGENT_SCRIPT, *extra],
        "env": [],
    }


def chat_line(rid: int, text: str, agent: dict[str, Any]) -> str:
    params = {"modelId": "echo", "messages": [user(text)], "agent": agent}
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "lm/provideLanguageModelChatResponse",
            "params": params,
        }
    )


def cancel_line(rid: int) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": "lm/cancel", "params": {"requestId": rid}})


def tap_messages(log: Path) -> list[tuple[str, dict[str, Any]]]:
    if not log.exists():
        return []
    out = []
    for line in log.read_text().splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry["msg"], dict):
                out.append((entry["dir"], entry["msg"]))
    return out


def prompts_never_cancelled(log: Path) -> list[dict[str, Any]]:
    """Each prompt of the cancelled request (the slow stream) the agent was sent with no
    `session/cancel` for its session after it."""
    msgs = tap_messages(log)
    left = []
    for i, (d, m) in enumerate(msgs):
        if d != "to_agent" or m.get("method") != "session/prompt" or SLOW not in json.dumps(m):
            continue
        sid = m["params"]["sessionId"]
        if not any(
            d2 == "to_agent"
            and m2.get("method") == "session/cancel"
            and m2["params"]["sessionId"] == sid
            for d2, m2 in msgs[i + 1 :]
        ):
            left.append(m)
    return left


def assert_cancelled(resp: Response) -> None:
    assert resp.error is not None, f"answered in full ({len(resp.parts)} parts): {resp.text!r}"
    assert "cancelled" in resp.error["message"].lower(), resp.error
    assert resp.parts == [], resp.text


async def answered(client: LmClient, rid: int) -> Response:
    """Wait for request `rid`'s final answer (sent with `send_raw`, so registered here)."""
    resp = client.pending_response(rid)
    await until(lambda: "response" in resp.order, ANSWER_TIMEOUT, f"the answer to {rid}")
    return resp


def expect(client: LmClient, rid: int) -> None:
    """Register a request the test writes itself (raw, so that it goes out with its cancel)."""
    client._pending[rid] = Response(rid)


async def finish(client: LmClient, log: Path) -> list[dict[str, Any]]:
    """End the endpoint (its agents are stopped with it), then what the agent was never told to
    stop."""
    assert await client.close() == 0, "\n".join(client.stderr_lines)
    return prompts_never_cancelled(log)


async def test_a_cancel_sent_with_the_first_request_wins_in_the_fast_path(tmp_path):
    """Both lines are in the pipe before the endpoint's interpreter has started: the start-up fast
    path reads them and hands them over to the asyncio endpoint together."""
    log = tmp_path / "tap.jsonl"
    client = await LmClient.start("--cwd", str(tmp_path))
    expect(client, 1)
    client.send_raw(chat_line(1, SLOW, tapped_echo(log)) + "\n" + cancel_line(1) + "\n")
    assert_cancelled(await answered(client, 1))
    assert await finish(client, log) == []


async def test_a_cancel_right_behind_a_request_wins_on_a_running_endpoint(tmp_path):
    """The asyncio endpoint is serving (it answered a chat): request and cancel, back to back, in
    one write — as VS Code's writes of two messages reach the pipe together."""
    log = tmp_path / "tap.jsonl"
    client = await LmClient.start("--cwd", str(tmp_path))
    warm = await client.chat([user("warm up")], agent=tapped_echo(log), timeout=ANSWER_TIMEOUT)
    assert warm.error is None and warm.text == "ECHO: warm up"
    expect(client, 2)
    client.send_raw(chat_line(2, SLOW, tapped_echo(log)) + "\n" + cancel_line(2) + "\n")
    assert_cancelled(await answered(client, 2))
    assert await finish(client, log) == []


async def test_a_cancel_while_the_agent_starts_wins(tmp_path):
    """The agent is still starting (it answers `initialize` only once the gate file exists) when
    the cancel comes: the request ends cancelled and the agent is never sent its prompt."""
    log = tmp_path / "tap.jsonl"
    gate = tmp_path / "gate"
    client = await LmClient.start("--cwd", str(tmp_path))
    expect(client, 1)
    client.send_raw(chat_line(1, SLOW, tapped_echo(log, "--start-gate", str(gate))) + "\n")
    await until(Path(str(gate) + ".starting").exists, ANSWER_TIMEOUT, "the agent starting")
    client.send_raw(cancel_line(1) + "\n")
    assert_cancelled(await answered(client, 1))
    gate.touch()
    assert await finish(client, log) == []


async def test_a_cancel_before_the_first_part_wins(tmp_path):
    """The agent has its prompt (the tap saw it) but the client has no part yet."""
    log = tmp_path / "tap.jsonl"
    client = await LmClient.start("--cwd", str(tmp_path))
    expect(client, 1)
    client.send_raw(chat_line(1, "stream 100 0.05", tapped_echo(log)) + "\n")
    await until(
        lambda: any(m.get("method") == "session/prompt" for _, m in tap_messages(log)),
        ANSWER_TIMEOUT,
        "the agent's prompt",
    )
    client.send_raw(cancel_line(1) + "\n")
    resp = await answered(client, 1)
    assert resp.error is not None and "cancelled" in resp.error["message"].lower(), resp.error
    assert resp.completed is False
    assert await finish(client, log) == []


async def test_a_cancel_right_behind_a_request_wins_through_a_running_console(tmp_path):
    """With a console host running, the endpoint relays VS Code's bytes to it: the host's own
    connection sees the request and its cancel back to back."""
    from tests.symposium_tui.test_hosting import ConsoleProcess

    log = tmp_path / "tap.jsonl"
    console = await ConsoleProcess.start("approve", tmp_path)
    try:
        client = await LmClient.start("--cwd", str(tmp_path), "--log", "info")
        expect(client, 1)
        client.send_raw(chat_line(1, SLOW, tapped_echo(log)) + "\n" + cancel_line(1) + "\n")
        assert_cancelled(await answered(client, 1))
        await console.wait_for("REQUEST 1")  # the console answered it, not the endpoint
        assert await client.close() == 0
        assert any("relaying to the console" in line for line in client.stderr_lines)
    finally:
        await console.stop()
    assert prompts_never_cancelled(log) == []


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(delay=st.floats(min_value=0.0, max_value=1.5))
@example(delay=0.0)
@example(delay=0.002)
def test_a_cancel_wins_whatever_its_delay_after_spawn(tmp_path_factory, delay):
    """Request at spawn, cancel `delay` seconds later: from the fast path through the hand-over,
    the agent's start-up and its first parts, the request ends cancelled and the agent is told."""
    tmp = tmp_path_factory.mktemp("delay")
    log = tmp / "tap.jsonl"

    async def run() -> None:
        client = await LmClient.start("--cwd", str(tmp))
        expect(client, 1)
        client.send_raw(chat_line(1, SLOW, tapped_echo(log)) + "\n")
        await asyncio.sleep(delay)  # the property's input: when the cancel is sent, not a wait
        client.send_raw(cancel_line(1) + "\n")
        resp = await answered(client, 1)
        assert resp.error is not None and "cancelled" in resp.error["message"].lower(), (
            resp.error,
            resp.text,
        )
        assert resp.completed is False
        assert await finish(client, log) == []

    asyncio.run(run())
