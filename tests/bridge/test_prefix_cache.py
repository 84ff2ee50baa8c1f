"""The vscodelm door reads and validates only what a request adds to a history it has seen
(bridge.prefix_cache), recognising the seen part on the line's bytes before decoding anything.

Whatever it makes of a line is exactly what decoding the whole line gives (`bridge.jsonrpc.classify`)
— or it leaves the line to that decoder — and its validation gives the plain path's results and
errors. Nothing changed inside a seen history, no look-alike key and no duplicate key gets past it.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from bridge.core import Bridge
from bridge.jsonrpc import Incoming, classify, skip_whitespace
from bridge.protocol import describe_validation_error
from bridge.render import AGENT_ACTION_TOOL
from bridge.vscodelm.prefix_cache import PrefixCache
from bridge.vscodelm.wire import ChatResponseParams
from tests.support.lmclient import LmClient, Response, echo_agent, user
from tests.support.waiting import until

CHAT = "lm/provideLanguageModelChatResponse"
AGENT = {"eliza": {}}


def text(role: str, value: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "value": value}]}


def call(cid: str, params: object) -> dict[str, Any]:
    part = {"type": "tool_call", "toolCallId": cid, "toolName": "t", "parameters": params}
    return {"role": "assistant", "content": [part]}


def history(n: int, tag: str = "") -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        out.append(text("user", f"{tag}q{i}"))
        out.append(text("assistant", f"{tag}a{i}"))
    return out


def params_of(messages: list[Any], model: str = "m", agent: Any = AGENT) -> dict[str, Any]:
    return {"modelId": model, "messages": messages, "agent": agent}


def wire(
    messages: list[Any],
    rid: Any = 1,
    *,
    params: dict[str, Any] | None = None,
    ascii_only: bool = False,
    compact: bool = True,
) -> bytes:
    """A request line as the extension writes it (JSON.stringify: compact, UTF-8 as is)."""
    p = params if params is not None else params_of(messages)
    message = {"jsonrpc": "2.0", "id": rid, "method": CHAT, "params": p}
    seps = (",", ":") if compact else (", ", ": ")
    return json.dumps(message, separators=seps, ensure_ascii=ascii_only).encode("utf-8")


def typed(msg: Incoming | None) -> Any:
    """Everything about a decoded line, with types (`1`, `1.0` and `true` differ in a repr)."""
    if msg is None:
        return None
    return (msg.kind, msg.method, repr(msg.id), repr(msg.params), repr(msg.error))


def feed(cache: PrefixCache, data: bytes) -> int | None:
    """Hand `data` to the door as the peer does; check the result against decoding the whole
    line and validating everything. Returns how many messages the door did not decode (None: it
    left the line to the ordinary decoder)."""
    got = cache.predecode(data)
    want = classify(data)
    if got is not None:
        assert typed(got) == typed(want)
    msg = got if got is not None else want
    if msg is not None and msg.kind == "request" and msg.method == CHAT:
        assert want is not None
        if isinstance(msg.params, dict):
            try:
                expected = ChatResponseParams.model_validate(want.params)
            except ValidationError as exc:
                with pytest.raises(ValidationError) as info:
                    cache.parse(msg.params)
                assert describe_validation_error(info.value) == describe_validation_error(exc)
            else:
                parsed = cache.parse(msg.params)
                assert repr(parsed.model_dump()) == repr(expected.model_dump())
    return cache.skipped if got is not None else None


# --- continuations --------------------------------------------------------------------------------


def test_a_continuation_is_read_and_validated_only_from_where_the_seen_history_ends():
    cache = PrefixCache()
    first = [*history(5), text("user", "next")]
    assert feed(cache, wire(first)) == 0
    assert cache.reused == 0
    second = [*first, text("assistant", "reply"), text("user", "more")]
    assert feed(cache, wire(second, 2)) == len(first)
    assert cache.reused == len(first)
    third = [*second, text("assistant", "again"), text("user", "last")]
    assert feed(cache, wire(third, 3)) == len(second)
    assert cache.reused == len(second)


def test_parse_vouches_for_the_very_message_objects_it_reused_and_for_nothing_else():
    cache = PrefixCache()
    first_line = wire([*history(3), text("user", "go")])
    first = cache.parse(cache.predecode(first_line).params)
    assert cache.reuses(first) is None  # nothing was reused
    more = [*history(3), text("user", "go"), text("assistant", "r"), text("user", "y")]
    second = cache.parse(cache.predecode(wire(more, 2)).params)
    assert cache.reuses(second) == (first.messages, 7)
    assert all(second.messages[i] is first.messages[i] for i in range(7))
    assert len(second.messages) == 9
    # Only the last parse's own result is vouched for.
    assert cache.reuses(first) is None
    # A request parsed from plain params (not predecoded) reuses nothing.
    plain = cache.parse(params_of(more))
    assert cache.reuses(plain) is None and cache.reuses(second) is None


def test_a_request_with_another_id_model_or_agent_reuses_the_same_history():
    cache = PrefixCache()
    seen = [*history(4), text("user", "go")]
    feed(cache, wire(seen, 1))
    again = [*seen, text("assistant", "r"), text("user", "y")]
    other = params_of(again, model="another-model", agent={"eliza": {"deterministic": True}})
    assert feed(cache, wire(again, "req-7", params=other)) == len(seen)
    msg = cache.predecode(wire(again, 99, params=other))
    assert msg is not None and msg.id == 99 and msg.params["modelId"] == "another-model"


def test_a_regenerate_reuses_all_and_an_empty_history_is_left_to_the_decoder():
    cache = PrefixCache()
    seen = [*history(3), text("user", "go")]
    feed(cache, wire(seen))
    assert feed(cache, wire(seen, 2)) == len(seen)  # the same request again: nothing new
    assert feed(cache, wire(seen[:-2], 3)) == len(seen) - 2
    assert feed(cache, wire([], 4)) is None


def test_edits_regenerations_and_other_conversations_equal_decoding_everything():
    cache = PrefixCache()
    base = [*history(4), text("user", "x")]
    variants = [
        base,
        [*base, text("assistant", "r"), text("user", "y")],
        [*base[:3], text("assistant", "edited"), *base[4:]],  # edited in the middle
        base[:-1],  # regenerate
        [*history(2), call("c1", {"n": 1})],
        [text("user", "another conversation")],
        [*base, text("assistant", "r"), text("user", "y"), text("user", "z")],
    ]
    for i, messages in enumerate(variants):
        assert feed(cache, wire(messages, i)) is not None


def test_interleaved_conversations_each_reuse_their_own_history():
    cache = PrefixCache()
    a = [text("user", "conversation a"), *history(3)]
    b = [text("user", "conversation b"), *history(3)]
    feed(cache, wire(a))
    feed(cache, wire(b))
    assert feed(cache, wire([*a, text("user", "a2")])) == len(a)
    assert feed(cache, wire([*b, text("user", "b2")])) == len(b)


# --- a changed history --------------------------------------------------------------------------


def test_one_changed_byte_inside_the_seen_history_is_read_again_from_that_message():
    cache = PrefixCache()
    seen = [*history(10), text("user", "go")]
    feed(cache, wire(seen))
    edited = copy.deepcopy(seen)
    edited[7]["content"][0]["value"] = "a3!"  # was "a3"
    edited += [text("assistant", "r"), text("user", "y")]
    assert feed(cache, wire(edited, 2)) == 7
    assert cache.reused == 7


def test_a_tampered_message_inside_the_seen_history_gets_the_plain_paths_error():
    cache = PrefixCache()
    seen = [*history(10), text("user", "go")]
    feed(cache, wire(seen))
    tampered = [*copy.deepcopy(seen), text("assistant", "r"), text("user", "y")]
    tampered[7]["content"][0] = {"type": "bogus", "value": "x"}
    assert feed(cache, wire(tampered, 2)) == 7
    msg = cache.predecode(wire(tampered, 3))
    assert msg is not None
    with pytest.raises(ValidationError) as info:
        cache.parse(msg.params)
    assert describe_validation_error(info.value).startswith("messages.7.content.0")


def test_a_malformed_new_message_gets_the_plain_paths_error_naming_its_field():
    cache = PrefixCache()
    seen = [*history(10), text("user", "go")]
    feed(cache, wire(seen))
    bad = [*seen, {"role": "assistant", "content": [{"type": "tool_call", "toolCallId": "a"}]}]
    assert feed(cache, wire(bad, 2)) == len(seen)  # `feed` compares the errors
    msg = cache.predecode(wire(bad, 3))
    assert msg is not None
    with pytest.raises(ValidationError) as info:
        cache.parse(msg.params)
    assert "messages.21.content.0.tool_call.toolName" in describe_validation_error(info.value)
    # A bad field outside the messages is reported with the message errors, as before.
    no_model = params_of(bad)
    del no_model["modelId"]
    assert feed(cache, wire(bad, 4, params=no_model)) == len(seen)


def test_tool_values_equal_in_python_but_not_on_the_wire_are_read_again():
    # 1 == 1.0 == True in Python; the history keys tell `true` from 1, and so does the door.
    cache = PrefixCache()
    feed(cache, wire([text("user", "hi"), call("c1", {"flag": 1}), text("user", "go")]))
    changed = [text("user", "hi"), call("c1", {"flag": True}), text("user", "go")]
    assert feed(cache, wire(changed, 2)) == 1
    msg = cache.predecode(wire(changed, 3))
    assert msg is not None
    parsed = cache.parse(msg.params)
    assert type(parsed.messages[1].content[0].parameters["flag"]) is bool


def test_the_same_messages_written_differently_are_read_again():
    cache = PrefixCache()
    seen = [*history(3), text("user", "café 😀")]
    feed(cache, wire(seen))
    assert feed(cache, wire(seen, 2, compact=False)) == 0  # other whitespace: other bytes
    assert feed(cache, wire(seen, 3, ascii_only=True)) == 6  # é escaped: differs from message 6
    assert feed(cache, wire([*seen, text("user", "x")], 4, ascii_only=True)) == len(seen)


# --- escapes and non-ASCII -----------------------------------------------------------------------


@pytest.mark.parametrize("ascii_only", [False, True])
def test_escapes_and_non_ascii_text_are_read_as_the_decoder_reads_them(ascii_only):
    cache = PrefixCache()
    values = ['quote " and \\ backslash', "caf\u00e9 \U0001f600", "nul \x00 \t\n", "\u00e9\u00e9"]
    if ascii_only:
        values.append("lone \ud800 half")  # UTF-8 cannot carry it: only ever written escaped
    messages = [text("user", "start")]
    feed(cache, wire(messages, 0, ascii_only=ascii_only))
    for turn, value in enumerate(values, 1):
        # Each line reuses all of the last one: the offsets past multi-byte characters were right.
        seen = len(messages)
        messages = [*messages, text("assistant", value), text("user", f"{value} {turn}")]
        assert feed(cache, wire(messages, turn, ascii_only=ascii_only)) == seen


# --- look-alike and duplicate keys ------------------------------------------------------------------


def _line_of(params_json: str, rid: int = 5, after_params: str = "") -> bytes:
    """A request line with `params` written as given (and the request's members after it)."""
    return (
        '{"jsonrpc":"2.0","id":'
        + str(rid)
        + ',"method":"'
        + CHAT
        + '","params":'
        + params_json
        + after_params
        + "}"
    ).encode()


def _seen_cache() -> tuple[PrefixCache, list[dict[str, Any]], str]:
    cache = PrefixCache()
    seen = [*history(5), text("user", "go")]
    feed(cache, wire(seen))
    continued = [*seen, text("assistant", "r"), text("user", "y")]
    return cache, continued, json.dumps(continued, separators=(",", ":"))


def test_a_look_alike_messages_key_before_the_real_one_is_not_taken():
    cache, _, seen_json = _seen_cache()
    other = json.dumps([text("user", "other")], separators=(",", ":"))
    # The key `x"messages` is written `"x\"messages"`: its bytes hold `"messages":[`.
    fake = _line_of('{"x\\"messages":' + seen_json + ',"modelId":"m","messages":' + other + "}")
    assert b'"messages":[' + seen_json[1:].encode() in fake
    assert cache.predecode(fake) is None
    assert feed(cache, fake) is None
    assert classify(fake).params["messages"] == [text("user", "other")]
    # A nested `messages` before the real one.
    nested = _line_of(
        '{"agent":{"messages":' + seen_json + '},"modelId":"m","messages":' + other + "}"
    )
    assert cache.predecode(nested) is None
    assert feed(cache, nested) is None


def test_duplicate_messages_or_params_keys_are_left_to_the_decoder_last_one_wins():
    cache, continued, seen_json = _seen_cache()
    other = json.dumps([text("user", "other")], separators=(",", ":"))
    lines = [
        _line_of('{"modelId":"m","messages":' + seen_json + ',"messages":' + other + "}"),
        _line_of('{"modelId":"m","messages":' + other + ',"messages":' + seen_json + "}"),
        _line_of(
            '{"modelId":"m","messages":'
            + seen_json
            + '},"params":{"modelId":"m","messages":'
            + other
            + "}"
        ),
    ]
    for data in lines:
        assert cache.predecode(data) is None
        assert feed(cache, data) is None
    assert classify(lines[0]).params["messages"] == [text("user", "other")]
    assert classify(lines[1]).params["messages"] == continued


def test_a_seen_history_followed_by_garbage_gets_the_decoders_parse_error():
    cache, continued, _ = _seen_cache()
    prefix = wire(continued)
    # Right after the seen messages (the comma that followed them in the line is cut too).
    cut = prefix.index(b',{"role":"assistant","content":[{"type":"text","value":"r"}')
    new = json.dumps(text("user", "new"), separators=(",", ":")).encode()
    for tail in (
        *(b",x]}}", b",,]}}", b",", b", ", b',{"role":"user"}', b",]", b",]}}}", b"x]}}"),
        *(b"x," + new + b"]}}", b"x" + new + b"]}}", new + b"]}}", b" " + new + b"]}}"),
        *(b"," + new + b"x]}}", b"," + new + b"x" + new + b"]}}", b"," + new + new + b"]}}"),
    ):
        data = prefix[:cut] + tail
        assert cache.predecode(data) is None
        msg = classify(data)
        assert msg is not None and msg.kind == "invalid"
        assert msg.error is not None and msg.error["error"]["code"] == -32700


def test_the_sentinel_text_elsewhere_in_the_line_is_no_obstacle_and_no_loophole():
    cache, continued, _ = _seen_cache()
    # The text NaN outside the messages (a model name): the other sentinel is used.
    assert feed(cache, wire(continued, 2, params=params_of(continued, model="NaN"))) == 11
    # Both sentinels' text outside the messages: left to the decoder, still right.
    both = params_of(continued, model="NaN Infinity")
    assert feed(cache, wire(continued, 3, params=both)) is None
    # A real NaN token anywhere is the decoder's parse error, never a value.
    for token_line in (
        wire([*continued, text("user", "z")], 4).replace(b'"z"', b"NaN"),
        wire(continued, 5).replace(b'"modelId":"m"', b'"modelId":NaN'),
        wire(continued, 6).replace(b'"modelId":"m"', b'"modelId":-Infinity'),
    ):
        assert cache.predecode(token_line) is None
        msg = classify(token_line)
        assert msg is not None and msg.error is not None
        assert msg.error["error"]["code"] == -32700


def test_a_new_message_nested_too_deeply_is_left_to_the_decoder():
    cache, continued, _ = _seen_cache()
    deep: Any = "bottom"
    for _ in range(300):
        deep = [deep]
    message = {**text("user", "deep"), "extra": deep}
    assert feed(cache, wire([*continued, message], 2)) is None
    assert feed(cache, wire([*continued, text("user", "fine")], 3)) == 11


# --- the tail: what follows the messages (the agent, the client's tools) -----------------------------


def tools_of(n: int, note: str = "") -> dict[str, Any]:
    """`options` as VS Code sends them: every tool with its schema, on every request."""
    schema = {"type": "object", "properties": {"path": {"type": "string", "description": "NaN?"}}}
    tools = [
        {"name": f"tool_{i}", "description": f"tool {i}{note}", "inputSchema": schema}
        for i in range(n)
    ]
    return {"tools": tools, "toolMode": "auto"}


def with_tools(messages: list[Any], options: dict[str, Any]) -> dict[str, Any]:
    return {**params_of(messages), "options": options}


def test_a_repeated_tail_is_decoded_once_alone_and_its_values_and_validation_reused():
    cache = PrefixCache()
    options = tools_of(40)
    messages = [*history(3), text("user", "go")]
    seen: list[Any] = []
    validated: list[Any] = []
    for rid in range(1, 5):
        line = wire(messages, rid, params=with_tools(messages, options))
        assert feed(cache, line) is not None  # checked against decoding the whole line
        assert cache.tail_reused is (rid > 1)
        validated.append(cache._options[1] if cache._options else None)
        seen.append(cache.predecode(line).params["options"])
        cache._pending.clear()
        messages = [*messages, text("assistant", f"a{rid}"), text("user", f"q{rid}")]
    # From the second request on: the very same decoded options, validated once.
    assert seen[1] is seen[2] is seen[3]
    assert validated[1] is validated[2] is validated[3]
    parsed = cache.parse(
        cache.predecode(wire(messages, 9, params=with_tools(messages, options))).params
    )
    assert parsed.options is validated[3]
    assert [t.name for t in parsed.options.tools] == [f"tool_{i}" for i in range(40)]


def test_a_tail_changed_by_one_byte_is_decoded_and_validated_anew():
    cache = PrefixCache()
    messages = [*history(2), text("user", "go")]
    for rid in (1, 2):
        feed(cache, wire(messages, rid, params=with_tools(messages, tools_of(3))))
    assert cache.tail_reused
    changed = with_tools(messages, tools_of(3, note="!"))
    assert feed(cache, wire(messages, 3, params=changed)) is not None
    assert not cache.tail_reused
    parsed = cache.parse(cache.predecode(wire(messages, 4, params=changed)).params)
    assert [t.description for t in parsed.options.tools] == ["tool 0!", "tool 1!", "tool 2!"]


def test_a_repeated_tool_list_reaches_the_session_as_the_list_it_had_and_a_changed_one_anew():
    """What lets a session see at a glance that the client's tools did not change: a tool list
    repeated byte for byte comes to the very `client_tools` list of the last request."""
    cache = PrefixCache()
    core = Bridge().open_connection()
    options = tools_of(40)
    options["tools"].append({"name": AGENT_ACTION_TOOL, "description": "d", "inputSchema": {}})
    changed = tools_of(40, note="!")
    messages = [*history(2), text("user", "go")]
    requests = []
    for rid, opts in enumerate([options, options, options, changed, changed], start=1):
        parsed = cache.parse(
            cache.predecode(wire(messages, rid, params=with_tools(messages, opts))).params
        )
        requests.append(core.make_request(rid, parsed.agent, parsed.messages, parsed.options.tools))
        messages = [*messages, text("assistant", f"a{rid}"), text("user", f"q{rid}")]
    first, second, third, fourth, fifth = requests
    # The second request decodes the tail anew (the first time it is seen again), then reuses it.
    assert second.client_tools is not first.client_tools
    assert third.client_tools is second.client_tools
    assert [t.name for t in third.client_tools] == [f"tool_{i}" for i in range(40)]
    assert third.has_agent_action and not fourth.has_agent_action
    assert fourth.client_tools is not third.client_tools
    assert [t.description for t in fourth.client_tools][:2] == ["tool 0!", "tool 1!"]
    assert fifth.client_tools is not fourth.client_tools  # decoded alone the first time it repeats
    assert [t.description for t in fifth.client_tools] == [
        t.description for t in fourth.client_tools
    ]
    # A list of equal content that is not the very same list is worked out again.
    again = core.make_request(9, parsed.agent, parsed.messages, list(parsed.options.tools))
    assert again.client_tools is not fifth.client_tools
    assert again.client_tools == fifth.client_tools


def test_requests_without_options_come_to_the_same_options_unset_as_validating_them_gives():
    """No `options` (or `null`) again: the default options the last such request came to stand
    in this one too (its tool list is the very list: a session sees at a glance that nothing
    changed), and `options` is unset as validating the request whole leaves it."""
    cache = PrefixCache()
    core = Bridge().open_connection()
    messages = [*history(2), text("user", "go")]
    shapes = [None, "null", None, "tools", None]
    parsed_all, requests = [], []
    for rid, shape in enumerate(shapes, start=1):
        params = params_of(messages)
        if shape == "null":
            params["options"] = None
        elif shape == "tools":
            params["options"] = tools_of(2)
        parsed = cache.parse(cache.predecode(wire(messages, rid, params=params)).params)
        expected = ChatResponseParams.model_validate(params)
        assert parsed.model_fields_set == expected.model_fields_set
        assert repr(parsed.model_dump()) == repr(expected.model_dump())
        parsed_all.append(parsed)
        requests.append(core.make_request(rid, parsed.agent, parsed.messages, parsed.options.tools))
        messages = [*messages, text("assistant", f"a{rid}"), text("user", f"q{rid}")]
    first, second, third, fourth, fifth = parsed_all
    assert second.options is first.options and third.options is first.options
    assert requests[2].client_tools is requests[0].client_tools
    assert [t.name for t in fourth.options.tools] == ["tool_0", "tool_1"]
    assert fifth.options is not first.options and fifth.options.tools == []


def test_an_agent_the_door_vouches_unchanged_is_known_by_identity_and_any_other_by_its_text(
    monkeypatch: pytest.MonkeyPatch,
):
    """`make_request(unchanged=True)`: the very agent object of the last request is that agent
    again, not serialized again; without the door's word, or for another object, the agent is
    read from its JSON text (an object changed in place is read anew)."""
    import bridge.core

    core = Bridge().open_connection()
    dumped: list[Any] = []  # the agents serialized to be looked up by their text
    real_dumps = json.dumps

    def counting_dumps(value: Any, *args: Any, **kwargs: Any) -> str:
        if not isinstance(value, dict) or "eliza" in value:
            dumped.append(value)
        return real_dumps(value, *args, **kwargs)

    monkeypatch.setattr(bridge.core.json, "dumps", counting_dumps)
    agent = {"eliza": {"deterministic": True}}
    first = core.make_request(1, agent, [], [], unchanged=True)
    again = core.make_request(2, agent, [], [], unchanged=True)
    assert dumped == [agent]  # the second time: known by identity
    assert (again.agent, again.agent_key) == (first.agent, first.agent_key)
    # Another object of the same text: read from its text, the same agent.
    other = core.make_request(3, {"eliza": {"deterministic": True}}, [], [], unchanged=True)
    assert len(dumped) == 2 and other.agent_key == first.agent_key
    # Without the door's word, the same object changed in place is read anew.
    agent = {"eliza": {"deterministic": True}}
    core.make_request(4, agent, [], [])
    agent["eliza"]["deterministic"] = False
    changed = core.make_request(5, agent, [], [])
    assert changed.agent.deterministic is False
    # An agent that is no wire value (handed over in-process) is never known by identity.
    odd = {"eliza": {"deterministic": True, "note": object()}}
    core.make_request(6, odd, [], [], unchanged=True)
    core.make_request(7, odd, [], [], unchanged=True)
    assert dumped[-2:] == [odd, odd]


@pytest.mark.parametrize(
    ("head", "tail", "after_params"),
    [
        # a key of the head written again in the tail: the tail's value wins, in the head's place
        ('{"agent":{"old":{}},"modelId":"m","messages":', ',"agent":{"eliza":{}}}', ""),
        ('{"modelId":"m","messages":', ',"modelId":"x","agent":{"eliza":{}},"modelId":"y"}', ""),
        # members of the request after `params`, and whitespace everywhere
        ('{"modelId":"m","messages":', ',"agent":{"eliza":{}}}', ',"extra":[1,{"a":null}]'),
        # ... and the request's own `id`, `method` or `jsonrpc` written again after `params`
        ('{"modelId":"m","messages":', ',"agent":{"eliza":{}}}', ',"id":"other"'),
        ('{"modelId":"m","messages":', ',"agent":{"eliza":{}}}', ',"method":"lm/cancel"'),
        ('{"modelId":"m","messages":', ',"agent":{"eliza":{}}}', ',"jsonrpc":"1.0"'),
        ('{"modelId":"m","messages":', ' ,\n "agent" : {"eliza":{}} \t}', ' , "z" : 1 '),
        # the sentinels' text inside the tail's strings
        ('{"modelId":"m","messages":', ',"agent":{"eliza":{"x":"NaN"}}}', ""),
        ('{"modelId":"NaN","messages":', ',"agent":{"eliza":{"x":"Inf"}}}', ""),
    ],
)
def test_a_repeated_tail_gives_what_decoding_the_whole_line_gives(head, tail, after_params):
    cache = PrefixCache()
    messages = [*history(2), text("user", "go")]
    for rid in range(1, 5):
        array = json.dumps(messages, separators=(",", ":"))
        line = _line_of(head + array + tail, rid, after_params)
        assert feed(cache, line) is not None
        assert cache.tail_reused is (rid > 1)
        messages = [*messages, text("assistant", f"a{rid}"), text("user", f"q{rid}")]


def test_a_known_tail_after_another_head_or_redefining_params_is_left_to_the_decoder():
    cache = PrefixCache()
    messages = [*history(2), text("user", "go")]
    array = json.dumps(messages, separators=(",", ":"))
    tail = ',"agent":{"eliza":{}}}'
    for rid in (1, 2):
        feed(cache, _line_of('{"modelId":"m","messages":' + array + tail, rid))
    assert cache.tail_reused
    # The same tail text after a `messages` nested one level deeper: not the request's messages.
    nested = _line_of('{"modelId":"m","inner":{"messages":' + array + tail, 3, "}")
    assert cache.predecode(nested) is None
    assert feed(cache, nested) is None
    # A tail that writes `params` again (the last one wins): never reused, never mistaken.
    override = ',"agent":{"eliza":{}}},"params":{"modelId":"m","messages":[]'
    for rid in (4, 5):
        line = _line_of('{"modelId":"m","messages":' + array + override, rid, "}")
        assert cache.predecode(line) is None
        assert feed(cache, line) is None
        assert classify(line).params["messages"] == []
    # A line that ends with the known tail's bytes although its array closed earlier.
    early = [text("user", "early")]
    ends_alike = _line_of('{"modelId":"m","messages":' + json.dumps(early) + ',"x":[1]' + tail, 7)
    assert ends_alike.endswith(tail.encode() + b"}")
    assert feed(cache, ends_alike) is not None
    assert classify(ends_alike).params["x"] == [1]
    assert classify(ends_alike).params["messages"] == early
    # A NaN token in a known tail's place is the decoder's parse error.
    bad = _line_of('{"modelId":"m","messages":' + array + ',"agent":NaN}', 6)
    assert cache.predecode(bad) is None
    assert classify(bad).error["error"]["code"] == -32700


# --- property: random conversations, random edits of the line --------------------------------------

_VALUES = st.text(alphabet=st.sampled_from(list('ab "\\\u00e9\U0001f600\ud800\x00\n:,[]{}NaN')))
_MESSAGES = st.one_of(
    st.builds(text, st.sampled_from(["user", "assistant"]), _VALUES),
    st.builds(
        call,
        st.sampled_from(["c1", "c2"]),
        st.dictionaries(
            st.sampled_from(["n", "f"]), st.one_of(st.integers(-3, 3), st.booleans(), _VALUES)
        ),
    ),
)
_EDIT = st.tuples(st.integers(0, 10**6), st.binary(max_size=3), st.integers(0, 3))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.lists(_MESSAGES, min_size=1, max_size=6),
    steps=st.lists(
        st.tuples(
            st.sampled_from(["extend", "truncate", "edit", "bytes"]),
            st.lists(_MESSAGES, max_size=3),
            _EDIT,
            st.booleans(),
            st.sampled_from(["m", "NaN", "Infinity", "NaN Infinity", "-"]),
            st.sampled_from([None, tools_of(2), tools_of(2, "NaN"), tools_of(3)]),
        ),
        max_size=8,
    ),
)
def test_whatever_the_line_the_door_gives_what_decoding_it_whole_gives(start, steps):
    cache = PrefixCache()
    messages = list(start)
    feed(cache, wire(messages, 0, ascii_only=True))
    for n, (kind, new, (where, data, cut), ascii_only, model, options) in enumerate(steps, 1):
        if kind == "extend":
            messages = messages + new
        elif kind == "truncate":
            messages = messages[: max(1, len(messages) - cut)]
        elif kind == "edit" and new:
            messages = [*messages[: where % len(messages)], *new]
        lone = "\ud800" in json.dumps(messages, ensure_ascii=False)
        params = params_of(messages, model)
        if options is not None:
            params["options"] = options
        line = wire(messages, n, params=params, ascii_only=ascii_only or lone)
        if kind == "bytes":  # a few bytes replaced anywhere: usually inside a seen history
            at = where % len(line)
            line = line[:at] + data + line[at + cut :]
        feed(cache, line)


