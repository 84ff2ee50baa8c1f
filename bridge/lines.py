"""Newline-delimited input from an asyncio stream, a line at a time, where a line longer than the
reader's limit is skipped whole (its first bytes kept, to find its id) instead of breaking the
stream. Every reader of the project's line protocols uses it: the JSON-RPC peer (`bridge.rpc`), the
console host's first line, the console links and the ssh link's multiplexer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, SupportsIndex

from bridge.jsonrpc import LINE_LIMIT, recover_id

__all__ = ["LineFeed", "OverlongLine", "read_line"]

_HEAD_BYTES = 64 * 1024  # of an over-long line, kept to find its id


def _limit_of(reader: Any) -> int:
    return int(getattr(reader, "_limit", LINE_LIMIT))


@dataclass(frozen=True)
class OverlongLine:
    """A line longer than the reader's limit: read past to its end, never read whole."""

    head: bytes  # its first bytes (at most 64 KiB), where its id shows if it does
    limit: int  # the reader's limit it went over

    def id(self) -> tuple[bool, Any]:
        """`(True, id)` when its first bytes show the message's top-level id (`recover_id`)."""
        return recover_id(self.head)


async def read_line(reader: asyncio.StreamReader) -> bytes | OverlongLine:
    """The next line with its newline (b"" at the end of input, whose last line may have none),
    or an `OverlongLine` for a line longer than the reader's limit. That line is read past to its
    end a limit's worth at a time, so what is read next is the line after it — never its tail.
    (`StreamReader.readline` drops what it had buffered of such a line and leaves the rest of it
    to be read as a line of its own.)"""
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial  # the input ended: its last line (or b"")
    except asyncio.LimitOverrunError as exc:
        consumed = exc.consumed
    head = await reader.readexactly(consumed) if consumed else b""
    head = head[:_HEAD_BYTES]
    while True:  # discard the rest of the line, a limit's worth at a time
        try:
            await reader.readuntil(b"\n")
            break
        except asyncio.IncompleteReadError:
            break
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(exc.consumed)
    return OverlongLine(head, _limit_of(reader))


class LineFeed(asyncio.StreamReader):
    """A StreamReader that can hand whole lines to their reader as they arrive, in the read's own
    callback, rather than waking a task to read them back out of its buffer: a turn's request, and
    the agent's text and answer, are then handled one pass of the event loop sooner (armed by
    `bridge.rpc.JsonRpcPeer.serve` on the stdio endpoint's input, and by
    `bridge.acp_lines.LineTransport` on an agent's output).

    While `take` is set, a read that ends a line and finds nothing buffered ahead of it is split
    into its lines (without their newlines), each given to `take` in order; the first line `take`
    declines (it returns False), and everything after it, is buffered to be read as usual, and
    `take` is unset. Whoever sets `take` does so only where the input is at the start of a line
    (nothing read of the next line yet), and unsets it (`disarm`) before doing anything else
    with the reader. A read that does not end a line, or one with more than `limit` bytes in a line, is
    buffered as usual too (and unsets `take`). `taken_all`, when given, is called after a read
    whose every line `take` took (what was made of them can go out together)."""

    take: Callable[[bytes], bool] | None = None
    taken_all: Callable[[], None] | None = None
    taken = 0  # lines handed to `take` (for tests)

    def arm(
        self, take: Callable[[bytes], bool], taken_all: Callable[[], None] | None = None
    ) -> None:
        """Set `take` if nothing is buffered: called where what was read so far ended a line."""
        self.take = None if self._buffer or self._eof else take  # type: ignore[attr-defined]
        self.taken_all = taken_all

    def disarm(self) -> None:
        """Lines are read as usual again (what `arm` set is unset)."""
        self.take = self.taken_all = None

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        take = self.take
        if take is None or type(data) is not bytes:  # a transport reads bytes
            super().feed_data(data)
            return
        if self._buffer or self._eof or not data.endswith(b"\n"):  # type: ignore[attr-defined]
            self.take = None
            super().feed_data(data)
            return
        limit = self._limit  # type: ignore[attr-defined]
        start, end = 0, len(data)
        while start < end:
            stop = data.index(b"\n", start)
            if stop - start > limit or not take(data[start:stop]):
                break
            self.taken += 1
            start = stop + 1
            if self.take is not take:  # unset while that line was taken: the rest is read as usual
                break
        else:
            if self.taken_all is not None:
                self.taken_all()
            return
        self.take = None
        super().feed_data(data[start:] if start else data)
