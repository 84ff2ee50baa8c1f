"""A scripted fake of the Anthropic Messages API, for driving real Claude Code offline.

Serve it on 127.0.0.1 (an ephemeral port) in the test's own event loop and point the agent at it
with ``ANTHROPIC_BASE_URL``::

    async with FakeAnthropic([tool_use("mcp__x__add", {"a": 1}), text("Done", chunks=3)]) as api:
        launch = claude_agent(home, api.base_url)
        ...
        assert tool_results(api.main_requests[-1]) == [...]

What Claude Code 2.1.83 (through Zed's ACP adapter 0.23.1) was seen sending:

- ``HEAD /`` once at start (a connectivity probe): answered 200.
- ``POST /v1/messages?beta=true`` with ``stream: true`` for every model turn: model
  ``claude-sonnet-4-6``, ``max_tokens`` 32000, ``thinking: {"type": "adaptive"}``,
  ``output_config: {"effort": "medium"}``, a ~27 kB system prompt, ~21 built-in tools (Bash, Read,
  Write, Edit, ...) plus ``mcp__<server>__<tool>`` for each MCP tool, and the user's text as the
  last block after ``<system-reminder>`` / ``<local-command-...>`` blocks. Tool results come back as
  ``tool_result`` blocks in the next request's last user message.
- No side calls (titles, quota probes, ``count_tokens``) were seen, with or without
  ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``. Should one come, a request without ``tools`` is a
  side call (see :func:`is_main_request`): it gets ``side_text`` and does not eat the script;
  ``/v1/messages/count_tokens`` gets a rough count.

A *script* is a list of turns consumed one per main request; when it runs out, ``default`` (a
short text) answers. For decisions that depend on what came back, pass ``respond``: a callable
(sync or async) taking the request body and returning a turn, or ``None`` to fall back to the
script. ``.requests`` holds every body received, ``.main_requests`` those that took a turn,
``.log`` every HTTP request (method, path, query, headers, body).

The same server also speaks the Gemini API dialect that Gemini CLI uses
(``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` and ``:generateContent``): the same
turns are rendered as ``text`` / ``functionCall`` parts, main requests are again those offering
tools, and Gemini CLI's JSON side calls (model routing, next-speaker check) get plausible JSON.
Point ``GOOGLE_GEMINI_BASE_URL`` at ``.base_url``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FakeAnthropic",
    "TextTurn",
    "ToolTurn",
    "ToolUse",
    "Turn",
    "is_main_request",
    "last_user_text",
    "serve_asgi",
    "text",
    "tool_results",
    "tool_use",
]


@dataclass
class TextTurn:
    """An assistant message of plain text, streamed in ``chunks`` pieces ``delay`` s apart."""

    text: str
    chunks: int = 1
    delay: float = 0.0
    stop_reason: str = "end_turn"


@dataclass
class ToolUse:
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: "toolu_" + uuid.uuid4().hex[:24])


@dataclass
class ToolTurn:
    """One assistant message carrying one or more ``tool_use`` blocks (after optional text)."""

    calls: list[ToolUse]
    text: str | None = None
    delay: float = 0.0


Turn = TextTurn | ToolTurn
Responder = Callable[[dict[str, Any]], Turn | Awaitable[Turn | None] | None]


def text(value: str, chunks: int = 1, delay: float = 0.0) -> TextTurn:
    return TextTurn(value, chunks=chunks, delay=delay)


def tool_use(
    *calls: ToolUse | tuple[str, dict[str, Any]] | str | dict[str, Any], text: str | None = None
) -> ToolTurn:
    """One assistant message calling tools: ``tool_use("Bash", {"command": "ls"})`` for one call,
    ``tool_use(("mcp__s__a", {...}), ("mcp__s__b", {...}))`` or ``tool_use(ToolUse(...), ...)``
    for several at once. ``text`` goes before the calls."""
    if len(calls) == 2 and isinstance(calls[0], str) and isinstance(calls[1], dict):
        calls = ((calls[0], calls[1]),)
    out: list[ToolUse] = []
    for c in calls:
        if isinstance(c, ToolUse):
            out.append(c)
        elif isinstance(c, str):
            out.append(ToolUse(c))
        elif isinstance(c, dict):
            raise TypeError("tool_use: give (name, input) pairs when calling several tools")
        else:
            out.append(ToolUse(c[0], dict(c[1])))
    return ToolTurn(out, text=text)


def is_main_request(body: dict[str, Any]) -> bool:
    """The agent's own conversation (it offers tools), not a side call (title, quota, ...)."""
    return bool(body.get("tools"))


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def tool_results(body: dict[str, Any], *, last_only: bool = True) -> list[dict[str, Any]]:
    """``tool_result`` blocks sent back to the model, as ``{"tool_use_id", "is_error", "text"}``.

    With ``last_only`` only the last user message is looked at (the results of the previous
    assistant turn); otherwise the whole conversation.
    """
    if "contents" in body:  # Gemini dialect: functionResponse parts
        contents = [c for c in body["contents"] if c.get("role") == "user"]
        if last_only:
            contents = contents[-1:]
        out = []
        for c in contents:
            for part in c.get("parts", []):
                fr = part.get("functionResponse")
                if fr:
                    response = fr.get("response")
                    value = (
                        response.get("output")
                        if isinstance(response, dict) and "output" in response
                        else response
                    )
                    out.append(
                        {
                            "tool_use_id": fr.get("id") or fr.get("name"),
                            "is_error": isinstance(response, dict) and "error" in response,
                            "text": value if isinstance(value, str) else json.dumps(value),
                        }
                    )
        return out
    messages = [m for m in body.get("messages", []) if m.get("role") == "user"]
    if last_only:
        messages = messages[-1:]
    out = []
    for m in messages:
        for b in _blocks(m):
            if b.get("type") != "tool_result":
                continue
            content = b.get("content")
            if isinstance(content, list):
                value = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            else:
                value = content or ""
            out.append(
                {
                    "tool_use_id": b.get("tool_use_id"),
                    "is_error": bool(b.get("is_error")),
                    "text": value,
                }
            )
    return out


