"""Two connected in-memory duplex byte streams built from real asyncio stream objects.

The ACP SDK insists on ``asyncio.StreamReader``/``asyncio.StreamWriter`` for byte transports, so
the built-in agent is wired to the bridge through a pair of them instead of a socket: what one
end writes is fed straight into the other end's reader, with no copy through the kernel.

Semantics follow a socket closely enough for the SDK:

* ``writer.drain()`` returns at once unless the peer's reader holds more than twice its limit,
  in which case it waits until the peer has read it down (real back-pressure).
* ``writer.write_eof()`` feeds EOF to the peer; ``writer.close()`` feeds EOF to both readers and
  completes ``wait_closed()``. Writing towards an end that has been closed drops the data and
  makes ``drain()`` raise ``ConnectionResetError``.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

__all__ = ["DEFAULT_LIMIT", "memory_stream_pair"]

#: Reader buffer limit of each end (the writer is paused above twice this much unread data).
DEFAULT_LIMIT = 1024 * 1024

Endpoint = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class _WriterProtocol(asyncio.Protocol):
    """Flow control and close notification for one end's writer."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._paused = False
        self._drain_waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._lost = False
        self._lost_error: BaseException | None = None
        self._closed: asyncio.Future[None] = loop.create_future()

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self._wake_drainers(None)

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._lost:
            return
        self._lost = True
        self._lost_error = exc
        self._wake_drainers(exc or ConnectionResetError("Connection lost"))
        if not self._closed.done():
            self._closed.set_result(None)

    def _wake_drainers(self, exc: BaseException | None) -> None:
        for waiter in self._drain_waiters:
            if not waiter.done():
                if exc is None:
                    waiter.set_result(None)
                else:
                    waiter.set_exception(exc)

    async def _drain_helper(self) -> None:
        # The name and contract are those asyncio.StreamWriter.drain() relies on.
        if self._lost:
            raise ConnectionResetError("Connection lost") from self._lost_error
        if not self._paused:
            return
        waiter = self._loop.create_future()
        self._drain_waiters.append(waiter)
        try:
            await waiter
        finally:
            self._drain_waiters.remove(waiter)

    def _get_close_waiter(self, stream: asyncio.StreamWriter) -> asyncio.Future[None]:
        return self._closed


class _PipeTransport(asyncio.Transport):
    """Write side of one end: bytes go straight into the peer's reader.

    It is also the *read* transport of the peer's reader, which is how that reader's
    pause_reading/resume_reading calls turn into this end's pause_writing/resume_writing.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        own_reader: asyncio.StreamReader,
        peer_reader: asyncio.StreamReader,
        protocol: _WriterProtocol,
        name: str,
    ) -> None:
        super().__init__()
        self._loop = loop
        self._own_reader = own_reader
        self._peer_reader = peer_reader
        self._protocol = protocol
        self._name = name
        self._closing = False
        self._eof_written = False
        self.peer: _PipeTransport | None = None

    def __repr__(self) -> str:
        state = "closing" if self._closing else "open"
        return f"<_PipeTransport {self._name} {state}>"

    # -- write side ----------------------------------------------------------------------

    def write(self, data: Any) -> None:
        if self._eof_written and not self._closing:
            raise RuntimeError("Cannot call write() after write_eof()")
        if self._closing or not data:
            return
        peer = self.peer
        if peer is not None and peer._closing:
            # The other end is gone; like a socket, the data is lost and drain() reports it.
            self._protocol.connection_lost(ConnectionResetError("Peer closed the stream"))
            return
        self._peer_reader.feed_data(bytes(data))

    def writelines(self, list_of_data: Any) -> None:
        self.write(b"".join(bytes(chunk) for chunk in list_of_data))

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        if self._eof_written or self._closing:
            return
        self._eof_written = True
        self._feed_eof(self._peer_reader)

    def get_write_buffer_size(self) -> int:
        return 0

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return (0, 0)

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    # -- lifecycle -----------------------------------------------------------------------

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._eof_written = True
        self._feed_eof(self._peer_reader)
        self._feed_eof(self._own_reader)
        self._loop.call_soon(self._protocol.connection_lost, None)
        peer = self.peer
        if peer is not None and peer._protocol._paused:
            # A writer blocked on our reader must not wait forever: let it go on and find out.
            peer._protocol.resume_writing()

    def abort(self) -> None:
        self.close()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if name == "peername":
            return f"memory:{self.peer._name}" if self.peer is not None else None
        if name == "sockname":
            return f"memory:{self._name}"
        return default

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._protocol

    # -- read side of the peer's reader (flow control) -------------------------------------

    def pause_reading(self) -> None:
        self._protocol.pause_writing()

    def resume_reading(self) -> None:
        self._protocol.resume_writing()

    def is_reading(self) -> bool:
        return not self._protocol._paused

    @staticmethod
    def _feed_eof(reader: asyncio.StreamReader) -> None:
        if not reader.at_eof():
            reader.feed_eof()


def memory_stream_pair(*, limit: int = DEFAULT_LIMIT) -> tuple[Endpoint, Endpoint]:
    """Return ``((reader_a, writer_a), (reader_b, writer_b))``, two connected duplex endpoints.

    Bytes written with ``writer_a`` are read from ``reader_b`` and the other way round. Must be
    called with a running event loop.
    """
    loop = asyncio.get_running_loop()
    reader_a = asyncio.StreamReader(limit=limit)
    reader_b = asyncio.StreamReader(limit=limit)
    protocol_a = _WriterProtocol(loop)
    protocol_b = _WriterProtocol(loop)
    transport_a = _PipeTransport(loop, reader_a, reader_b, protocol_a, "a")
    transport_b = _PipeTransport(loop, reader_b, reader_a, protocol_b, "b")
    transport_a.peer = transport_b
    transport_b.peer = transport_a
    # Each reader pauses the writer that feeds it when its buffer grows past 2 * limit.
    reader_b.set_transport(transport_a)
    reader_a.set_transport(transport_b)
    writer_a = asyncio.StreamWriter(transport_a, protocol_a, reader_a, loop)
    writer_b = asyncio.StreamWriter(transport_b, protocol_b, reader_b, loop)
    return (reader_a, writer_a), (reader_b, writer_b)
