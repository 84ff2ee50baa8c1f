"""The line transport under the SDK's connection (`bridge/acp_lines.py`): its hooks, on real
asyncio streams (a fed `StreamReader` in, an OS pipe out)."""

from __future__ import annotations

import asyncio
import json
import os

from bridge.acp_lines import UPDATE_LINE, LineTransport
from bridge.lines import LineFeed
from tests.support.waiting import until


def update(n: int) -> bytes:
    return UPDATE_LINE + b',"params":{"n":%d}}\n' % n


async def pipe_writer() -> tuple[asyncio.StreamWriter, int]:
    read_fd, write_fd = os.pipe()
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop), os.fdopen(write_fd, "wb")
    )
    return asyncio.StreamWriter(transport, protocol, None, loop), read_fd


async def test_the_fast_lane_forwards_and_paces_each_block_before_reading_more():
    """What arrived together is read as one block: its lines are taken, forwarded in one run
    (from the transport itself, nothing being handed on before them), then the owner's `pace`
    runs — before anything more is read, so a client that falls behind holds the agent's
    reading back."""
    reader = asyncio.StreamReader()
    reader.feed_data(update(0) + update(1))
    writer, read_fd = await pipe_writer()
    transport = LineTransport(reader, writer)
    seen: list[object] = []

    def fast(line: bytes) -> bool:
        seen.append(f"line {json.loads(line)['params']['n']}")
        return True

    def forward(lines: list[bytes]) -> None:
        seen.append([json.loads(line)["params"]["n"] for line in lines])

    async def pace() -> None:
        seen.append("pace")
        if seen.count("pace") == 1:  # the next block arrives only now
            reader.feed_data(update(2))
            reader.feed_eof()

    transport.fast = fast
    transport.forward = forward
    transport.pace = pace
    assert await transport.receive() is None  # all three taken, then the end of the input
    assert seen == ["line 0", "line 1", [0, 1], "pace", "line 2", [2], "pace"]
    await transport.close()
    os.close(read_fd)


async def test_take_sees_the_decoded_message_and_what_it_leaves_reaches_the_connection():
    reader = asyncio.StreamReader()
    reader.feed_data(update(1) + b'{"jsonrpc":"2.0","id":7,"result":{}}\n' + update(2))
    reader.feed_eof()
    writer, read_fd = await pipe_writer()
    transport = LineTransport(reader, writer, keep_lines=False)
    taken: list[int] = []

    def take(message: dict) -> bool:
        if message.get("method") == "session/update":
            taken.append(message["params"]["n"])
            return True
        return False

    transport.take = take
    assert await transport.receive() == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert taken == [1]
    assert await transport.receive() is None
    assert taken == [1, 2]
    await transport.close()
    os.close(read_fd)


async def test_a_run_of_taken_lines_is_forwarded_together_and_never_past_a_message_after_it():
    """Lines the fast lane takes one after another reach `forward` together, from one loop
    callback; a message handed to the connection ends the run, so an update the agent sent after
    a request is forwarded after the connection's task for that request has started."""
    request = b'{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{}}\n'
    reader = asyncio.StreamReader()
    reader.feed_data(update(1) + update(2) + request + update(3))
    reader.feed_eof()
    writer, read_fd = await pipe_writer()
    transport = LineTransport(reader, writer)
    seen: list[object] = []
    last = asyncio.Event()

    def forward(lines: list[bytes]) -> None:
        numbers = [json.loads(line)["params"]["n"] for line in lines]
        seen.append(numbers)
        if 3 in numbers:
            last.set()

    transport.fast = lambda line: line.startswith(UPDATE_LINE)
    transport.forward = forward
    message = await transport.receive()
    assert message is not None and message["id"] == 7
    # Where the SDK's connection starts its task for the request: a loop callback.
    asyncio.get_running_loop().call_soon(seen.append, "request 7")
    assert await transport.receive() is None
    await asyncio.wait_for(last.wait(), 10)
    assert seen == [[1, 2], "request 7", [3]]
    await transport.close()
    os.close(read_fd)


