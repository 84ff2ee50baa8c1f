"""The OpenAI door's memo of the tool arrays it validated (`bridge/openai/tools.py`: `SEEN_TOOLS`):
clients resend every tool with every request, so an array seen lately gives the very definitions
it gave then — and only an array that is the same JSON value, types and key order included."""

from __future__ import annotations

import json

import pytest

from bridge.openai.errors import OpenAIError
from bridge.openai.tools import _SeenTools, chat_tools, function_tools
from bridge.tools.server import ClientToolServer


def tool(name: str, schema: dict) -> dict:
    return {
        "type": "function",
        "function": {"name": name, "description": "d", "parameters": schema},
    }


def decoded(tools: list[dict]) -> list[dict]:
    """As each request brings it: decoded afresh from its body."""
    return json.loads(json.dumps(tools))


ARRAY = [tool("a", {"type": "object", "properties": {"n": {"type": "integer"}}}), tool("b", {})]


async def test_a_resent_array_gives_the_same_definitions_and_the_tool_server_sees_no_change():
    first = function_tools(decoded(ARRAY), flat=False)
    again = function_tools(decoded(ARRAY), flat=False)
    assert all(x is y for x, y in zip(first, again, strict=True))
    assert again is not first  # a list of its own: a caller may filter it
    server = ClientToolServer()
    server.register("s1", lambda name, args: None, first)
    assert server.set_tools("s1", again) is False
    # The Responses API's flat form is told apart from the Chat Completions form.
    flat = [{"type": "function", "name": "a", "parameters": {"type": "object"}}]
    assert function_tools(decoded(flat), flat=True)[0].name == "a"
    with pytest.raises(OpenAIError):
        function_tools(decoded(flat), flat=False)


@pytest.mark.parametrize(
    "variants",
    [
        [{"const": 1}, {"const": 1.0}, {"const": True}],  # equal in Python, not in JSON
        [{"const": 0}, {"const": False}, {"const": -0.0}],
        [{"type": "object", "title": "t"}, {"title": "t", "type": "object"}],  # key order
    ],
)
def test_arrays_python_calls_equal_but_json_does_not_each_get_their_own(variants):
    seen = []
    for schema in variants:
        (definition,) = function_tools(decoded([tool("a", schema)]), flat=False)
        assert json.dumps(definition.inputSchema) == json.dumps(schema)
        seen.append(definition)
    for schema, definition in zip(variants, seen, strict=True):  # and again, each its own
        (again,) = function_tools(decoded([tool("a", schema)]), flat=False)
        assert again is definition


def test_a_bad_array_is_refused_each_time_it_comes():
    bad = [tool("a", {"type": "no such type"})]
    for _ in range(2):
        with pytest.raises(OpenAIError) as caught:
            chat_tools({"tools": decoded(bad)})
        assert caught.value.status == 400
    duplicated = [tool("a", {}), tool("a", {})]
    for _ in range(2):  # names are checked on every request, the memo's or not
        with pytest.raises(OpenAIError):
            chat_tools({"tools": decoded(duplicated)})


def test_what_it_keeps_is_bounded_by_count_and_size():
    memo = _SeenTools(entries=2, max_bytes=4096)
    arrays = [decoded([tool(f"t{i}", {})]) for i in range(3)]
    keys = [memo.key(a, False) for a in arrays]
    assert all(k is not None for k in keys)
    for i, key in enumerate(keys):
        assert key is not None
        memo.put(key, function_tools(arrays[i], flat=False))
    assert memo.get(keys[0]) is None  # the oldest went
    assert memo.get(keys[1]) is not None and memo.get(keys[2]) is not None
    big = decoded([tool("big", {"description": "x" * 5000})])
    assert memo.key(big, False) is None  # over the size kept: validated every time


@pytest.mark.parametrize("values", [(1, 1.0, True), (0, False)])
def test_a_real_agent_is_offered_each_conversations_own_schema(client, values):
    """Through the real `openai` client and a real ACP agent reading the tools it is offered
    (it calls the tool with the schema's `const`): conversations whose tool arrays Python calls
    equal each reach the agent as they were sent."""
    for value in values:
        schema = {"type": "object", "properties": {"n": {"const": value}}, "required": ["n"]}
        r = client.chat.completions.create(
            model="tool",
            messages=[{"role": "user", "content": f"a fresh conversation about {value!r}"}],
            tools=[tool("pick", schema)],
            tool_choice="required",
        )
        (call,) = r.choices[0].message.tool_calls
        arguments = json.loads(call.function.arguments)
        assert arguments == {"n": value}
        assert type(arguments["n"]) is type(value)
