"""Permission requests through the real endpoint (D9–D13 of docs/upstream.md; decision 11), with the
built-in Eliza and the test echo agent as the agents asking."""

from __future__ import annotations

import json

import pytest

from tests.support.lmclient import AGENT_ACTION, LmClient, echo_agent, tool, tool_result, user

ASK = "ask permission to run the tests"


def events(path, kind):
    return [e for e in map(json.loads, path.read_text().splitlines()) if e["type"] == kind]


@pytest.fixture
async def logged(tmp_path):
    log = tmp_path / "events.jsonl"
    client = await LmClient.start("--cwd", str(tmp_path), "--event-log", str(log))
    client.event_log = log
    yield client
    await client.close()


async def ask(client, tools=(AGENT_ACTION,)):
    first = await client.chat([user(ASK)], tools=list(tools))
    assert first.error is None and first.completed
    return first


async def test_d9_permission_becomes_an_agent_action_tool_call_and_approval_lets_the_agent_continue(
    logged,
):
    first = await ask(logged)
    (call,) = first.tool_calls
    assert call["toolName"] == "symposium-agent-action"
    assert call["parameters"] == {
        "kind": "execute",
        "title": "run the tests",
        "raw_input": {"command": "run the tests"},
    }
    assert first.text.startswith(
        "\u23f3 **run the tests**"
    )  # the pending tool call, rendered before the ask
    second = await logged.chat(
        [
            user(ASK),
            first.as_assistant(),
            tool_result(call["toolCallId"], [{"$mid": 21, "value": "Approved"}]),
        ],
        tools=[AGENT_ACTION],
    )
    assert second.error is None
    assert second.text.endswith("Permission granted (allow_once). I ran the tests.")
    assert "\u2705 **run the tests**" in second.text
    (resolved,) = events(logged.event_log, "approval_resolved")
    assert resolved["resolver"] == "vscode" and resolved["outcome"] == "allow_once"


async def test_d10_a_new_message_instead_of_the_result_cancels_the_permission_and_prompts_it(
    logged,
):
    await ask(logged)
    second = await logged.chat([user(ASK), user("never mind")], tools=[AGENT_ACTION])
    assert second.error is None
    assert "Permission" not in second.text, (
        "nothing of the abandoned turn leaks into the next request"
    )
    assert second.text
    (resolved,) = events(logged.event_log, "approval_resolved")
    assert resolved["outcome"] == "cancelled"
    assert [d["decision"]["kind"] for d in events(logged.event_log, "history_decision")] == [
        "new_session",
        "cancel",
    ]


async def test_d10_continuing_without_the_tool_result_counts_as_not_approved(logged):
    first = await ask(logged)
    second = await logged.chat(
        [user(ASK), first.as_assistant(), user("I changed my mind")], tools=[AGENT_ACTION]
    )
    assert second.error is None and "Permission granted" not in second.text
    (resolved,) = events(logged.event_log, "approval_resolved")
    assert resolved["outcome"] == "cancelled"


async def test_d11_without_the_agent_action_tool_the_request_is_denied_and_the_agent_told(lm):
    resp = await lm.chat([user(ASK)])
    assert resp.tool_calls == []
    assert resp.text.endswith("Permission denied (reject_once). I did not run the tests.")


async def test_d13_approved_but_no_allow_once_option_answers_cancelled(lm):
    agent = echo_agent()
    first = await lm.chat(
        [user("permit deploy allow_always reject_once")], agent=agent, tools=[AGENT_ACTION]
    )
    (call,) = first.tool_calls
    second = await lm.chat(
        [
            user("permit deploy allow_always reject_once"),
            first.as_assistant(),
            tool_result(call["toolCallId"], [{"$mid": 21, "value": "Approved"}]),
        ],
        agent=agent,
        tools=[AGENT_ACTION],
    )
    assert second.text == "OUTCOME: cancelled"


async def test_approving_request_that_also_carries_user_text_approves_then_prompts_the_text(lm):
    agent = echo_agent()
    first = await lm.chat([user("permit deploy")], agent=agent, tools=[AGENT_ACTION])
    (call,) = first.tool_calls
    approving = {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "toolCallId": call["toolCallId"],
                "result": [{"$mid": 21, "value": "Approved"}],
            },
            {"type": "text", "value": "and then say hi"},
        ],
    }
    second = await lm.chat(
        [user("permit deploy"), first.as_assistant(), approving], agent=agent, tools=[AGENT_ACTION]
    )
    assert second.error is None
    assert second.text == "OUTCOME: allow_onceECHO: and then say hi"


async def test_permission_wait_with_no_new_messages_cancels_and_prompts_the_agent_again(lm):
    """A request with nothing new abandons the wait (the permission is cancelled) and asks the agent
    to continue: never an empty success the agent did not produce."""
    agent = echo_agent()
    first = await lm.chat([user("permit deploy")], agent=agent, tools=[AGENT_ACTION])
    again = await lm.chat(
        [user("permit deploy"), first.as_assistant()], agent=agent, tools=[AGENT_ACTION]
    )
    assert again.error is None and again.completed
    assert again.text == "ECHO: [Continue the conversation from where it stopped.]"
    after = await lm.chat(
        [user("permit deploy"), first.as_assistant(), user("next")],
        agent=agent,
        tools=[AGENT_ACTION],
    )
    assert after.text == "ECHO: next"


