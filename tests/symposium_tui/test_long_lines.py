"""A line longer than the reader's limit on the console's own line protocols (the console socket's
first line, the ssh link's multiplexer) is skipped whole and answered, and what follows it is
served as usual — never read as a line of its own, never the end of the connection."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from symposium_tui.hosting.console_socket import ConsoleHost
from symposium_tui.hosting.hosted import Hosted
from symposium_tui.wire import mux as linkmux
from tests.support.waiting import until


class Lines:
    """A writer collecting what is written to it, line by line."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.data.splitlines()]


def request(rid: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


@pytest.fixture
async def console_socket(hosted: Hosted, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The hosted bridge's console socket in this test's runtime dir, reading lines of at most
    4 KiB (`$SYMPOSIUM_MAX_MESSAGE_BYTES`, as the endpoint it serves reads)."""
    monkeypatch.setenv("SYMPOSIUM_MAX_MESSAGE_BYTES", "4096")
    sock = ConsoleHost(hosted.bridge, Path(os.environ["SYMPOSIUM_RUNTIME_DIR"]) / "console.sock")
    await sock.start()
    yield sock
    await sock.stop()


async def test_an_overlong_first_line_is_refused_and_the_socket_serves_the_next_console(
    console_socket: ConsoleHost,
) -> None:
    reader, writer = await asyncio.open_unix_connection(str(console_socket.path))
    writer.write(b'{"jsonrpc":"2.0","id":1,"method":"console/hello","params":{"x":"')
    writer.write(b"y" * 10_000 + b'"}}\n')
    await writer.drain()
    assert await reader.read() == b"", "the connection is closed without an answer"
    writer.close()

    reader, writer = await asyncio.open_unix_connection(str(console_socket.path))
    writer.write(request(2, "console/hello", {"protocol": 1, "console": "test"}) + b"\n")
    await writer.drain()
    answer = json.loads(await reader.readline())
    assert answer["id"] == 2 and "result" in answer
    writer.close()


async def test_the_link_mux_answers_an_overlong_request_and_serves_the_next(
    console_socket: ConsoleHost,
) -> None:
    runtime = console_socket.path.parent
    reader = asyncio.StreamReader(limit=1024)
    out = Lines()
    serving = asyncio.ensure_future(linkmux.serve(runtime, reader, out))
    reader.feed_data(request(1, "console/hello", {"protocol": 1, "console": "test"}) + b"\n")
    await until(lambda: len(out.messages()) == 1, what="the hello answered")
    reader.feed_data(request(2, "console/answer", {"approvalId": "x" * 5000}) + b"\n")
    reader.feed_data(
        request(3, "console/answer", {"approvalId": "console_nope", "answer": "deny"}) + b"\n"
    )
    await until(lambda: len(out.messages()) == 3, what="both requests answered")
    by_id = {m["id"]: m for m in out.messages()}
    assert by_id[2]["error"]["code"] == -32600
    assert "longer than 1024 bytes" in by_id[2]["error"]["message"]
    assert by_id[3]["result"] == {"accepted": False}, "the line after it is served as usual"
    reader.feed_eof()
    assert await asyncio.wait_for(serving, 30) == 0
