"""The Responses API through the `openai` SDK: previous_response_id continues the agent session."""

from __future__ import annotations

import json

import openai
import pytest

from tests.support.openai_server import ServerThread, read_log

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a place",
    "parameters": {
        "type": "object",
        "properties": {"location": {"type": "string"}},
        "required": ["location"],
    },
}


def test_create_and_continue_with_previous_response_id(client, server: ServerThread):
    first = client.responses.create(model="eliza", input="I am unhappy", instructions="Be brief.")
    assert first.status == "completed" and first.object == "response"
    assert first.output_text
    second = client.responses.create(model="eliza", input="my job", previous_response_id=first.id)
    assert second.output_text and second.previous_response_id == first.id
    (core,) = server.door.connections.values()
    assert len(core.sessions) == 1  # the same agent session
    assert client.responses.retrieve(second.id).output_text == second.output_text


async def test_streaming_events_and_continuation(aclient, server: ServerThread):
    stream = await aclient.responses.create(model="echo", input="stream 20", stream=True)
    events = [e async for e in stream]
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[1] == "response.in_progress"
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == "".join(f"c{i} " for i in range(20))
    done = events[-1].response
    assert done.output_text == text
    follow = await aclient.responses.create(
        model="echo", input="and more", previous_response_id=done.id, stream=True
    )
    text2 = "".join([e.delta async for e in follow if e.type == "response.output_text.delta"])
    assert text2 == "ECHO: and more"  # only the new input was prompted: the session continued
    (core,) = server.door.connections.values()
    assert len(core.sessions) == 1


def test_function_call_round_trip_with_previous_response_id(client, logs):
    first = client.responses.create(
        model="tool", input='calls [["get_weather", {"location": "Lima"}]]', tools=[WEATHER]
    )
    (call,) = [item for item in first.output if item.type == "function_call"]
    assert call.name == "get_weather" and json.loads(call.arguments) == {"location": "Lima"}
    second = client.responses.create(
        model="tool",
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "hot"}],
        tools=[WEATHER],
    )
    assert second.output_text == "RESULTS: hot"
    assert [e["event"] for e in read_log(logs["tool"])].count("prompt") == 1


def test_unknown_previous_response_and_orphan_output_are_errors(client):
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="eliza", input="x", previous_response_id="resp_nope")
    with pytest.raises(openai.BadRequestError) as info:
        client.responses.create(
            model="eliza", input=[{"type": "function_call_output", "call_id": "c1", "output": "x"}]
        )
    assert info.value.body["param"] == "input[0].call_id"


def test_max_output_tokens_is_incomplete(client):
    r = client.responses.create(model="echo", input="stream 100", max_output_tokens=4)
    assert r.status == "incomplete" and r.incomplete_details.reason == "max_output_tokens"
