"""A scripted fake of OpenAI's Responses API (a remote model API, which cannot run here), for
driving the real Codex (Zed's `codex-acp`) offline.

Serve it on 127.0.0.1 (an ephemeral port) in the test's own event loop and point Codex at it with a
custom model provider in `$CODEX_HOME/config.toml` (`tests/agents/install.codex_agent` writes one)::

    async with FakeResponses([say("Hello")]) as api:
        launch = codex_agent(home, api.base_url)

Codex posts every model turn to `POST /v1/responses` with `stream: true` and reads server-sent
events: `response.created`, `response.output_text.delta` while text streams,
`response.output_item.done` for each finished output item (a `message`, or a `function_call` it
then runs), and `response.completed`. A *script* is a list of turns, one per request; when it runs
out, a short text answers. `.requests` holds every JSON body received; `.log` every HTTP request;
`outputs(body)` gives the `function_call_output` items a request carries back (what a tool, or a
hook that blocked it, returned to the model).
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.agents.fake_anthropic import serve_asgi

__all__ = ["Call", "FakeResponses", "ResponseTurn", "call", "outputs", "say"]


@dataclass
class Call:
    """A function call the model makes: `name` with JSON `arguments`."""

    name: str
    arguments: dict[str, Any]
    call_id: str = ""


@dataclass
class ResponseTurn:
    text: str = ""
    calls: list[Call] = field(default_factory=list)


def say(text: str) -> ResponseTurn:
    return ResponseTurn(text=text)


def call(name: str, arguments: dict[str, Any], text: str = "") -> ResponseTurn:
    return ResponseTurn(text=text, calls=[Call(name, arguments)])


def outputs(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The `function_call_output` items of a request's input."""
    return [
        item
        for item in body.get("input") or ()
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


class FakeResponses:
    """Async context manager; yields itself with `.base_url` (ending in `/v1`) and `.requests`."""

    def __init__(self, script: Sequence[ResponseTurn] = ()) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.log: list[dict[str, Any]] = []
        self.base_url = ""
        self._ids = itertools.count(1)
        self._serving: Any = None

    def _app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response, StreamingResponse
        from starlette.routing import Route

        async def responses(request: Request) -> Response:
            raw = await request.body()
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            self.log.append({"method": request.method, "path": request.url.path, "body": body})
            if not isinstance(body, dict):
                return JSONResponse({"error": {"message": "body must be JSON"}}, status_code=400)
            self.requests.append(body)
            turn = self.script.pop(0) if self.script else say("(script exhausted)")
            return StreamingResponse(self._stream(turn), media_type="text/event-stream")

        async def other(request: Request) -> Response:
            self.log.append({"method": request.method, "path": request.url.path, "body": None})
            if request.url.path.endswith("/models"):
                return JSONResponse({"object": "list", "data": [], "models": []})
            return JSONResponse({"error": {"message": "fake: not here"}}, status_code=404)

        methods = ["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS"]
        return Starlette(
            routes=[
                Route("/v1/responses", responses, methods=["POST"]),
                Route("/{path:path}", other, methods=methods),
            ]
        )

    async def _stream(self, turn: ResponseTurn) -> AsyncIterator[bytes]:
        response_id = f"resp_{next(self._ids)}"
        yield _sse({"type": "response.created", "response": {"id": response_id}})
        if turn.text:
            item_id = f"msg_{next(self._ids)}"
            yield _sse(
                {"type": "response.output_text.delta", "item_id": item_id, "delta": turn.text}
            )
            yield _sse(
                {
                    "type": "response.output_item.done",
                    "item": {
                        "type": "message",
                        "id": item_id,
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": turn.text}],
                    },
                }
            )
        for made in turn.calls:
            item = {
                "type": "function_call",
                "id": f"fc_{next(self._ids)}",
                "name": made.name,
                "arguments": json.dumps(made.arguments),
                "call_id": made.call_id or f"call_{next(self._ids)}",
                "status": "completed",
            }
            yield _sse({"type": "response.output_item.added", "item": item})
            yield _sse({"type": "response.output_item.done", "item": item})
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        yield _sse({"type": "response.completed", "response": {"id": response_id, "usage": usage}})

    async def __aenter__(self) -> FakeResponses:
        self._serving = serve_asgi(self._app(), lifespan="off")
        self.base_url = await self._serving.__aenter__() + "/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            await self._serving.__aexit__(None, None, None)
