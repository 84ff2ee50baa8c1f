"""The OpenAI door's bodies (`bridge/openai/body.py`: `KnownTools`): a `tools` array resent byte
for byte is not decoded again — and every body still decodes to exactly what `json.loads` makes of
it (the oracle here: the standard library's own parser), however the body is spelled.

Exactly: the same keys in the same order, `1`, `1.0` and `true` told apart, NaN where NaN was
(`marshal` writes all of that, its format 2 nothing else), and for a body `json.loads` refuses, the same exception."""

from __future__ import annotations

import json
import marshal
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.openai.body import KnownTools
from bridge.openai.tools import function_tools


def tool(i: int, extra: Any = None) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": f"the file number {i}"}},
        "required": ["path"],
    }
    if extra is not None:
        schema["properties"]["n"] = {"const": extra}
    return {
        "type": "function",
        "function": {"name": f"tool_{i}", "description": "reads a file " * 8, "parameters": schema},
    }


TOOLS = [tool(i) for i in range(30)]  # ~9 KB: set aside (over `min_bytes`)


def body(messages: list[Any], tools: Any = TOOLS, **more: Any) -> bytes:
    return json.dumps({"model": "echo", "messages": messages, "tools": tools, **more}).encode()


def chat(n: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]


def exact(value: Any) -> bytes:
    return marshal.dumps(value, 2)  # version 2: no back-references (they follow refcounts)


def same_as_json_loads(known: KnownTools, data: bytes) -> Any:
    """What `known` makes of `data`, checked against `json.loads`: the same value, exactly, or
    the same error."""
    try:
        expected = json.loads(data)
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        with pytest.raises(type(exc)) as caught:
            known.decode(data)
        assert str(caught.value) == str(exc)
        return None
    got = known.decode(data)
    assert exact(got) == exact(expected)
    return got


def test_a_resent_array_is_the_very_list_decoded_before_and_the_body_is_json_loads_own():
    known = KnownTools()
    first = same_as_json_loads(known, body(chat(1)))
    assert not known.reused
    second = same_as_json_loads(known, body(chat(3)))
    assert known.reused and second["tools"] is first["tools"]
    assert second["messages"] is not first["messages"]
    # The definitions made of it are recognised by the list's identity, not serialized again.
    defs = function_tools(first["tools"], flat=False)
    again = function_tools(second["tools"], flat=False)
    assert [d.name for d in again] == [f"tool_{i}" for i in range(30)]
    assert all(a is b for a, b in zip(defs, again, strict=True))
    # A changed array is decoded afresh, and its own definitions made.
    changed = [*TOOLS[:-1], tool(99)]
    third = same_as_json_loads(known, body(chat(5), changed))
    assert not known.reused and third["tools"] is not first["tools"]
    assert function_tools(third["tools"], flat=False)[-1].name == "tool_99"