_WRAPPERS = ("<system-reminder>", "<local-command-", "<command-name>", "<command-message>")


def last_user_text(body: dict[str, Any]) -> str:
    """The text the user typed last: the last user message that has any, without the
    ``<system-reminder>`` / ``<local-command-...>`` / ``<command-name>`` blocks Claude Code adds."""
    for m in reversed(body.get("messages", [])):
        if m.get("role") != "user":
            continue
        parts = [b.get("text", "") for b in _blocks(m) if b.get("type") == "text"]
        parts = [p for p in parts if not p.lstrip().startswith(_WRAPPERS)]
        if parts:
            return "\n".join(parts)
    return ""


def _split(value: str, n: int) -> list[str]:
    n = max(1, min(n, len(value) or 1))
    size, extra = divmod(len(value), n)
    out, pos = [], 0
    for i in range(n):
        step = size + (1 if i < extra else 0)
        out.append(value[pos : pos + step])
        pos += step
    return out


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class FakeAnthropic:
    """Async context manager; yields itself with ``.base_url``, ``.requests``, ``.main_requests``."""

    def __init__(
        self,
        script: Sequence[Turn] = (),
        *,
        respond: Responder | None = None,
        default: Turn | None = None,
        side_text: str = "Test session",
    ) -> None:
        self.script: list[Turn] = list(script)
        self.respond = respond
        self.default: Turn = default or TextTurn("(script exhausted)")
        self.side_text = side_text
        #: every request as ``{"method", "path", "query", "headers", "body"}``, in arrival order
        self.log: list[dict[str, Any]] = []
        #: every JSON body POSTed to /v1/messages (main and side calls)
        self.requests: list[dict[str, Any]] = []
        #: the bodies of main requests only (those that took a turn)
        self.main_requests: list[dict[str, Any]] = []
        #: the turns served to main requests, in order
        self.served: list[Turn] = []
        self.base_url = ""
        self._serving: Any = None
        self._ids = itertools.count(1)
        self._main_event = asyncio.Event()

    # -- script ------------------------------------------------------------------------------
    async def _next_turn(self, body: dict[str, Any]) -> Turn:
        turn: Turn | None = None
        if self.respond is not None:
            got = self.respond(body)
            turn = await got if inspect.isawaitable(got) else got
        if turn is None:
            turn = self.script.pop(0) if self.script else self.default
        return turn

    async def wait_main_requests(self, n: int, timeout: float = 10.0) -> None:
        """Wait until at least ``n`` main requests arrived."""

        async def _wait() -> None:
            while len(self.main_requests) < n:
                self._main_event.clear()
                await self._main_event.wait()

        await asyncio.wait_for(_wait(), timeout)

    # -- ASGI --------------------------------------------------------------------------------
    def _app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response, StreamingResponse
        from starlette.routing import Route

        async def record(request: Request) -> dict[str, Any] | None:
            raw = await request.body()
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            self.log.append(
                {
                    "method": request.method,
                    "path": request.url.path,
                    "query": request.url.query,
                    "headers": dict(request.headers),
                    "body": body,
                }
            )
            return body

        async def messages(request: Request) -> Response:
            body = await record(request)
            if not isinstance(body, dict):
                return JSONResponse(
                    _error("invalid_request_error", "body must be JSON"), status_code=400
                )
            self.requests.append(body)
            model = body.get("model", "claude-fake")
            if is_main_request(body):
                self.main_requests.append(body)
                self._main_event.set()
                turn = await self._next_turn(body)
                self.served.append(turn)
            else:
                turn = TextTurn(self.side_text)
            if body.get("stream"):
                return StreamingResponse(
                    self._stream(turn, model),
                    media_type="text/event-stream",
                    headers={"cache-control": "no-cache", "request-id": f"req_{next(self._ids)}"},
                )
            return JSONResponse(self._message(turn, model))

        async def count_tokens(request: Request) -> Response:
            body = await record(request)
            size = len(json.dumps(body)) if body is not None else 0
            return JSONResponse({"input_tokens": max(1, size // 4)})

        async def gemini(request: Request) -> Response:
            body = await record(request)
            model, _, action = request.path_params["target"].partition(":")
            if not isinstance(body, dict):
                return JSONResponse(
                    {"error": {"code": 400, "message": "body must be JSON"}}, status_code=400
                )
            if action == "countTokens":
                return JSONResponse({"totalTokens": max(1, len(json.dumps(body)) // 4)})
            if action not in ("generateContent", "streamGenerateContent"):
                return JSONResponse(
                    {"error": {"code": 404, "message": f"fake: no {action}"}}, status_code=404
                )
            self.requests.append(body)
            if is_main_request(body):
                self.main_requests.append(body)
                self._main_event.set()
                turn = await self._next_turn(body)
                self.served.append(turn)
            else:
                turn = TextTurn(self._gemini_side_answer(body))
            if action == "streamGenerateContent":
                return StreamingResponse(
                    self._gemini_stream(turn, model), media_type="text/event-stream"
                )
            return JSONResponse(self._gemini_chunk(self._gemini_parts(turn), model, finish=True))

        async def other(request: Request) -> Response:
            await record(request)
            if request.url.path == "/":  # Claude Code's connectivity probe: HEAD /
                return Response(status_code=200)
            return JSONResponse(
                _error("not_found_error", f"fake: no {request.url.path}"), status_code=404
            )

        methods = ["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS"]
        return Starlette(
            routes=[
                Route("/v1/messages", messages, methods=["POST"]),
                Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
                Route("/v1beta/models/{target:path}", gemini, methods=["POST"]),
                Route("/{path:path}", other, methods=methods),
            ]
        )

    def _blocks_of(self, turn: Turn) -> list[dict[str, Any]]:
        if isinstance(turn, TextTurn):
            return [{"type": "text", "text": turn.text}]
        blocks: list[dict[str, Any]] = []
        if turn.text:
            blocks.append({"type": "text", "text": turn.text})
        for call in turn.calls:
            blocks.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}
            )
        return blocks

    @staticmethod
    def _stop_reason(turn: Turn) -> str:
        return turn.stop_reason if isinstance(turn, TextTurn) else "tool_use"

    def _message(self, turn: Turn, model: str) -> dict[str, Any]:
        return {
            "id": f"msg_fake{next(self._ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": self._blocks_of(turn),
            "stop_reason": self._stop_reason(turn),
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }

    async def _stream(self, turn: Turn, model: str) -> AsyncIterator[bytes]:
        msg = self._message(turn, model)
        msg["content"] = []
        msg["stop_reason"] = None
        msg["usage"] = {"input_tokens": 10, "output_tokens": 1}
        yield _sse("message_start", {"type": "message_start", "message": msg})
        delay = turn.delay
        for index, block in enumerate(self._blocks_of(turn)):
            if block["type"] == "text":
                yield _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
                pieces = _split(block["text"], turn.chunks if isinstance(turn, TextTurn) else 1)
                for i, piece in enumerate(pieces):
                    if delay and i:
                        await asyncio.sleep(delay)
                    yield _sse(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "text_delta", "text": piece},
                        },
                    )
            else:
                if delay:
                    await asyncio.sleep(delay)
                start = dict(block, input={})
                yield _sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
                raw = json.dumps(block["input"])
                for piece in _split(raw, 2):
                    yield _sse(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": piece},
                        },
                    )
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        yield _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": self._stop_reason(turn), "stop_sequence": None},
                "usage": {"output_tokens": 10},
            },
        )
        yield _sse("message_stop", {"type": "message_stop"})

    # -- Gemini dialect (``:generateContent`` / ``:streamGenerateContent?alt=sse``) ----------------
    def _gemini_side_answer(self, body: dict[str, Any]) -> str:
        config = body.get("generationConfig") or body.get("config") or {}
        if config.get("responseMimeType") == "application/json":
            # Gemini CLI's own JSON side calls (model routing, next-speaker check)
            schema = json.dumps(
                config.get("responseJsonSchema") or config.get("responseSchema") or {}
            )
            if "next_speaker" in schema:
                return json.dumps({"reasoning": "done", "next_speaker": "user"})
            if "complexity" in schema:
                return json.dumps({"complexity_reasoning": "simple", "complexity_score": 1})
            return "{}"
        return self.side_text

    def _gemini_parts(self, turn: Turn) -> list[dict[str, Any]]:
        if isinstance(turn, TextTurn):
            return [{"text": turn.text}]
        parts: list[dict[str, Any]] = [{"text": turn.text}] if turn.text else []
        parts += [
            {"functionCall": {"id": c.id, "name": c.name, "args": c.input}} for c in turn.calls
        ]
        return parts

    def _gemini_chunk(
        self, parts: list[dict[str, Any]], model: str, *, finish: bool
    ) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = "STOP"
        return {
            "candidates": [candidate],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 10,
                "totalTokenCount": 20,
            },
            "modelVersion": model,
            "responseId": f"resp_fake{next(self._ids):06d}",
        }

    async def _gemini_stream(self, turn: Turn, model: str) -> AsyncIterator[bytes]:
        if isinstance(turn, TextTurn):
            pieces = _split(turn.text, turn.chunks)
            for i, piece in enumerate(pieces):
                if turn.delay and i:
                    await asyncio.sleep(turn.delay)
                chunk = self._gemini_chunk([{"text": piece}], model, finish=i == len(pieces) - 1)
                yield f"data: {json.dumps(chunk)}\r\n\r\n".encode()
        else:
            if turn.delay:
                await asyncio.sleep(turn.delay)
            chunk = self._gemini_chunk(self._gemini_parts(turn), model, finish=True)
            yield f"data: {json.dumps(chunk)}\r\n\r\n".encode()

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> FakeAnthropic:
        self._serving = serve_asgi(self._app(), lifespan="off")
        self.base_url = await self._serving.__aenter__()
        return self

    async def stop(self) -> None:
        serving, self._serving = self._serving, None
        if serving is not None:
            await serving.__aexit__(None, None, None)

    async def __aenter__(self) -> FakeAnthropic:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


@contextlib.asynccontextmanager
async def serve_asgi(
    app: Any, *, lifespan: str = "auto", graceful: float = 1.0
) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on 127.0.0.1 (an ephemeral port) in the running loop;
    yield ``http://127.0.0.1:<port>``. ``graceful`` bounds the wait for open streams at exit
    (an agent's MCP SSE stream would otherwise hold shutdown)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan=lifespan,
        timeout_graceful_shutdown=graceful,
        access_log=False,
    )
    server = uvicorn.Server(config)
    # ``_serve`` skips uvicorn's SIGINT/SIGTERM capture, which belongs to the test runner
    serve = getattr(server, "_serve", server.serve)
    task = asyncio.create_task(serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("uvicorn stopped before it started")
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(task, graceful + 5)
        if not task.done():
            task.cancel()
        sock.close()


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


async def _main() -> None:  # manual use: python tests/agents/fake_anthropic.py
    async with FakeAnthropic(default=TextTurn("Hello from the fake API.", chunks=4)) as api:
        print(api.base_url, flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(_main())
