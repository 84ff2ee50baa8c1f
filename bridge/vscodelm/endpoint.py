"""The vscodelm front door: the Symposium extension's JSON-RPC methods over one connection.

Every chat request is answered with its `lm/responsePart` notifications, then
`lm/responseComplete`, then the result — or with an error: -32602 for bad params, -32000 when the
agent session failed, and an error containing "cancelled" when it was cancelled or superseded
(decision 3), which the extension turns into a CancellationError.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from bridge import events as ev
from bridge.core import Bridge, ConnectionCore
from bridge.jsonrpc import INVALID_PARAMS, REQUEST_CANCELLED, SESSION_ERROR, RpcError, classify
from bridge.protocol import describe_validation_error
from bridge.rpc import Answer, JsonRpcPeer
from bridge.sessions import ChatRequest, RequestCancelled, ResponseStream, SessionFailed
from bridge.vscodelm.fastlane import FastLane, FastTurn
from bridge.vscodelm.fastpath import (
    CANCEL,
    CHAT_INFORMATION,
    CHAT_RESPONSE,
    TOKEN_COUNT,
    chat_information,
    token_count,
)
from bridge.vscodelm.prefix_cache import PrefixCache
from bridge.vscodelm.wire import CancelParams

log = logging.getLogger("bridge.vscodelm")  # the door's name in the logs


class VscodeLmEndpoint:
    def __init__(self, peer: JsonRpcPeer, core: ConnectionCore) -> None:
        self.peer = peer
        self.core = core
        # Reads and validates only what a request adds to a history this connection has seen.
        self.prefixes = PrefixCache()
        # Requests cancelled before their handler took its first step: VS Code sends `lm/cancel`
        # right behind its request when Stop is pressed at once, and both may be read (from the
        # start-up fast path's hand-over, or one read of the pipe) before the request's task runs.
        self._cancelled_early: set[Any] = set()
        peer.predecode = self.prefixes.predecode
        # Answers a request that only continues the conversation before routing it.
        self.lane = FastLane(self)
        peer.take_ahead = self.lane.take
        peer.on_request(CHAT_RESPONSE, self.chat_response)
        peer.on_request(TOKEN_COUNT, self.token_count)
        peer.on_request(CHAT_INFORMATION, self.chat_information)
        peer.on_notification(CANCEL, self.cancel)

    async def token_count(self, params: Any, request_id: Any) -> int:
        return token_count(params)

    async def chat_information(self, params: Any, request_id: Any) -> dict[str, Any]:
        return chat_information(params)

    async def chat_response(self, params: Any, request_id: Any) -> dict[str, Any]:
        try:
            return await self._chat_response(params, request_id)
        finally:
            self._cancelled_early.discard(request_id)

    async def _chat_response(self, params: Any, request_id: Any) -> dict[str, Any]:
        parsed, request = self._request(params, request_id)
        core = self.core
        peer = self.peer
        writer = self.part_writer(request_id)
        stream = ResponseStream(request_id, writer.write)
        stream.flush = peer.flush
        stream.on_complete = _completer(peer, request_id, peer.answer_of_this_request())
        if request_id in self._cancelled_early:
            # Never routed: the agent is not started or prompted for a request already cancelled.
            stream.cancel()
            core.request_finished(stream, "cancelled", "Request cancelled")
            raise RpcError(REQUEST_CANCELLED, "Request cancelled")
        # From here until it is answered the request is found by `core.cancel` (its session
        # holds its stream from the first step of `chat`, before anything is awaited).
        await self._answered(stream, core.chat(request, stream))
        self.lane.expect_next(request_id, parsed, stream.session, writer.texts)
        return {}

    def _request(self, params: Any, request_id: Any) -> tuple[Any, ChatRequest]:
        """A chat request's params read (raising RpcError -32602), announced and made a request."""
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: expected an object")
        try:
            parsed = self.prefixes.parse(params)
        except ValidationError as exc:
            raise RpcError(
                INVALID_PARAMS, "Invalid params: " + describe_validation_error(exc)
            ) from None
        core = self.core
        core.bus.publish(
            lambda: ev.RequestReceived(
                connection=core.name,
                request_id=request_id,
                agent=params.get("agent"),
                messages=params.get("messages") or [],
                tools=[t.name for t in parsed.options.tools],
            )
        )
        try:
            request = core.make_request(
                request_id,
                parsed.agent,
                parsed.messages,
                parsed.options.tools,
                self.prefixes.reuses(parsed),
                unchanged=True,  # a request's values are never written to (the prefix cache's)
            )
        except ValueError as exc:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from None
        return parsed, request

    async def _answered(self, stream: ResponseStream, answering: Awaitable[None]) -> None:
        """Until `stream` is finished by `answering`; a request that did not complete raises the
        RpcError it is answered with."""
        try:
            await answering
        except RequestCancelled as exc:
            raise RpcError(REQUEST_CANCELLED, str(exc) or "Request cancelled") from None
        except SessionFailed as exc:
            raise RpcError(SESSION_ERROR, str(exc)) from None
        except asyncio.CancelledError:
            if not stream.done:
                if stream.session is not None:
                    stream.session.cancel_stream(
                        stream, "Request cancelled: the endpoint is shutting down"
                    )
                else:
                    stream.cancel()
            raise
        if stream.on_complete is not None:
            stream.on_complete()  # sent already, as the stream completed

    # --- the fast lane's requests (bridge.vscodelm.fastlane) -------------------------------------

    @property
    def cancelled_early(self) -> bool:
        """Some request was cancelled before its handler took its first step."""
        return bool(self._cancelled_early)

    def part_writer(self, request_id: Any) -> PartWriter:
        return PartWriter(self.peer, request_id)

    def adopt(self, turn: FastTurn) -> bool:
        """Read and route a request the fast lane answered ahead, and have its session adopt
        the turn (False when it is not the turn that was prompted)."""
        msg = self.prefixes.predecode(turn.line) or classify(turn.line)
        if msg is None or msg.kind != "request" or msg.method != CHAT_RESPONSE:
            return False
        request_id = msg.id
        if type(request_id) is not int or request_id != turn.request_id:
            return False
        try:
            parsed, request = self._request(msg.params, request_id)
        except RpcError:
            return False
        stream = ResponseStream(request_id, turn.writer.write)
        stream.flush = self.peer.flush
        stream.on_complete = _completer(self.peer, request_id, turn.answer)
        if not self.core.adopt(request, stream, turn):
            return False

        async def answered() -> dict[str, Any]:
            try:
                await self._answered(stream, stream.wait())
            finally:
                self._cancelled_early.discard(request_id)
            self.lane.expect_next(request_id, parsed, stream.session, turn.writer.texts)
            return {}

        self.peer.adopt(turn.answer, answered)
        return True

    def cancel(self, params: Any) -> None:
        try:
            request_id = CancelParams.model_validate(params).requestId
        except ValidationError:
            log.warning("lm/cancel with bad params: %r", params)
            return
        if self.core.cancel(request_id):
            return
        if self.peer.unanswered(CHAT_RESPONSE, request_id):
            self._cancelled_early.add(request_id)  # read, not yet started: it ends as it starts
            return
        log.debug("lm/cancel for unknown or finished request %r", request_id)


