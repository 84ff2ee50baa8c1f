"""Conversation identity on the stateless OpenAI API (the EXTEND policy of `bridge.history`):
requests that merely share a system prompt or a first message never meet in one agent session;
a request continues a session only when it extends that session's complete transcript; and every
request prompts the agent (never a 200 with nothing). The `echo` agent answers `ECHO: <prompt>`,
so each answer shows exactly what the agent was prompted with."""

from __future__ import annotations

import asyncio
import threading

import openai

from tests.support.openai_server import ServerThread, read_log

SYSTEM = {"role": "system", "content": "You are a terse assistant."}


def sessions(server: ServerThread) -> int:
    return sum(len(c.sessions) for c in server.door.connections.values())


async def test_concurrent_requests_sharing_a_system_prompt_are_independent(aclient):
    questions = [f"question {i}" for i in range(3)]
    answers = await asyncio.gather(
        *(
            aclient.chat.completions.create(
                model="echo", messages=[SYSTEM, {"role": "user", "content": q}]
            )
            for q in questions
        )
    )
    for q, r in zip(questions, answers):
        assert r.choices[0].finish_reason == "stop"
        text = r.choices[0].message.content
        assert (
            text == f"ECHO: You are a terse assistant.\n{q}"
        )  # its own question, the system prompt
        assert all(other not in text for other in questions if other != q)


def test_sequential_requests_sharing_a_system_prompt_never_see_each_other(client, server):
    first = client.chat.completions.create(
        model="echo", messages=[SYSTEM, {"role": "user", "content": "alpha"}]
    )
    second = client.chat.completions.create(
        model="echo", messages=[SYSTEM, {"role": "user", "content": "beta"}]
    )
    assert first.choices[0].message.content == "ECHO: You are a terse assistant.\nalpha"
    assert second.choices[0].message.content == "ECHO: You are a terse assistant.\nbeta"
    assert sessions(server) == 2


def test_a_request_extending_the_complete_transcript_continues_the_session(client, server):
    messages = [SYSTEM, {"role": "user", "content": "one"}]
    first = client.chat.completions.create(model="echo", messages=messages)
    messages += [
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "two"},
    ]
    second = client.chat.completions.create(model="echo", messages=messages)
    assert second.choices[0].message.content == "ECHO: two"  # only what the agent has not seen
    assert sessions(server) == 1


def test_an_edited_reply_is_a_new_conversation_with_the_history_replayed(client, server):
    messages = [SYSTEM, {"role": "user", "content": "one"}]
    client.chat.completions.create(model="echo", messages=messages)
    messages += [
        {"role": "assistant", "content": "an answer the agent never gave"},
        {"role": "user", "content": "two"},
    ]
    text = (
        client.chat.completions.create(model="echo", messages=messages).choices[0].message.content
    )
    assert "[The conversation so far, replayed" in text
    assert "User: You are a terse assistant." in text
    assert "Assistant: an answer the agent never gave" in text and text.endswith(" two")
    assert sessions(server) == 2


def test_a_long_stream_is_not_cancelled_by_a_request_sharing_its_first_message(client, logs):
    got: dict = {}

    def first() -> None:
        stream = client.chat.completions.create(
            model="tool", messages=[{"role": "user", "content": "stream 300"}], stream=True
        )
        got["text"] = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

    t = threading.Thread(target=first)
    t.start()
    while not any(e["event"] == "prompt" for e in read_log(logs["tool"])):
        threading.Event().wait(0.02)
    other = client.chat.completions.create(
        model="tool",
        messages=[{"role": "user", "content": "stream 300"}, {"role": "user", "content": "and"}],
    )
    t.join(30)
    assert other.choices[0].finish_reason == "stop"
    assert got["text"] == "".join(f"c{i} " for i in range(300))  # whole, never cancelled
    assert not any(e["event"] == "cancel" for e in read_log(logs["tool"]))


def test_a_history_ending_with_a_tool_result_nobody_waits_for_prompts_the_agent(client):
    """A client-built history (no agent ever made this call) gets an answer, not an empty 200."""
    messages = [
        SYSTEM,
        {"role": "user", "content": "weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_abc",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc", "content": "Sunny, 22C"},
    ]
    r = client.chat.completions.create(model="echo", messages=messages)
    text = r.choices[0].message.content
    assert r.choices[0].finish_reason == "stop" and text
    assert 'Assistant called tool get_weather (call call_abc) with {"city":"Paris"}' in text
    assert "Tool get_weather (call call_abc) returned: Sunny, 22C" in text
    assert "User: You are a terse assistant." in text
    assert text.endswith("[Continue from the tool results above.]")


def test_a_request_ending_with_an_assistant_message_still_prompts(client):
    r = client.chat.completions.create(
        model="echo",
        messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hel"}],
    )
    assert r.choices[0].message.content.endswith(
        "[Continue the conversation from where it stopped.]"
    )


async def test_byte_identical_requests_without_a_retry_marker_are_two_requests(aclient, logs):
    body = {"model": "tool", "messages": [{"role": "user", "content": "slow 0.3"}]}
    a, b = await asyncio.gather(
        aclient.chat.completions.create(**body), aclient.chat.completions.create(**body)
    )
    assert a.choices[0].message.content == b.choices[0].message.content == "SLOW DONE"
    assert a.id != b.id
    assert [e["event"] for e in read_log(logs["tool"])].count("prompt") == 2


async def test_the_same_idempotency_key_joins_the_running_request(server, logs):
    body = {"model": "tool", "messages": [{"role": "user", "content": "slow 0.5"}]}
    async with openai.AsyncOpenAI(base_url=server.url, api_key="x", max_retries=0) as c:
        a, b = await asyncio.gather(
            c.chat.completions.create(**body, extra_headers={"Idempotency-Key": "k-1"}),
            c.chat.completions.create(**body, extra_headers={"Idempotency-Key": "k-1"}),
        )
        assert a.id == b.id and a.choices[0].message.content == "SLOW DONE"
        assert [e["event"] for e in read_log(logs["tool"])].count("prompt") == 1
        other = {"model": "tool", "messages": [{"role": "user", "content": "slow 0.1"}]}
        try:
            await c.chat.completions.create(**other, extra_headers={"Idempotency-Key": "k-1"})
        except openai.ConflictError as exc:
            assert exc.code == "idempotency_key_reused"
        else:
            raise AssertionError("a reused Idempotency-Key with another body was accepted")


async def test_a_named_conversation_answers_its_requests_one_at_a_time(server, logs):
    async with openai.AsyncOpenAI(
        base_url=server.url,
        api_key="x",
        max_retries=0,
        default_headers={"x-conversation-id": "conv-7"},
    ) as c:
        first = asyncio.ensure_future(
            c.chat.completions.create(
                model="tool", messages=[{"role": "user", "content": "slow 0.5"}]
            )
        )
        while not any(e["event"] == "prompt" for e in read_log(logs["tool"])):
            await asyncio.sleep(0.02)
        second = await c.chat.completions.create(
            model="tool", messages=[{"role": "user", "content": "second"}]
        )
        assert (await first).choices[0].message.content == "SLOW DONE"
    assert second.choices[0].message.content == "ECHO: second"
    events = [e["event"] for e in read_log(logs["tool"])]
    assert events == ["prompt", "done", "prompt", "done"]  # the second waited for the first
    assert ("local", None, "conv-7") in server.door.connections