@pytest.mark.parametrize(
    "data",
    [
        # A "tools" key nested in a message, ahead of the top-level one, with the same bytes.
        (
            b'{"messages":[{"role":"user","content":"x","tools":'
            + json.dumps(TOOLS).encode()
            + b'}],"tools":'
            + json.dumps(TOOLS[:29]).encode()
            + b"}"
        ),
        # Two top-level "tools": the last one wins.
        b'{"tools":' + json.dumps(TOOLS).encode() + b',"messages":[],"tools":[1,2]}',
        # The top-level value is not an array; the array is nested deeper.
        b'{"tools":{"tools":' + json.dumps(TOOLS).encode() + b'},"messages":[]}',
        # The top-level key spelled with an escape, and NaN its value, ahead of a nested "tools"
        # with the known bytes (the first literal `"tools"` in the body).
        b'{"tool\\u0073":NaN,"messages":[{"tools":' + json.dumps(TOOLS).encode() + b"}]}",
        b'{"tool\\u0073":[],"messages":[{"tools":' + json.dumps(TOOLS).encode() + b"}]}",
        # Not an object at all.
        b'[{"tools":' + json.dumps(TOOLS).encode() + b"}]",
        # NaN and Infinity elsewhere (json.loads takes both), and in strings.
        body(chat(2), temperature=float("nan"), top_p=float("inf"), seed=float("-inf")),
        body([{"role": "user", "content": "NaN Infinity -Infinity"}], temperature=float("nan")),
        body([{"role": "user", "content": "NaN"}], top_p=float("-inf")),
        # Whitespace everywhere JSON allows it; non-ASCII before, inside and after the array.
        json.dumps(
            {"messages": [{"role": "user", "content": "héllo ✓ \U0001f600"}], "tools": TOOLS},
            indent=3,
            ensure_ascii=False,
        ).encode(),
        body([{"role": "user", "content": "日本語"}], [tool(1, "日本語 ✓")] * 30, user="ü"),
        # Malformed after the array, inside it, an unclosed body, a trailing comma.
        body(chat(1))[:-1] + b",}",
        body(chat(1)).replace(b'"tool_3"', b'"tool_3', 1),
        body(chat(1))[:-2],
        # Not UTF-8, or not UTF-8 at all (json.loads reads UTF-16 and UTF-32 too).
        body(chat(1)).replace(b'"m0"', b'"m\xff"'),
        json.dumps({"messages": [], "tools": TOOLS}).encode("utf-16"),
        json.dumps({"messages": [], "tools": TOOLS}).encode("utf-8-sig"),
        # A lone surrogate, UTF-8 encoded (json.loads decodes it with surrogatepass).
        b'{"messages":[{"content":"\xed\xa0\x80"}],"tools":' + json.dumps(TOOLS).encode() + b"}",
    ],
)
def test_bodies_built_to_mislead_it_decode_as_json_loads_decodes_them(data):
    known = KnownTools()
    same_as_json_loads(known, body(chat(1)))  # the array is known: every body below is tried
    same_as_json_loads(known, data)
    same_as_json_loads(known, data)  # and once more, whatever the first one set aside


def test_an_array_one_character_away_from_a_known_one_is_read_for_what_it_is():
    """The same length, the same structure, one character of one string changed — in strings
    all along the array, from its first to its last."""
    known = KnownTools()
    base = body(chat(1))
    same_as_json_loads(known, base)
    array = json.dumps(TOOLS).encode()
    start = base.index(array)
    inside = [start + m.start(1) for m in re.finditer(rb'"([A-Za-z_ ]+)"', array)]
    assert len(inside) > 300
    for at in [*inside[::5], inside[-1]]:
        data = base[:at] + (b"Y" if base[at : at + 1] == b"X" else b"X") + base[at + 1 :]
        got = same_as_json_loads(known, data)
        assert got["tools"] != TOOLS and not known.reused


def test_the_end_of_a_known_array_changed_is_read_for_what_it_is():
    """Each of the array's last bytes, and the first one after it, replaced by a byte that
    matters to JSON, deleted, or doubled: what is left of the known bytes ahead of it is no proof."""
    known = KnownTools()
    base = body(chat(1))
    same_as_json_loads(known, base)
    end = base.index(json.dumps(TOOLS).encode()) + len(json.dumps(TOOLS).encode())
    for at in range(end - 8, end + 1):
        for byte in b'{}[],:" 0n':
            same_as_json_loads(known, base[:at] + bytes([byte]) + base[at + 1 :])
        same_as_json_loads(known, base[:at] + base[at + 1 :])
        same_as_json_loads(known, base[: at + 1] + base[at:])


def test_an_array_with_text_beyond_ascii_is_set_aside_and_reused_too():
    known = KnownTools()
    tools = [tool(i, "日本語 ✓ \U0001f600") for i in range(30)]
    for data in (
        body(chat(1), tools),
        json.dumps({"messages": chat(3), "tools": tools}, ensure_ascii=False).encode(),
    ):
        first = same_as_json_loads(known, data)
        second = same_as_json_loads(known, data)
        assert known.reused and second["tools"] is first["tools"]


def test_a_known_array_in_a_body_that_does_not_close_is_not_taken():
    known = KnownTools()
    same_as_json_loads(known, body(chat(1)))
    head = b'{"model":"echo","messages":[],"tools":'
    for data in (head + json.dumps(TOOLS).encode(), head + json.dumps(TOOLS).encode() + b"]}"):
        same_as_json_loads(known, data)
        assert not known.reused