# --- the endpoint ---------------------------------------------------------------------------------


def _send_line(lm: LmClient, rid: int, data: bytes) -> asyncio.Future[Response]:
    """Write one raw request line with id `rid` and get its response as `request` does."""
    lm._pending[rid] = Response(rid)
    fut: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
    lm._done[rid] = fut
    lm.send_raw(data + b"\n")
    return fut


async def test_endpoint_answers_look_alike_and_duplicate_keys_as_decoding_the_whole_line_does(
    tmp_path,
):
    lm = await LmClient.start("--cwd", str(tmp_path))
    try:
        echo = echo_agent()
        first = await lm.chat([user("one")], agent=echo)
        assert first.text == "ECHO: one"
        seen = [user("one"), first.as_assistant(), user("two")]
        second = await lm.chat(seen, agent=echo)
        assert second.text == "ECHO: two"
        history_json = json.dumps([*seen, second.as_assistant(), user("three")])
        params = '"modelId":"m","agent":' + json.dumps(echo)
        other = json.dumps([user("other")])
        fake = (
            '{"jsonrpc":"2.0","id":100,"method":"'
            + CHAT
            + '","params":{"x\\"messages":'
            + history_json
            + ","
            + params
            + ',"messages":'
            + other
            + "}}"
        )
        resp = await asyncio.wait_for(_send_line(lm, 100, fake.encode()), 30)
        assert resp.error is None and resp.text == "ECHO: other"
        dup = (
            '{"jsonrpc":"2.0","id":101,"method":"'
            + CHAT
            + '","params":{'
            + params
            + ',"messages":'
            + history_json
            + ',"messages":'
            + json.dumps([user("dup")])
            + "}}"
        )
        resp = await asyncio.wait_for(_send_line(lm, 101, dup.encode()), 30)
        assert resp.error is None and resp.text == "ECHO: dup"
        # The seen history followed by garbage: the decoder's own parse error, id null.
        garbage = (
            '{"jsonrpc":"2.0","id":102,"method":"'
            + CHAT
            + '","params":{'
            + params
            + ',"messages":'
            + history_json[:-1]
            + ",}x"
        ).encode()
        expected = classify(garbage)
        assert expected is not None and expected.error is not None
        lm.send_raw(garbage + b"\n")
        await until(lambda: expected.error in lm.unsolicited, what="the parse error")
        # And the conversation carries on from its history.
        third = await lm.chat([*seen, second.as_assistant(), user("three")], agent=echo)
        assert third.error is None and third.text == "ECHO: three"
    finally:
        await lm.close()