async def test_a_message_longer_than_any_read_and_an_unterminated_last_line_arrive_whole():
    """A message of several megabytes (past the reader's limit, arriving in many pieces) and a
    last line without a newline are each handed on whole, in order."""
    big = {"jsonrpc": "2.0", "id": 1, "result": {"text": "x" * (3 << 20)}}
    reader = asyncio.StreamReader()
    payload = json.dumps(big).encode() + b"\n" + b'{"jsonrpc":"2.0","id":2,"result":{}}'
    for start in range(0, len(payload), 100_000):  # arriving in pieces, as from a pipe
        reader.feed_data(payload[start : start + 100_000])
    reader.feed_eof()
    writer, read_fd = await pipe_writer()
    transport = LineTransport(reader, writer, keep_lines=False)
    first = await transport.receive()
    assert first is not None and len(first["result"]["text"]) == 3 << 20
    assert await transport.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert await transport.receive() is None
    await transport.close()
    os.close(read_fd)


async def test_paced_like_a_pipe_the_fast_lane_waits_until_the_peer_took_everything():
    """With `pace_like_a_pipe`, `keep_up` waits as a blocking write would: while anything written
    is still short of the peer's pipe (the pipe is full), and no longer once the peer read it —
    the agent is then read again in one block rather than a line at a time."""
    writer, read_fd = await pipe_writer()
    transport = LineTransport(asyncio.StreamReader(), writer)
    transport.pace_like_a_pipe()
    transport.write_lines([b"x" * 100_000, b"y" * 100_000])  # more than a pipe holds
    assert transport.lagging()
    waiting = asyncio.ensure_future(transport.keep_up())
    for _ in range(20):
        await asyncio.sleep(0)
    assert not waiting.done()  # the peer has read nothing yet

    received = bytearray()

    def read_all() -> None:
        while len(received) < 200_002:
            received.extend(os.read(read_fd, 1 << 16))

    await asyncio.gather(asyncio.to_thread(read_all), waiting)
    assert not transport.lagging()
    assert bytes(received) == b"x" * 100_000 + b"\n" + b"y" * 100_000 + b"\n"
    await transport.close()
    os.close(read_fd)


async def test_by_default_a_full_pipe_alone_does_not_hold_the_fast_lane():
    """Without `pace_like_a_pipe`, `keep_up` lets up to the high-water mark (1 MiB) wait
    unread: a full pipe with a little more buffered does not stop the lane."""
    writer, read_fd = await pipe_writer()
    transport = LineTransport(asyncio.StreamReader(), writer)
    transport.write_lines([b"x" * 200_000])
    assert not transport.lagging()
    await transport.keep_up()  # returns at once
    writer.transport.abort()
    os.close(read_fd)


async def test_a_taken_message_is_handled_at_once_unless_one_handed_on_still_waits_to_start():
    """`in_order` runs a taken message's handler where the SDK would have started its task: at
    once while nothing handed to the connection waits for its first step, and from loop
    callbacks after a message handed on (the connection's task for it first) — the chunks that
    follow a request never overtake it, and those before it never wait for a loop turn."""
    request = b'{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{}}\n'
    reader = asyncio.StreamReader()
    reader.feed_data(update(1) + request + update(2) + update(3))
    reader.feed_eof()
    writer, read_fd = await pipe_writer()
    transport = LineTransport(reader, writer, keep_lines=False)
    seen: list[object] = []

    def take(message: dict) -> bool:
        if message.get("method") != "session/update":
            return False
        transport.in_order(seen.append, message["params"]["n"])
        return True

    transport.take = take
    message = await transport.receive()
    assert message is not None and message["id"] == 7
    assert seen == [1]  # handled before the request was even handed on
    # Where the SDK's connection starts its task for the request: a loop callback.
    asyncio.get_running_loop().call_soon(seen.append, "request 7")
    assert await transport.receive() is None
    assert seen == [1]  # 2 and 3 wait their turn behind the request's task
    for _ in range(3):
        await asyncio.sleep(0)
    assert seen == [1, "request 7", 2, 3]
    # Once that settled, a taken message is handled at once again.
    for _ in range(3):
        await asyncio.sleep(0)
    transport.in_order(seen.append, 4)
    assert seen[-1] == 4
    await transport.close()
    os.close(read_fd)


async def test_a_taken_message_whose_handler_fails_is_logged_and_reading_goes_on(caplog):
    reader = asyncio.StreamReader()
    reader.feed_data(update(1) + update(2))
    reader.feed_eof()
    writer, read_fd = await pipe_writer()
    transport = LineTransport(reader, writer, keep_lines=False)
    seen: list[int] = []

    def handle(n: int) -> None:
        if n == 1:
            raise ValueError("broken handler")
        seen.append(n)

    def take(message: dict) -> bool:
        transport.in_order(handle, message["params"]["n"])
        return True

    transport.take = take
    assert await transport.receive() is None
    assert seen == [2]
    assert "broken handler" in caplog.text
    await transport.close()
    os.close(read_fd)


