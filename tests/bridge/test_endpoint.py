"""The vscodelm endpoint as a real subprocess over real pipes: protocol, history and rendering
scenarios of upstream's tests and code (D1–D8, D14, D15, D18–D20: docs/upstream.md)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.support.lmclient import (
    AGENT_ACTION,
    ELIZA,
    LmClient,
    assistant,
    echo_agent,
    eliza_process,
    tool,
    tool_result,
    user,
)
from tests.support.waiting import gone, until


def decisions(event_log: Path) -> list[dict]:
    out = []
    for line in event_log.read_text().splitlines():
        event = json.loads(line)
        if event["type"] == "history_decision":
            out.append(event["decision"])
    return out


@pytest.fixture
async def logged(tmp_path):
    log = tmp_path / "events.jsonl"
    client = await LmClient.start("--cwd", str(tmp_path), "--event-log", str(log))
    client.event_log = log
    yield client
    await client.close()


# --- protocol ------------------------------------------------------------------------------------


async def test_chat_information_answers_the_constant_model_list(lm):
    resp = await lm.request("lm/provideLanguageModelChatInformation", {"silent": False})
    assert resp.result == {
        "models": [
            {
                "id": "symposium-eliza",
                "name": "Symposium (Eliza)",
                "family": "symposium",
                "version": "1.0.0",
                "maxInputTokens": 100000,
                "maxOutputTokens": 100000,
                "capabilities": {"toolCalling": True},
            }
        ]
    }


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Hello, world!", 3),
        ("", 1),
        ("abc", 1),
        ("abcdefgh", 2),
        ("é" * 4, 2),
        ("日本語テキスト", 5),
    ],
)
async def test_token_count_is_a_bare_integer_of_utf8_bytes_over_four(lm, text, count):
    resp = await lm.request("lm/provideTokenCount", {"modelId": "m", "text": text})
    assert resp.result == count


async def test_simple_chat_streams_parts_then_complete_then_result(lm):
    resp = await lm.chat([user("Hello, how are you?")])
    assert resp.error is None and resp.result == {}
    assert len(resp.parts) >= 2, "Eliza streams its reply in several chunks"
    assert all(p["type"] == "text" for p in resp.parts)
    assert resp.text.strip()
    assert resp.order == ["part"] * len(resp.parts) + ["complete", "response"]


async def test_chat_with_client_tools_still_chats(lm):
    resp = await lm.chat([user("Hello")], tools=[tool("test_read_file"), tool("test_write_file")])
    assert resp.error is None
    assert resp.text == "How do you do. Please state your problem."


async def test_multi_turn_conversation_continues_the_same_session(logged):
    first = await logged.chat([user("Hello")])
    assert first.text == "How do you do. Please state your problem."
    second = await logged.chat(
        [user("Hello"), first.as_assistant(), user("I am doing well, thanks!")]
    )
    assert second.text == "Do you believe it is normal to be doing well thanks?"
    d1, d2 = decisions(logged.event_log)
    assert d1["kind"] == "new_session"
    assert d2["kind"] == "commit" and d2["session_id"] == d1["session_id"]
    assert d2["committed_len"] == 2


async def test_eliza_lists_the_client_tools_it_was_given(lm):
    tools = [
        tool("read_file", "Read contents of a file"),
        tool("write_file", "Write contents to a file"),
    ]
    resp = await lm.chat([user("list tools from vscode_tools")], tools=tools)
    assert (
        resp.text
        == "Available tools:\n  - read_file: Read contents of a file\n  - write_file: Write contents to a file"
    )


async def test_client_tool_round_trip_hands_the_result_text_to_the_agent(lm):
    tools = [tool("read_file", "Read contents of a file")]
    prompt = user('use tool vscode_tools::read_file with {"path": "/tmp/test.txt"}')
    first = await lm.chat([prompt], tools=tools)
    assert first.error is None and first.completed
    (call,) = first.tool_calls
    assert call["toolName"] == "read_file"
    assert call["parameters"] == {"path": "/tmp/test.txt"}
    second = await lm.chat(
        [
            prompt,
            first.as_assistant(),
            tool_result(call["toolCallId"], [{"$mid": 21, "value": "Hello from the file!"}]),
        ],
        tools=tools,
    )
    assert second.error is None
    # The agent saw the text of the result parts, not their JSON (B13).
    assert second.text == "OK: Hello from the file!"


async def test_tool_call_updates_are_rendered_as_markdown(lm):
    # Eliza announces a tool call, asks permission (denied: no agent-action tool offered) and
    # updates the call: both renderings reach the client, then the reply.
    resp = await lm.chat([user("ask permission to run the tests")])
    text = resp.text
    assert text.startswith("\u23f3 **run the tests**\n")
    assert "\u274c **run the tests**\n" in text
    assert text.endswith("Permission denied (reject_once). I did not run the tests.")


async def test_text_chunks_and_tool_calls_sent_together_reach_the_client_in_the_agents_order(lm):
    """The agent sends text chunks (read straight off the line) and tool calls (through the
    SDK's typed client) back to back, so they arrive together: a chunk after a tool call waits
    for the SDK's task for that call, a chunk before one does not, and none is lost."""
    n = 40
    resp = await lm.chat([user(f"interleave {n}")], agent=echo_agent())
    assert resp.error is None
    expected = [p for i in range(n) for p in (f"t{i} ", f"\u2022 **tool{i}**\n")] + ["end"]
    assert [p["value"] for p in resp.parts] == expected
    assert resp.order == ["part"] * len(expected) + ["complete", "response"]


# --- history (D1–D8) -----------------------------------------------------------------------------


async def test_d1_continuation_commits_and_prompts_only_the_new_message(tmp_path):
    log = tmp_path / "ev.jsonl"
    client = await LmClient.start("--cwd", str(tmp_path), "--event-log", str(log))
    try:
        agent = echo_agent()
        first = await client.chat([user("U1")], agent=agent)
        assert first.text == "ECHO: U1"
        second = await client.chat([user("U1"), first.as_assistant(), user("U2")], agent=agent)
        assert second.text == "ECHO: U2"
        d = decisions(log)[-1]
        assert d["kind"] == "commit" and d["committed_len"] == 2
    finally:
        await client.close()


async def test_d2_text_split_differently_is_still_a_continuation(logged):
    agent = echo_agent()
    first = await logged.chat([user("U1")], agent=agent)
    split = assistant(first.text[:3], first.text[3:])
    second = await logged.chat([user("U1"), split, user("U2")], agent=agent)
    assert second.text == "ECHO: U2"
    assert decisions(logged.event_log)[-1]["kind"] == "commit"


async def test_d3_edited_reply_cancels_the_provisional_exchange_without_reprompting_sent_text(
    logged,
):
    agent = echo_agent()
    await logged.chat([user("U1")], agent=agent)
    second = await logged.chat([user("U1"), assistant("something else"), user("U2")], agent=agent)
    d = decisions(logged.event_log)[-1]
    assert d["kind"] == "cancel"
    assert d["mismatch_index"] == 1
    assert d["expected"]["content"][0]["value"] == "ECHO: U1"
    assert d["received"]["content"][0]["value"] == "something else"
    # U1 was already received by the agent: only U2 is prompted (B8).
    assert second.text == "ECHO: U2"


async def test_d4_different_prefix_starts_a_new_session_that_replays_earlier_turns(logged):
    agent = echo_agent()
    first = await logged.chat([user("U1")], agent=agent)
    await logged.chat([user("U1"), first.as_assistant(), user("U2")], agent=agent)
    other = await logged.chat([user("X1"), assistant("A"), user("X2")], agent=agent)
    d = decisions(logged.event_log)[-1]
    assert (
        d["kind"] == "new_session"
        and d["session_id"] != decisions(logged.event_log)[0]["session_id"]
    )
    # Decision 7: the new session hears the earlier turns, not only the user's words.
    assert "User: X1" in other.text and "Assistant: A" in other.text
    assert other.text.endswith("X2")


async def test_d5_different_agent_with_identical_history_starts_a_new_session(logged):
    await logged.chat([user("Hello")], agent=ELIZA)
    await logged.chat([user("Hello")], agent={"eliza": {"deterministic": False}})
    d1, d2 = decisions(logged.event_log)
    assert d2["kind"] == "new_session" and d2["session_id"] != d1["session_id"]


async def test_d7_unrelated_first_message_never_hijacks_an_existing_session(logged):
    agent = echo_agent()
    await logged.chat([user("first conversation")], agent=agent)
    resp = await logged.chat([user("second conversation")], agent=agent)
    d1, d2 = decisions(logged.event_log)
    assert d2["kind"] == "new_session" and d2["session_id"] != d1["session_id"]
    assert resp.text == "ECHO: second conversation"


async def test_d8_request_with_nothing_to_prompt_still_prompts_the_agent(logged):
    """Upstream answers an empty success without prompting (D8); here the agent is asked to
    continue, so a request is never answered with nothing unless the agent said nothing."""
    agent = echo_agent()
    first = await logged.chat([user("U1")], agent=agent)
    resp = await logged.chat(
        [user("U1"), first.as_assistant(), assistant("only an assistant message")], agent=agent
    )
    assert resp.error is None and resp.completed
    assert resp.text == "ECHO: [Continue the conversation from where it stopped.]"


# --- cancellation (D14, D15) ---------------------------------------------------------------------


async def test_d14_cancel_mid_stream_answers_cancelled_and_the_next_turn_is_clean(lm):
    agent = echo_agent()
    fut = lm.chat_start([user("stream 200 0.05")], agent=agent)
    rid = lm._next_id
    await lm.wait_for_parts(rid, 2)
    lm.cancel(rid)
    resp = await asyncio.wait_for(fut, 10)
    assert resp.error is not None and "cancelled" in resp.error["message"].lower()
    assert not resp.completed
    seen = len(resp.parts)
    # The next request of the same conversation gets its own reply, none of the old stream's.
    nxt = await lm.chat([user("stream 200 0.05"), assistant(resp.text), user("after")], agent=agent)
    assert nxt.text == "ECHO: after"
    # Its turn starts only once the cancelled one has ended, and the output is one ordered pipe:
    # a late part of the cancelled request would have been read before this answer.
    assert len(resp.parts) == seen, "no part of a cancelled request arrives after its answer"


async def test_d15_new_request_supersedes_the_streaming_one(lm):
    agent = echo_agent()
    fut1 = lm.chat_start([user("stream 200 0.05")], agent=agent)
    rid1 = lm._next_id
    await lm.wait_for_parts(rid1, 1)
    resp2 = await lm.chat([user("stream 200 0.05"), user("never mind")], agent=agent)
    resp1 = await asyncio.wait_for(fut1, 10)
    assert resp1.error is not None and "cancelled" in resp1.error["message"].lower()
    assert resp2.error is None and resp2.text == "ECHO: never mind"


# --- errors (D18, D19) ---------------------------------------------------------------------------


async def test_d18_unknown_method_and_stray_cancel(lm):
    resp = await lm.request("lm/doesNotExist", {})
    assert resp.error["code"] == -32601
    lm.cancel(12345)  # unknown id: ignored
    lm.send(
        {"jsonrpc": "2.0", "method": "lm/somethingElse", "params": {}}
    )  # unknown notification: ignored
    ok = await lm.request("lm/provideTokenCount", {"modelId": "m", "text": "abcd"})
    assert ok.result == 1


async def test_d19_agent_that_fails_to_start_fails_the_request_and_a_retry_starts_fresh(
    lm, tmp_path
):
    marker = tmp_path / "fail-once"
    marker.write_text("x")
    script = tmp_path / "flaky_agent.sh"
    import sys

    from tests.support.lmclient import ECHO_AGENT_SCRIPT

    script.write_text(
        f"#!/bin/sh\nif [ -f {marker} ]; then rm {marker}; echo 'cannot start: missing credentials' >&2; exit 4; fi\n"
        f"exec {sys.executable} {ECHO_AGENT_SCRIPT}\n"
    )
    script.chmod(0o755)
    agent = {"id": "flaky", "name": "Flaky", "command": str(script), "args": [], "env": []}
    first = await lm.chat([user("hello")], agent=agent)
    assert first.error is not None and first.error["code"] == -32000
    assert "missing credentials" in first.error["message"]
    retry = await lm.chat([user("hello")], agent=agent)
    assert retry.error is None and retry.text == "ECHO: hello"


async def test_missing_agent_command_is_a_session_error(lm):
    resp = await lm.chat(
        [user("hi")], agent={"name": "nope", "command": "/nonexistent/agent", "args": [], "env": []}
    )
    assert resp.error["code"] == -32000
    assert "/nonexistent/agent" in resp.error["message"]


async def test_agent_crash_mid_turn_fails_the_request_with_its_stderr(lm):
    agent = echo_agent()
    resp = await lm.chat([user("crash")], agent=agent, timeout=10)
    assert resp.error is not None and resp.error["code"] == -32000
    assert "exited with code 3" in resp.error["message"]
    assert "simulated crash" in resp.error["message"]
    # The conversation goes on in a fresh session.
    again = await lm.chat(
        [user("crash"), assistant("about to crash "), user("still there?")], agent=agent
    )
    assert again.error is None and again.text.endswith("still there?")


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"modelId": "m", "agent": {"eliza": {}}}, "messages"),
        (
            {
                "modelId": "m",
                "messages": [{"role": "user", "content": [{"type": "bogus"}]}],
                "agent": {"eliza": {}},
            },
            "messages.0.content.0",
        ),
        (
            {
                "modelId": "m",
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "tool_call", "toolCallId": "a", "toolName": "b"}],
                    }
                ],
                "agent": {"eliza": {}},
            },
            "parameters",
        ),
        ({"modelId": "m", "messages": [], "agent": {"weird": 1}}, "agent"),
        (
            {
                "modelId": "m",
                "messages": [],
                "agent": {"eliza": {}},
                "options": {"tools": [{"name": "x"}]},
            },
            "options.tools.0.description",
        ),
        ({"messages": [], "agent": {"eliza": {}}}, "modelId"),
    ],
)
async def test_bad_chat_params_get_invalid_params_naming_the_field(lm, params, field):
    resp = await lm.request("lm/provideLanguageModelChatResponse", params)
    assert resp.error["code"] == -32602
    assert field in resp.error["message"]
    ok = await lm.chat([user("Hello")])
    assert ok.error is None


