"""The stdio relay: `symposium-tui vscodelm` forwarding VS Code's bytes to a running console.

Standard library only — this is the path VS Code spawns, and its first answer must come within a
few bare Python start-ups. Lines are passed through untouched; the relay only looks at what it
needs to fail safely: the ids of the requests it forwarded, and which of them were answered. If
the console goes away, every request still in flight is answered with an error and the caller
serves the rest of stdin itself.
"""

from __future__ import annotations

import json
import logging
import os
import select
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bridge.jsonrpc import LinePieces

log = logging.getLogger(__name__)

CONSOLE_GONE = -32000
_NOTIFICATION_PREFIX = b'{"jsonrpc":"2.0","method":'


def socket_path() -> Path:
    from bridge.paths import runtime_dir

    return runtime_dir() / "console.sock"


def socket_inode(path: Path | None = None) -> int | None:
    """The console socket's inode (None: there is none): a console removes its socket before it
    answers what it has in flight, so a different or missing one means it is leaving."""
    try:
        return os.stat(path or socket_path()).st_ino
    except OSError:
        return None


def connect(path: Path | None = None, timeout: float = 1.0) -> socket.socket | None:
    """A connection to the running console, or None when there is none."""
    from bridge.paths import unsafe_dir_reason

    path = path or socket_path()
    if unsafe_dir_reason(path.parent) is not None:
        return None  # e.g. a runtime dir another user planted as a symlink: serve headless
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if st.st_uid != os.getuid():
        return None  # not ours: never talk to another user's socket
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        if _peer_uid(sock) not in (None, os.getuid()):
            raise OSError("the console socket is served by another user")
    except OSError:
        sock.close()
        return None
    sock.settimeout(None)
    return sock


def _peer_uid(sock: socket.socket) -> int | None:
    import struct

    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    return struct.unpack("3i", creds)[1]


@dataclass
class RelayResult:
    # stdin bytes read but not forwarded: lines read as the console left, a partial line
    rest: bytes = b""
    eof: bool = False  # stdin ended: nothing left to serve
    console_gone: bool = False
    failed: list[Any] = field(default_factory=list)  # request ids answered with an error


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _request_id(line: bytes) -> tuple[bool, Any]:
    """Will the endpoint answer this line with an id of its own — the id the relay must answer
    itself if the console goes away first? Exactly when the endpoint's own classification
    (`bridge.jsonrpc.classify`) replies with that id: a JSON object with a valid, non-null id that
    is not itself a response. A line the endpoint answers with id null (bad JSON, an id that is
    an object or a float, a batch) is not tracked, so it never gets a second answer."""
    from bridge.jsonrpc import _DECODER, _valid_id

    try:
        msg = _DECODER.decode(line.decode("utf-8"))
    except (ValueError, RecursionError):  # bad UTF-8, bad JSON, nesting too deep: not a request
        return False, None
    if not isinstance(msg, dict) or "id" not in msg:
        return False, None
    rid = msg["id"]
    if rid is None or not _valid_id(rid):
        return False, None
    if "method" not in msg and ("result" in msg or "error" in msg):
        return False, None  # a client's response: the endpoint answers nothing
    return True, rid