async def test_result_for_an_unknown_call_id_cancels_the_wait_and_the_chat_goes_on(lm):
    agent = echo_agent()
    first = await lm.chat([user("permit deploy")], agent=agent, tools=[AGENT_ACTION])
    resp = await lm.chat(
        [
            user("permit deploy"),
            first.as_assistant(),
            tool_result("no-such-call", [{"$mid": 21, "value": "Approved"}]),
        ],
        agent=agent,
        tools=[AGENT_ACTION],
    )
    assert resp.error is None and "OUTCOME: allow_once" not in resp.text
    nxt = await lm.chat(
        [
            user("permit deploy"),
            first.as_assistant(),
            tool_result("no-such-call", [{"$mid": 21, "value": "Approved"}]),
            {"role": "assistant", "content": resp.parts},
            user("hello"),
        ],
        agent=agent,
        tools=[AGENT_ACTION],
    )
    assert nxt.text == "ECHO: hello"


async def test_denial_in_a_later_request_reaches_the_agent_as_reject_once(lm, tmp_path):
    """Two permission asks are answered in one request; only one result came back → the other is denied."""
    agent = echo_agent()
    first = await lm.chat([user("permit deploy")], agent=agent, tools=[AGENT_ACTION])
    (call,) = first.tool_calls
    ok = await lm.chat(
        [
            user("permit deploy"),
            first.as_assistant(),
            tool_result(call["toolCallId"], [{"$mid": 21, "value": "Approved"}]),
        ],
        agent=agent,
        tools=[AGENT_ACTION],
    )
    assert ok.text == "OUTCOME: allow_once"


async def test_a_permission_titled_like_a_client_tool_goes_to_a_person(lm):
    """The bridge's own client tools are recognised by the MCP call its tool server received,
    never by a title the agent chooses: a permission of kind execute titled
    `mcp__vscode_tools__read_file` is asked through VS Code like any other, and denied (not
    approved by a "client tool" rule) when there is nobody to ask."""
    agent = echo_agent()
    resp = await lm.chat(
        [user("permit mcp__vscode_tools__read_file")],
        agent=agent,
        tools=[AGENT_ACTION, tool("read_file")],
    )
    (call,) = resp.tool_calls
    assert call["toolName"] == "symposium-agent-action"
    assert call["parameters"]["title"] == "mcp__vscode_tools__read_file"
    alone = await lm.chat(
        [user("permit vscode_tools/read_file")], agent=agent, tools=[tool("read_file")]
    )
    assert alone.tool_calls == []
    assert alone.text == "OUTCOME: reject_once"


SKIP_TEXT = "The user chose to skip the tool call, they want to proceed without running it"


@pytest.mark.parametrize(
    "label,result",
    [
        # VS Code's Skip: the canned text, as the extension serializes a LanguageModelTextPart
        ("skip", [{"$mid": 21, "value": SKIP_TEXT}]),
        ("error", [{"$mid": 21, "value": "Error: the tool failed"}]),
        ("empty", []),
        ("lowercase", [{"$mid": 21, "value": "approved"}]),
        ("padded", [{"$mid": 21, "value": "Approved "}]),
        ("two parts", [{"$mid": 21, "value": "Approved"}, {"$mid": 21, "value": "and more"}]),
        ("bare string", "Approved"),
        ("data part", [{"$mid": 22, "mimeType": "text/plain", "data": "Approved"}]),
        ("null", None),
    ],
)
async def test_only_the_extensions_approved_text_approves_anything_else_denies(lm, label, result):
    """VS Code hands tool results as `[{"$mid":…,"value":…}]`, and the agent-action tool
    returns its single text part `Approved` only on approval. Skip's text, an error, empty content
    or any other text is a denial the agent learns about (reject_once), audited with what came."""
    import os
    from pathlib import Path

    agent = echo_agent()
    first = await lm.chat([user("permit deploy")], agent=agent, tools=[AGENT_ACTION])
    (call,) = first.tool_calls
    second = await lm.chat(
        [user("permit deploy"), first.as_assistant(), tool_result(call["toolCallId"], result)],
        agent=agent,
        tools=[AGENT_ACTION],
    )
    assert second.error is None
    assert second.text == "OUTCOME: reject_once", label
    audit = Path(os.environ["SYMPOSIUM_CONFIG_DIR"]) / "audit.jsonl"
    (record,) = [json.loads(line) for line in audit.read_text().splitlines()]
    assert record["resolver"] == "vscode" and record["outcome"] == "reject_once"
    received = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    assert received[:200] in record["reason"]


