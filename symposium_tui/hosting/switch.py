"""Hand a headless stdio endpoint's traffic to a console that starts later — no reload.

While `symposium-tui vscodelm` serves VS Code itself, every incoming request first checks (a
`stat` of the console socket; a connect only when the socket is new) whether a console is now
running. When one is and nothing is in flight locally, this request and everything after it go to
the console; the local agent sessions are closed. If that console goes away again, what it had in
flight is answered with an error and the endpoint serves locally once more (a conversation then
continues in a fresh session, with its earlier turns replayed).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bridge.jsonrpc import INTERNAL_ERROR, line_limit
from bridge.rpc import JsonRpcPeer, OverlongLine, read_line
from bridge.tasks import TaskSupervisor
from symposium_tui.hosting import relay

log = logging.getLogger(__name__)


class ConsoleSwitch:
    def __init__(
        self, peer: JsonRpcPeer, on_switch: Callable[[], Awaitable[None]], path: Path | None = None
    ) -> None:
        self.peer = peer
        self.path = path or relay.socket_path()
        self.on_switch = on_switch
        self._writer: asyncio.StreamWriter | None = None
        self._connected_ino = 0  # the inode of the socket file of the console relayed to
        self._pending: dict[str, Any] = {}
        self._failed_probe: tuple[int, int] | None = (
            None  # (inode, mtime_ns) of a socket that refused us
        )
        self._tasks = TaskSupervisor("console switch")  # the reader of the console's answers

    @property
    def relaying(self) -> bool:
        return self._writer is not None

    def declines(self, line: bytes) -> bool:
        """Sure at once not to take `line`: nothing relayed now, and no console to switch to (none
        there, or one that refused us), or a request in flight here; the line is then handled
        as it is read. Where this says False, awaiting the switch decides (`__call__`)."""
        if self._writer is not None:
            return False
        return self.peer.busy or self._console_to_try() is None

    async def __call__(self, line: bytes) -> bool:
        if self._writer is None:
            if self.peer.busy:
                return False
            connected, rid = await self._try_connect(line)
            if not connected:
                return False
            is_request = True  # it connects for a request only
        else:
            is_request, rid = relay._request_id(line)
        assert self._writer is not None
        if is_request:
            if not self._console_still_there():
                # Leaving: a console removes its socket before it answers what it has in flight,
                # so a request sent after such an answer is served here, not lost with it.
                self._console_gone()
                return False
            self._pending[relay._key(rid)] = rid
        try:
            self._writer.write(line + b"\n")
            await self._writer.drain()
        except (ConnectionError, OSError):
            if is_request:
                self._pending.pop(relay._key(rid), None)  # never reached the console: served here
            self._console_gone()
            return False
        return True

    def _console_still_there(self) -> bool:
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return st.st_ino == self._connected_ino

    def _console_to_try(self) -> tuple[int, int] | None:
        """The (inode, mtime_ns) of a console socket worth connecting to: there, ours, and not one
        that refused us; None when there is none (or this switch is closed)."""
        if self._tasks.closed:
            return None
        path = str(self.path)
        if not os.access(path, os.F_OK):  # (no console, the usual case: no exception to build)
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        probe = (st.st_ino, st.st_mtime_ns)
        if probe == self._failed_probe or st.st_uid != os.getuid():
            return None
        return probe

    async def _try_connect(self, line: bytes) -> tuple[bool, Any]:
        """Whether a console took the connection `line` (a request) would be relayed on, and the
        request's id (parsed once, for both)."""
        # The stat first: with no console (the usual case) it settles the question without
        # parsing the line, which carries the whole conversation.
        probe = self._console_to_try()
        if probe is None:
            return False, None
        is_request, rid = relay._request_id(line)
        if not is_request:
            return False, None
        try:
            reader, writer = await asyncio.open_unix_connection(str(self.path), limit=line_limit())
        except OSError:
            self._failed_probe = probe
            return False, None
        if self._tasks.closed:  # closed while this connected
            writer.close()
            return False, None
        log.info("a console is running: relaying to it from now on")
        self._writer = writer
        self._connected_ino = probe[0]
        self._tasks.start(self._read(reader), name="console reader")
        with contextlib.suppress(Exception):
            await self.on_switch()
        return True, rid

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                line = await read_line(reader)
                if isinstance(line, OverlongLine):
                    self._overlong(line)
                    continue
                if not line:
                    break
                line = line.rstrip(b"\n")
                is_response, rid = relay._response_id(line)
                if is_response:
                    self._pending.pop(relay._key(rid), None)
                self.peer.send_raw(line)
        except (ConnectionError, OSError):
            pass
        self._console_gone()

    def _overlong(self, line: OverlongLine) -> None:
        """A line from the console too long to read: skipped whole. When it answered a request
        that is still waiting (its first bytes show the id), that request is answered once, with
        an error, here."""
        known, rid = line.id()
        log.warning(
            "the console sent a message longer than %d bytes: dropped (id %s)",
            line.limit,
            repr(rid) if known else "unknown",
        )
        if not known or self._pending.pop(relay._key(rid), None) is None:
            return
        self.peer.send_raw(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {
                        "code": INTERNAL_ERROR,
                        "message": f"The Symposium console's answer to this request was longer "
                        f"than {line.limit} bytes; it was dropped",
                    },
                },
                separators=(",", ":"),
            ).encode()
        )

    def _console_gone(self) -> None:
        if self._writer is None:
            return
        log.warning("the console went away: serving requests here again")
        with contextlib.suppress(Exception):
            self._writer.close()
        self._writer = None
        pending, self._pending = self._pending, {}
        for rid in pending.values():
            self.peer.send_raw(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": rid,
                        "error": {
                            "code": relay.CONSOLE_GONE,
                            "message": "The Symposium console closed while answering this request; send it again to continue without it",
                        },
                    },
                    separators=(",", ":"),
                ).encode()
            )

    async def close(self) -> None:
        """Stop relaying (the endpoint's connection ended): the reader of the console's answers
        has ended when this returns, and nothing more is relayed."""
        await self._tasks.close()
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            self._writer = None