async def test_endpoint_rejects_a_tampered_message_inside_a_history_it_answered(lm):
    first = await lm.chat([user("Hello")])
    assert first.error is None
    good = [user("Hello"), first.as_assistant(), user("I am fine")]
    second = await lm.chat(good)
    assert second.error is None
    tampered = [user("Hello"), {"role": "assistant", "content": [{"type": "text"}]}]
    tampered += [user("I am fine"), second.as_assistant(), user("And you?")]
    resp = await lm.request(
        "lm/provideLanguageModelChatResponse",
        {"modelId": "m", "messages": tampered, "agent": {"eliza": {}}},
    )
    assert resp.error["code"] == -32602
    assert "messages.1.content.0.text.value" in resp.error["message"]
    third = await lm.chat([*good, second.as_assistant(), user("And you?")])
    assert third.error is None


async def test_endpoint_answers_an_over_long_continuation_with_its_id_and_carries_on(tmp_path):
    lm = await LmClient.start("--cwd", str(tmp_path), env={"SYMPOSIUM_MAX_MESSAGE_BYTES": "65536"})
    try:
        echo = echo_agent()
        first = await lm.chat([user("one")], agent=echo)
        seen = [user("one"), first.as_assistant(), user("x" * 70_000)]
        resp = await lm.chat(seen, agent=echo)
        assert resp.error == {"code": -32600, "message": "Invalid request: message too long"}
        again = await lm.chat([user("one"), first.as_assistant(), user("two")], agent=echo)
        assert again.error is None and again.text == "ECHO: two"
    finally:
        await lm.close()


