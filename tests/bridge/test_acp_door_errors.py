"""The ACP front door owes its client JSON-RPC 2.0's errors: a line from the client that is not a
valid JSON-RPC 2.0 message is answered once, with the code and id the vscodelm door gives it
(`bridge.jsonrpc`), and the door goes on serving the next line.

The proxy runs as a real subprocess (`symposium-tui acp -- <the echo agent>`) over real pipes;
each test writes the bad line and a valid `initialize` right after it, and reads until that one is
answered: everything the door wrote before is the bad line's answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ECHO = str(REPO / "tests" / "agents" / "echo_agent.py")
DOOR = [sys.executable, "-m", "symposium_tui", "acp", "--", sys.executable, ECHO]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def initialize(id_: str) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}},
    }
    return json.dumps(message).encode() + b"\n"


class Door:
    """The door's stdin and stdout, one line at a time."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self.stdin = proc.stdin
        self.stdout = proc.stdout
        self.sent = 0

    async def line(self) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.stdout.readline(), 60)
        assert raw, "the door closed its output"
        message: dict[str, Any] = json.loads(raw)
        return message

    async def answers_to(self, bad: bytes) -> list[dict[str, Any]]:
        """What the door writes for `bad` before it answers a valid request sent right after it
        (which must be answered, with a result)."""
        self.sent += 1
        follow = f"after-{self.sent}"
        self.stdin.write(bad + initialize(follow))
        await self.stdin.drain()
        seen = []
        while (message := await self.line()).get("id") != follow:
            seen.append(message)
        assert message["result"]["protocolVersion"] == 1
        return seen


@contextlib.asynccontextmanager
async def door() -> AsyncIterator[Door]:
    proc = await asyncio.create_subprocess_exec(
        *DOOR,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=str(REPO),
        env=dict(os.environ),
    )
    it = Door(proc)
    try:
        yield it
        # Nothing more comes late for a bad line: the next request's answer is all there is.
        assert await it.answers_to(b"") == []
    finally:
        it.stdin.close()
        with contextlib.suppress(ProcessLookupError):
            await asyncio.wait_for(proc.wait(), 30)


def error(id_: Any, code: int) -> tuple[Any, int]:
    return id_, code


def errors(answers: list[dict[str, Any]]) -> list[tuple[Any, int]]:
    for a in answers:
        assert set(a) == {"jsonrpc", "id", "error"} and a["jsonrpc"] == "2.0", a
    return [error(a["id"], a["error"]["code"]) for a in answers]


async def test_a_line_that_is_not_json_is_a_parse_error_with_id_null():
    deep = b'{"jsonrpc":"2.0","id":"deep","method":"initialize","params":{"x":'
    async with door() as d:
        for bad in (
            b'{"jsonrpc":"2.0","id":"x",\n',
            b'{"jsonrpc":"2.0","id":"u8","method":"initialize","params":{"x":"\xff"}}\n',
            deep + b"[" * 5000 + b"]" * 5000 + b"}}\n",
        ):
            answers = await d.answers_to(bad)
            assert errors(answers) == [error(None, PARSE_ERROR)], bad[:60]
            assert answers[0]["error"]["message"].startswith("Parse error")


async def test_a_batch_is_refused_as_an_invalid_request():
    async with door() as d:
        answers = await d.answers_to(b"[" + initialize("in-batch").strip() + b"]\n")
    assert errors(answers) == [error(None, INVALID_REQUEST)]
    assert "batch" in answers[0]["error"]["message"]


async def test_an_empty_batch_is_an_invalid_request():
    async with door() as d:
        assert errors(await d.answers_to(b"[]\n")) == [error(None, INVALID_REQUEST)]


async def test_a_value_that_is_not_an_object_is_an_invalid_request():
    async with door() as d:
        for bad in (b"5\n", b'"initialize"\n', b"null\n"):
            assert errors(await d.answers_to(bad)) == [error(None, INVALID_REQUEST)], bad


async def test_a_message_without_a_method_is_an_invalid_request_with_its_id():
    async with door() as d:
        answers = await d.answers_to(b'{"jsonrpc":"2.0","id":"nm"}\n')
        assert errors(answers) == [error("nm", INVALID_REQUEST)]
        assert errors(await d.answers_to(b'{"jsonrpc":"2.0","id":"mi","method":5}\n')) == [
            error("mi", INVALID_REQUEST)
        ]


async def test_an_id_json_rpc_forbids_is_refused_with_id_null():
    async with door() as d:
        for id_ in (b"true", b"{}", b"[]", b"0.5"):
            bad = initialize("ID").replace(b'"ID"', id_)
            assert errors(await d.answers_to(bad)) == [error(None, INVALID_REQUEST)], id_


async def test_a_message_that_is_not_json_rpc_2_is_refused_with_its_id():
    async with door() as d:
        no_version = {"id": "nj", "method": "initialize", "params": {"protocolVersion": 1}}
        answers = await d.answers_to(json.dumps(no_version).encode() + b"\n")
        assert errors(answers) == [error("nj", INVALID_REQUEST)]
        assert '"jsonrpc" must be "2.0"' in answers[0]["error"]["message"]
        old = {"jsonrpc": "1.0", "id": "j1", "method": "initialize", "params": {}}
        assert errors(await d.answers_to(json.dumps(old).encode() + b"\n")) == [
            error("j1", INVALID_REQUEST)
        ]


async def test_nan_in_the_params_is_a_parse_error():
    async with door() as d:
        bad = b'{"jsonrpc":"2.0","id":"nan","method":"initialize","params":{"protocolVersion":NaN}}'
        answers = await d.answers_to(bad + b"\n")
    assert errors(answers) == [error(None, PARSE_ERROR)]
    assert "NaN" in answers[0]["error"]["message"]
