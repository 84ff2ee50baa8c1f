"""What the OpenAI front door keeps per conversation is bounded by count and age, the oldest (least
recently used) dropped first, and a request naming something dropped is handled as documented in
`bridge/openai/app.py` (Bounds): an evicted conversation space's agent sessions stop and its next
request is a new conversation with its history replayed; a retry of an evicted exchange runs
again; an evicted `previous_response_id` is a 404 like an unknown one. Behaviour, not timing: the
age bounds are driven by a clock the test sets."""

from __future__ import annotations

import openai
import pytest

from bridge.openai.convert import ReplyMemory, text_part
from bridge.openai.responses import ResponseStore, StoredResponse
from bridge.protocol import ToolCallPart
from tests.support.openai_server import ServerThread


@pytest.fixture
def small_server(settings, tmp_path):
    srv = ServerThread(str(tmp_path), max_spaces=2, max_exchanges=2).start()
    yield srv
    srv.stop()


def ask(client: openai.OpenAI, conversation: str, messages: list[dict]) -> str:
    reply = client.chat.completions.create(
        model="echo", messages=messages, extra_headers={"x-conversation-id": conversation}
    )
    return reply.choices[0].message.content or ""


def test_conversation_spaces_beyond_the_limit_are_closed_least_recently_used_first(small_server):
    door = small_server.door
    with openai.OpenAI(base_url=small_server.url, api_key="x", max_retries=0, timeout=60) as c:
        a = [{"role": "user", "content": "one"}]
        a_reply = ask(c, "a", a)
        assert a_reply == "ECHO: one"
        ask(c, "b", [{"role": "user", "content": "bee"}])
        a_core = door.connections[("local", None, "a")]
        ask(c, "a", [{"role": "user", "content": "again"}])  # a is now the more recent
        ask(c, "c", [{"role": "user", "content": "sea"}])
        # b was the least recently used: its space is closed, a and c stay
        assert list(door.connections) == [("local", None, "a"), ("local", None, "c")]
        assert door.connections[("local", None, "a")] is a_core
        ask(c, "d", [{"role": "user", "content": "dee"}])
        assert list(door.connections) == [("local", None, "c"), ("local", None, "d")]
        small_server.call(_closed(door))
        assert a_core.name not in small_server.bridge.connections  # its sessions were stopped
        # The evicted conversation goes on: a new space, the earlier turns replayed to a new
        # agent session, which the echo agent shows by answering with all of them.
        follow = [*a, {"role": "assistant", "content": a_reply}, {"role": "user", "content": "two"}]
        answer = ask(c, "a", follow)
        assert answer.endswith("two") and "one" in answer
        assert door.connections[("local", None, "a")] is not a_core
        assert len(door.connections) == 2


async def _closed(door) -> None:
    import asyncio

    if door._closing_spaces:
        await asyncio.wait(set(door._closing_spaces))


def test_an_idle_conversation_space_is_closed_after_space_idle(settings, tmp_path):
    srv = ServerThread(str(tmp_path), space_idle=0.0).start()
    try:
        door = srv.door
        with openai.OpenAI(base_url=srv.url, api_key="x", max_retries=0, timeout=60) as c:
            ask(c, "a", [{"role": "user", "content": "one"}])
            ask(c, "b", [{"role": "user", "content": "two"}])
            # every older space was idle for space_idle (0 s) when b's request came
            assert list(door.connections) == [("local", None, "b")]
    finally:
        srv.stop()


def test_a_retry_of_an_evicted_exchange_runs_again_and_of_a_kept_one_replays(small_server):
    def create(c: openai.OpenAI, key: str, text: str):
        return c.chat.completions.create(
            model="echo",
            messages=[{"role": "user", "content": text}],
            extra_headers={"Idempotency-Key": key},
        )

    with openai.OpenAI(base_url=small_server.url, api_key="x", max_retries=0, timeout=60) as c:
        first = create(c, "k1", "one")
        create(c, "k2", "two")
        third = create(c, "k3", "three")
        assert len(small_server.door.exchanges) == 2  # k1, the oldest, was dropped
        assert create(c, "k3", "three").id == third.id  # kept: the same completion, replayed
        again = create(c, "k1", "one")  # dropped: a new request, answered anew
        assert again.id != first.id
        assert again.choices[0].message.content == first.choices[0].message.content


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def stored(rid: str) -> StoredResponse:
    return StoredResponse(rid, "local", [], {"id": rid})


def test_stored_responses_are_bounded_by_count_and_age_oldest_first():
    clock = Clock()
    store = ResponseStore(limit=2, max_age=60, clock=clock)
    for rid in ("r1", "r2", "r3"):
        store.put(stored(rid))
        clock.now += 1
    assert store.get("r1", "local") is None and len(store) == 2
    assert store.get("r2", "local") is not None
    clock.now += 58.5  # r2 stored 60.5 s ago, r3 59.5 s ago
    assert store.get("r2", "local") is None
    assert store.get("r3", "local") is not None
    clock.now += 1
    assert store.get("r3", "local") is None and len(store) == 0


def test_an_evicted_previous_response_id_is_answered_as_not_found(settings, tmp_path):
    srv = ServerThread(str(tmp_path)).start()
    try:
        srv.door.responses.limit = 1
        with openai.OpenAI(base_url=srv.url, api_key="x", max_retries=0, timeout=60) as c:
            first = c.responses.create(model="echo", input="one")
            second = c.responses.create(model="echo", input="two")
            with pytest.raises(openai.NotFoundError) as caught:
                c.responses.create(model="echo", input="more", previous_response_id=first.id)
            assert caught.value.status_code == 404 and first.id in str(caught.value)
            kept = c.responses.create(model="echo", input="more", previous_response_id=second.id)
            assert "more" in kept.output_text
    finally:
        srv.stop()


def test_remembered_reply_shapes_are_bounded_by_count_and_age_oldest_first():
    clock = Clock()
    memory = ReplyMemory(limit=2, max_age=60, clock=clock)

    def reply(n: int) -> tuple[list, ToolCallPart]:
        call = ToolCallPart(toolCallId=f"c{n}", toolName="t", parameters={})
        return [text_part("before"), call, text_part(f"after {n}")], call

    for n in (1, 2, 3):
        parts, _ = reply(n)
        memory.remember_reply(parts)
        clock.now += 1
    assert memory.restore_reply("beforeafter 1", [reply(1)[1]]) is None  # the oldest, dropped
    assert memory.restore_reply("beforeafter 2", [reply(2)[1]]) is not None
    memory.remember_legacy("f", "{}", "call-1")
    assert memory.legacy_id("f", "{}") == "call-1"
    clock.now += 61
    assert memory.restore_reply("beforeafter 3", [reply(3)[1]]) is None  # too old
    assert memory.legacy_id("f", "{}") != "call-1"  # too old: the id derived from the call