def test_any_byte_changed_anywhere_in_a_body_it_knows_decodes_as_json_loads_decodes_it():
    """The adversary edits one byte of a body whose array is known: deleted, replaced by a byte
    that matters to JSON, or one inserted — at 600 places picked at random (a fixed seed)."""
    rng = random.Random(23)
    base = body(chat(4), temperature=0.5)
    known = KnownTools()
    same_as_json_loads(known, base)
    pick = b'{}[],:"\\ 0-.eE+tfnNaI\xff\x80\n'
    for _ in range(600):
        at = rng.randrange(len(base))
        edit = rng.randrange(3)
        if edit == 0:
            data = base[:at] + base[at + 1 :]
        elif edit == 1:
            data = base[:at] + bytes([rng.choice(pick)]) + base[at + 1 :]
        else:
            data = base[:at] + bytes([rng.choice(pick)]) + base[at:]
        same_as_json_loads(known, data)
        same_as_json_loads(known, base)  # and the body it knows still reads right after it


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.sampled_from('ab "\\\u00e9\u2713\U0001f600NaInfitols:[]{},'), max_size=12),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(["tools", "role", "content", "NaN", "x"]), inner, max_size=4
        ),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=st.lists(_VALUES, max_size=4),
    tools=st.one_of(st.lists(_VALUES, max_size=6), _VALUES),
    extra=st.dictionaries(st.sampled_from(["tools", "temperature", "x"]), _VALUES, max_size=2),
    indent=st.sampled_from([None, 0, 2]),
    ascii_only=st.booleans(),
    order=st.booleans(),
)
def test_any_body_decodes_exactly_as_json_loads_decodes_it(
    messages, tools, extra, indent, ascii_only, order
):
    """Bodies of every shape (a `tools` key nested anywhere, repeated after the top-level one,
    of any type, NaN and the sentinel tokens in strings and as values), each decoded twice by one
    instance that sets aside even the smallest array, so that the second reads it from memory."""
    known = KnownTools(min_bytes=0)
    doc: dict[str, Any] = {"messages": messages, "tools": tools}
    if order:
        doc = {"tools": tools, "messages": messages}
    text = json.dumps(doc, indent=indent, ensure_ascii=ascii_only)
    if extra:  # keys after it, a second "tools" among them
        more = json.dumps(extra, indent=indent, ensure_ascii=ascii_only)
        text = text[: text.rstrip().rfind("}")] + ", " + more.strip()[1:]
    data = text.encode("utf-8", "surrogatepass")
    for _ in range(2):
        same_as_json_loads(known, data)


def test_what_it_keeps_is_bounded_by_count_and_size():
    known = KnownTools(entries=2, min_bytes=2048, max_bytes=20_000)
    arrays = [[tool(i, n) for i in range(30)] for n in range(3)]
    for tools in arrays:
        same_as_json_loads(known, body([], tools))
    same_as_json_loads(known, body([], arrays[0]))
    assert not known.reused  # the oldest of three went
    same_as_json_loads(known, body([], arrays[2]))
    assert known.reused
    small = [tool(1)]  # under min_bytes: decoded whole each time
    for _ in range(2):
        same_as_json_loads(known, body([], small))
        assert not known.reused
    big = [tool(i) for i in range(100)]  # over max_bytes: never kept
    for _ in range(2):
        same_as_json_loads(known, body([], big))
        assert not known.reused


def test_a_real_client_resending_its_tools_has_them_read_once_and_a_changed_one_reaches_the_agent(
    client, server
):
    """The real `openai` client against the real server and a real ACP agent (it calls the tool
    it is asked for, with its schema's `const`): a resent array is taken from memory, and a
    changed one — one value deep in it — is what the agent is offered next (each request a
    conversation of its own, and so a session of its own)."""
    filler = [tool(i) for i in range(40)]  # ~12 KB of schemas resent with every request
    door = server.door

    def ask(value: Any) -> Any:
        pick = {
            "type": "function",
            "function": {
                "name": "pick",
                "description": "d",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"const": value}},
                    "required": ["n"],
                },
            },
        }
        r = client.chat.completions.create(
            model="tool",
            messages=[{"role": "user", "content": "pick one"}],
            tools=[*filler, pick],
            tool_choice={"type": "function", "function": {"name": "pick"}},
        )
        (call,) = r.choices[0].message.tool_calls
        return json.loads(call.function.arguments), door.bodies.reused

    assert ask(1) == ({"n": 1}, False)
    assert ask(1) == ({"n": 1}, True)
    assert ask(2) == ({"n": 2}, False)
