"""The vscodelm door validates only what a request adds to a history it has seen (bridge.prefix_cache):
same results and same errors as validating everything, and nothing changed inside the seen prefix
escapes validation."""

from __future__ import annotations

import copy
import json

import pytest
from pydantic import ValidationError

from bridge.prefix_cache import PrefixCache
from bridge.protocol import ChatResponseParams, describe_validation_error
from tests.support.lmclient import user


def text(role: str, value: str) -> dict:
    return {"role": role, "content": [{"type": "text", "value": value}]}


def call(cid: str, params: object) -> dict:
    part = {"type": "tool_call", "toolCallId": cid, "toolName": "t", "parameters": params}
    return {"role": "assistant", "content": [part]}


def history(n: int) -> list[dict]:
    out = []
    for i in range(n):
        out.append(text("user", f"q{i}"))
        out.append(text("assistant", f"a{i}"))
    return out


def params(messages: list[dict]) -> dict:
    # Decoded afresh, as every request is: nothing is shared with an earlier request's objects.
    return json.loads(json.dumps({"modelId": "m", "messages": messages, "agent": {"eliza": {}}}))


def error_of(p: dict, parse) -> str:
    with pytest.raises(ValidationError) as info:
        parse(p)
    return describe_validation_error(info.value)


def test_a_continuation_reuses_the_seen_prefix_and_validates_only_the_new_messages():
    cache = PrefixCache()
    first = [*history(5), text("user", "next")]
    cache.parse(params(first))
    assert cache.reused == 0
    second = [*first, text("assistant", "reply"), text("user", "more")]
    parsed = cache.parse(params(second))
    assert cache.reused == len(first)
    assert parsed == ChatResponseParams.model_validate(params(second))


def test_the_result_equals_plain_validation_for_edits_regenerations_and_other_conversations():
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
    for messages in variants:
        assert cache.parse(params(messages)) == ChatResponseParams.model_validate(params(messages))


def test_a_tampered_message_inside_the_seen_prefix_is_validated_and_rejected():
    cache = PrefixCache()
    seen = [*history(10), text("user", "go")]
    cache.parse(params(seen))
    tampered = [*copy.deepcopy(seen), text("assistant", "r"), text("user", "y")]
    tampered[7]["content"][0] = {"type": "bogus", "value": "x"}
    message = error_of(params(tampered), cache.parse)
    assert message.startswith("messages.7.content.0")
    assert message == error_of(params(tampered), ChatResponseParams.model_validate)


def test_a_malformed_new_message_gets_the_plain_paths_error_naming_its_field():
    cache = PrefixCache()
    seen = [*history(10), text("user", "go")]
    cache.parse(params(seen))
    bad = [*seen, {"role": "assistant", "content": [{"type": "tool_call", "toolCallId": "a"}]}]
    message = error_of(params(bad), cache.parse)
    assert "messages.21.content.0.tool_call.toolName" in message
    assert message == error_of(params(bad), ChatResponseParams.model_validate)
    # A bad field outside the messages is reported with the message errors, as before.
    both = params(bad)
    del both["modelId"]
    assert error_of(both, cache.parse) == error_of(both, ChatResponseParams.model_validate)


def test_tool_values_equal_in_python_but_not_on_the_wire_are_not_reused():
    # 1 == 1.0 == True in Python; the history keys tell `true` from 1, so must the cache.
    cache = PrefixCache()
    seen = [text("user", "hi"), call("c1", {"flag": 1}), text("user", "go")]
    cache.parse(params(seen))
    changed = [text("user", "hi"), call("c1", {"flag": True}), text("user", "go")]
    parsed = cache.parse(params(changed))
    assert cache.reused == 1
    assert parsed.messages[1].content[0].parameters == {"flag": True}
    assert type(parsed.messages[1].content[0].parameters["flag"]) is bool


def test_a_message_with_an_extra_field_is_validated_again_and_still_accepted():
    cache = PrefixCache()
    seen = history(3)
    cache.parse(params(seen))
    extra = copy.deepcopy(seen)
    extra[2]["note"] = "ignored"
    assert cache.parse(params(extra)) == ChatResponseParams.model_validate(params(extra))
    assert cache.reused == 2


def test_interleaved_conversations_each_reuse_their_own_prefix():
    cache = PrefixCache()
    a = [text("user", "conversation a"), *history(3)]
    b = [text("user", "conversation b"), *history(3)]
    cache.parse(params(a))
    cache.parse(params(b))
    cache.parse(params([*a, text("user", "a2")]))
    assert cache.reused == len(a)
    cache.parse(params([*b, text("user", "b2")]))
    assert cache.reused == len(b)


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