# --- the history tracker, given the same message objects -------------------------------------------


def _route_both(steps: list[list[int]], pool: list) -> None:
    """Route each step (indices into `pool`) through a tracker given the very same objects each
    time and through one given fresh copies: the decisions must be the same."""
    from bridge.history import HistoryTracker
    from bridge.protocol import TextPart

    same, fresh = HistoryTracker(), HistoryTracker()
    for n, step in enumerate(steps):
        a = same.route("agent", [pool[i] for i in step])
        b = fresh.route("agent", [pool[i].model_copy(deep=True) for i in step])
        assert a.to_json() == b.to_json()
        for tracker, d in ((same, a), (fresh, b)):
            tracker.record_part(d.session_id, TextPart(value=f"reply {n}"))
            tracker.complete(d.session_id)


def test_the_tracker_normalizes_only_what_follows_a_prefix_of_the_same_objects():
    from bridge.protocol import Message

    pool = [
        Message.model_validate(m)
        for m in [
            *history(3),
            text("user", "x"),
            text("assistant", "reply 0"),
            text("user", "y"),
            {
                "role": "user",
                "content": [{"type": "text", "value": "a"}, {"type": "text", "value": "b"}],
            },
            text("assistant", "edited"),
            call("c1", {"n": 1}),
        ]
    ]
    _route_both(
        [
            [0, 1, 2, 3, 4, 5, 6],
            [0, 1, 2, 3, 4, 5, 6, 7, 8],  # commits the first exchange, reusing its 7 messages
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 11],  # a different reply: cancels
            [0, 1, 2, 9],  # an earlier point
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 9, 11, 3],
        ],
        pool,
    )