def _completer(peer: JsonRpcPeer, request_id: Any, answer: Answer) -> Callable[[], None]:
    def complete() -> None:
        # Answered as the stream completes, from the turn's own step: the answer joins the
        # reply's last parts in one write, and the client is woken once for both.
        if answer.sent:
            return
        peer.notify("lm/responseComplete", {"requestId": request_id})
        answer.send({})

    return complete


# A text part's value as JSON, as `json.dumps(value, ensure_ascii=False)` writes it (without an
# encoder made for each part).
_json_text = json.JSONEncoder(ensure_ascii=False).encode


class PartWriter:
    """What writes a request's `lm/responsePart`s. Text parts are most of a streamed reply:
    their line is built from a template rather than serializing a fresh dict per chunk. It keeps
    the texts it wrote (`texts`: None once a part of another kind went out), the reply the
    client will echo."""

    __slots__ = ("_notify", "_prefix", "_send_raw", "request_id", "texts")

    def __init__(self, peer: JsonRpcPeer, request_id: Any) -> None:
        self._send_raw, self._notify = peer.send_raw, peer.notify
        self.request_id = request_id
        self._prefix = (
            b'{"jsonrpc":"2.0","method":"lm/responsePart","params":{"requestId":'
            + (b"%d" % request_id if type(request_id) is int else json.dumps(request_id).encode())
            + b',"part":{"type":"text","value":'
        )
        self.texts: list[str] | None = []

    def text(self, value: str) -> None:
        if self.texts is not None:
            self.texts.append(value)
        try:
            encoded = _json_text(value).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: echo it escaped
            encoded = json.dumps(value).encode("ascii")
        self._send_raw(self._prefix + encoded + b"}}}")

    def write(self, part: dict[str, Any]) -> None:
        if part["type"] == "text" and len(part) == 2 and type(part["value"]) is str:
            self.text(part["value"])
        else:
            self.texts = None
            self._notify("lm/responsePart", {"requestId": self.request_id, "part": part})


async def serve_connection(
    bridge: Bridge,
    reader: asyncio.StreamReader,
    writer: Any,
    *,
    kind: str = "vscodelm",
    preread: list[bytes] | None = None,
    on_recv: Any = None,
    on_send: Any = None,
    configure: Any = None,
    shutdown_message: str | None = None,
) -> None:
    """Serve one vscodelm connection until its input ends, then close its agent sessions.

    `configure(peer, core)` may install an interceptor on the peer (see symposium_tui.hosting.switch) and
    return what to await when the connection ends (an `async def` taking nothing): what it started
    ends with the connection, before the agent sessions close."""
    core = bridge.open_connection(kind)
    peer = JsonRpcPeer(reader, writer, name=core.name, on_recv=on_recv, on_send=on_send)
    VscodeLmEndpoint(peer, core)
    closing = configure(peer, core) if configure is not None else None
    try:
        await peer.serve(preread)
    finally:
        core.settle()  # a turn answered ahead is routed: its request is the peer's to end
        await peer.shutdown(shutdown_message)
        if closing is not None:
            await closing()
        await core.close()
