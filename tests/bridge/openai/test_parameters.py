"""Every OpenAI parameter is honoured or refused with a 400 naming it: `stop`,
`parallel_tool_calls: false`, usage the agent reports, structured output (`response_format`,
Responses `text.format`) validated with one repair turn; `logprobs`, `n` > 1, audio and
`background` refused; values OpenAI rejects rejected. Eliza's commands work after a system prompt
and with the bridge's `tool_choice` hint."""

from __future__ import annotations

import json
import time

import openai
import pytest

from tests.support.openai_server import read_log

HELLO = [{"role": "user", "content": "hello"}]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
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
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age", "tags"],
    "additionalProperties": False,
}


# --- refused and rejected -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"logprobs": True}, "logprobs"),
        ({"top_logprobs": 2, "logprobs": False}, "top_logprobs"),
        ({"n": 2}, "n"),
        ({"modalities": ["text", "audio"]}, "modalities"),
        ({"audio": {"voice": "alloy", "format": "wav"}}, "audio"),
        ({"temperature": 2.5}, "temperature"),
        ({"top_p": -0.1}, "top_p"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({"response_format": {"type": "xml"}}, "response_format.type"),
        ({"response_format": {"type": "json_schema"}}, "response_format.json_schema"),
        (
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "x", "schema": {"type": 5}},
                }
            },
            "response_format.json_schema.schema",
        ),
    ],
)
def test_chat_parameters_refused_or_rejected_with_400_naming_them(client, extra, param):
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="echo", messages=HELLO, extra_body=extra)
    assert info.value.status_code == 400 and info.value.body["param"] == param


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"background": True}, "background"),
        ({"temperature": -1}, "temperature"),
        ({"include": ["message.output_text.logprobs"]}, "include"),
        ({"text": {"format": {"type": "yaml"}}}, "text.format.type"),
    ],
)
def test_responses_parameters_refused_or_rejected_with_400_naming_them(client, extra, param):
    with pytest.raises(openai.BadRequestError) as info:
        client.responses.create(model="echo", input="hello", extra_body=extra)
    assert info.value.body["param"] == param


def test_sampling_values_in_range_are_accepted(client):
    r = client.chat.completions.create(
        model="echo", messages=HELLO, temperature=0.2, top_p=0.9, seed=7, n=1
    )
    assert r.choices[0].message.content == "ECHO: hello"


# --- stop ---------------------------------------------------------------------------------------


def test_stop_cuts_the_content_at_the_first_stop_sequence(client):
    r = client.chat.completions.create(
        model="echo",
        messages=[{"role": "user", "content": "one two END three"}],
        stop=["END", "tw"],
    )
    assert r.choices[0].message.content == "ECHO: one "
    assert r.choices[0].finish_reason == "stop"


@pytest.mark.parametrize("limit", ["stop", "max_tokens"])
def test_a_cut_reply_echoed_back_continues_the_same_session(client, server, limit):
    """The history records the reply the client received (cut), not all the agent streamed."""
    extra = {"stop": ["two"]} if limit == "stop" else {"max_tokens": 3}
    messages = [{"role": "user", "content": "one two three four five six"}]
    r = client.chat.completions.create(model="echo", messages=messages, **extra)
    cut = r.choices[0].message.content
    assert cut in ("ECHO: one ", "ECHO: one tw")
    messages += [{"role": "assistant", "content": cut}, {"role": "user", "content": "next"}]
    again = client.chat.completions.create(model="echo", messages=messages)
    assert again.choices[0].message.content == "ECHO: next"  # continued, nothing replayed
    assert sum(len(c.sessions) for c in server.door.connections.values()) == 1


def test_stop_spanning_streamed_chunks_ends_the_stream_and_the_agents_turn(client, logs):
    stream = client.chat.completions.create(
        model="tool",
        messages=[{"role": "user", "content": "stream 100000"}],
        stop="3 c4",
        stream=True,
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "c0 c1 c2 c"
    assert chunks[-1].choices[0].finish_reason == "stop"
    deadline = time.monotonic() + 20  # the agent is told to stop once the answer has ended
    while not any(e["event"] == "cancel" for e in read_log(logs["tool"])):
        assert time.monotonic() < deadline, "the agent's turn was never cancelled"
        time.sleep(0.02)


# --- parallel_tool_calls: false -----------------------------------------------------------------


def test_parallel_tool_calls_false_hands_out_one_call_per_response(client, logs):
    ask = 'calls [["get_weather", {"location": "Paris"}], ["get_time", {"city": "Tokyo"}]]'
    messages = [{"role": "user", "content": ask}]
    seen = []
    for _ in range(2):
        r = client.chat.completions.create(
            model="tool", messages=messages, tools=[WEATHER, TIME], parallel_tool_calls=False
        )
        assert r.choices[0].finish_reason == "tool_calls"
        (call,) = r.choices[0].message.tool_calls
        seen.append(call.function.name)
        messages.append(r.choices[0].message.model_dump(exclude_none=True))
        messages.append(
            {"role": "tool", "tool_call_id": call.id, "content": f"{call.function.name} ok"}
        )
    assert sorted(seen) == ["get_time", "get_weather"]
    final = client.chat.completions.create(
        model="tool", messages=messages, tools=[WEATHER, TIME], parallel_tool_calls=False
    )
    assert final.choices[0].message.content == "RESULTS: get_weather ok | get_time ok"
    assert [e["event"] for e in read_log(logs["tool"])].count("prompt") == 1  # one agent turn


# --- usage --------------------------------------------------------------------------------------


def test_usage_is_what_the_agent_reported(client):
    r = client.chat.completions.create(
        model="tool", messages=[{"role": "user", "content": "report usage"}]
    )
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens) == (11, 7, 18)
    resp = client.responses.create(model="tool", input="report usage please")
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == (11, 7)