def test_the_tracker_reuses_each_interleaved_conversations_own_normalization():
    from bridge.history import HistoryTracker
    from bridge.protocol import Message, TextPart

    a = [Message.model_validate(m) for m in [text("user", "conversation a"), *history(3)]]
    b = [Message.model_validate(m) for m in [text("user", "conversation b"), *history(3)]]
    tracker = HistoryTracker()
    replies = {}
    for conversation in (a, b):
        d = tracker.route("agent", conversation)
        tracker.record_part(d.session_id, TextPart(value="reply"))
        tracker.complete(d.session_id)
        replies[d.session_id] = d
    for conversation in (a, b, a):
        reply = Message.model_validate(text("assistant", "reply"))
        conversation += [reply, Message.model_validate(text("user", "more"))]
        d = tracker.route("agent", conversation)
        assert d.kind.value == "commit"
        assert tracker.reused == len(conversation) - 2  # all but what this request added
        tracker.record_part(d.session_id, TextPart(value="reply"))
        tracker.complete(d.session_id)
    # And the same decisions as a tracker given fresh copies every time.
    pool = [*a, *b]
    first_a = list(range(len(a) - 4))
    first_b = list(range(len(a), len(a) + len(b) - 2))
    _route_both([first_a, first_b, list(range(len(a) - 2)), [*first_b, len(a) + len(b) - 2]], pool)


