"""The hook process's link to a running console (or the `serve` host): its socket, the messages
it sends and the one answer it reads. Standard library only, and of sockets only their C core
(`_socket`, only when a console may be listening): this runs in a new process for every tool call,
and `socket` brings `selectors`, `enum` classes and `array` with it (~3 ms of a ~30 ms start)."""

from __future__ import annotations

import json
import os
import time

# where the console listens, as the console reads it (`bridge.paths` imports only `os`)
from bridge.paths import runtime_dir_path as runtime_dir

TYPE_CHECKING = False  # `typing` costs milliseconds of a hook's start: names for the checker only
if TYPE_CHECKING:
    from _socket import socket
    from typing import Any

    from bridge.hooks.clis import HookCall

HELLO = "hook/hello"
DECIDE = "hook/decide"
EVENT = "hook/event"
LONG_TEXT = 64 * 1024  # a longer string of the tool input is shortened on its way to a card


def socket_path() -> str:
    return os.path.join(runtime_dir(), "console.sock")


def connect() -> socket | None:
    """A connection to the running console (or the `serve` host), or None when there is none."""
    path = socket_path()
    try:
        st = os.stat(path)
    except OSError:
        return None
    if st.st_uid != os.getuid():
        return None
    import _socket  # (only when a console may be listening)

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(2.0)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock


def send(sock: socket, *messages: dict[str, Any]) -> None:
    data = b"".join(
        json.dumps({"jsonrpc": "2.0", **m}, separators=(",", ":"), default=str).encode() + b"\n"
        for m in messages
    )
    sock.sendall(data)


def hello(call: HookCall) -> dict[str, Any]:
    return {"method": HELLO, "params": {"cli": call.cli, "pid": os.getpid(), "version": 1}}


def connection_name(call: HookCall) -> str:
    """The console connection a CLI's sessions appear under: the CLI and its working folder."""
    folder = os.path.basename((call.cwd or "").rstrip("/")) or "/"
    return f"{call.agent} {folder}"


def shorten(value: Any) -> Any:
    if isinstance(value, str) and len(value) > LONG_TEXT:
        return value[:LONG_TEXT] + f"… [{len(value) - LONG_TEXT} more characters]"
    if isinstance(value, dict):
        return {k: (v if k in ("command", "patch") else shorten(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [shorten(v) for v in value]
    return value


def read_result(sock: socket, until: float) -> dict[str, Any]:
    buf = b""
    while True:
        left = until - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            raise
        except OSError as exc:
            raise OSError(f"the console link dropped: {exc}") from None
        if not chunk:
            raise OSError("the console link closed")
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            msg = json.loads(line)
            if isinstance(msg, dict) and msg.get("id") == 1 and "method" not in msg:
                result = msg.get("result")
                if not isinstance(result, dict):
                    error = msg.get("error")
                    error = error.get("message") if isinstance(error, dict) else error
                    raise ValueError(f"the console failed: {error}")
                return result