async def test_a_message_sent_is_in_the_peers_pipe_before_send_returns():
    """No write waits for a later turn of the loop: a prompt goes to the agent from the step
    that sends it, and messages go out in the order they were sent."""
    writer, read_fd = await pipe_writer()
    transport = LineTransport(asyncio.StreamReader(), writer)
    os.set_blocking(read_fd, False)
    await transport.send({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {}})
    transport.write_lines([update(1).rstrip(b"\n")])
    await transport.send_line(b'{"jsonrpc":"2.0","id":2,"result":{}}')
    assert os.read(read_fd, 1 << 16).splitlines() == [
        b'{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}',
        update(1).rstrip(b"\n"),
        b'{"jsonrpc":"2.0","id":2,"result":{}}',
    ]
    await transport.close()
    os.close(read_fd)


async def test_idle_runs_once_everything_read_is_handled_and_before_anything_more_is_read():
    """`idle` is the owner's moment to write what it made of a block (a session's parts go to
    the client then, in one write, rather than a turn of the loop later): once per block, after
    its last message was taken, before the next read."""
    reader = asyncio.StreamReader()
    reader.feed_data(update(1) + update(2))
    writer, read_fd = await pipe_writer()
    transport = LineTransport(reader, writer, keep_lines=False)
    seen: list[object] = []

    def take(message: dict) -> bool:
        seen.append(message["params"]["n"])
        return True

    def idle() -> None:
        seen.append("idle")
        if seen.count("idle") == 2:  # the next block arrives only now
            reader.feed_data(update(3))
            reader.feed_eof()

    transport.take = take
    transport.idle = idle
    assert await transport.receive() is None
    assert seen == ["idle", 1, 2, "idle", 3, "idle"]
    await transport.close()
    os.close(read_fd)


def answer(rid: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}\n' % rid


async def started_receive(transport: LineTransport) -> asyncio.Task:
    """`receive` in a task of its own, as the SDK's receive loop runs it, waiting for input."""
    task = asyncio.create_task(transport.receive())
    while not transport._reader._waiter:  # type: ignore[attr-defined]
        await asyncio.sleep(0)
    return task


def taking_all(seen: list[object]):
    """A session's `take` that takes every message, noting each: an update's `n`, an answer's id."""

    def take(message: dict) -> bool:
        seen.append(message["params"]["n"] if "method" in message else f"answer {message['id']}")
        return True

    return take


async def test_from_a_line_feed_taken_messages_are_handled_in_the_reads_own_callback():
    """An agent's output read by a `LineFeed`: a read whose messages the session takes (a text
    chunk, the prompt's answer) is handled within the read's callback — taken, then `idle` once
    for the block — while the SDK's receive loop goes on waiting, without a turn of the loop."""
    reader = LineFeed()
    writer, read_fd = await pipe_writer()
    transport = LineTransport(reader, writer, keep_lines=False)
    seen: list[object] = []
    transport.take = taking_all(seen)
    transport.idle = lambda: seen.append("idle")
    receiving = await started_receive(transport)
    seen.clear()  # (`receive` ran `idle` as it started waiting)
    reader.feed_data(update(1) + answer(5))  # as the pipe transport's read callback feeds it
    assert seen == [1, "answer 5", "idle"]
    reader.feed_data(update(2))
    assert seen == [1, "answer 5", "idle", 2, "idle"]
    assert reader.taken == 3 and not receiving.done()
    reader.feed_eof()
    assert await receiving is None
    await transport.close()
    os.close(read_fd)


