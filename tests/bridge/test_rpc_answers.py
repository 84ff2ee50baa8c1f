"""A request's handler may answer before it returns (`JsonRpcPeer.answer_of_this_request`): the
answer goes out with the lines written just before it, in one write, and the request is still
answered exactly once, whatever the handler does afterwards."""

from __future__ import annotations

import asyncio
import json
from typing import Any

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
