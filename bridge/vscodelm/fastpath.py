"""The vscodelm endpoint's start-up fast path (standard library only).

VS Code spawns `symposium-tui vscodelm` lazily and its first request is often a token count. The
bridge proper needs asyncio, pydantic and the ACP SDK (~1 s of imports here), so this module
answers the requests that need none of them — token counts, model information, malformed lines —
straight from stdin while a background thread imports the rest. Everything else it reads is
handed, in order, to the asyncio endpoint once the imports are done.
"""

from __future__ import annotations

import os
import select
import sys
import threading
from collections.abc import Callable
from typing import Any

from bridge.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    Incoming,
    LinePieces,
    RpcError,
    classify,
    dumps,
    error_response,
    line_limit,
    result_response,
)

CHAT_RESPONSE = "lm/provideLanguageModelChatResponse"
TOKEN_COUNT = "lm/provideTokenCount"
CHAT_INFORMATION = "lm/provideLanguageModelChatInformation"
CANCEL = "lm/cancel"
KNOWN_METHODS = {CHAT_RESPONSE, TOKEN_COUNT, CHAT_INFORMATION, CANCEL}

MODEL_INFO = {
    "id": "symposium-eliza",
    "name": "Symposium (Eliza)",
    "family": "symposium",
    "version": "1.0.0",
    "maxInputTokens": 100000,
    "maxOutputTokens": 100000,
    "capabilities": {"toolCalling": True},
}


def token_count(params: Any) -> int:
    """max(1, UTF-8 bytes // 4), as upstream counts, answered as a bare integer (decision 4)."""
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: expected an object with modelId and text")
    for field in ("modelId", "text"):
        if field not in params:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {field}: field required")
        if not isinstance(params[field], str):
            raise RpcError(INVALID_PARAMS, f"Invalid params: {field}: expected a string")
    return max(
        1, len(params["text"].encode("utf-8", "surrogatepass")) // 4
    )  # a lone surrogate: 3 bytes


def chat_information(params: Any) -> dict[str, Any]:
    if params is not None and not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: expected an object")
    silent = (params or {}).get("silent", False)
    if not isinstance(silent, bool):
        raise RpcError(INVALID_PARAMS, "Invalid params: silent: expected a boolean")
    return {"models": [dict(MODEL_INFO)]}


CHEAP_HANDLERS: dict[str, Callable[[Any], Any]] = {
    TOKEN_COUNT: token_count,
    CHAT_INFORMATION: chat_information,
}


def answer_cheap(msg: Incoming) -> dict[str, Any] | None:
    """The response for a message needing no session, or None if the endpoint proper must handle it."""
    if msg.kind == "invalid":
        return msg.error  # None for a dropped bad notification
    if msg.kind != "request":
        return None
    handler = CHEAP_HANDLERS.get(msg.method or "")
    if handler is None:
        if msg.method == CHAT_RESPONSE:
            return None  # needs a session (lm/cancel is a notification: as a request it is unknown)
        return error_response(msg.id, METHOD_NOT_FOUND, f"Method not found: {msg.method}")
    try:
        return result_response(msg.id, handler(msg.params))
    except RpcError as exc:
        return error_response(msg.id, exc.code, exc.message, exc.data)
    except Exception as exc:  # a bug must cost one request, never the endpoint
        return error_response(
            msg.id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}"
        )


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class Handover:
    """What the fast path read but did not answer, for the asyncio endpoint to continue with."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.rest = b""
        self.eof = False


def serve_until_loaded(
    loaded: threading.Event,
    *,
    in_fd: int = 0,
    out_fd: int = 1,
    on_recv: Callable[[bytes], None] | None = None,
    on_send: Callable[[bytes], None] | None = None,
    initial: bytes = b"",
    limit: int | None = None,
) -> Handover:
    """Answer cheap requests from `in_fd` until `loaded` is set or input ends.

    A line over `limit` (default: the endpoint's, `line_limit()`) stops the fast path where it
    starts: it is handed over unread, so the endpoint proper answers it as it answers every
    over-long line (once, with its id when that can be recovered), and the fast path never holds
    more than one limit's worth of input."""
    if limit is None:
        limit = line_limit()
    hand = Handover()
    pieces = LinePieces()
    chunk, last = initial, False  # first answer what was read before we were called
    while True:
        lines = pieces.feed(chunk)
        at = 0
        while at < len(lines):
            nl = lines.index(b"\n", at)
            if nl - at > limit:
                hand.rest = lines[at:] + pieces.rest()  # an over-long line: the endpoint
                return hand  # proper answers it
            line, at = lines[at:nl], nl + 1
            if on_recv is not None:
                on_recv(line)
            _take_line(line, hand, out_fd, on_send)
        if pieces.size > limit:
            hand.rest = pieces.rest()
            return hand
        if last or loaded.is_set():
            break
        try:
            ready, _, _ = select.select([in_fd], [], [], 0.02)
        except (OSError, ValueError):
            break
        chunk = os.read(in_fd, 1 << 20) if ready else b""
        if ready and not chunk:
            hand.eof = True
            if not pieces.size:
                break
            chunk, last = b"\n", True  # a last line without its newline is a line too
    hand.rest = pieces.rest()
    return hand


def _take_line(
    line: bytes, hand: Handover, out_fd: int, on_send: Callable[[bytes], None] | None
) -> None:
    """Answer one line read by the fast path, or keep it for the endpoint proper."""
    if hand.lines:
        # Once a request is waiting for the endpoint proper, keep everything in order.
        hand.lines.append(line)
        return
    msg = classify(line)
    if msg is None:
        return
    reply = answer_cheap(msg)
    if reply is None:
        # Only a chat request needs the endpoint proper. Before one, a notification (a stray
        # lm/cancel from a client that respawned us) or a client response has nothing to act
        # on: dropping it keeps the fast path answering what follows.
        if msg.kind == "request":
            hand.lines.append(line)
        return
    data = dumps(reply)
    if on_send is not None:
        on_send(data[:-1])
    _write_all(out_fd, data)


def start_loader(target: Callable[[], None]) -> threading.Event:
    """Run the heavy imports in a daemon thread; the event is set when they are done (or failed)."""
    done = threading.Event()

    def run() -> None:
        try:
            target()
        except BaseException as exc:  # reported when the endpoint proper starts
            print(f"symposium-tui: failed to load the bridge: {exc!r}", file=sys.stderr)
        finally:
            done.set()

    threading.Thread(target=run, name="bridge-loader", daemon=True).start()
    return done