def test_the_tracker_takes_a_vouched_prefix_without_comparing_its_objects():
    from bridge.history import HistoryTracker
    from bridge.protocol import Message, TextPart

    def fresh(conversation):
        return [Message.model_validate(m) for m in conversation]

    first = fresh([*history(3), text("user", "go")])
    tracker = HistoryTracker()
    d = tracker.route("agent", first)
    tracker.record_part(d.session_id, TextPart(value="reply"))
    tracker.complete(d.session_id)
    # Equal copies, not the same objects: compared one by one, nothing is taken over...
    rest = fresh([text("assistant", "reply"), text("user", "more")])
    copies = [m.model_copy(deep=True) for m in first] + rest
    d = tracker.route("agent", copies)
    assert (d.kind.value, tracker.reused) == ("commit", 0)
    # ...but vouched for by the caller, they are taken over without a look.
    tracker = HistoryTracker()
    d = tracker.route("agent", first)
    tracker.record_part(d.session_id, TextPart(value="reply"))
    tracker.complete(d.session_id)
    d = tracker.route("agent", copies, reuses=(first, len(first)))
    assert (d.kind.value, tracker.reused) == ("commit", len(first))


def test_a_vouched_prefix_of_a_list_the_tracker_never_routed_is_compared_as_usual():
    from bridge.history import HistoryTracker
    from bridge.protocol import Message, TextPart

    first = [Message.model_validate(m) for m in [*history(2), text("user", "go")]]
    tracker = HistoryTracker()
    d = tracker.route("agent", first)
    tracker.record_part(d.session_id, TextPart(value="reply"))
    tracker.complete(d.session_id)
    stranger = [m.model_copy(deep=True) for m in first]  # never routed: its word counts for nothing
    second = [*first[:3], Message.model_validate(text("user", "other"))]
    d = tracker.route("agent", second, reuses=(stranger, len(first)))
    assert tracker.reused == 3  # what comparing the objects finds
    assert (d.kind.value, d.mismatch_index) == ("cancel", 3)