async def test_the_extensions_approval_shape_approves_and_is_audited(lm):
    import os
    from pathlib import Path

    agent = echo_agent()
    first = await lm.chat([user("permit deploy")], agent=agent, tools=[AGENT_ACTION])
    (call,) = first.tool_calls
    second = await lm.chat(
        [
            user("permit deploy"),
            first.as_assistant(),
            tool_result(call["toolCallId"], [{"$mid": 21, "value": "Approved"}]),
        ],
        agent=agent,
        tools=[AGENT_ACTION],
    )
    assert second.text == "OUTCOME: allow_once"
    audit = Path(os.environ["SYMPOSIUM_CONFIG_DIR"]) / "audit.jsonl"
    (record,) = [json.loads(line) for line in audit.read_text().splitlines()]
    assert record["resolver"] == "vscode" and record["outcome"] == "allow_once"


# --- never an empty success (the extension's echo of a reply that mixed text and a tool call) -----


async def test_an_echo_holding_only_the_tool_call_still_approves_and_the_agent_answers(logged):
    """The extension may echo the assistant message of a response as its tool call alone, without
    the text streamed before it: matched by the call's id, the approval goes
    through and the agent's answer comes back — not a cancelled approval and an empty 200."""
    first = await ask(logged)
    (call,) = first.tool_calls
    assert first.text  # text was streamed before the tool call
    echo = {"role": "assistant", "content": [call]}  # the tool call only
    second = await logged.chat(
        [user(ASK), echo, tool_result(call["toolCallId"], [{"$mid": 21, "value": "Approved"}])],
        tools=[AGENT_ACTION],
    )
    assert second.error is None and second.completed
    assert second.text.endswith("Permission granted (allow_once). I ran the tests.")
    (resolved,) = events(logged.event_log, "approval_resolved")
    assert resolved["outcome"] == "allow_once"
    kinds = [d["decision"]["kind"] for d in events(logged.event_log, "history_decision")]
    assert kinds == ["new_session", "commit"]


async def test_a_result_for_an_unknown_exchange_starts_a_session_with_replay_and_prompts_it(lm):
    """A history whose tool call no live session made (a restarted bridge, another window) is not
    answered empty: a new session gets the conversation replayed, the result included."""
    agent = echo_agent()
    history = [
        user("permit deploy"),
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_call",
                    "toolCallId": "toolu_gone",
                    "toolName": "read_file",
                    "parameters": {"path": "a.txt"},
                }
            ],
        },
        tool_result("toolu_gone", [{"$mid": 21, "value": "file text"}]),
    ]
    resp = await lm.chat(history, agent=agent, tools=[AGENT_ACTION, tool("read_file")])
    assert resp.error is None and resp.completed
    assert "[The conversation so far, replayed" in resp.text
    assert "Tool read_file (call toolu_gone) returned: file text" in resp.text
    assert resp.text.endswith("[Continue from the tool results above.]")


async def test_a_deny_rules_reason_is_told_to_the_agent_at_its_next_prompt_and_shown_to_the_client(
    tmp_path,
):
    """The headless endpoint applies the settings' rules; the rule's reason reaches the client in
    the reply and the agent as text at the start of its next prompt (the echo agent repeats it)."""
    import os
    from pathlib import Path

    config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(
        '[[rules]]\naction = "deny"\ntitle = "deploy"\nreason = "deploys go through CI"\n'
    )
    client = await LmClient.start("--cwd", str(tmp_path))
    try:
        agent = echo_agent()
        first = await client.chat([user("permit deploy")], agent=agent, tools=[AGENT_ACTION])
        assert first.tool_calls == [], "a rule decided: VS Code is not asked"
        notice = "The user's rules denied `deploy`: deploys go through CI"
        assert f"> {notice}" in first.text and first.text.endswith("OUTCOME: reject_once")
        second = await client.chat(
            [user("permit deploy"), first.as_assistant(), user("hello")],
            agent=agent,
            tools=[AGENT_ACTION],
        )
        assert second.text == f"ECHO: {notice} hello"
        third = await client.chat(
            [
                user("permit deploy"),
                first.as_assistant(),
                user("hello"),
                second.as_assistant(),
                user("again"),
            ],
            agent=agent,
            tools=[AGENT_ACTION],
        )
        assert third.text == "ECHO: again", "told once"
    finally:
        await client.close()


async def test_a_rule_changed_while_the_headless_endpoint_runs_decides_its_next_request(tmp_path):
    """VS Code keeps its endpoint for the whole window: a rule a person changes in the settings
    file by hand is in force from the next permission request on (here: a deny taken out)."""
    import os
    from pathlib import Path

    config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    settings = config / "settings.toml"
    settings.write_text(
        '[[rules]]\naction = "deny"\ntitle = "deploy"\nreason = "deploys go through CI"\n'
    )
    client = await LmClient.start("--cwd", str(tmp_path))
    try:
        agent = echo_agent()
        first = await client.chat([user("permit deploy")], agent=agent, tools=[AGENT_ACTION])
        assert first.tool_calls == [] and "deploys go through CI" in first.text
        settings.write_text('[[rules]]\naction = "deny"\ntitle = "release"\n')
        # a conversation of its own (the same words would be routed to the first one's session)
        second = await client.chat([user("permit  deploy")], agent=agent, tools=[AGENT_ACTION])
        (call,) = second.tool_calls  # no rule decides it now: VS Code asks the person
        assert call["toolName"] == "symposium-agent-action"
    finally:
        await client.close()
