"""JSON nested past what a decoder or a validator can walk, wherever a client or an agent can put
it: a 400 that says what is wrong, or the value kept as text — never a 500 and a traceback, and the
server serves on (a real uvicorn and the real `openai` client for what is well-formed; raw sockets
for bodies a client library would not send)."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from bridge.openai.errors import OpenAIError
from bridge.openai.structured import OutputFormat, chat_response_format


def deep(n: int) -> str:
    return "[" * n + "]" * n


def post(server: Any, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
    port = server.server.port
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(head + body)  # not half-closed: that is a client gone away, its request dropped
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    text = answer.split(b"\r\n\r\n", 1)[1]
    try:
        return status, json.loads(text)
    except ValueError:  # a server error's page
        return status, {"page": text[:200].decode(errors="replace")}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", deep(100_000)),
        ("/v1/chat/completions", '{"model":"eliza","messages":' + deep(5_000) + "}"),
        ("/v1/responses", '{"model":"eliza","input":"hi","tools":' + deep(100_000) + "}"),
    ],
    ids=["the-body", "its-messages", "its-tools"],
)
def test_a_body_nested_past_the_decoders_depth_is_a_400_and_the_server_serves_on(
    server, client, path, body
):
    status, answer = post(server, path, body.encode())
    assert status == 400
    assert "We could not parse the JSON body" in answer["error"]["message"]
    reply = client.chat.completions.create(
        model="eliza", messages=[{"role": "user", "content": "still there?"}]
    )
    assert reply.choices[0].message.content


def test_tool_call_arguments_no_decoder_can_read_are_kept_as_the_text_they_are(server, client):
    """A client's earlier tool call, its arguments a string of JSON nested 100,000 deep (both
    APIs): read as text, not decoded, and the conversation goes on."""
    arguments = deep(100_000)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    reply = client.chat.completions.create(
        model="eliza",
        messages=[
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f", "arguments": arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "done"},
        ],
        tools=tools,
    )
    assert reply.choices[0].message.content
    response = client.responses.create(
        model="eliza",
        input=[
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": arguments},
            {"type": "function_call_output", "call_id": "c1", "output": "done"},
        ],
        tools=[{"type": "function", "name": "f", "parameters": {"type": "object"}}],
    )
    assert response.output_text


def test_a_response_format_schema_too_deep_to_check_is_a_400_naming_it(server, client):
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(400):  # within the decoder's depth; past what the schema's own check walks
        schema = {"type": "object", "properties": {"x": schema}}
    status, answer = post(
        server,
        "/v1/chat/completions",
        json.dumps(
            {
                "model": "eliza",
                "messages": [{"role": "user", "content": "hi"}],
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "deep", "schema": schema},
                },
            }
        ).encode(),
    )
    assert status == 400
    assert answer["error"]["param"] == "response_format.json_schema.schema"
    assert "nested too deeply" in answer["error"]["message"]
    with pytest.raises(OpenAIError):  # the same, without the server
        chat_response_format(
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "d", "schema": schema},
                }
            }
        )


def test_an_agents_answer_too_deep_to_read_or_check_is_a_problem_to_repair_not_a_crash():
    """Structured output: the agent's answer is read and checked against the schema; an answer
    nested past the decoder's depth is "not JSON", and one the schema's validator cannot walk (a
    recursive schema, an answer 900 deep) is "nested too deeply" — each a problem the agent is
    asked to correct, as any wrong answer is."""
    fmt = OutputFormat("json_schema", "x", {"type": "object"})
    assert fmt.check(deep(100_000)) == (None, "the answer is not JSON")
    assert fmt.check("```json\n" + deep(100_000) + "\n```") == (None, "the answer is not JSON")
    assert fmt.check('prose {bad} then {"a": [1]} and more') == ({"a": [1]}, None)
    recursive = OutputFormat("json_schema", "tree", {"type": "array", "items": {"$ref": "#"}})
    value, problem = recursive.check(deep(900))
    assert value is None and problem == "it is nested too deeply to check against the schema"
    assert recursive.check(deep(3)) == ([[[]]], None)  # a shallow one is checked as usual


class _Spy(json.JSONDecoder):
    """The decoder `_extract` searches prose with, noting how much each failed try read."""

    read: list[int] = []

    def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
        try:
            return super().raw_decode(s, idx)
        except json.JSONDecodeError as exc:
            _Spy.read.append(exc.pos - idx)
            raise
        except RecursionError:
            _Spy.read.append(-1)  # nested past the decoder's depth: how far it read is unknown
            raise


@pytest.mark.parametrize(
    "answer",
    [
        ("[" * 900 + "x") * 200,  # 200 unclosed runs: each try reads to the run's end
        "[1," * 300 + "x" + " [" * 20_000,
        "{" + '"a": [' * 400 + "x" + "prose " * 5_000,
    ],
    ids=["unclosed-runs", "one-long-unclosed", "prose-after"],
)
def test_searching_prose_for_the_answers_json_reads_a_few_times_its_length_at_most(
    monkeypatch, answer
):
    """Every `{` and `[` of an answer is a place its JSON may start; without a bound, answers of
    unclosed brackets made the search read the square of their length (~9 s for 200 KB)."""
    from bridge.openai import structured

    _Spy.read = []
    monkeypatch.setattr(structured.json, "JSONDecoder", _Spy)
    assert structured._extract(answer) == (None, "the answer is not JSON")
    assert _Spy.read, "the search ran"
    assert sum(max(1, r) for r in _Spy.read) <= 4 * len(answer) + 4096 + max(_Spy.read)
    if -1 in _Spy.read:  # a try nested past the decoder's depth ends the search
        assert _Spy.read.index(-1) == len(_Spy.read) - 1


CHAT = {
    "model": "eliza",
    "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "user", "content": "more"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "f",
                "description": "d",
                "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
            },
        }
    ],
    "tool_choice": "auto",
    "metadata": {"k": "v"},
    "stop": ["zz"],
    "user": "u",
    "max_tokens": 50,
    "temperature": 0.5,
}
RESPONSES = {
    "model": "eliza",
    "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    ],
    "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
    "instructions": "be brief",
    "metadata": {"k": "v"},
    "max_output_tokens": 50,
}
# Each JSON type, and values nested deep (within the decoder's depth: they reach the fields).
WRONG = [
    None,
    0,
    -1.5,
    True,
    "x",
    [],
    {},
    json.loads(deep(900)),
    json.loads('{"x":' * 400 + "1" + "}" * 400),
]


def places(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value: the value itself, each member and each element, deep."""
    found = [at]
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, inner in items:
        found += places(inner, (*at, key))
    return found


