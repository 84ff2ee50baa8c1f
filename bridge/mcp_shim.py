"""Stdio face of the bridge's `vscode_tools` MCP server, for agents that only launch stdio servers.

    python -m bridge.mcp_shim SOCKET TOKEN

Connects to the bridge's unix socket, sends TOKEN as the first line, then relays bytes
stdin → socket and socket → stdout until either side closes. The bridge runs the MCP session
(newline-delimited JSON-RPC, the MCP stdio framing) on its end. Standard library only: one is
spawned per agent session and must start fast.
"""

from __future__ import annotations

import os
import socket
import sys
import threading

_CHUNK = 65536


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _pump_stdin(sock: socket.socket) -> None:
    try:
        while True:
            data = os.read(0, _CHUNK)
            if not data:
                break
            sock.sendall(data)
    except OSError:
        pass
    # The agent closed our stdin (or the socket broke): end the session on both sides; this also
    # wakes the main thread's recv.
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m bridge.mcp_shim SOCKET TOKEN", file=sys.stderr)
        return 2
    path, token = args
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        sock.sendall(token.encode("ascii") + b"\n")
    except (OSError, UnicodeEncodeError) as exc:
        print(f"vscode_tools: cannot reach the bridge at {path}: {exc}", file=sys.stderr)
        return 1
    threading.Thread(target=_pump_stdin, args=(sock,), daemon=True).start()
    try:
        while True:
            data = sock.recv(_CHUNK)
            if not data:
                break
            _write_all(1, data)
    except OSError:
        pass
    finally:
        sock.close()
    return 0


if __name__ == "__main__":
    # os._exit: the stdin thread may still be blocked in read(); nothing is left to flush.
    os._exit(main())