# --- structured output --------------------------------------------------------------------------


def schema_format(name: str = "person", schema: dict | None = None) -> dict:
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": schema or PERSON, "strict": True},
    }


def test_json_schema_answer_is_valid_json_content(client, logs):
    r = client.chat.completions.create(
        model="tool",
        messages=[
            {"role": "system", "content": "Extract."},
            {"role": "user", "content": "Bob, 42"},
        ],
        response_format=schema_format(),
    )
    value = json.loads(r.choices[0].message.content)
    assert set(value) == {"name", "age", "tags"} and isinstance(value["age"], int)
    (prompt,) = [e["text"] for e in read_log(logs["tool"]) if e["event"] == "prompt"]
    assert "Extract.\nBob, 42" in prompt and '"additionalProperties":false' in prompt


def test_an_answer_that_does_not_validate_gets_one_repair_turn(client, logs):
    stream = client.chat.completions.create(
        model="tool",
        messages=[{"role": "user", "content": "badjson Bob, 42"}],
        response_format=schema_format(),
        stream=True,
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert set(json.loads(text)) == {"name", "age", "tags"}
    prompts = [e["text"] for e in read_log(logs["tool"]) if e["event"] == "prompt"]
    assert (
        len(prompts) == 2
        and "[Your last answer was not accepted: the answer is not JSON" in prompts[1]
    )


def test_an_answer_that_never_validates_is_a_502_naming_the_problem(client):
    with pytest.raises(openai.APIStatusError) as info:
        client.chat.completions.create(
            model="tool",
            messages=[{"role": "user", "content": "alwaysbad"}],
            response_format={"type": "json_object"},
        )
    assert info.value.status_code == 502 and info.value.code == "invalid_structured_output"
    assert "not JSON" in info.value.message


def test_chat_parse_with_a_pydantic_model(client):
    from pydantic import BaseModel

    class City(BaseModel):
        name: str
        population: int

    r = client.chat.completions.parse(
        model="tool", messages=[{"role": "user", "content": "Paris"}], response_format=City
    )
    parsed = r.choices[0].message.parsed
    assert isinstance(parsed, City) and isinstance(parsed.population, int)


def test_responses_text_format_is_honoured_and_reported(client):
    resp = client.responses.create(
        model="tool",
        input="Bob, 42",
        instructions="Extract the person.",
        text={
            "format": {"type": "json_schema", "name": "person", "schema": PERSON, "strict": True}
        },
    )
    assert set(json.loads(resp.output_text)) == {"name", "age", "tags"}
    assert resp.text.format.type == "json_schema" and resp.text.format.name == "person"


# --- Eliza as a test model ----------------------------------------------------------------------


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_eliza_use_tool_after_a_system_prompt_with_a_named_tool_choice(client, api):
    ask = 'use tool vscode_tools::get_weather with {"location": "London"}'
    if api == "chat":
        r = client.chat.completions.create(
            model="eliza",
            messages=[
                {"role": "system", "content": "You are a weather bot."},
                {"role": "user", "content": ask},
            ],
            tools=[WEATHER],
            tool_choice={"type": "function", "function": {"name": "get_weather"}},
        )
        (call,) = r.choices[0].message.tool_calls
        name, args = call.function.name, call.function.arguments
    else:
        resp = client.responses.create(
            model="eliza",
            instructions="You are a weather bot.",
            input=ask,
            tools=[{"type": "function", **WEATHER["function"]}],
            tool_choice="required",
        )
        (call,) = [o for o in resp.output if o.type == "function_call"]
        name, args = call.name, call.arguments
    assert name == "get_weather" and json.loads(args) == {"location": "London"}


def test_a_structured_answer_echoed_back_continues_the_same_session(client, server):
    messages = [{"role": "user", "content": "Bob, 42"}]
    r = client.chat.completions.create(
        model="tool", messages=messages, response_format=schema_format()
    )
    messages += [
        {"role": "assistant", "content": r.choices[0].message.content},
        {"role": "user", "content": "thanks"},
    ]
    again = client.chat.completions.create(model="tool", messages=messages)
    assert again.choices[0].message.content == "ECHO: thanks"
    assert sum(len(c.sessions) for c in server.door.connections.values()) == 1
