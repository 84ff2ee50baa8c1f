"""The event bus decides itself whether an event is built: publishers hand it a function that
builds one, called only when someone listens."""

from __future__ import annotations

from typing import Any

import pytest

from bridge import events as ev
from bridge.config import BridgeConfig
from bridge.core import Bridge
from bridge.protocol import Message
from bridge.sessions import ResponseStream

ELIZA = {"eliza": {"deterministic": True}}


def test_an_event_nobody_listens_for_is_never_built_and_one_listened_for_is_built_once():
    bus = ev.EventBus()
    built: list[ev.Event] = []

    def build() -> ev.Event:
        event = ev.SessionEnded(connection="c", session_id="s", reason="r")
        built.append(event)
        return event

    bus.publish(build)
    assert built == []

    first: list[ev.Event] = []
    second: list[ev.Event] = []
    unsubscribe = bus.subscribe(first.append)
    bus.subscribe(second.append)
    bus.publish(build)
    assert len(built) == 1 and first == built and second == built

    unsubscribe()
    bus.publish(build)
    assert len(built) == 2 and first == built[:1] and second == built


def test_a_built_event_is_delivered_as_it_is_and_a_broken_subscriber_stops_nobody(caplog):
    bus = ev.EventBus()
    seen: list[ev.Event] = []

    def broken(event: ev.Event) -> None:
        raise RuntimeError("subscriber bug")

    bus.subscribe(broken)
    bus.subscribe(seen.append)
    event = ev.SessionEnded(connection="c", session_id="s", reason="r")
    bus.publish(event)
    assert seen == [event]
    assert "event subscriber failed on session_ended" in caplog.text


@pytest.fixture
def built(monkeypatch) -> list[str]:
    """The type of every event the bridge builds (each event class counts its instances)."""
    names: list[str] = []
    for cls in ev.EVENT_TYPES.values():
        original = cls.__init__

        def counting(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> None:
            names.append(type(self).model_fields["type"].default)
            _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", counting)
    return names


async def test_a_turn_nobody_watches_builds_no_event_and_a_watched_one_publishes_them(
    tmp_path, built
):
    bridge = Bridge(BridgeConfig(cwd=str(tmp_path), idle_timeout=None))
    core = bridge.open_connection("test")
    hello = Message.model_validate({"role": "user", "content": [{"type": "text", "value": "hi"}]})

    async def turn(request_id: int, messages: list[Message]) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        await core.chat(
            core.make_request(request_id, ELIZA, messages, []),
            ResponseStream(request_id, parts.append),
        )
        return parts

    try:
        parts = await turn(1, [hello])
        assert parts, "Eliza answered"
        assert built == []

        seen: list[ev.Event] = []
        bridge.bus.subscribe(seen.append)
        reply = Message.model_validate({"role": "assistant", "content": parts})
        again = Message.model_validate(
            {"role": "user", "content": [{"type": "text", "value": "and again"}]}
        )
        await turn(2, [hello, reply, again])
        kinds = [e.type for e in seen]
        assert kinds[0] == "history_decision" and kinds[-1] == "request_finished"
        assert "part_streamed" in kinds
        assert built == kinds  # each built once, and only for the listener
    finally:
        await bridge.close()
