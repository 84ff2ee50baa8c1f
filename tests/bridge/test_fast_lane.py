"""The vscodelm door's fast lane (`bridge/vscodelm/fastlane.py`): a request that only continues
the conversation is prompted as it is read and routed after its answer — and the client, the
agent, the history and the console's events see exactly what the ordinary way gives them.

Each conversation runs twice through the real endpoint (the JSON-RPC peer, the bridge, its
history tracker) in this process, driving the real echo agent (an external process on the ACP
SDK): once as it is, once with its lane closed from the start. What each request was answered
(its parts, its result or error), what the agent was prompted (the echo agent says it back), the
routing decisions and the events must be the same; and the lane must have taken the requests it
is meant to take, so that a lane that stopped working fails here too.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from tests.support.lmclient import echo_agent
from tests.support.waiting import until

CHAT = "lm/provideLanguageModelChatResponse"
REQUEST_CANCELLED, SESSION_ERROR = -32800, -32000


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "value": text}]}


class _Out:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        return None


class Door:
    """One in-process vscodelm connection fed request lines, as the extension writes them."""

    def __init__(
        self, tmp_path: Any, *, lane: bool, compact: bool = True, watched: bool = True
    ) -> None:
        self.tmp_path = tmp_path
        self.open_lane = lane
        self.watched = watched
        self.compact = compact
        self.lane: Any = None
        self.core: Any = None
        self.peer: Any = None
        self.events: list[Any] = []
        self.out = _Out()
        self.reader = asyncio.StreamReader()
        self.messages: list[dict[str, Any]] = []
        self.options: dict[str, Any] | None = None
        self.agent = echo_agent()
        self.next_id = 0
        self.said: dict[Any, str] = {}  # the user's last text, by request id
        self.ahead: list[str | None] = []  # the requests the lane took, by that text

    async def __aenter__(self) -> Door:
        from bridge.config import BridgeConfig
        from bridge.core import Bridge
        from bridge.vscodelm import serve_connection

        self.bridge = Bridge(BridgeConfig(cwd=str(self.tmp_path), idle_timeout=None))
        if self.watched:  # (with nobody watching, a turn ahead is routed after its answer)
            self.bridge.bus.subscribe(self.events.append)

        def configure(peer: Any, core: Any) -> None:
            self.lane = peer.take_ahead.__self__
            self.lane.closed = not self.open_lane
            self.core = core
            self.peer = peer
            take = peer.take_ahead

            def recording(line: bytes) -> bool:
                took = take(line)
                if took:
                    self.ahead.append(self.said.get(json.loads(line)["id"]))
                return bool(took)

            peer.take_ahead = recording

        self.serving = asyncio.ensure_future(
            serve_connection(self.bridge, self.reader, self.out, configure=configure)
        )
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.reader.feed_eof()
        await asyncio.wait_for(self.serving, 30)
        await self.bridge.close()

    # --- the wire ------------------------------------------------------------------------------

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.data.splitlines()]

    def answer(self, rid: Any) -> dict[str, Any] | None:
        found = [m for m in self.lines() if m.get("id") == rid and "method" not in m]
        assert len(found) <= 1, f"request {rid} answered {len(found)} times"
        return found[0] if found else None

    def parts(self, rid: Any) -> list[dict[str, Any]]:
        return [
            m["params"]["part"]
            for m in self.lines()
            if m.get("method") == "lm/responsePart" and m["params"]["requestId"] == rid
        ]

    def idle(self) -> bool:
        return self.peer is not None and not self.peer._tasks

    async def send(
        self, messages: list[dict[str, Any]], rid: Any = None, *, at_once: bool = False
    ) -> Any:
        """Write one chat request; unless `at_once`, once the endpoint is done with the requests
        before it (their handlers' last steps run just after their answers), as a person's next
        message comes."""
        if not at_once:
            await until(self.idle, what="the endpoint done with its requests")
        if rid is None:
            self.next_id += 1
            rid = self.next_id
        params: dict[str, Any] = {"modelId": "m", "messages": messages, "agent": self.agent}
        if self.options is not None:
            params["options"] = self.options
        seps = (",", ":") if self.compact else (", ", ": ")
        line = json.dumps(
            {"jsonrpc": "2.0", "id": rid, "method": CHAT, "params": params},
            separators=seps,
            ensure_ascii=False,
        ).encode()
        self.reader.feed_data(line + b"\n")
        return rid

    def ask_a_long_stream(self) -> None:
        """The last reply as the client got it, then a prompt the echo agent answers slowly (400
        parts, 10 ms apart): a turn still running when the test acts."""
        self.messages += [{"role": "assistant", "content": self.parts(self.last)}]
        self.messages.append(user("stream 400 0.01"))

    def cancel(self, rid: Any) -> None:
        """`lm/cancel` for request `rid`, as VS Code sends it when Stop is pressed."""
        cancel = {"jsonrpc": "2.0", "method": "lm/cancel", "params": {"requestId": rid}}
        self.reader.feed_data(json.dumps(cancel).encode() + b"\n")

    async def answered(self, rid: Any) -> dict[str, Any]:
        return await until(lambda: self.answer(rid), what=f"the answer to {rid}")

    # --- a conversation, as VS Code keeps it -----------------------------------------------------

    async def say(self, *content: str, reply: dict[str, Any] | None = None) -> tuple[Any, Any]:
        """The next request: the conversation so far, the last reply as the client got it (or
        `reply`), and a user message of these texts. Returns what it was answered."""
        if self.messages and self.messages[-1]["role"] == "user" and self.last is not None:
            echoed = reply or {"role": "assistant", "content": self.parts(self.last)}
            self.messages.append(echoed)
        self.messages.append(
            {"role": "user", "content": [{"type": "text", "value": c} for c in content]}
        )
        rid = await self.send(list(self.messages))
        self.said[rid] = content[0]
        self.last = rid
        answer = await self.answered(rid)
        return self.outcome(rid, answer)

    last: Any = None

    def outcome(self, rid: Any, answer: dict[str, Any]) -> tuple[Any, Any]:
        result = answer.get("result", ("error", answer.get("error", {}).get("code")))
        return [p.get("value", p.get("toolName")) for p in self.parts(rid)], result

    def decisions(self) -> list[tuple[Any, ...]]:
        from bridge.events import HistoryDecided

        return [
            (e.request_id, e.decision["kind"], e.decision["session_id"], e.decision["reason"])
            for e in self.events
            if isinstance(e, HistoryDecided)
        ]

    def history(self) -> list[tuple[Any, ...]]:
        """What the history tracker holds of each live session."""
        return [(v.session_id, v.committed, v.provisional) for v in self.core.tracker.sessions()]

    def kinds(self) -> list[tuple[str, Any]]:
        """The request-level events, in order: what the console's views are built from."""
        names = ("RequestReceived", "HistoryDecided", "PartStreamed", "RequestFinished")
        return [
            (type(e).__name__, getattr(e, "request_id", None))
            for e in self.events
            if type(e).__name__ in names
        ]


# Someone watching the events (the turn is adopted after its first part), or nobody (after its
# answer).
WATCHED = pytest.mark.parametrize("watched", [True, False], ids=["watched", "unwatched"])


async def both(tmp_path: Any, script: Any, **door: Any) -> tuple[Door, Door, Any, Any]:
    """`script(door)` through an endpoint with its lane open and one with it closed."""
    results = []
    doors = []
    for lane in (True, False):
        (tmp_path / str(lane)).mkdir()
        async with Door(tmp_path / str(lane), lane=lane, **door) as d:
            results.append(await script(d))
        doors.append(d)
    return doors[0], doors[1], results[0], results[1]


# --- the lane takes what it should, and changes nothing the client or the console sees ----------


@WATCHED
async def test_a_continuing_conversation_is_answered_ahead_with_what_the_ordinary_way_gives(
    tmp_path, watched
):
    texts = [
        "hello",
        "  spaced  ",
        "ünïcödé ✓ and emoji 🎉",
        'quotes " and \\ backslashes\nand lines',
        "stream 3",
        "tab\there",
        "last",
    ]

    async def script(door: Door) -> list[Any]:
        return [await door.say(text) for text in texts]

    fast, plain, got, expected = await both(tmp_path, script, watched=watched)
    assert got == expected
    assert got[0] == (["ECHO: hello"], {})
    assert got[4] == (["c0 ", "c1 ", "c2 "], {})
    assert fast.decisions() == plain.decisions()
    assert fast.kinds() == plain.kinds()
    # Every request after the first continued the conversation: all of them went ahead.
    assert fast.ahead == texts[1:]
    assert fast.lane.taken == len(texts) - 1
    assert plain.ahead == []
    assert fast.history() == plain.history()  # the history the tracker holds


async def test_spaced_json_is_taken_as_compact_json_is(tmp_path):
    async def script(door: Door) -> list[Any]:
        return [await door.say(text) for text in ("one", "two", "three")]

    fast, plain, got, expected = await both(tmp_path, script, compact=False)
    assert got == expected == [([f"ECHO: {t}"], {}) for t in ("one", "two", "three")]
    assert fast.decisions() == plain.decisions()
    assert fast.ahead == ["two", "three"]


@WATCHED
async def test_what_is_not_a_plain_continuation_takes_the_ordinary_way(tmp_path, watched):
    async def script(door: Door) -> list[Any]:
        said = [await door.say("first"), await door.say("second")]  # the second goes ahead
        # an edited reply: the provisional exchange is cancelled, not committed
        said.append(
            await door.say("third", reply=user("not what was said") | {"role": "assistant"})
        )
        # two text parts in the user's message
        said.append(await door.say("fourth", "and more"))
        said.append(await door.say("fifth"))  # plain again: ahead
        # the client's tools change (the tail of the line differs)
        door.options = {"tools": [], "toolMode": "auto"}
        said.append(await door.say("sixth"))
        said.append(await door.say("seventh"))  # the same tail again: ahead
        # a regenerate: the last request again, without the reply
        said.append(await door.answered_again())
        said.append(await door.say("eighth"))
        # an empty text is never prompted as is
        said.append(await door.say(""))
        return said

    async def answered_again(self: Door) -> Any:
        rid = await self.send(list(self.messages))
        self.last = rid
        return self.outcome(rid, await self.answered(rid))

    Door.answered_again = answered_again  # type: ignore[attr-defined]
    try:
        fast, plain, got, expected = await both(tmp_path, script, watched=watched)
    finally:
        del Door.answered_again  # type: ignore[attr-defined]
    assert got == expected
    assert fast.decisions() == plain.decisions()
    assert fast.kinds() == plain.kinds()
    assert fast.history() == plain.history()
    if watched:
        kinds = [d[1] for d in fast.decisions()]
        assert kinds[2] == "cancel", kinds
    assert fast.ahead == ["second", "fifth", "seventh", "eighth"]


@WATCHED
async def test_the_agents_other_messages_are_handled_in_their_order(tmp_path, watched):
    """Tool calls between text chunks come through the SDK: the turn is adopted before the first
    of them, and the parts keep the agent's order."""

    async def script(door: Door) -> list[Any]:
        return [await door.say("hi"), await door.say("interleave 2"), await door.say("after")]

    fast, plain, got, expected = await both(tmp_path, script, watched=watched)
    assert got == expected
    parts, result = got[1]
    assert result == {}
    assert parts[0] == "t0 " and parts[-1] == "end", parts
    assert fast.decisions() == plain.decisions()
    assert fast.kinds() == plain.kinds()
    # (the agent's own tool calls reach the client as text parts: "after" continues as usual)
    assert fast.ahead == ["interleave 2", "after"]


async def test_a_permission_request_mid_turn_is_asked_as_it_would_be(tmp_path):
    async def script(door: Door) -> list[Any]:
        return [await door.say("hi"), await door.say("permit rm-rf"), await door.say("again")]

    fast, plain, got, expected = await both(tmp_path, script)
    assert got == expected
    assert got[1][1] == {}
    assert any("OUTCOME:" in (p or "") for p in got[1][0]), got[1]
    assert fast.decisions() == plain.decisions()
    assert fast.ahead == ["permit rm-rf", "again"]


async def test_an_agent_that_crashes_mid_turn_fails_the_request_and_the_next_starts_afresh(
    tmp_path,
):
    async def script(door: Door) -> list[Any]:
        said = [await door.say("hi"), await door.say("crash")]
        said.append(await door.say("after the crash"))
        return said

    fast, plain, got, expected = await both(tmp_path, script)
    assert got == expected
    assert got[1][1] == ("error", SESSION_ERROR)
    assert got[2][1] == {} and got[2][0][-1].endswith("after the crash"), got[2]
    assert fast.decisions() == plain.decisions()
    assert fast.ahead == ["crash"]  # the request after it starts a new session


# --- what happens while a turn runs ahead --------------------------------------------------------


async def test_a_cancel_behind_a_request_answered_ahead_cancels_its_turn(tmp_path):
    async with Door(tmp_path, lane=True) as door:
        await door.say("hi")
        door.ask_a_long_stream()
        rid = await door.send(list(door.messages))
        door.last = rid
        await until(lambda: door.parts(rid), what="the first part")
        assert door.lane.taken == 1
        door.cancel(rid)
        answer = await door.answered(rid)
        assert answer["error"]["code"] == REQUEST_CANCELLED
        assert len(door.parts(rid)) < 400  # the agent was told to stop
        # the conversation goes on, in the same session
        door.messages.pop()
        door.messages.append(user("next"))
        rid = await door.send(list(door.messages))
        assert (await door.answered(rid))["result"] == {}
        assert door.parts(rid) == [{"type": "text", "value": "ECHO: next"}]
        finished = [e for e in door.events if type(e).__name__ == "RequestFinished"]
        assert [e.outcome for e in finished] == ["complete", "cancelled", "complete"]


async def test_a_request_read_while_a_turn_runs_ahead_supersedes_it(tmp_path):
    async def script(door: Door) -> list[Any]:
        await door.say("hi")
        door.ask_a_long_stream()
        slow = await door.send(list(door.messages))
        await until(lambda: door.parts(slow), what="the first part")
        door.messages.pop()
        door.messages.append(user("instead"))
        rid = await door.send(list(door.messages), at_once=True)
        first, second = await door.answered(slow), await door.answered(rid)
        return first.get("error", {}).get("code"), second, door.parts(rid)

    fast, plain, got, expected = await both(tmp_path, script)
    assert got == expected
    assert got[0] == REQUEST_CANCELLED
    assert got[2] == [{"type": "text", "value": "ECHO: instead"}]
    assert fast.decisions() == plain.decisions()
    assert fast.lane.taken == 1


async def test_input_ending_while_a_turn_runs_ahead_answers_it_once(tmp_path):
    door = Door(tmp_path, lane=True)
    async with door:
        await door.say("hi")
        door.ask_a_long_stream()
        rid = await door.send(list(door.messages))
        await until(lambda: door.parts(rid), what="the first part")
        assert door.lane.taken == 1
    answer = door.answer(rid)
    assert answer is not None and answer["error"]["code"] == SESSION_ERROR


# --- the request's name: answered under the id it has --------------------------------------------


async def test_a_line_whose_tail_names_another_id_is_answered_under_that_id(tmp_path):
    """JSON's last duplicate key wins: a line whose members after `params` say `"id": 1` is
    request 1, whatever its head says. The lane never answers such a line itself, even when
    the line it continues said the same in its head and its tail."""
    async with Door(tmp_path, lane=True) as door:
        for rid, text in ((1, "one"), (2, "two"), (3, "three")):
            door.messages.append(user(text))
            params = {"modelId": "m", "messages": door.messages, "agent": door.agent}
            line = json.dumps(
                {"jsonrpc": "2.0", "id": rid, "method": CHAT, "params": params},
                separators=(",", ":"),
            ).encode()
            await until(door.idle, what="the request before done with")
            door.out.data = b""  # (each is request 1: the answer before was read)
            door.reader.feed_data(line[:-1] + b',"id":1}\n')
            answer = await door.answered(1)
            assert answer.get("result") == {}, answer
            assert door.parts(1) == [{"type": "text", "value": f"ECHO: {text}"}]
            assert all(m.get("id") in (None, 1) for m in door.lines())
            door.messages.append({"role": "assistant", "content": door.parts(1)})
        assert door.lane.taken == 0


async def test_a_request_that_reuses_the_last_id_is_still_answered_once_each(tmp_path):
    async with Door(tmp_path, lane=True) as door:
        await door.say("one")
        door.messages += [{"role": "assistant", "content": door.parts(door.last)}]
        door.messages.append(user("two"))
        door.out.data = b""  # (the first answer read: the id is the client's to reuse)
        rid = await door.send(list(door.messages), rid=door.last)
        answer = await door.answered(rid)
        assert answer["result"] == {}
        assert door.parts(rid) == [{"type": "text", "value": "ECHO: two"}]
        assert door.lane.taken == 1


# --- a routing that differs: the session ends, the lane closes, nothing is lost ------------------


async def test_a_routing_that_differs_from_the_prompt_ends_the_session_and_closes_the_lane(
    tmp_path, monkeypatch, caplog
):
    monkeypatch.setattr("bridge.core.adopt", lambda *args: False)
    caplog.set_level(logging.ERROR, logger="bridge.vscodelm")
    # Nobody watches the events: the turn ahead is routed after its answer, always.
    async with Door(tmp_path, lane=True, watched=False) as door:
        await door.say("one")
        ((first_session, *_),) = door.history()
        parts, result = await door.say("two")
        assert door.lane.taken == 1
        assert door.lane.closed
        assert "routing differs" in caplog.text
        # what the client was sent stands (answered once); the session that was told something
        # else is ended, and the next request starts a new one with the whole conversation
        assert (parts, result) == (["ECHO: two"], {})
        await until(lambda: first_session not in door.core.sessions, what="the session ended")
        parts, result = await door.say("three")
        assert result == {}
        assert parts and parts[-1].endswith("three"), parts
        ((session, committed, provisional),) = door.history()
        assert session != first_session  # a new session, the whole conversation replayed
        assert len(committed) + len(provisional) == 6
        assert door.lane.taken == 1  # closed: nothing more goes ahead


async def test_a_differing_routing_before_the_answer_fails_the_request(tmp_path, monkeypatch):
    monkeypatch.setattr("bridge.core.adopt", lambda *args: False)
    async with Door(tmp_path, lane=True) as door:
        await door.say("one")
        door.ask_a_long_stream()
        rid = await door.send(list(door.messages))
        await until(lambda: door.parts(rid), what="the first part")
        # a cancel makes the lane route the request now, before the agent has answered
        door.cancel(rid)
        answer = await door.answered(rid)
        assert answer["error"]["code"] == SESSION_ERROR
        assert "routing differed" in answer["error"]["message"]


# --- what the lane leaves alone --------------------------------------------------------------------


async def test_two_conversations_on_one_connection_take_the_ordinary_way(tmp_path):
    """A request can match only its own conversation's session when there is one: with two live
    sessions the lane takes nothing, and the answers are the ordinary way's."""

    async def script(door: Door) -> list[Any]:
        said = [await door.say("first of A"), await door.say("second of A")]
        a = [*door.messages, {"role": "assistant", "content": door.parts(door.last)}]
        door.messages = []
        said += [await door.say("first of B"), await door.say("second of B")]
        b = [*door.messages, {"role": "assistant", "content": door.parts(door.last)}]
        door.messages = [*a, user("third of A")]
        rid = await door.send(list(door.messages))
        said.append(door.outcome(rid, await door.answered(rid)))
        door.messages = [*b, user("third of B")]
        rid = await door.send(list(door.messages))
        said.append(door.outcome(rid, await door.answered(rid)))
        return said

    fast, plain, got, expected = await both(tmp_path, script)
    assert got == expected
    assert got[-1] == (["ECHO: third of B"], {})
    assert fast.decisions() == plain.decisions()
    assert fast.ahead == ["second of A"]  # then B started a second session: nothing more


async def test_a_continuation_read_behind_a_request_not_yet_routed_waits_its_turn(tmp_path):
    """Two lines read in one go: a regenerate of the last request (the ordinary way, its routing
    a step later) and a continuation of that last request. The second must not go ahead of the
    first's routing: both are answered as the ordinary way answers them."""

    async def script(door: Door) -> list[Any]:
        said = [await door.say("one"), await door.say("two")]
        regenerate = list(door.messages)
        reply = {"role": "assistant", "content": door.parts(door.last)}
        first = await door.send(regenerate)
        second = await door.send([*regenerate, reply, user("three")], at_once=True)
        for rid in (first, second):
            said.append(door.outcome(rid, await door.answered(rid)))
        return said

    fast, plain, got, expected = await both(tmp_path, script)
    assert got == expected
    assert fast.decisions() == plain.decisions()
    assert fast.ahead == ["two"]


async def test_a_request_routed_since_the_expectation_was_written_is_not_overlooked(tmp_path):
    """A request routed after the lane wrote down what the next one says, and then cancelled
    (so nothing new is expected): the session's exchange is no longer the one the expectation
    knew, and the next request that looks like the expected one is routed the ordinary way."""

    async def script(door: Door) -> Any:
        await door.say("one")
        await door.say("stream 100 0.005")
        reply = {"role": "assistant", "content": door.parts(door.last)}
        asked = list(door.messages)
        again = await door.send(asked)  # a regenerate: routed, the agent asked again ...
        await until(lambda: door.parts(again), what="the regenerate's first part")
        door.cancel(
            again
        )  # ... and cancelled: its partial reply is the session's provisional exchange now
        cancelled = await door.answered(again)
        rid = await door.send([*asked, reply, user("three")])
        answer = await door.answered(rid)
        return (
            cancelled["error"]["code"],
            door.outcome(rid, answer),
            [d[1] for d in door.decisions()],
        )

    fast, _, got, expected = await both(tmp_path, script)
    assert got == expected
    assert got[0] == REQUEST_CANCELLED
    assert got[2][-1] == "cancel"  # the old reply differs from the exchange the session holds
    assert fast.ahead == ["stream 100 0.005"]


async def test_a_lane_that_fails_costs_no_line(tmp_path, monkeypatch, caplog):
    """A bug in the lane is logged and the line is read the ordinary way: answered once."""
    from bridge.vscodelm.fastlane import FastLane

    def broken(self: Any, line: bytes) -> bool:
        raise RuntimeError("a bug")

    monkeypatch.setattr(FastLane, "take", broken)
    caplog.set_level(logging.ERROR, logger="bridge.rpc")
    async with Door(tmp_path, lane=True) as door:
        assert await door.say("one") == (["ECHO: one"], {})
        assert await door.say("two") == (["ECHO: two"], {})
    assert "taking a line ahead failed" in caplog.text


async def test_odd_spellings_of_the_expected_line_are_answered_as_the_ordinary_way_answers_them(
    tmp_path,
):
    """The next line as expected but for one odd spelling — an id with a leading zero, a sign,
    in quotes, or as a float; `NaN` or invalid UTF-8 in the new text — is never taken ahead:
    each gets the ordinary way's answer (an error naming no id where the line is not valid
    JSON-RPC), under its own id."""
    spellings = [
        (b'"id":5', b'"id":05'),
        (b'"id":5', b'"id":-5'),
        (b'"id":5', b'"id":"5"'),
        (b'"id":5', b'"id":5.0'),
        (b'"XX"', b"NaN"),
        (b"XX", b"\xff\xfe"),
    ]

    async def script(door: Door) -> list[Any]:
        seen = []
        for i, (plain, odd) in enumerate(spellings):
            await door.say(f"turn {i}")  # the lane now expects its continuation
            reply = {"role": "assistant", "content": door.parts(door.last)}
            messages = [*door.messages, reply, user("XX")]
            params = {"modelId": "m", "messages": messages, "agent": door.agent}
            line = json.dumps(
                {"jsonrpc": "2.0", "id": 5, "method": CHAT, "params": params},
                separators=(",", ":"),
                ensure_ascii=False,
            ).encode()
            await until(door.idle, what="the request before done with")
            if door.open_lane:  # (the lane expects the line this spelling alters)
                assert door.lane.expect is not None, i
            before = len(door.lines())
            door.reader.feed_data(line.replace(plain, odd, 1) + b"\n")

            def answers(before: int = before) -> list[dict[str, Any]]:
                return [m for m in door.lines()[before:] if "method" not in m]

            await until(answers, what="the line answered")
            await until(door.idle, what="its handling done")
            seen.append(answers())
        return seen

    fast, _, got, expected = await both(tmp_path, script)
    assert got == expected
    assert [answer[0].get("id") for answer in got] == [None, -5, "5", None, None, None]
    # the lane took only the person's own continuations, never an odd spelling
    assert None not in fast.ahead and fast.lane.taken == len(fast.ahead)