def _response_id(line: bytes) -> tuple[bool, Any]:
    if line.startswith(_NOTIFICATION_PREFIX):
        return False, None
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return False, None
    if isinstance(msg, dict) and "method" not in msg and "id" in msg:
        return True, msg["id"]
    return False, None


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class _Relay:
    """One relay's state: stdin's bytes not yet forwarded, the console's not yet written, and
    the requests forwarded but not yet answered."""

    def __init__(
        self,
        sock: socket.socket,
        in_fd: int,
        out_fd: int,
        initial: bytes,
        on_recv: Callable[[bytes], None] | None,
        on_send: Callable[[bytes], None] | None,
        still_there: Callable[[], bool] | None = None,
    ) -> None:
        self.sock, self.in_fd, self.out_fd = sock, in_fd, out_fd
        self.still_there = still_there
        self.on_recv, self.on_send = on_recv, on_send
        # The requests forwarded and not answered yet, by id: a list, since a client may send
        # two with one id (each is answered, and each must be answered if the console goes).
        self.pending: dict[str, list[Any]] = {}
        self.stdin = LinePieces()
        self.ready = self.stdin.feed(initial)  # whole lines read from stdin, not yet forwarded
        self.console = LinePieces()
        self.stdin_open = True
        self.result = RelayResult()

    def serve(self) -> None:
        """Until stdin has ended and the console answered what it was sent (OSError: the
        console went away)."""
        self.forward_lines()
        while True:
            watch = [self.sock] + ([self.in_fd] if self.stdin_open else [])
            ready, _, _ = select.select(watch, [], [])
            # The console's side first: an answer, or its leaving, before more is forwarded to it
            if self.sock in ready and self.from_console():
                return
            if self.in_fd in ready and self.stdin_open and not self.from_stdin():
                if not self.pending:
                    return

    def forward_lines(self) -> None:
        head = self.ready
        if not head:
            return
        if self.still_there is not None and not self.still_there():
            # Leaving (its socket is gone): what was not forwarded is served here, not lost
            raise ConnectionResetError("the console is leaving")
        for line in head[:-1].split(b"\n"):
            if self.on_recv is not None:
                self.on_recv(line)
            is_request, rid = _request_id(line)
            if is_request:
                self.pending.setdefault(_key(rid), []).append(rid)
        self.sock.sendall(head)
        self.ready = b""

    def from_stdin(self) -> bool:
        """Read stdin and forward its whole lines; False when it ended (a last line without its
        newline is a line: it is forwarded with one)."""
        chunk = os.read(self.in_fd, 1 << 20)
        if not chunk:
            self.stdin_open = False
            self.result.eof = True
            if self.stdin.size:
                self.ready = self.stdin.feed(b"\n")
                self.forward_lines()
            return False
        self.ready = self.stdin.feed(chunk)
        self.forward_lines()
        return True

    def from_console(self) -> bool:
        """Write the console's whole lines to stdout; True when stdin has ended and nothing is
        awaited any more."""
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionResetError("console closed the connection")
        head = self.console.feed(chunk)
        if not head:
            return False
        for line in head[:-1].split(b"\n"):
            if self.on_send is not None:
                self.on_send(line)
            is_response, rid = _response_id(line)
            if is_response:
                waiting = self.pending.get(_key(rid))
                if waiting:
                    waiting.pop()
                    if not waiting:
                        del self.pending[_key(rid)]
        _write_all(self.out_fd, head)
        return not self.stdin_open and not self.pending

    def console_gone(self) -> None:
        """Every request still in flight is answered with an error, here."""
        self.result.console_gone = True
        for rid in (rid for ids in self.pending.values() for rid in ids):
            response = {
                "jsonrpc": "2.0",
                "id": rid,
                "error": {
                    "code": CONSOLE_GONE,
                    "message": "The Symposium console closed while answering this request; send it again to continue without it",
                },
            }
            data = json.dumps(response, separators=(",", ":")).encode() + b"\n"
            if self.on_send is not None:
                self.on_send(data[:-1])
            _write_all(self.out_fd, data)
            self.result.failed.append(rid)


def run(
    sock: socket.socket,
    *,
    in_fd: int = 0,
    out_fd: int = 1,
    initial: bytes = b"",
    on_recv: Callable[[bytes], None] | None = None,
    on_send: Callable[[bytes], None] | None = None,
    inode: int | None = None,
) -> RelayResult:
    """Relay until stdin ends (and the console has answered what it was sent) or the console goes.
    `inode`: the console socket's (`socket_inode`) when connected; lines read once it is gone are
    not forwarded but left in `rest`, to be served by the caller."""
    still_there = None if inode is None else (lambda: socket_inode() == inode)
    relay = _Relay(sock, in_fd, out_fd, initial, on_recv, on_send, still_there)
    try:
        relay.serve()
    except OSError:
        relay.console_gone()
    finally:
        try:
            sock.close()
        except OSError:
            pass
    relay.result.rest = relay.ready + relay.stdin.rest()
    return relay.result
