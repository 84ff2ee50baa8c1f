"""A scripted fake of OpenAI's Responses API, for driving the real Codex CLI offline.

Codex reaches it as a custom model provider (`CODEX_HOME/config.toml`)::

    model_provider = "fake"
    [model_providers.fake]
    name = "fake"
    base_url = "<.base_url>/v1"
    wire_api = "responses"

Each `POST /v1/responses` (streamed, `stream: true`) takes the next turn of the script: a
``call(name, arguments)`` answers with one `function_call` output item, a ``say(text)`` with one
assistant message. When the script runs out, a short text answers. ``.requests`` holds every body
received; ``outputs(body)`` gives the `function_call_output` items a request carries back (what a
tool, or a hook that blocked it, returned to the model).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.agents.fake_anthropic import serve_asgi

__all__ = ["Call", "FakeResponses", "Say", "call", "outputs", "say"]


@dataclass
class Call:
    name: str
    arguments: dict[str, Any]
    call_id: str = ""


@dataclass
class Say:
    text: str


Turn = Call | Say


def call(name: str, arguments: dict[str, Any]) -> Call:
    return Call(name, arguments)


def say(text: str) -> Say:
    return Say(text)


def outputs(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        item
        for item in body.get("input") or ()
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


@dataclass
class FakeResponses:
    script: Sequence[Turn] = ()
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""

    def __post_init__(self) -> None:
        self._script = list(self.script)
        self._ids = itertools.count(1)
        self._serving: Any = None

    def _app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response, StreamingResponse
        from starlette.routing import Route

        async def responses(request: Request) -> Response:
            try:
                body = json.loads(await request.body())
            except ValueError:
                return JSONResponse({"error": {"message": "body must be JSON"}}, status_code=400)
            self.requests.append(body)
            turn = self._script.pop(0) if self._script else Say("(script exhausted)")
            return StreamingResponse(self._stream(turn, body), media_type="text/event-stream")

        async def other(request: Request) -> Response:
            return JSONResponse({"object": "list", "data": []})

        return Starlette(
            routes=[
                Route("/v1/responses", responses, methods=["POST"]),
                Route("/{rest:path}", other, methods=["GET", "POST", "HEAD"]),
            ]
        )

    async def _stream(self, turn: Turn, body: dict[str, Any]) -> AsyncIterator[bytes]:
        n = next(self._ids)
        rid = f"resp_{n}"
        model = body.get("model", "fake")
        base = {"id": rid, "object": "response", "model": model, "output": []}
        yield _sse({"type": "response.created", "response": {**base, "status": "in_progress"}})
        if isinstance(turn, Call):
            item = {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": turn.call_id or f"call_{n}",
                "name": turn.name,
                "arguments": json.dumps(turn.arguments),
                "status": "completed",
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{n}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        yield _sse({"type": "response.output_item.added", "output_index": 0, "item": item})
        yield _sse({"type": "response.output_item.done", "output_index": 0, "item": item})
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        done = {**base, "status": "completed", "output": [item], "usage": usage}
        yield _sse({"type": "response.completed", "response": done})

    async def __aenter__(self) -> FakeResponses:
        self._serving = serve_asgi(self._app(), lifespan="off")
        self.base_url = await self._serving.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        serving, self._serving = self._serving, None
        if serving is not None:
            await serving.__aexit__(None, None, None)
