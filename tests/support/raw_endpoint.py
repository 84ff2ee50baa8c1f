"""`symposium-tui vscodelm` as a raw process: bytes in, every output line recorded as it arrives,
and the valid chat that must still succeed afterwards."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from tests.support.lmclient import end_endpoint, spawn_endpoint

CHAT = "lm/provideLanguageModelChatResponse"
ELIZA_HELLO = "How do you do. Please state your problem."


def reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_loads(data: bytes) -> Any:
    """What a JSON-RPC client accepts: UTF-8 and standard JSON (no NaN/Infinity)."""
    return json.loads(data.decode("utf-8"), parse_constant=reject_constant)


def line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def request(
    id_: Any, method: str, params: Any = None, *, omit_params: bool = False
) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if not omit_params:
        msg["params"] = params
    return msg


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "value": text}]}


class RawEndpoint:
    """`symposium-tui vscodelm` over real pipes, recording every output line as it arrives."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.messages: list[dict[str, Any]] = []
        self.bad_output: list[bytes] = []
        self.by_id: dict[Any, list[dict[str, Any]]] = {}
        self.null_errors: list[dict[str, Any]] = []
        self.stderr = bytearray()
        self._changed = asyncio.Event()
        self._tasks = [
            asyncio.ensure_future(self._read()),
            asyncio.ensure_future(self._read_stderr()),
        ]

    @classmethod
    async def start(
        cls, *args: str, cwd: str | None = None, env: dict[str, str] | None = None
    ) -> RawEndpoint:
        return cls(await spawn_endpoint(*args, env=env, cwd=cwd))

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while raw := await self.proc.stdout.readline():
            try:
                msg = strict_loads(raw)
                assert isinstance(msg, dict)
            except (ValueError, AssertionError):
                self.bad_output.append(raw)
                continue
            self.messages.append(msg)
            if "method" not in msg:
                if msg.get("id") is None:
                    self.null_errors.append(msg)
                else:
                    self.by_id.setdefault(id_key(msg["id"]), []).append(msg)
            self._changed.set()
        self._changed.set()

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            self.stderr += chunk

    async def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def wait_until(self, predicate: Callable[[], bool], timeout: float) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self._changed.clear()
                if self.proc.stdout is not None and self._tasks[0].done():
                    raise AssertionError(
                        f"the endpoint closed its output; stderr:\n{self.stderr.decode(errors='replace')[-3000:]}"
                    )
                await self._changed.wait()

    def answers(self, id_: Any) -> list[dict[str, Any]]:
        return self.by_id.get(id_key(id_), [])

    def parts_of(self, id_: Any) -> list[dict[str, Any]]:
        return [
            m["params"]["part"]
            for m in self.messages
            if m.get("method") == "lm/responsePart"
            and id_key(m["params"].get("requestId")) == id_key(id_)
        ]

    async def close(self, timeout: float = 20) -> int:
        code = await end_endpoint(self.proc, timeout)
        await asyncio.gather(*self._tasks, return_exceptions=True)
        return code


def id_key(id_: Any) -> str:
    return json.dumps(id_)


async def final_chat(ep: RawEndpoint, id_: Any, text: str = "Hello") -> None:
    """A valid chat must still succeed. `text` starts a conversation of its own (a repeated first
    message would continue an earlier session, where Eliza answers differently)."""
    params = {"modelId": "m", "messages": [user(text)], "agent": {"eliza": {"deterministic": True}}}
    await ep.write(line(request(id_, CHAT, params)))
    await ep.wait_until(lambda: bool(ep.answers(id_)), 30)
    (answer,) = ep.answers(id_)
    assert answer.get("result") == {}, answer
    reply = "".join(p["value"] for p in ep.parts_of(id_))
    if text == "Hello":
        assert reply == ELIZA_HELLO
    else:
        assert reply.strip(), "Eliza answered nothing"
