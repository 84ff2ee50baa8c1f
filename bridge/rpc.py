"""Newline-delimited JSON-RPC 2.0 peer on asyncio byte streams (stdio, unix sockets).

Requests are handled concurrently, each in its own task; every request gets exactly one answer,
whatever its handler does. Writes are synchronous appends to the transport in call order, so a
handler that writes notifications and then returns has them on the wire before its response. A
handler may also answer before it returns (`JsonRpcPeer.answer_of_this_request`), from wherever
the outcome becomes known: the answer then goes out with the lines written just before it.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from pydantic import ValidationError

from bridge.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SESSION_ERROR,
    Incoming,
    RpcError,
    classify,
    dumps,
    error_response,
    result_response,
)
from bridge.lines import LineFeed
from bridge.lines import OverlongLine as OverlongLine
from bridge.lines import read_line as read_line

log = logging.getLogger(__name__)

RequestHandler = Callable[[Any, Any], Awaitable[Any]]  # (params, request id) -> result
NotificationHandler = Callable[[Any], Any]
# A front door's own decoding of a line: exactly what `classify(line)` returns for it, or None to
# leave the line to `classify`.
LineDecoder = Callable[[bytes], Incoming | None]


class LineInterceptor(Protocol):
    """Sees every incoming line before it is handled (`JsonRpcPeer.intercept`)."""

    async def __call__(self, line: bytes) -> bool:
        """True when it took the line (the peer then does nothing more with it)."""
        ...

    def declines(self, line: bytes) -> bool:
        """True when it is sure at once, with nothing to await, that it would not take the line:
        the line is then handled as it is read (`LineFeed`)."""
        ...


class Answer:
    """The one answer of a request being handled: sent once, by `send` or, when the handler
    ends, by the peer — whichever comes first."""

    __slots__ = ("_key", "_peer", "id", "sent")

    def __init__(self, peer: JsonRpcPeer, method: str, id_: Any) -> None:
        self._peer = peer
        self._key = (method, id_)
        self.id = id_
        self.sent = False

    def send(self, result: Any) -> None:
        """Answer now with `result`, unless the request was answered already: the answer goes
        out at once, with what was written before it (nothing more of this request follows)."""
        if not self.sent:
            self._send_message(result_response(self.id, result))
            self._peer.flush()

    def _send_message(self, message: dict[str, Any]) -> None:
        if not self.sent:
            self._settle()
            self._peer.send(message)

    def _settle(self) -> None:
        """No longer unanswered (`JsonRpcPeer.unanswered`, `busy`), from this moment on."""
        self.sent = True
        unanswered = self._peer._unanswered
        left = unanswered.pop(self._key, 1) - 1
        if left:
            unanswered[self._key] = left


_answer_var: contextvars.ContextVar[Answer | None] = contextvars.ContextVar(
    "jsonrpc_answer", default=None
)


class ByteWriter(Protocol):
    def write(self, data: bytes) -> None: ...
    async def drain(self) -> None: ...
    def close(self) -> None: ...


class FdWriter:
    """Blocking writes to a file descriptor that asyncio cannot watch (a regular file, say)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        return None


