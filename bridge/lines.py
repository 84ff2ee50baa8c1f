"""Newline-delimited input from an asyncio stream, a line at a time, where a line longer than the
reader's limit is skipped whole (its first bytes kept, to find its id) instead of breaking the
stream. Every reader of the project's line protocols uses it: the JSON-RPC peer (`bridge.rpc`), the
console host's first line, the console links and the ssh link's multiplexer.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from bridge.jsonrpc import LINE_LIMIT, recover_id

__all__ = ["OverlongLine", "read_line"]

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
