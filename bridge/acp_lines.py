"""Newline-delimited JSON-RPC on asyncio streams for the ACP SDK's `Connection`, through its
message-level transport seam (`acp._transport.Transport`: `send`, `receive`, `close`).

Both ends the bridge drives an agent from use it: the ACP front door (`bridge.acp_proxy`, on the
client's side and the agent's) and the stateless doors' agent sessions (`bridge.sessions`). What
it saves over the SDK's own stdio transport is per message, and a streamed reply is thousands of
messages: input is read in blocks (whatever has arrived) rather than a read and a coroutine step
per line; no queue, future and drain per message sent (a message is written as it is sent, a run
of forwarded lines in one write; back-pressure only when the peer falls behind); and two hooks
that let the owner take a received message before the SDK does — `fast` sees the raw line (the
proxy forwards an update as the very line it came in), `take` the decoded message (a session
reads a streamed text chunk without the SDK's task, model and tracing span per notification).
`pace` is awaited once the fast lane took the lines of a block, before more is read (the proxy
waits there for a slow client).

Order: a taken message is handled where the SDK would have started its task, so the order against
everything else the agent sent holds: at once while every message handed to the SDK has had its
first step, else from a loop callback (`in_order`), behind them in the loop's FIFO. Lines the fast
lane took one after another are handed to `forward` together: from the one callback of the first
of them while something handed to the SDK may still be waiting for its first step in the loop, or
else at once, at the end of the block — nothing they must follow is waiting then. A streamed reply
costs a read, a write and a few loop turns per block of updates rather than per update.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from bridge.jsonrpc import _valid_id, dumps, parse
from bridge.lines import LineFeed

log = logging.getLogger(__name__)

# How the SDKs (Python, TypeScript, Rust) write a `session/update` notification's first keys.
UPDATE_LINE = b'{"jsonrpc":"2.0","method":"session/update"'
# The `limit` of a stream reader this transport reads. Input is read in blocks, never by line, so
# the limit bounds no message: it is the reader's flow control, which stops reading the pipe once
# twice this much waits unread — while its owner waits for the other side, the writer of this
# side then waits on its own full pipe.
READ_LIMIT = 64 * 1024


class Params(dict[str, Any]):
    """A message's params as received, remembering the line they came in (to forward it as is)."""

    line: bytes | None = None


