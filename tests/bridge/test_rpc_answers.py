"""A request's handler may answer before it returns (`JsonRpcPeer.answer_of_this_request`): the
answer goes out with the lines written just before it, in one write, and the request is still
answered exactly once, whatever the handler does afterwards."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from bridge.lines import LineFeed
from bridge.rpc import JsonRpcPeer


class RecordingWriter:
    """The peer's output: each write as the peer made it."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        return None

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for w in self.writes for line in w.splitlines()]


async def _serve(handler: Any, *, then_shutdown: bool = False) -> RecordingWriter:
    reader = asyncio.StreamReader()
    writer = RecordingWriter()
    peer = JsonRpcPeer(reader, writer)
    handled = asyncio.Event()

    async def handle(params: Any, id_: Any) -> Any:
        try:
            return await handler(peer, writer)
        finally:
            handled.set()

    peer.on_request("work", handle)
    reader.feed_data(b'{"jsonrpc":"2.0","id":7,"method":"work","params":{}}\n')
    reader.feed_eof()
    await peer.serve()
    if then_shutdown:
        await peer.shutdown()
    else:
        await asyncio.wait_for(handled.wait(), 30)
        await peer.shutdown()  # nothing left to cancel: what the handler's end wrote goes out
    return writer


def _finish_soon(peer: JsonRpcPeer, writer: RecordingWriter, result: Any) -> asyncio.Future[int]:
    """What a front door does as its stream completes: a last notification, then the answer,
    from a loop callback (not the handler's task). Resolves to the writes made by the time the
    answer was sent."""
    answer = peer.answer_of_this_request()
    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def finish() -> None:
        peer.notify("lastPart", {"text": "bye"})
        answer.send(result)
        done.set_result(len(writer.writes))

    asyncio.get_running_loop().call_soon(finish)
    return done


async def test_an_answer_sent_from_a_callback_goes_out_with_the_line_before_it_in_one_write():
    async def handler(peer: JsonRpcPeer, writer: RecordingWriter) -> Any:
        # out at once: written before the loop takes another step
        assert await _finish_soon(peer, writer, {"ok": True}) == 1
        await asyncio.sleep(0)  # the handler ends later: what it returns is not sent again
        return {"returned": True}

    writer = await _serve(handler)
    assert writer.messages() == [
        {"jsonrpc": "2.0", "method": "lastPart", "params": {"text": "bye"}},
        {"jsonrpc": "2.0", "id": 7, "result": {"ok": True}},
    ]
    assert len(writer.writes) == 1


async def test_a_handler_failing_after_it_answered_sends_no_second_answer():
    async def handler(peer: JsonRpcPeer, writer: RecordingWriter) -> Any:
        await _finish_soon(peer, writer, {"ok": True})
        raise RuntimeError("a bug after the answer")

    writer = await _serve(handler)
    answers = [m for m in writer.messages() if m.get("id") == 7]
    assert answers == [{"jsonrpc": "2.0", "id": 7, "result": {"ok": True}}]


async def test_a_handler_cancelled_at_shutdown_after_it_answered_sends_no_error():
    async def handler(peer: JsonRpcPeer, writer: RecordingWriter) -> Any:
        await _finish_soon(peer, writer, {"ok": True})
        await asyncio.Event().wait()  # still running when the endpoint shuts down

    writer = await _serve(handler, then_shutdown=True)
    answers = [m for m in writer.messages() if m.get("id") == 7]
    assert answers == [{"jsonrpc": "2.0", "id": 7, "result": {"ok": True}}]


async def test_a_handler_that_does_not_answer_early_is_answered_with_what_it_returns():
    async def handler(peer: JsonRpcPeer, writer: RecordingWriter) -> Any:
        peer.answer_of_this_request()  # taken, never used
        return {"returned": True}

    writer = await _serve(handler)
    assert writer.messages() == [{"jsonrpc": "2.0", "id": 7, "result": {"returned": True}}]


async def test_the_answer_of_a_request_is_only_had_from_its_own_handler():
    peer = JsonRpcPeer(asyncio.StreamReader(), RecordingWriter())
    try:
        peer.answer_of_this_request()
    except RuntimeError as exc:
        assert "request handler" in str(exc)
    else:
        raise AssertionError("an answer outside any request handler")


