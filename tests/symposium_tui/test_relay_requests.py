"""Every request through the stdio relay answered once, whatever the client sends: two requests
with one id (JSON-RPC leaves ids to the client), a last line without its newline before the end of
input; and, with no console, the start-up fast path's last line too. Real processes: the client
here, `symposium-tui vscodelm` (the relay) and a console process with the real host."""

from __future__ import annotations

import asyncio
import json
import signal

from bridge.jsonrpc import LinePieces
from tests.support.lmclient import ELIZA, end_endpoint, spawn_endpoint, user
from tests.symposium_tui.test_hosting import ASK, ConsoleProcess


def chat(rid, text: str) -> bytes:
    params = {"modelId": "m", "messages": [user(text)], "agent": ELIZA}
    message = {"jsonrpc": "2.0", "id": rid, "method": "lm/provideLanguageModelChatResponse"}
    return json.dumps({**message, "params": params}).encode() + b"\n"


def count(rid) -> bytes:
    message = {"jsonrpc": "2.0", "id": rid, "method": "lm/provideTokenCount"}
    return json.dumps({**message, "params": {"modelId": "m", "text": "one two"}}).encode() + b"\n"


class Answers:
    """The endpoint's stdout, kept: its responses (lines with an id and no method)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.responses: list[dict] = []
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            if "method" not in message:
                self.responses.append(message)

    async def until(self, n: int) -> list[dict]:
        async with asyncio.timeout(30):
            while len(self.responses) < n:
                await asyncio.sleep(0.01)
        return self.responses

    async def all(self) -> list[dict]:
        """Every response, once the endpoint has exited."""
        await asyncio.wait_for(self._reader, 30)
        return self.responses


async def test_two_requests_with_one_id_are_both_answered_when_input_ends_first(tmp_path):
    console = await ConsoleProcess.start("hold", tmp_path)
    proc = await spawn_endpoint("--cwd", str(tmp_path))
    answers = Answers(proc)
    try:
        assert proc.stdin is not None
        proc.stdin.write(chat(7, ASK))  # held on its approval
        await console.wait_for("APPROVAL")
        proc.stdin.write(count(7))  # the same id
        await answers.until(1)
        proc.stdin.close()  # the client is done sending: the relay still owes the chat its answer
        await console.stop(signal.SIGTERM)  # (its held approval is denied: the turn ends)
        responses = await answers.all()
    finally:
        await end_endpoint(proc, 15)
        await console.stop()
    assert [r["id"] for r in responses] == [7, 7]
    assert responses[0]["result"] == 1  # the count (of "one two")
    assert responses[1]["error"]["code"] == -32000  # the chat, cut off by the console's leaving


async def test_two_requests_with_one_id_in_flight_are_both_answered_when_the_console_dies(
    tmp_path,
):
    console = await ConsoleProcess.start("hold", tmp_path)
    proc = await spawn_endpoint("--cwd", str(tmp_path))
    answers = Answers(proc)
    try:
        assert proc.stdin is not None
        proc.stdin.write(chat(7, ASK))
        proc.stdin.write(chat(7, ASK + " now"))  # another conversation, the same id
        async with asyncio.timeout(30):
            while len(console.seen("APPROVAL")) < 2:
                await asyncio.sleep(0.02)
        await console.stop(signal.SIGKILL)
        responses = await answers.until(2)
    finally:
        await end_endpoint(proc, 15)
    assert [(r["id"], r["error"]["code"]) for r in responses] == [(7, -32000), (7, -32000)]


async def test_a_last_line_without_its_newline_is_relayed_and_answered(tmp_path):
    console = await ConsoleProcess.start("approve", tmp_path)
    proc = await spawn_endpoint("--cwd", str(tmp_path))
    answers = Answers(proc)
    try:
        assert proc.stdin is not None
        proc.stdin.write(count("a") + count("last").rstrip(b"\n"))
        proc.stdin.close()
        responses = await answers.all()
    finally:
        await end_endpoint(proc, 15)
        await console.stop()
    assert [(r["id"], r["result"]) for r in responses] == [("a", 1), ("last", 1)]


async def test_with_no_console_a_last_line_without_its_newline_is_answered_at_start_up(tmp_path):
    for request in (count("only"), chat("only", "Hello")):
        proc = await spawn_endpoint("--cwd", str(tmp_path))
        answers = Answers(proc)
        assert proc.stdin is not None
        proc.stdin.write(request.rstrip(b"\n"))  # written at once, before the bridge is loaded
        proc.stdin.close()
        responses = await answers.all()
        await end_endpoint(proc, 15)
        assert [r["id"] for r in responses] == ["only"], responses


def test_line_pieces_hand_out_whole_lines_and_keep_the_rest_as_it_came():
    pieces = LinePieces(b'{"a":')
    assert pieces.feed(b"1") == b""
    assert pieces.size == len(b'{"a":1')
    assert pieces.feed(b'}\n{"b":2}\n{"c"') == b'{"a":1}\n{"b":2}\n'
    assert pieces.rest() == b'{"c"'
    assert pieces.feed(b":3}\n") == b'{"c":3}\n'
    assert (pieces.size, pieces.rest()) == (0, b"")