def put(value: Any, at: tuple[Any, ...], new: Any) -> Any:
    if not at:
        return new
    copy = json.loads(json.dumps(value))
    holder = copy
    for key in at[:-1]:
        holder = holder[key]
    holder[at[-1]] = new
    return copy


@pytest.mark.parametrize(
    ("path", "body"),
    [("/v1/chat/completions", CHAT), ("/v1/responses", RESPONSES)],
    ids=["chat", "responses"],
)
def test_any_field_of_any_type_is_answered_or_refused_never_a_server_error(
    server, client, path, body
):
    """Every place of a full request (every member and element, the body itself) replaced by
    a value of each JSON type, or one nested hundreds deep: answered, or refused with a 4xx that
    names the problem — never a 5xx."""
    assert post(server, path, json.dumps(body).encode())[0] == 200  # the request as it is
    refused = 0
    for at in places(body):
        for value in WRONG:
            status, answer = post(server, path, json.dumps(put(body, at, value)).encode())
            assert status < 500, (at, type(value).__name__, answer)
            if status >= 400:
                refused += 1
                assert answer["error"]["message"], (at, answer)
    assert refused > 50, "most wrong types are refused"
    reply = client.chat.completions.create(
        model="eliza", messages=[{"role": "user", "content": "still there?"}]
    )
    assert reply.choices[0].message.content
