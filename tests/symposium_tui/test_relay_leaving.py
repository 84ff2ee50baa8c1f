"""The stdio relay and a console that leaves: a request read once the console's socket is gone is
not forwarded to it (to come back as "the console closed while answering"), but left for the
endpoint to serve itself."""

from __future__ import annotations

import json
import os
import socket
import threading

from symposium_tui.hosting import relay


def line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_a_request_read_after_the_console_removed_its_socket_is_served_here(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMPOSIUM_RUNTIME_DIR", str(tmp_path))
    sock_file = tmp_path / "console.sock"
    sock_file.write_bytes(b"")  # stands for the console's socket: only its inode is looked at
    ours, console = socket.socketpair()
    stdin_r, stdin_w = os.pipe()
    out_r, out_w = os.pipe()
    first = line({"jsonrpc": "2.0", "id": 1, "method": "lm/provideLanguageModelChatResponse"})
    second = line({"jsonrpc": "2.0", "id": 2, "method": "lm/provideLanguageModelChatResponse"})

    def the_console() -> None:
        assert console.recv(1 << 16) == first
        console.sendall(line({"jsonrpc": "2.0", "id": 1, "result": {}}))
        sock_file.unlink()  # leaving, as the console host does: its socket goes first…
        os.write(stdin_w, second)  # …while the client already sends its next request
        console.close()

    thread = threading.Thread(target=the_console)
    thread.start()
    os.write(stdin_w, first)
    result = relay.run(ours, in_fd=stdin_r, out_fd=out_w, inode=relay.socket_inode(sock_file))
    thread.join()
    os.close(out_w)
    os.close(stdin_w)
    written = os.read(out_r, 1 << 16)
    assert json.loads(written) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert result.failed == [], "the next request was not lost with the console"
    # it is left for the endpoint to serve: read but not forwarded, or not read yet
    assert result.rest + os.read(stdin_r, 1 << 16) == second
    for fd in (stdin_r, out_r):
        os.close(fd)
