"""The OpenAI door's raw ASGI plumbing: request headers and body, JSON and SSE answers, and the
loop that streams an exchange to one client (several clients may follow one exchange: retries)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from bridge.openai.errors import OpenAIError, bad_request
from bridge.openai.exchange import Exchange

MAX_BODY = 64 * 1024 * 1024
SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
JSON_HEADERS = [(b"content-type", b"application/json")]


class Disconnected(Exception):
    pass


def may_retry(headers: dict[bytes, bytes]) -> bool:
    """Might the client send this request again (an SDK's retry loop, an idempotency key)?"""
    return b"x-stainless-retry-count" in headers or b"idempotency-key" in headers


MAX_CONVERSATION_ID = 256


def conversation_id(headers: dict[bytes, bytes]) -> str | None:
    raw = headers.get(b"x-conversation-id")
    if raw is None:
        return None
    value = raw.decode("latin-1").strip()
    if not value or len(value) > MAX_CONVERSATION_ID:
        raise bad_request(
            f"Invalid 'x-conversation-id' header: expected 1 to {MAX_CONVERSATION_ID} characters.",
            "x-conversation-id",
        )
    return value


async def read_body(receive: Any) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected
        body = message.get("body", b"")
        if body:
            size += len(body)
            if size > MAX_BODY:
                raise OpenAIError(
                    413,
                    f"The request body is larger than {MAX_BODY} bytes.",
                    code="request_too_large",
                )
            chunks.append(body)
        if not message.get("more_body", False):
            return b"".join(chunks) if len(chunks) != 1 else chunks[0]


async def send_json(
    send: Any, status: int, payload: Any, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = (
        payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode()
    )
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": (headers or JSON_HEADERS) + [(b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_error(send: Any, err: OpenAIError) -> None:
    await send_json(send, err.status, err.encode(), err.response_headers())


def endpoint(fn: Any) -> Any:
    """A raw ASGI endpoint for Starlette's router (no Request object on the hot path)."""

    class _Asgi:
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            try:
                await fn(scope, receive, send)
            except OpenAIError as err:
                await send_error(send, err)
            except Disconnected:
                return

    return _Asgi()


def is_retry(headers: dict[bytes, bytes]) -> bool:
    raw = headers.get(b"x-stainless-retry-count")
    try:
        return raw is not None and int(raw) > 0
    except ValueError:
        return False


async def answer(
    ex: Exchange, encoder: Any, stream: bool, receive: Any, send: Any, grace: float, whole: Any
) -> None:
    """Send `ex`'s answer to one client: whole (`whole()`) or streamed through `encoder`. A client
    that goes away detaches; before the response started, `grace` seconds are left for a retry."""
    reply = _Reply(ex, send)
    ex.attach(reply.wake)
    watcher = asyncio.ensure_future(reply.watch(receive))
    try:
        if stream:
            await reply.stream(encoder)
        else:
            await reply.whole(whole)
    except OSError:  # the client went away while we wrote
        reply.disconnected = True
    finally:
        watcher.cancel()
        ex.detach(
            reply.wake,
            disconnected=reply.disconnected,
            grace=grace if not reply.started else 0.0,
        )


class _Reply:
    """One client's reply to an exchange, woken by `wake` when the exchange moves on."""

    def __init__(self, ex: Exchange, send: Any) -> None:
        self.ex = ex
        self.send = send
        self.wake = asyncio.Event()
        self.disconnected = False
        self.started = False  # the response began (nothing else can be sent in its place)

    async def watch(self, receive: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.disconnected = True
                self.wake.set()
                return

    async def wait(self) -> None:
        await self.wake.wait()
        self.wake.clear()

    async def whole(self, whole: Any) -> None:
        ex = self.ex
        while not ex.done and not self.disconnected:
            await self.wait()
        if self.disconnected:
            return
        if ex.error is not None:
            await send_error(self.send, ex.error)
        else:
            await send_json(self.send, 200, whole())

    async def stream(self, encoder: Any) -> None:
        """Server-sent events as the exchange's parts arrive."""
        ex, send = self.ex, self.send
        sent = 0
        while not self.disconnected:
            parts = ex.parts
            n = len(parts)
            if not self.started:
                if n == 0 and not ex.done:
                    await self.wait()
                    continue
                if n == 0 and ex.error is not None:
                    await send_error(send, ex.error)
                    return
                await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
                self.started = True
                chunk = encoder.start()
            else:
                chunk = b""
            if sent < n:
                chunk += encoder.encode(parts[sent:n])
                sent = n
            if ex.done and sent == len(ex.parts):
                chunk += encoder.error(ex.error) if ex.error is not None else encoder.end()
                await send({"type": "http.response.body", "body": chunk, "more_body": False})
                return
            if chunk:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if sent == len(ex.parts) and not ex.done and not self.disconnected:
                await self.wait()
