"""Pass-through tools: the client's tools offered to a real agent, its calls returned as
`tool_calls`, and the next request's `tool` messages resuming the agent's waiting turn."""

from __future__ import annotations

import json

import openai
import pytest

from tests.support.openai_server import ServerThread, read_log

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get current weather for a location",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
        },
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current time in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def test_eliza_tool_round_trip(client, server: ServerThread):
    ask = 'use tool vscode_tools::get_weather with {"location": "London"}'
    messages = [{"role": "user", "content": ask}]
    first = client.chat.completions.create(model="eliza", messages=messages, tools=[WEATHER])
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert call.type == "function" and call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"location": "London"}

    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "Sunny, 22C"})
    second = client.chat.completions.create(model="eliza", messages=messages, tools=[WEATHER])
    assert second.choices[0].finish_reason == "stop"
    assert "Sunny, 22C" in second.choices[0].message.content
    (core,) = server.door.connections.values()
    assert len(core.sessions) == 1  # the same agent session answered both


async def test_two_parallel_tool_calls_streamed_then_answered(aclient, logs):
    ask = 'calls [["get_weather", {"location": "Paris"}], ["get_time", {"city": "Tokyo"}]]'
    messages = [{"role": "user", "content": ask}]
    stream = await aclient.chat.completions.create(
        model="tool", messages=messages, tools=[WEATHER, TIME], stream=True
    )
    chunks = [c async for c in stream]
    deltas = [d for c in chunks for d in (c.choices[0].delta.tool_calls or [])]
    firsts = [d for d in deltas if d.id is not None]
    assert sorted(d.index for d in firsts) == [0, 1]
    for d in deltas:  # id / type / name only in a call's first delta
        if d.id is None:
            assert d.type is None and (d.function.name is None)
        else:
            assert d.type == "function" and d.function.name in ("get_weather", "get_time")
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    calls: dict[int, dict] = {}
    for d in deltas:
        entry = calls.setdefault(d.index, {"id": None, "name": None, "arguments": ""})
        entry["id"] = d.id or entry["id"]
        entry["name"] = d.function.name or entry["name"]
        entry["arguments"] += d.function.arguments or ""
    by_name = {c["name"]: c for c in calls.values()}
    assert json.loads(by_name["get_weather"]["arguments"]) == {"location": "Paris"}
    assert json.loads(by_name["get_time"]["arguments"]) == {"city": "Tokyo"}

    messages.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in calls.values()
            ],
        }
    )
    messages.append(
        {"role": "tool", "tool_call_id": by_name["get_weather"]["id"], "content": "rain"}
    )
    messages.append({"role": "tool", "tool_call_id": by_name["get_time"]["id"], "content": "09:00"})
    second = await aclient.chat.completions.create(
        model="tool", messages=messages, tools=[WEATHER, TIME]
    )
    content = second.choices[0].message.content
    assert "rain" in content and "09:00" in content
    prompts = [r for r in read_log(logs["tool"]) if r["event"] == "prompt"]
    assert len(prompts) == 1  # the agent's turn was resumed, not prompted again


def test_tool_choice_required_makes_the_agent_call(client):
    r = client.chat.completions.create(
        model="tool",
        messages=[{"role": "user", "content": "What is the weather in San Francisco?"}],
        tools=[WEATHER],
        tool_choice="required",
    )
    assert r.choices[0].finish_reason == "tool_calls"
    assert r.choices[0].message.tool_calls[0].function.name == "get_weather"


def test_tool_choice_named_offers_only_that_tool(client):
    r = client.chat.completions.create(
        model="tool",
        messages=[{"role": "user", "content": "time please"}],
        tools=[WEATHER, TIME],
        tool_choice={"type": "function", "function": {"name": "get_time"}},
    )
    assert [c.function.name for c in r.choices[0].message.tool_calls] == ["get_time"]


def test_tool_choice_none_offers_no_tools(client):
    ask = 'use tool vscode_tools::get_weather with {"location": "Oslo"}'
    r = client.chat.completions.create(
        model="eliza",
        messages=[{"role": "user", "content": ask}],
        tools=[WEATHER],
        tool_choice="none",
    )
    assert r.choices[0].finish_reason == "stop"
    assert not r.choices[0].message.tool_calls


def test_legacy_functions_round_trip(client):
    ask = 'use tool vscode_tools::get_weather with {"location": "Rome"}'
    messages = [{"role": "user", "content": ask}]
    fn = WEATHER["function"]
    first = client.chat.completions.create(model="eliza", messages=messages, functions=[fn])
    assert first.choices[0].finish_reason == "function_call"
    call = first.choices[0].message.function_call
    assert call.name == "get_weather" and json.loads(call.arguments) == {"location": "Rome"}
    messages.append(
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": call.name, "arguments": call.arguments},
        }
    )
    messages.append({"role": "function", "name": "get_weather", "content": "Cloudy"})
    second = client.chat.completions.create(model="eliza", messages=messages, functions=[fn])
    assert "Cloudy" in second.choices[0].message.content


@pytest.mark.parametrize(
    "mutate, param",
    [
        (
            lambda b: b["messages"].append({"role": "tool", "content": "x"}),
            "messages[1].tool_call_id",
        ),
        (
            lambda b: b["messages"].append(
                {"role": "tool", "tool_call_id": "call_nope", "content": "x"}
            ),
            "messages[1].tool_call_id",
        ),
        (lambda b: b.update(tools=[{"type": "retrieval"}]), "tools[0].type"),
        (
            lambda b: b.update(
                tools=[{"type": "function", "function": {"description": "no name"}}]
            ),
            "tools[0].function.name",
        ),
        (
            lambda b: b.update(
                tools=[{"type": "function", "function": {"name": "f", "parameters": "nope"}}]
            ),
            "tools[0].function.parameters",
        ),
        (
            lambda b: b.update(
                tools=[WEATHER], tool_choice={"type": "function", "function": {"name": "other"}}
            ),
            "tool_choice",
        ),
        (lambda b: b.update(tool_choice="required"), "tool_choice"),
    ],
)
def test_seed_004_validation_is_a_400(client, mutate, param):
    body = {"model": "eliza", "messages": [{"role": "user", "content": "hi"}]}
    mutate(body)
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(**body)
    assert info.value.status_code == 400
    assert info.value.body["param"] == param
    assert info.value.body["type"] == "invalid_request_error"