async def test_the_door_hands_the_tracker_the_prefix_its_cache_reused(tmp_path, monkeypatch):
    from bridge.config import BridgeConfig
    from bridge.core import Bridge
    from bridge.history import HistoryTracker
    from bridge.vscodelm import serve_connection

    vouched: list[Any] = []
    real = HistoryTracker.route

    def route(self, agent_key, messages, busy=None, reuses=None):
        vouched.append(None if reuses is None else (len(messages), reuses[1]))
        return real(self, agent_key, messages, busy, reuses)

    monkeypatch.setattr(HistoryTracker, "route", route)
    bridge = Bridge(BridgeConfig(cwd=str(tmp_path), idle_timeout=None))
    reader = asyncio.StreamReader()
    out = _Out()
    serving = asyncio.ensure_future(serve_connection(bridge, reader, out))

    def result_of(rid: int) -> Any:
        for line in out.data.splitlines():
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                return msg
        return None

    conversation = [*history(2), user("one")]
    try:
        for rid, prompt in ((1, None), (2, "two"), (3, "three")):
            if prompt is not None:
                conversation += [
                    text("assistant", f"ECHO: {conversation[-1]['content'][0]['value']}")
                ]
                conversation += [user(prompt)]
            params = params_of(conversation, agent=echo_agent())
            reader.feed_data(wire(conversation, rid, params=params) + b"\n")
            reply = await until(lambda rid=rid: result_of(rid), what=f"the answer to {rid}")
            assert reply == {"jsonrpc": "2.0", "id": rid, "result": {}}
        reader.feed_eof()
        await serving
    finally:
        serving.cancel()
        await bridge.close()
    assert vouched == [None, (7, 5), (9, 7)]


# --- the JSON-RPC peer's hook ---------------------------------------------------------------------


class _Out:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        return None


async def _serve(lines: list[bytes], predecode) -> list[dict[str, Any]]:
    from bridge.rpc import JsonRpcPeer

    reader = asyncio.StreamReader()
    reader.feed_data(b"".join(line + b"\n" for line in lines))
    reader.feed_eof()
    out = _Out()
    peer = JsonRpcPeer(reader, out)

    async def echo(params: Any, request_id: Any) -> Any:
        return params

    peer.on_request("echo", echo)
    peer.predecode = predecode
    await peer.serve()
    await peer.shutdown()
    return [json.loads(x) for x in out.data.splitlines()]