class JsonRpcPeer:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: ByteWriter,
        *,
        name: str = "peer",
        on_recv: Callable[[bytes], None] | None = None,
        on_send: Callable[[bytes], None] | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.name = name
        self._on_recv = on_recv
        self._on_send = on_send
        self._requests: dict[str, RequestHandler] = {}
        self._notifications: dict[str, NotificationHandler] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        # The requests read and not yet answered, by (method, id) (how many of each: a client may
        # reuse an id), counted from the moment each is read, before its handler has taken a step.
        self._unanswered: dict[tuple[str, Any], int] = {}
        self._out: list[bytes] = []
        self.closed = False
        # Sees every incoming line first; returns True when it took the line (the stdio endpoint
        # hands lines to a console that appeared while it was serving headless).
        self.intercept: LineInterceptor | None = None
        # Decodes a line before `classify` may: a front door that can tell what a line holds more
        # cheaply than decoding all of it (the vscodelm door recognises the history it has seen).
        # It must give exactly what `classify` would; None leaves the line to `classify`.
        self.predecode: LineDecoder | None = None
        # Sees each line before it is decoded: True when it took the line and answers it itself
        # (`begin_answer`, `adopt`) — the vscodelm door's fast lane, for a turn that continues
        # the conversation as expected.
        self.take_ahead: Callable[[bytes], bool] | None = None
        # What requests still running at shutdown are answered (not "cancelled": the client should
        # see that the answer was cut off, not silently drop it).
        self.shutdown_message = "The endpoint shut down before answering this request"

    def unanswered(self, method: str, request_id: Any) -> bool:
        """A `method` request with this id was read and is not answered yet — its handler may not
        have started: a cancel read right behind its request finds it here."""
        return (method, request_id) in self._unanswered

    @property
    def busy(self) -> bool:
        """Some request read is not answered yet."""
        return bool(self._unanswered)

    def send_raw(self, line: bytes) -> None:
        """Write one already-encoded message line (without its newline)."""
        if self.closed:
            return
        if self._on_send is not None:
            self._on_send(line)
        self._queue(line + b"\n")

    def _queue(self, data: bytes) -> None:
        # Lines written in one turn of the event loop go out in one write: a streamed reply is
        # many small notifications, and a write (and the reader's wake-up) per line costs more
        # than the line. Order is kept: everything goes through this one buffer.
        self._out.append(data)
        if len(self._out) == 1:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:  # no loop (tests poking a peer directly): write now
                self.flush()

    def flush(self) -> None:
        """Write what is queued now rather than at the loop's next turn (when whoever queued it
        knows nothing more comes in this turn)."""
        if not self._out:
            return
        data = self._out[0] if len(self._out) == 1 else b"".join(self._out)
        self._out.clear()
        if self.closed:
            return
        try:
            self._writer.write(data)
        except (ConnectionError, RuntimeError, OSError) as exc:
            log.debug("%s: write failed: %s", self.name, exc)
            self.closed = True

    def on_request(self, method: str, handler: RequestHandler) -> None:
        self._requests[method] = handler

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        self._notifications[method] = handler

    # --- writing -------------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        data = dumps(message)
        if self._on_send is not None:
            self._on_send(data[:-1])
        self._queue(data)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def drain(self) -> None:
        self.flush()
        if self.closed:
            return
        try:
            await self._writer.drain()
        except (ConnectionError, RuntimeError, OSError):
            self.closed = True

    async def _keep_up(self) -> None:
        """A request's handler ends when its reader has kept up (back-pressure), without
        flushing first: what the handler wrote last and its answer go out in one write, a
        reader's wake-up fewer per request."""
        if self.closed:
            return
        try:
            await self._writer.drain()
        except (ConnectionError, RuntimeError, OSError):
            self.closed = True

    # --- reading -------------------------------------------------------------------------------

    async def serve(self, preread: list[bytes] | None = None) -> None:
        """Handle messages until the input ends; then wait for handlers still running."""
        try:
            for early in preread or ():
                if self.intercept is not None and await self.intercept(early):
                    continue
                self._dispatch(early, traced=True)
            while True:
                try:
                    line = await self._read_line()
                except (ConnectionError, OSError):
                    break
                if line is None:
                    continue  # an over-long line, answered
                if not line:
                    break
                if line.endswith(b"\n"):
                    line = line[:-1]
                if self.intercept is not None:
                    if self._on_recv is not None:
                        self._on_recv(line)
                    if await self.intercept(line):
                        continue
                    self._dispatch(line, traced=True)
                    continue
                self._dispatch(line)
        finally:
            self.closed_input = True

    async def _read_line(self) -> bytes | None:
        """The next line (b"" at the end of input), or None for a line longer than the reader's
        limit: it is skipped to its end (never read whole, never split into a bogus second
        message) and answered once — with its own id when its first bytes show it.

        From a `LineFeed`, the lines that arrive whole while this waits are handled as they are
        read (`_take_at_once`), in order, and this goes on waiting for one that cannot be."""
        reader = self._reader
        if isinstance(reader, LineFeed):
            reader.arm(self._take_at_once)
            try:
                line = await read_line(reader)
            finally:
                reader.disarm()
        else:
            line = await read_line(reader)
        if not isinstance(line, OverlongLine):
            return line
        known, id_ = line.id()
        log.warning(
            "%s: a message longer than %d bytes was dropped (id %s)",
            self.name,
            line.limit,
            repr(id_) if known else "unknown",
        )
        if known and id_ is not None:
            self.send(error_response(id_, INVALID_REQUEST, "Invalid request: message too long"))
        else:
            self.send(error_response(None, PARSE_ERROR, "Parse error: message too long"))
        return None

    def _take_at_once(self, line: bytes) -> bool:
        """Handle a line in the read's own callback (`LineFeed.take`), as the loop in `serve`
        would, unless the interceptor may want it: False leaves it to that loop."""
        intercept = self.intercept
        if intercept is not None:
            try:
                if not intercept.declines(line):
                    return False
            except Exception:
                log.exception("%s: the interceptor failed; the line is read as usual", self.name)
                return False
            if self._on_recv is not None:
                self._on_recv(line)
            traced = True
        else:
            traced = False
        try:
            self._dispatch(line, traced=traced)
        except Exception:  # a bug must cost this line, never the input (the read's transport)
            log.exception("%s: a line could not be handled", self.name)
        return True

    def _dispatch(self, line: bytes, traced: bool = False) -> None:
        if self._on_recv is not None and not traced:
            self._on_recv(line)
        if self.take_ahead is not None and self._taken_ahead(line):
            return
        msg = self._decode(line)
        if msg is None:
            return
        if msg.kind == "invalid":
            if msg.error is not None:
                self.send(msg.error)
            return
        if msg.kind == "response":
            log.debug(
                "%s: ignoring a response to id %r (this endpoint sends no requests)",
                self.name,
                msg.id,
            )
            return
        if msg.kind == "notification":
            handler = self._notifications.get(msg.method or "")
            if handler is None:
                log.debug("%s: ignoring notification %s", self.name, msg.method)
                return
            try:
                result = handler(msg.params)
                if asyncio.iscoroutine(result):
                    self._spawn(result)
            except Exception:
                log.exception("%s: notification %s failed", self.name, msg.method)
            return
        request_handler = self._requests.get(msg.method or "")
        if request_handler is None:
            self.send(error_response(msg.id, METHOD_NOT_FOUND, f"Method not found: {msg.method}"))
            return
        answer = self.begin_answer(msg.method or "", msg.id)
        self._spawn(self._answer(answer, functools.partial(request_handler, msg.params, msg.id)))

    def _taken_ahead(self, line: bytes) -> bool:
        assert self.take_ahead is not None
        try:
            return self.take_ahead(line)
        except Exception:  # a bug there must not cost the line: it is read as usual
            log.exception("%s: taking a line ahead failed; reading it as usual", self.name)
            return False

    def _decode(self, line: bytes) -> Incoming | None:
        msg = None
        if self.predecode is not None:
            try:
                msg = self.predecode(line)
            except Exception:  # a bug there must not cost the line: `classify` is the reference
                log.exception("%s: predecode failed; decoding the line in full", self.name)
        return msg if msg is not None else classify(line)

    def begin_answer(self, method: str, id_: Any) -> Answer:
        """The answer of a request just read: unanswered from now on, until it is sent."""
        key = (method, id_)
        self._unanswered[key] = self._unanswered.get(key, 0) + 1
        return Answer(self, method, id_)

    def adopt(self, answer: Answer, handling: Callable[[], Awaitable[Any]]) -> None:
        """Let `handling()` finish a request whose answer `begin_answer` made (and which may be
        sent already), as its handler would: what it returns or raises answers the request."""
        self._spawn(self._answer(answer, handling))

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run `coro` as one of this peer's tasks (cancelled at `shutdown`, as handlers are)."""
        self._spawn(coro)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, answer: Answer, handling: Callable[[], Awaitable[Any]]) -> None:
        await self._handle(answer, handling)
        await self._keep_up()

    def answer_of_this_request(self) -> Answer:
        """The answer of the request whose handler calls this (in its own task): a handler that
        learns its outcome in a callback answers there, and what it returns is then not sent."""
        answer = _answer_var.get()
        if answer is None or answer._peer is not self:
            raise RuntimeError("not called from a request handler of this peer")
        return answer

    async def _handle(self, answer: Answer, handling: Callable[[], Awaitable[Any]]) -> None:
        _answer_var.set(answer)
        id_, method = answer.id, answer._key[0]
        try:
            result = await handling()
        except RpcError as exc:
            answer._send_message(error_response(id_, exc.code, exc.message, exc.data))
        except ValidationError as exc:
            from bridge.protocol import describe_validation_error

            answer._send_message(
                error_response(
                    id_, INVALID_PARAMS, "Invalid params: " + describe_validation_error(exc)
                )
            )
        except asyncio.CancelledError:
            answer._send_message(error_response(id_, SESSION_ERROR, self.shutdown_message))
            raise
        except Exception as exc:  # a bug must cost one request, never the endpoint
            log.exception("%s: %s failed", self.name, method)
            answer._send_message(
                error_response(id_, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}")
            )
        else:
            answer.send(result)
        finally:
            if not answer.sent:  # unanswerable (the process is going down): not waited for
                answer._settle()

    async def shutdown(self, message: str | None = None) -> None:
        """Cancel every handler still running (each still answers) and close the output."""
        if message:
            self.shutdown_message = message
        # A handler task cancelled before its first step never runs its `except` and would leave
        # its request unanswered (input that ends right after a request): let each start first.
        await asyncio.sleep(0)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.drain()
        self.closed = True
        try:
            self._writer.close()
        except Exception:
            pass