async def test_a_message_not_taken_reaches_the_connection_decoded_once_and_ahead_of_those_after_it():
    """The first line `take` declines goes to the SDK through `receive`, as read (`take` is not
    asked again), and the lines behind it are read after it, in order — the SDK's message first,
    then the chunk behind it; a line split across reads is read by `receive` too."""
    reader = LineFeed()
    writer, read_fd = await pipe_writer()
    transport = LineTransport(reader, writer, keep_lines=False)
    asked: list[object] = []

    def take(message: dict) -> bool:
        asked.append(message.get("method") or message.get("id"))
        return "method" in message and message["method"] == "session/update"

    transport.take = take
    receiving = await started_receive(transport)
    request = b'{"jsonrpc":"2.0","id":3,"method":"session/request_permission","params":{}}\n'
    reader.feed_data(update(1) + request + update(2))
    assert asked == ["session/update", "session/request_permission"]
    assert await receiving == json.loads(request)
    assert asked == ["session/update", "session/request_permission"]  # the chunk waits behind it
    receiving = await started_receive(transport)
    assert asked == ["session/update", "session/request_permission", "session/update"]
    line = answer(9)
    reader.feed_data(line[:10])  # a read that does not end a line: buffered for `receive`
    assert asked[3:] == []
    reader.feed_data(line[10:])
    assert await receiving == json.loads(line)
    assert asked[3:] == [9]
    reader.feed_eof()
    assert await transport.receive() is None
    await transport.close()
    os.close(read_fd)


def nested(n: int) -> bytes:
    """A notification nested `n` deep: past the JSON decoder's depth from ~1,000."""
    return UPDATE_LINE + b',"params":' + b"[" * n + b"]" * n + b"}\n"


async def test_a_line_no_decoder_can_read_costs_that_line_and_reading_goes_on(caplog):
    """A line nested past the decoder's depth, short (in the read with the lines around it) or
    longer than a read: dropped with a warning, never raised to the SDK's receive loop (which
    would end without failing what waits on it); the lines around it are taken in order."""
    reader = LineFeed()
    writer, read_fd = await pipe_writer()
    transport = LineTransport(reader, writer, keep_lines=False)
    seen: list[object] = []
    transport.take = taking_all(seen)
    receiving = await started_receive(transport)
    reader.feed_data(update(1) + nested(3_000) + update(2))
    await until(lambda: seen == [1, 2])
    reader.feed_data(nested(100_000)[:70_000])
    reader.feed_data(nested(100_000)[70_000:] + answer(5))
    await until(lambda: seen == [1, 2, "answer 5"])
    assert not receiving.done(), "the receive loop waits for more"
    dropped = [r for r in caplog.records if "dropped a line that is not JSON" in r.getMessage()]
    assert len(dropped) == 2 and all("recursion" in r.getMessage() for r in dropped)
    reader.feed_eof()
    assert await receiving is None
    await transport.close()
    os.close(read_fd)


async def test_a_take_or_fast_lane_that_fails_hands_its_line_to_the_connection(caplog):
    """A bug in the owner's hooks costs their handling of one line: the message goes to the SDK
    as it would without them, the failure is logged, and the lines after it are read as usual."""
    reader = LineFeed()
    writer, read_fd = await pipe_writer()
    transport = LineTransport(reader, writer, keep_lines=False)

    def take(message: dict) -> bool:
        if message.get("id") == 7:
            raise RuntimeError("a bug in take")
        return False

    def fast(line: bytes) -> bool:
        if b'"n":3' in line:
            raise RuntimeError("a bug in the fast lane")
        return False

    asked: list[object] = []
    transport.take = lambda message: asked.append(message.get("id")) or take(message)
    receiving = await started_receive(transport)  # read in the read's callback, then by `receive`
    reader.feed_data(answer(7))
    assert await receiving == json.loads(answer(7))
    assert asked == [7], "take is asked once per message, failing or not"
    transport.fast = fast
    reader.feed_data(answer(7) + update(3) + update(4))
    assert await transport.receive() == json.loads(answer(7))
    assert await transport.receive() == json.loads(update(3))
    assert await transport.receive() == json.loads(update(4))
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "taking a message failed" in logged and "the fast lane failed" in logged
    reader.feed_eof()
    assert await transport.receive() is None
    await transport.close()
    os.close(read_fd)


async def test_a_clients_response_with_an_id_no_request_has_is_not_handed_on():
    """`true` and `1.0` equal 1 as dict keys, where the SDK finds the request an answer settles:
    on the client's side (`answer_invalid`) such a response is dropped; one with id 1 is not."""
    reader = asyncio.StreamReader()
    for rid in ("true", "1.0", "1e0", "1"):
        reader.feed_data(
            b'{"jsonrpc":"2.0","id":%s,"result":{"outcome":"allowed"}}\n' % rid.encode()
        )
    reader.feed_eof()
    writer, read_fd = await pipe_writer()
    transport = LineTransport(reader, writer, keep_lines=False, answer_invalid=True)
    assert await transport.receive() == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"outcome": "allowed"},
    }
    assert await transport.receive() is None
    await transport.close()
    os.close(read_fd)