class LineTransport:
    """Newline-delimited JSON on asyncio streams, for the SDK's `Connection` (its message-level
    transport seam): each message is written when it is sent — no queue, future and drain per
    message as in the SDK's stdio sender, which a proxy forwarding every streamed update pays
    twice — and a notification forwarded unchanged is written as the very line it arrived as."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        keep_lines: bool = True,
        answer_invalid: bool = False,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._keep_lines = keep_lines  # a notification's params remember their line (`Params`)
        # A peer owed JSON-RPC's errors (a client): a line that is not a valid JSON-RPC 2.0
        # message is answered here, as `bridge.jsonrpc` answers it, rather than dropped.
        self._answer_invalid = answer_invalid
        self._high_water = 1 << 20
        self._pace_water = self._high_water  # what `keep_up` lets the peer leave unread
        # Sees each received line first; True when it took the line (the streaming fast lane).
        self.fast: Callable[[bytes], bool] | None = None
        # Sees each decoded message next; True when it took the message.
        self.take: Callable[[dict[str, Any]], bool] | None = None
        # Called once everything read so far is handled or handed on, before reading more: what
        # the owner made of a block can go out now, in one write.
        self.idle: Callable[[], None] | None = None
        # Called once when the input ends (before `receive` returns None).
        self.ended: Callable[[], None] | None = None
        # Awaited after `fast` took a line, before the next is read: the owner's back-pressure.
        self.pace: Callable[[], Awaitable[None]] | None = None
        # Given, from a loop callback, the lines `fast` took in a row (else `fast` hands them on).
        self.forward: Callable[[list[bytes]], None] | None = None
        self._taken: list[bytes] | None = None  # the run of taken lines not yet forwarded
        # Input is read in blocks (whatever has arrived, up to 64 KiB) and split here: a streamed
        # reply is thousands of short lines, and a read, a wake-up and a coroutine step per line
        # cost more than the line.
        self._lines: collections.deque[bytes] = collections.deque()  # complete, without "\n"
        self._partial: list[bytes] = []  # the start of a line still arriving
        self._eof = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._settled = True  # no message handed on is still to take its first step
        self._settling: object | None = None
        self._run_now = False  # the run in `_taken` goes out at the end of this block
        # The message of the line `take` declined as it was read (`_take_line`): the next line.
        self._declined: tuple[bytes, dict[str, Any]] | None = None

    def _call_soon(self, callback: Callable[..., None], *args: Any) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        self._loop.call_soon(callback, *args)

    def _hand_on(self, line: bytes) -> None:
        # The first line of a run schedules the callback; the next ones join it until a message
        # goes to the SDK (whose task must come after them) or the callback has run. When every
        # message handed on before has had its first step (`_settled`), nothing the run must
        # follow is waiting in the loop: the run goes out from here, at the end of the block.
        if self._taken is None:
            self._taken = []
            if self._settled:
                self._run_now = True
            else:
                self._call_soon(self._forward_taken, self._taken)
        self._taken.append(line)

    def _forward_now(self) -> None:
        if self._run_now:
            self._run_now = False
            lines, self._taken = self._taken, None
            assert self.forward is not None and lines is not None
            self.forward(lines)

    def in_order(self, callback: Callable[..., None], *args: Any) -> None:
        """Run `callback(*args)` for a message `take` took, where the SDK would have started
        its task: at once when every message handed on before has had its first step, else from
        a loop callback, after them (and then what follows it waits its turn too). An exception
        of a callback run at once is logged, as the loop logs one of a callback."""
        if self._settled:
            try:
                callback(*args)
            except Exception:
                log.exception("a taken message's handler failed")
            return
        self._call_soon(callback, *args)
        self._handed_on()

    def _handed_on(self) -> None:
        """A message went to the SDK (or a taken one's handler waits in the loop): until
        whatever it starts has had its first step — two turns of the loop's FIFO from here —
        runs are forwarded, and taken messages handled, from callbacks."""
        self._settled = False
        token = self._settling = object()
        self._call_soon(self._call_soon, self._settle, token)

    def _settle(self, token: object) -> None:
        if self._settling is token:
            self._settled = True

    def _forward_taken(self, lines: list[bytes]) -> None:
        if self._taken is lines:
            self._taken = None
        assert self.forward is not None
        self.forward(lines)

    def _buffered(self) -> int:
        transport = self._writer.transport
        try:
            return transport.get_write_buffer_size() if transport is not None else 0
        except NotImplementedError:  # a transport without a buffer (in-memory streams)
            return 0

    def write_lines(self, lines: list[bytes]) -> None:
        """Write a run of lines as they were read (without their newlines) in one write, from a
        loop callback: a peer that went away is not an error here (its connection notices on its
        own)."""
        data = b"\n".join(lines) + b"\n"
        try:
            if not self._writer.is_closing():
                self._writer.write(data)
        except (ConnectionError, RuntimeError, OSError):
            pass

    async def send(self, message: dict[str, Any]) -> None:
        self._write(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")
        await self._maybe_drain()

    def write(self, data: bytes) -> None:
        """Write a message line (with its newline) now, without waiting on the peer: raises
        ConnectionError when the connection is closing."""
        self._write(data)

    async def send_line(self, line: bytes) -> None:
        self._write(line if line.endswith(b"\n") else line + b"\n")
        await self._maybe_drain()

    def _write(self, data: bytes) -> None:
        # Written at once, in the order of the calls: the transport's own buffer keeps what the
        # pipe does not take yet. (A message sent is awaited by its sender; a streamed reply's
        # many small lines go out together through `write_lines`.)
        if self._writer.is_closing():
            raise ConnectionError("Connection closed")
        try:
            self._writer.write(data)
        except (ConnectionError, RuntimeError, OSError):
            pass

    def pace_like_a_pipe(self) -> None:
        """Make `keep_up` wait whenever something written has not yet gone into the peer's pipe
        (the pipe is full), as a blocking write would, rather than only past the high-water mark.
        A relay that reads one side and writes this one then reads on only once this side took
        what it was given: its reader stops taking in (see `READ_LIMIT`), the writer on the other
        side waits on its own full pipe instead of taking the CPU of a reader that cannot keep up,
        and what arrived meanwhile is read as one block rather than a line or two per wake-up."""
        self._pace_water = 0
        transport = self._writer.transport
        try:
            transport.set_write_buffer_limits(high=0)  # drain() waits until all of it is written
        except (AttributeError, NotImplementedError):  # a transport without a buffer
            pass

    def lagging(self) -> bool:
        """The peer has more unread than `keep_up` lets pass."""
        return self._buffered() > self._pace_water

    async def keep_up(self) -> None:
        """Wait while the peer has more than the high-water mark unread (lines written from loop
        callbacks, as the fast lane writes them, are not waited for one by one)."""
        if self.lagging():
            with contextlib.suppress(ConnectionError, RuntimeError, OSError):
                await self._writer.drain()

    async def _maybe_drain(self) -> None:
        if self._buffered() > self._high_water:
            await self._writer.drain()  # back-pressure only when the peer falls behind

    def _split(self, block: bytes) -> None:
        end = block.rfind(b"\n")
        if end < 0:
            self._partial.append(block)
            return
        if self._partial:
            self._partial.append(block[:end])
            head = b"".join(self._partial)
            self._partial.clear()
        else:
            head = block[:end] if end < len(block) - 1 else block[:-1]
        self._lines.extend(head.split(b"\n"))
        if end < len(block) - 1:
            self._partial.append(block[end + 1 :])

    async def _read_more(self) -> bool:
        """Read what has arrived into `_lines`; False at the end of the input (an unterminated
        last line is then a line of its own)."""
        self._run_idle()
        while not self._lines:
            if self._eof:
                return False
            block = await self._read_block()
            if not block:
                self._eof = True
                if self._partial:
                    self._lines.append(b"".join(self._partial))
                    self._partial.clear()
                    return True
                return False
            self._split(block)
        return True

    async def _read_block(self) -> bytes:
        """What has arrived (up to 64 KiB). From a `LineFeed`, where `take` is set and no fast
        lane reads the lines, the messages `take` takes are handled as they are read, in the
        read's own callback (`_take_line`), rather than one turn of the loop later from here: this
        goes on waiting until a line arrives that is not taken, or one split across reads."""
        reader = self._reader
        if (
            not isinstance(reader, LineFeed)
            or self.take is None
            or self._answer_invalid
            or self.fast is not None
            or self._partial
        ):
            return await reader.read(1 << 16)
        reader.arm(self._take_line, self._run_idle)
        try:
            return await reader.read(1 << 16)
        finally:
            reader.disarm()

    def _take_line(self, line: bytes) -> bool:
        """A line as `receive` reads it, taken if `take` takes its message; False leaves it (and
        what follows it) to `receive`, which then hands the message to the SDK without asking
        `take` again."""
        if not line or line.isspace():
            return True
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past the decoder's depth
            return False
        if type(message) is not dict or self.take is None:  # (unset meanwhile: `receive` reads it)
            return False
        if self._offer(line, message):
            return True
        self._declined = (line, message)
        return False

    def _offer(self, line: bytes, message: dict[str, Any]) -> bool:
        """Whether `take` takes the message: asked once per message. A failing `take` takes
        nothing (logged): a bug costs its handling of this message, which goes to the SDK."""
        take = self.take
        if take is None:
            return False
        try:
            return bool(take(message))
        except Exception:
            log.exception("taking a message failed; it goes to the connection: %.200r", line)
            return False

    def _run_idle(self) -> None:
        if self.idle is not None:
            try:
                self.idle()
            except Exception:
                log.exception("the transport's idle hook failed")

    def _for_the_sdk(self, line: bytes) -> dict[str, Any] | None:
        """The message of a line, unless it is not a JSON object (dropped, or answered with its
        error: `answer_invalid`) or `take` takes it."""
        if self._answer_invalid:
            message = self._valid(line)
            if message is None or self._offer(line, message):
                return None
            return message
        declined, self._declined = self._declined, None
        if declined is not None and declined[0] == line:
            return declined[1]  # `take` declined it as it was read
        try:
            message = json.loads(line)
        except (ValueError, RecursionError) as exc:
            # Never raised to the SDK: its receive loop would end without failing what waits on it.
            log.warning("dropped a line that is not JSON (%s): %.200r", exc, line)
            return None
        if not isinstance(message, dict) or self._offer(line, message):
            return None
        return message

    def _valid(self, line: bytes) -> dict[str, Any] | None:
        """The message of a line that is a valid JSON-RPC 2.0 message (`bridge.jsonrpc.classify`,
        the vscodelm door's rules); any other line is answered with the error `classify` gives it
        (a parse error, or an invalid request: a batch, a value that is not an object, no
        `"jsonrpc": "2.0"`, no method, an id that is not a string, an integer or null) — except a
        notification whose params are neither an object nor an array, dropped unanswered."""
        message, incoming = parse(line)
        if incoming is None:  # a blank line
            return None
        if incoming.kind == "response" and not _valid_id(incoming.id):
            # A response's id names one of our requests: `true` or `1.0` would find id 1 in the
            # SDK's table of them (dict keys that compare equal). No request of ours has one.
            log.warning("dropped a response with an id no request has: %.200r", line)
            return None
        if incoming.kind != "invalid":
            return message if isinstance(message, dict) else None  # (`classify` saw an object)
        if incoming.error is not None:
            log.warning("answered a line that is not valid JSON-RPC 2.0: %.200r", line)
            with contextlib.suppress(ConnectionError):
                self._write(dumps(incoming.error))
        else:
            log.warning("dropped a notification with invalid params: %.200r", line)
        return None

    async def receive(self) -> dict[str, Any] | None:
        lines = self._lines
        while True:
            if not lines:
                try:
                    more = await self._read_more()
                except Exception:
                    self._end()
                    raise
                if not more:
                    self._end()
                    return None
            line = lines.popleft()
            if not line or line.isspace():
                continue
            if self.fast is not None and self._fast(line):
                if self.forward is not None:
                    self._hand_on(line)
                if not lines:  # once per block read
                    self._forward_now()
                    if self.pace is not None:
                        await self.pace()
                continue
            self._forward_now()
            self._taken = None  # a line after this one is forwarded after this one's message
            message = self._for_the_sdk(line)
            if message is None:
                continue
            if self.forward is not None or self.take is not None:
                self._handed_on()
            params = message.get("params")
            if self._keep_lines and "id" not in message and isinstance(params, dict):
                wrapped = Params(params)
                wrapped.line = line
                message["params"] = wrapped
            return message

    def _fast(self, line: bytes) -> bool:
        assert self.fast is not None
        try:
            return self.fast(line)
        except Exception:  # a bug must cost the fast lane this line, never the connection
            log.exception("the fast lane failed on a line; it takes the general path: %.200r", line)
            return False

    def _end(self) -> None:
        ended, self.ended = self.ended, None
        if ended is not None:
            ended()

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
