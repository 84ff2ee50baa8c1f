"""A VS Code-like vscodelm client for tests: spawns `symposium-tui vscodelm` as a real subprocess
and speaks newline-delimited JSON-RPC to it over real pipes, as the Symposium extension does."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

ELIZA = {"eliza": {"deterministic": True}}


async def spawn_endpoint(
    *args: str, env: dict[str, str] | None = None, cwd: str | None = None
) -> asyncio.subprocess.Process:
    """`python -m symposium_tui [args] vscodelm` with its stdio on pipes, as the extension runs it
    (`env` adds to this process's environment; the line limit is the endpoint's, not the pipe's)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "symposium_tui",
        *args,
        "vscodelm",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
        cwd=cwd or str(REPO),
        limit=256 * 1024 * 1024,
    )


async def end_endpoint(proc: asyncio.subprocess.Process, timeout: float) -> int:
    """Close the endpoint's input, as the extension does when it goes away, and wait for it to
    exit; killed after `timeout` seconds. Its exit code."""
    if proc.stdin is not None and not proc.stdin.is_closing():
        proc.stdin.close()
    try:
        return await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        proc.kill()
        return await proc.wait()


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "value": text}]}


def assistant(*parts: Any) -> dict[str, Any]:
    content = [{"type": "text", "value": p} if isinstance(p, str) else p for p in parts]
    return {"role": "assistant", "content": content}


def tool_result(call_id: str, result: Any) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "toolCallId": call_id, "result": result}],
    }


def tool(name: str, description: str = "", schema: Any = None) -> dict[str, Any]:
    return {
        "name": name,
        "description": description or name,
        "inputSchema": schema if schema is not None else {"type": "object"},
    }


AGENT_ACTION = tool(
    "symposium-agent-action", "Request permission for an agent to execute an internal tool"
)


def eliza_process(*extra: str, deterministic: bool = True) -> dict[str, Any]:
    """Eliza as an external agent process (the flat McpServer form the extension sends)."""
    args = ["-m", "symposium_tui", "eliza", *(["--deterministic"] if deterministic else []), *extra]
    return {
        "id": "eliza-process",
        "name": "Eliza",
        "command": sys.executable,
        "args": args,
        "env": [],
    }


@dataclass
class Response:
    id: Any
    parts: list[dict[str, Any]] = field(default_factory=list)
    completed: bool = False  # lm/responseComplete seen
    result: Any = None
    error: dict[str, Any] | None = None
    order: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(p["value"] for p in self.parts if p["type"] == "text")

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return [p for p in self.parts if p["type"] == "tool_call"]

    def as_assistant(self) -> dict[str, Any]:
        """The assistant message VS Code would echo back for this response."""
        return {"role": "assistant", "content": list(self.parts)}


class LmClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._next_id = 0
        self._pending: dict[Any, Response] = {}
        self._done: dict[Any, asyncio.Future[Response]] = {}
        self.unsolicited: list[dict[str, Any]] = []  # errors with id null, unknown ids
        self.notifications: list[dict[str, Any]] = []
        self._reader = asyncio.ensure_future(self._read())
        self._waiters: list[asyncio.Future[dict[str, Any]]] = []

    @classmethod
    async def start(
        cls, *args: str, env: dict[str, str] | None = None, cwd: str | None = None
    ) -> LmClient:
        client = cls(await spawn_endpoint(*args, env=env, cwd=cwd))
        if "--event-log" in args:
            client.event_log = Path(args[args.index("--event-log") + 1])
        client.stderr_lines: list[str] = []
        client._stderr_task = asyncio.ensure_future(client._read_stderr())
        return client

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self.stderr_lines.append(line.decode(errors="replace").rstrip())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                break
            msg = json.loads(line)
            for w in self._waiters:
                if not w.done():
                    w.set_result(msg)
            self._waiters = [w for w in self._waiters if not w.done()]
            if "method" in msg:
                self.notifications.append(msg)
                rid = msg.get("params", {}).get("requestId")
                resp = self._pending.get(rid)
                if resp is None:
                    continue
                if msg["method"] == "lm/responsePart":
                    resp.parts.append(msg["params"]["part"])
                    resp.order.append("part")
                elif msg["method"] == "lm/responseComplete":
                    resp.completed = True
                    resp.order.append("complete")
                continue
            rid = msg.get("id")
            resp = self._pending.get(rid)
            if resp is None:
                self.unsolicited.append(msg)
                fut = self._done.get(rid)
                continue
            resp.order.append("response")
            if "error" in msg:
                resp.error = msg["error"]
            else:
                resp.result = msg.get("result")
            fut = self._done.pop(rid, None)
            if fut is not None and not fut.done():
                fut.set_result(resp)
        for fut in self._done.values():
            if not fut.done():
                fut.set_exception(EOFError("endpoint closed its output"))

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def send_raw(self, data: bytes | str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data.encode() if isinstance(data, str) else data)

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message) + "\n")

    def request(self, method: str, params: Any, id_: Any = None) -> asyncio.Future[Response]:
        rid = self.new_id() if id_ is None else id_
        self._pending[rid] = Response(rid)
        fut: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._done[rid] = fut
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return fut

    def chat_start(
        self,
        messages: list[dict[str, Any]],
        agent: Any = None,
        tools: list[dict[str, Any]] | None = None,
        model: str = "test-model",
    ) -> asyncio.Future[Response]:
        params: dict[str, Any] = {
            "modelId": model,
            "messages": messages,
            "agent": agent if agent is not None else ELIZA,
        }
        if tools is not None:
            params["options"] = {"tools": tools, "toolMode": "auto"}
        return self.request("lm/provideLanguageModelChatResponse", params)

    async def chat(
        self,
        messages: list[dict[str, Any]],
        agent: Any = None,
        tools: list[dict[str, Any]] | None = None,
        timeout: float = 30,
    ) -> Response:
        response = await asyncio.wait_for(self.chat_start(messages, agent, tools), timeout)
        await self.logged(response)
        return response

    event_log: Path | None = None

    async def logged(self, response: Response, timeout: float = 30) -> None:
        """When the endpoint keeps an event log: until the request's last event is in it. A
        request that only continues the conversation is answered before it is routed (the fast
        lane): its events are written just after its answer, not before."""
        log = self.event_log
        if log is None or response.error is not None:
            return
        from tests.support.waiting import until

        def finished() -> bool:
            for line in log.read_text().splitlines():
                event = json.loads(line)
                if event["type"] == "request_finished" and event["request_id"] == response.id:
                    return True
            return False

        await until(finished, timeout, what=f"request {response.id!r} in the event log")

    def cancel(self, request_id: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": "lm/cancel", "params": {"requestId": request_id}})

    def pending_response(self, request_id: Any) -> Response:
        return self._pending[request_id]

    async def next_message(self, timeout: float = 10) -> dict[str, Any]:
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        return await asyncio.wait_for(fut, timeout)

    async def wait_for_parts(self, request_id: Any, n: int = 1, timeout: float = 20) -> Response:
        resp = self._pending[request_id]
        async with asyncio.timeout(timeout):
            while len(resp.parts) < n:
                await asyncio.sleep(0.01)
        return resp

    async def close(self, timeout: float = 15) -> int:
        code = await end_endpoint(self.proc, timeout)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._reader, 5)
        return code


ECHO_AGENT_SCRIPT = str(REPO / "tests" / "agents" / "echo_agent.py")


def echo_agent(*extra: str) -> dict[str, Any]:
    """The test echo agent as an external process (flat McpServer form)."""
    return {
        "id": "echo",
        "name": "Echo",
        "command": sys.executable,
        "args": [ECHO_AGENT_SCRIPT, *extra],
        "env": [],
    }