async def test_the_peer_takes_a_front_doors_decoding_and_falls_back_to_its_own():
    line = b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}'
    mine = Incoming("request", method="echo", id=1, params={"decoded": "by the door"})
    assert await _serve([line], lambda data: mine) == [
        {"jsonrpc": "2.0", "id": 1, "result": {"decoded": "by the door"}}
    ]

    def declines(data: bytes) -> None:
        return None

    def breaks(data: bytes) -> Incoming:
        raise RuntimeError("a bug")

    for predecode in (declines, breaks):
        assert await _serve([line], predecode) == [{"jsonrpc": "2.0", "id": 1, "result": {"a": 1}}]


# --- the agent a request names ----------------------------------------------------------------------


async def test_a_connection_parses_each_agent_once_and_one_spelled_differently_anew(
    tmp_path, monkeypatch
):
    import bridge.core as core_module
    from bridge.config import BridgeConfig
    from bridge.core import Bridge

    parsed: list[Any] = []
    real = core_module.parse_agent
    monkeypatch.setattr(core_module, "parse_agent", lambda a: parsed.append(a) or real(a))
    bridge = Bridge(BridgeConfig(cwd=str(tmp_path), idle_timeout=None))
    core = bridge.open_connection("test")
    try:
        first = core.make_request(1, {"eliza": {"deterministic": True}}, [], [])
        again = core.make_request(2, {"eliza": {"deterministic": True}}, [], [])
        assert len(parsed) == 1
        assert again.agent is first.agent and again.agent_key == first.agent_key
        # Equal in Python (1 == True), not on the wire: parsed on its own.
        core.make_request(3, {"eliza": {"deterministic": 1}}, [], [])
        assert len(parsed) == 2
        # A bad agent is refused every time, never remembered.
        for request_id in (4, 5):
            with pytest.raises(ValueError, match=r"agent\.eliza"):
                core.make_request(request_id, {"eliza": []}, [], [])
        assert len(parsed) == 4
    finally:
        await bridge.close()


def test_remembered_requests_are_bounded_by_count_and_age_oldest_first():
    def more(msgs: list) -> list:
        return [*msgs, text("assistant", "r"), text("user", "more")]

    a = [*history(3), text("user", "a")]
    b = [text("user", "b"), text("assistant", "x"), text("user", "b2")]
    c = [text("user", "c")]
    by_count = PrefixCache(size=2)
    for i, msgs in enumerate((a, b, c)):
        feed(by_count, wire(msgs, i))
    assert feed(by_count, wire(more(c), 4)) == len(c)  # kept
    assert feed(by_count, wire(more(a), 5)) == 0  # the oldest, dropped: read whole
    now = [0.0]
    by_age = PrefixCache(max_age=60, clock=lambda: now[0])
    feed(by_age, wire(a, 1))
    now[0] = 30
    feed(by_age, wire(b, 2))
    now[0] = 61
    assert feed(by_age, wire(more(a), 3)) == 0  # parsed 61 s ago: forgotten
    assert feed(by_age, wire(more(b), 4)) == len(b)  # 31 s ago: kept


# --- the list a continuation extends --------------------------------------------------------------


def test_a_continuation_extends_the_list_of_the_request_it_supersedes_when_nothing_holds_it():
    """Copying a long history's list each turn wrote a reference count on every message; the list
    of a request nobody holds any more is taken over and extended instead, with the same values
    as decoding the whole line (`feed` compares them)."""
    cache = PrefixCache()
    messages = [*history(3), text("user", "go")]
    feed(cache, wire(messages))
    for rid in range(2, 6):
        messages = [*messages, text("assistant", f"r{rid}"), text("user", f"u{rid}")]
        feed(cache, wire(messages, rid))
        assert cache.extended and cache.reused == len(messages) - 2


def test_a_request_still_held_keeps_its_messages_when_a_later_one_continues_it():
    cache = PrefixCache()
    messages = [*history(3), text("user", "go")]
    first = cache.predecode(wire(messages))
    assert first is not None and isinstance(first.params, dict)
    cache.parse(first.params)
    held = first.params["messages"]
    before = copy.deepcopy(held)
    longer = [*messages, text("assistant", "r"), text("user", "more")]
    assert feed(cache, wire(longer, 2)) == len(messages)
    assert not cache.extended  # copied: `first` still holds the list
    assert held == before and first.params["messages"] is held


def test_a_request_branching_off_an_extended_list_reads_only_the_messages_they_share():
    """An extended list begins with the messages of the request it continued: a later request
    that shares fewer of them (a failed request's retry, an edit, a regenerate) takes only those,
    with the values decoding the whole line gives (`feed` compares them)."""
    cache = PrefixCache()
    base = [*history(3), text("user", "go")]
    feed(cache, wire(base))
    seen = [*base, text("assistant", "r"), text("user", "more")]
    assert feed(cache, wire(seen, 2)) == 7 and cache.extended
    assert feed(cache, wire([*seen, {"role": "robot"}], 3)) == 9  # the plain path's error
    assert cache.extended  # it took the list over, and failed validation
    retry = [*seen, text("assistant", "r2"), text("user", "ok")]
    assert feed(cache, wire(retry, 4)) == 9 and not cache.extended
    assert feed(cache, wire([*seen[:8], text("user", "edited")], 5)) == 8
    assert feed(cache, wire([*base[:3], text("user", "branch")], 6)) == 3


@given(st.text(alphabet=" \t\n\r\x0b\x0c\xa0\u2028\u3000x{", max_size=12), st.integers(-3, 14))
def test_whitespace_is_skipped_as_the_json_decoder_skips_it(s: str, i: int) -> None:
    """JSON's whitespace is space, tab, newline and carriage return; other spaces (a vertical tab,
    a no-break space, a line separator) end the run, in text as in bytes."""
    import re

    want = re.compile(r"[ \t\n\r]*").match(s, i)
    assert skip_whitespace(s, i) == (want.end() if want else i)
    data = s.encode("utf-8")
    want_bytes = re.compile(rb"[ \t\n\r]*").match(data, i)
    assert skip_whitespace(data, i) == (want_bytes.end() if want_bytes else i)