async def test_every_agent_form_is_accepted(lm):
    forms = [
        {"eliza": {"deterministic": True}},
        {"eliza": {}},
        {"mcp_server": {k: v for k, v in eliza_process().items() if k != "id"}},
        eliza_process(),
        {k: v for k, v in eliza_process().items() if k != "id"},
    ]
    for agent in forms:
        resp = await lm.chat([user(f"Hello {json.dumps(agent)[:20]}")], agent=agent)
        assert resp.error is None, (agent, resp.error)
        assert resp.text


# --- lifecycle -----------------------------------------------------------------------------------


def child_pids(parent: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                out.append(int(entry.name))
    return out


async def test_stdin_eof_exits_and_kills_agent_process_groups(tmp_path):
    client = await LmClient.start("--cwd", str(tmp_path), "--log", "debug")
    agent = echo_agent()
    fut = client.chat_start([user("stream 1000 0.05")], agent=agent)
    rid = client._next_id
    await client.wait_for_parts(rid, 1)
    pids = child_pids(client.proc.pid)
    assert pids, "the echo agent is running"
    code = await client.close()
    assert code == 0
    resp = client.pending_response(rid)
    assert resp.error is not None or fut.done()
    for pid in pids:
        await until(lambda pid=pid: gone(pid), what=f"agent process {pid} ended")


async def test_session_new_gets_an_absolute_cwd(tmp_path):
    relative_cwd_client = await LmClient.start("--cwd", ".", "--log", "debug", cwd=str(tmp_path))
    try:
        resp = await relative_cwd_client.chat([user("hi")], agent=echo_agent())
        assert resp.error is None
        lines = await until(
            lambda: [
                line for line in relative_cwd_client.stderr_lines if "new_session cwd=" in line
            ],
            what="the new_session log line",
        )
        assert lines[0].split("new_session cwd=")[1].strip() == str(tmp_path)
    finally:
        await relative_cwd_client.close()


async def test_agent_action_offered_but_unused_does_not_disturb_a_chat(lm):
    resp = await lm.chat([user("Hello")], tools=[AGENT_ACTION])
    assert resp.error is None and resp.text == "How do you do. Please state your problem."


async def test_idle_sessions_are_reaped_and_the_conversation_continues_with_replay(tmp_path):
    log = tmp_path / "ev.jsonl"
    client = await LmClient.start(
        "--cwd", str(tmp_path), "--event-log", str(log), "--idle-timeout", "0.3"
    )
    try:
        agent = echo_agent()
        first = await client.chat([user("U1")], agent=agent)
        pids = child_pids(client.proc.pid)
        assert pids
        await until(
            lambda: any(
                json.loads(line)["type"] == "session_ended" for line in log.read_text().splitlines()
            ),
            what="the idle session ended",
        )
        ended = [
            json.loads(line)
            for line in log.read_text().splitlines()
            if json.loads(line)["type"] == "session_ended"
        ]
        assert ended and "idle" in ended[0]["reason"]
        for pid in pids:
            await until(lambda pid=pid: gone(pid), what=f"agent process {pid} ended")
        second = await client.chat([user("U1"), first.as_assistant(), user("U2")], agent=agent)
        assert (
            "User: U1" in second.text
            and "Assistant: ECHO: U1" in second.text
            and second.text.endswith("U2")
        )
    finally:
        await client.close()


async def test_agent_limit_stops_the_least_recently_used_idle_agent(tmp_path):
    log = tmp_path / "ev.jsonl"
    client = await LmClient.start(
        "--cwd", str(tmp_path), "--event-log", str(log), "--max-agents", "1"
    )
    try:
        agent = echo_agent()
        a = await client.chat([user("conversation A")], agent=agent)
        b = await client.chat([user("conversation B")], agent=agent)
        assert a.text == "ECHO: conversation A" and b.text == "ECHO: conversation B"
        assert len(child_pids(client.proc.pid)) == 1
        ended = [
            json.loads(line)
            for line in log.read_text().splitlines()
            if json.loads(line)["type"] == "session_ended"
        ]
        assert len(ended) == 1 and "make room" in ended[0]["reason"]
        # Conversation A goes on in a fresh session that hears its history.
        a2 = await client.chat(
            [user("conversation A"), a.as_assistant(), user("more")], agent=agent
        )
        assert "User: conversation A" in a2.text
    finally:
        await client.close()


async def test_client_tools_offered_after_a_tool_less_start_reach_the_agent(logged):
    first = await logged.chat([user("Hello")])
    assert first.error is None
    tools = [tool("read_file", "Read contents of a file")]
    second = await logged.chat(
        [user("Hello"), first.as_assistant(), user("list tools from vscode_tools")], tools=tools
    )
    assert second.text.endswith("Available tools:\n  - read_file: Read contents of a file")


async def test_the_system_prompt_reaches_the_agent_when_a_request_supersedes_one_during_start_up(
    logged, tmp_path
):
    """The first request is superseded while its agent is still starting (it waits for a file):
    the agent never received it, so the next request is prompted with the whole conversation —
    the system prompt included — not only with what differs."""
    import sys

    from tests.support.lmclient import ECHO_AGENT_SCRIPT

    go = tmp_path / "go"
    agent = {
        "id": "slow-echo",
        "name": "Slow echo",
        "command": "sh",
        "args": [
            "-c",
            f'while [ ! -e "{go}" ]; do sleep 0.02; done; exec "{sys.executable}" "{ECHO_AGENT_SCRIPT}"',
        ],
        "env": [],
    }
    first = logged.chat_start([user("You are terse."), user("first")], agent=agent)
    second = logged.chat_start([user("You are terse."), user("second")], agent=agent)
    async with asyncio.timeout(
        30
    ):  # both routed (the second cancels the first) before the agent is up
        while not logged.event_log.exists() or len(decisions(logged.event_log)) < 2:
            await asyncio.sleep(0.02)
    assert [d["kind"] for d in decisions(logged.event_log)] == ["new_session", "cancel"]
    go.touch()
    superseded = await asyncio.wait_for(first, 30)
    assert superseded.error is not None and "cancelled" in superseded.error["message"].lower()
    answer = await asyncio.wait_for(second, 30)
    assert answer.error is None and answer.text == "ECHO: You are terse.\nsecond"
