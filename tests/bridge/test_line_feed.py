"""A JSON-RPC peer reading a `LineFeed` handles each line that arrives whole as it is read, in the
read's own callback, and keeps every line in its place: a line an interceptor may want, a line
split across reads and the tail of an over-long line all go the usual way, and nothing after them
overtakes them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from bridge.lines import LineFeed
from bridge.rpc import JsonRpcPeer
from tests.bridge.test_rpc_answers import RecordingWriter


async def until(condition: Any, what: str) -> None:
    """Wait for `condition()` (a state of the peer), failing after 30 s rather than hanging."""

    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0)

    try:
        await asyncio.wait_for(wait(), 30)
    except TimeoutError:
        raise AssertionError(f"never came: {what}") from None


def request(id_: int, **params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": "work", "params": params}).encode()


class Scenario:
    def __init__(self, limit: int = 2**16) -> None:
        self.reader = LineFeed(limit=limit)
        self.writer = RecordingWriter()
        self.peer = JsonRpcPeer(self.reader, self.writer)
        self.started: list[int] = []
        self.peer.on_request("work", self.work)
        self.serving: asyncio.Task[None] | None = None

    async def work(self, params: Any, id_: Any) -> Any:
        self.started.append(id_)
        return {"id": id_}

    async def start(self) -> None:
        self.serving = asyncio.ensure_future(self.peer.serve())
        await self.armed()

    async def armed(self) -> None:
        """The peer waits for a line with nothing buffered: the next whole line is taken as read."""
        await until(lambda: self.reader.take is not None, "the peer waiting for a whole line")

    async def finish(self) -> list[dict[str, Any]]:
        self.reader.feed_eof()
        assert self.serving is not None
        await self.serving
        await self.peer.shutdown()
        return self.writer.messages()


def answers(messages: list[dict[str, Any]]) -> list[Any]:
    return [m["id"] for m in messages if "result" in m or "error" in m]


async def test_whole_lines_are_handled_as_they_are_read_and_answered_once_in_order():
    s = Scenario()
    await s.start()
    s.reader.feed_data(request(1) + b"\n" + request(2) + b"\n" + request(3) + b"\n")
    # Handled in the read's own callback: every request is known before the loop runs again.
    assert [s.peer.unanswered("work", i) for i in (1, 2, 3)] == [True, True, True]
    assert s.reader.taken == 3
    messages = await s.finish()
    assert s.started == [1, 2, 3]
    assert sorted(answers(messages)) == [1, 2, 3]


class SlowInterceptor:
    """Wants a closer look (something to await) at lines that mention a console; takes none."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.seen: list[bytes] = []

    def declines(self, line: bytes) -> bool:
        return b"console" not in line

    async def __call__(self, line: bytes) -> bool:
        self.seen.append(line)
        await self.release.wait()
        return False


async def test_a_line_the_interceptor_may_want_is_waited_for_and_the_lines_behind_it_wait_too():
    s = Scenario()
    interceptor = SlowInterceptor()
    s.peer.intercept = interceptor
    await s.start()
    s.reader.feed_data(request(1) + b"\n" + request(2, to="console") + b"\n" + request(3) + b"\n")
    assert s.reader.taken == 1  # the first; the second is the interceptor's to look at
    await until(lambda: interceptor.seen, "the interceptor looking at the second line")
    assert not s.peer.unanswered("work", 3)  # not overtaking the line being looked at
    interceptor.release.set()
    await s.armed()  # all read: whole lines are taken as read again
    s.reader.feed_data(request(4) + b"\n")
    assert s.reader.taken == 2
    messages = await s.finish()
    assert s.started == [1, 2, 3, 4]
    assert sorted(answers(messages)) == [1, 2, 3, 4]


async def test_a_line_split_across_reads_and_the_tail_of_an_overlong_line_are_never_lines_of_their_own():
    s = Scenario(limit=200)
    await s.start()
    first, second = request(1), request(2)
    s.reader.feed_data(first[:10])  # a line begun
    s.reader.feed_data(first[10:] + b"\n" + second[:10])  # ... ended, and the next begun
    await until(lambda: s.started == [1], "the first line handled")
    s.reader.feed_data(second[10:] + b"\n")  # the rest of a line begun: not a line of its own
    await until(lambda: s.started == [1, 2], "the second line handled")
    assert s.reader.taken == 0
    await s.armed()
    overlong = request(3, text="x" * 400)
    s.reader.feed_data(overlong[:150])
    s.reader.feed_data(overlong[150:] + b"\n")  # its tail ends a line: not a line of its own
    await s.armed()
    s.reader.feed_data(request(4) + b"\n")
    assert s.reader.taken == 1
    messages = await s.finish()
    assert s.started == [1, 2, 4]
    errors = [m for m in messages if "error" in m]
    assert [(m["id"], m["error"]["code"]) for m in errors] == [(3, -32600)]  # answered once
    assert sorted(answers(messages)) == [1, 2, 3, 4]