async def test_a_request_answered_early_is_no_longer_unanswered_while_its_handler_runs_on():
    """What a console switch asks before it relays the client's next line elsewhere: a client
    may send it as soon as it has the answer, before the handler has taken its last step."""
    seen: list[tuple[bool, bool]] = []

    async def handler(peer: JsonRpcPeer, writer: RecordingWriter) -> Any:
        seen.append((peer.busy, peer.unanswered("work", 7)))
        await _finish_soon(peer, writer, {"ok": True})
        seen.append((peer.busy, peer.unanswered("work", 7)))
        return None

    await _serve(handler)
    assert seen == [(True, True), (False, False)]


# --- handlers that take their first step as the request is read (`on_request_started`) --------


async def _armed_peer(
    start: Any,
) -> tuple[LineFeed, RecordingWriter, JsonRpcPeer, asyncio.Task[None]]:
    """A peer serving a `LineFeed` with `start` handling "work", waiting at the start of a line
    (armed: a whole line is handled in the read's own callback)."""
    reader = LineFeed()
    writer = RecordingWriter()
    peer = JsonRpcPeer(reader, writer)
    peer.on_request_started("work", start)
    serving = asyncio.ensure_future(peer.serve())
    while reader.take is None:
        await asyncio.sleep(0)
    return reader, writer, peer, serving


async def _stop(reader: LineFeed, peer: JsonRpcPeer, serving: asyncio.Task[None]) -> None:
    reader.feed_eof()
    await serving
    await peer.shutdown()


async def test_a_started_handler_takes_its_first_step_in_the_read_that_brings_its_request():
    """The vscodelm door routes a chat request and prompts the agent in that step: no task is
    started, and no pass of the loop goes by, before it runs."""
    steps: list[str] = []
    result: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def start(params: Any, id_: Any, answer: Any) -> Any:
        steps.append(f"started {id_} with {params}")
        return result

    reader, writer, peer, serving = await _armed_peer(start)
    reader.feed_data(b'{"jsonrpc":"2.0","id":7,"method":"work","params":{"n":1}}\n')
    assert steps == ["started 7 with {'n': 1}"]  # before this test's task took another step
    assert peer.unanswered("work", 7)
    result.set_result({"done": True})
    while peer.unanswered("work", 7):
        await asyncio.sleep(0)
    assert writer.messages() == [{"jsonrpc": "2.0", "id": 7, "result": {"done": True}}]
    await _stop(reader, peer, serving)


async def test_what_a_started_handler_raises_at_once_is_its_requests_one_answer():
    from bridge.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError

    def start(params: Any, id_: Any, answer: Any) -> Any:
        if params["bad"] == "params":
            raise RpcError(INVALID_PARAMS, "Invalid params: no")
        raise KeyError("a bug")

    reader, writer, peer, serving = await _armed_peer(start)
    reader.feed_data(
        b'{"jsonrpc":"2.0","id":1,"method":"work","params":{"bad":"params"}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"work","params":{"bad":"bug"}}\n'
    )
    assert not peer.busy  # both answered in that read's step
    await _stop(reader, peer, serving)
    errors = {m["id"]: m["error"]["code"] for m in writer.messages()}
    assert errors == {1: INVALID_PARAMS, 2: INTERNAL_ERROR}


async def test_a_started_handlers_rest_failing_or_answering_early_answers_once():
    answers: list[Any] = []
    failing: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def rest_answering_early(answer: Any) -> Any:
        answer.send({"early": True})
        return {"late": True}  # not sent: the request was answered

    def start(params: Any, id_: Any, answer: Any) -> Any:
        answers.append(answer)
        return failing if id_ == 1 else rest_answering_early(answer)

    reader, writer, peer, serving = await _armed_peer(start)
    reader.feed_data(b'{"jsonrpc":"2.0","id":1,"method":"work","params":{}}\n')
    reader.feed_data(b'{"jsonrpc":"2.0","id":2,"method":"work","params":{}}\n')
    failing.set_exception(RuntimeError("the agent broke"))
    while peer.busy:
        await asyncio.sleep(0)
    await _stop(reader, peer, serving)
    by_id = {m["id"]: m for m in writer.messages()}
    assert sorted(by_id) == [1, 2] and len(writer.messages()) == 2
    assert by_id[1]["error"]["message"] == "Internal error: RuntimeError: the agent broke"
    assert by_id[2]["result"] == {"early": True}
