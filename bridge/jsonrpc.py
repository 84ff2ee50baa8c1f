"""JSON-RPC 2.0 message classification and error shapes (standard library only).

Shared by the asyncio peer (`bridge.rpc`) and the start-up fast path (`bridge.vscodelm.fastpath`), which
answers cheap requests before asyncio and pydantic are even imported.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any, AnyStr

LINE_LIMIT = 256 * 1024 * 1024  # one JSON-RPC message per line; long histories are large


def line_limit() -> int:
    """The longest line an endpoint reads (`$SYMPOSIUM_MAX_MESSAGE_BYTES`, default `LINE_LIMIT`);
    a longer one is answered with an error and skipped, by the start-up fast path too."""
    try:
        value = int(os.environ.get("SYMPOSIUM_MAX_MESSAGE_BYTES", ""))
    except ValueError:
        return LINE_LIMIT
    return value if value >= 4096 else LINE_LIMIT


class LinePieces:
    """Bytes read in pieces, handed out as whole lines. A piece without a newline is kept as it
    is, neither copied nor searched again: a line of N bytes read 64 KiB at a time costs O(N),
    where adding each piece to one buffer and searching it all again cost O(N²) (a 64 MiB line,
    22 s through the console relay)."""

    __slots__ = ("_pieces", "size")

    def __init__(self, initial: bytes = b"") -> None:
        self._pieces: list[bytes] = [initial] if initial else []
        self.size = len(initial)  # bytes kept: the start of a line not yet ended

    def feed(self, piece: bytes) -> bytes:
        """Take one piece; what it ends: every whole line so far, each with its newline (b"":
        none ended)."""
        end = piece.rfind(b"\n")
        if end < 0:
            if piece:
                self._pieces.append(piece)
                self.size += len(piece)
            return b""
        self._pieces.append(piece[: end + 1])
        lines = b"".join(self._pieces)
        rest = piece[end + 1 :]
        self._pieces = [rest] if rest else []
        self.size = len(rest)
        return lines

    def rest(self) -> bytes:
        """The bytes kept (a line not yet ended), left in place."""
        if len(self._pieces) > 1:
            self._pieces = [b"".join(self._pieces)]
        return self._pieces[0] if self._pieces else b""


PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SESSION_ERROR = -32000
REQUEST_CANCELLED = -32800

_NO_ID = object()


class RpcError(Exception):
    """Raised by a handler to answer its request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class Incoming:
    """One decoded line. (A plain class: `dataclasses` costs milliseconds on the start-up path.)"""

    __slots__ = ("error", "id", "kind", "method", "params")

    def __init__(
        self,
        kind: str,
        method: str | None = None,
        id: Any = None,
        params: Any = None,  # noqa: A002
        error: dict[str, Any] | None = None,
    ) -> None:
        self.kind = kind  # "request" | "notification" | "response" | "invalid"
        self.method = method
        self.id = id
        self.params = params
        self.error = error  # for "invalid": the error response to send


def error_response(id_: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": err}


def result_response(id_: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def dumps(message: dict[str, Any]) -> bytes:
    try:
        return (
            json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        )
    except UnicodeEncodeError:
        # A lone surrogate read from a `\ud800` escape (JSON allows it; JavaScript writes it for a
        # broken emoji) cannot be UTF-8: echo it escaped, as it came.
        return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_not_json)
# The decoder's own value scanner (the C one): what `_DECODER.decode` runs on each value.
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, (int, str)) and not isinstance(value, bool))


def classify(line: bytes | str) -> Incoming | None:
    """Decode one wire line. Returns None for a blank line (skipped, as the client does)."""
    return parse(line)[1]


def parse(line: bytes | str) -> tuple[Any, Incoming | None]:
    """One wire line's decoded value and what `classify` makes of it: `(None, None)` for a blank
    line, `(None, <a parse error>)` for one that is not UTF-8 or not JSON."""
    if isinstance(line, bytes):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, Incoming(
                "invalid",
                error=error_response(
                    None, PARSE_ERROR, f"Parse error: invalid UTF-8 ({exc.reason})"
                ),
            )
    else:
        text = line
    if not text.strip():
        return None, None
    try:
        msg = _DECODER.decode(text)  # strict: NaN and Infinity are not JSON
    except (ValueError, RecursionError) as exc:
        error = error_response(None, PARSE_ERROR, f"Parse error: {exc}")
        return None, Incoming("invalid", error=error)
    return msg, classify_message(msg)


def scan_value(text: str, index: int) -> tuple[Any, int]:
    """The JSON value that starts exactly at `text[index]` (no whitespace skipped), decoded as
    `classify` decodes a line's values, and the index just past it. Raises StopIteration when no
    value starts there, ValueError (or RecursionError) when it is malformed."""
    return _SCAN(text, index)


_WHITESPACE_TEXT = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, as `json.decoder.WHITESPACE`
_WHITESPACE_BYTES = re.compile(rb"[ \t\n\r]*")


def skip_whitespace(s: AnyStr, i: int) -> int:
    """The index of the first character (or byte) of `s` at or after `i` that is not JSON
    whitespace, as the JSON decoder skips it."""
    if 0 <= i < len(s) and not s[i : i + 1].isspace():  # (usually none: no pattern to run)
        return i
    pattern: Any = _WHITESPACE_BYTES if isinstance(s, bytes) else _WHITESPACE_TEXT
    return int(pattern.match(s, i).end())  # `*` matches the empty string too


def with_sentinel(head: str, tail: str) -> tuple[str, str] | None:
    """`head` + a sentinel token + `tail`, and the token: `NaN`, or `Infinity` when the text holds
    `NaN` elsewhere — a token found in the text only where it was put, so that a decoder turning
    that token into a marker object shows where the text's value between `head` and `tail` sits.
    None when neither can be."""
    at = len(head)
    for sentinel in ("NaN", "Infinity"):
        text = head + sentinel + tail
        if text.find(sentinel) == at and text.find(sentinel, at + 1) < 0:
            return text, sentinel
    return None


def classify_message(msg: Any) -> Incoming:
    """What `classify` makes of a line that decoded to `msg`."""
    if isinstance(msg, list):
        return Incoming(
            "invalid",
            error=error_response(
                None, INVALID_REQUEST, "Invalid Request: batch requests are not supported"
            ),
        )
    if not isinstance(msg, dict):
        return Incoming(
            "invalid",
            error=error_response(None, INVALID_REQUEST, "Invalid Request: expected a JSON object"),
        )
    id_ = msg.get("id", _NO_ID)
    reply_id = id_ if id_ is not _NO_ID and _valid_id(id_) else None
    if msg.get("jsonrpc") != "2.0":
        return Incoming(
            "invalid",
            error=error_response(
                reply_id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"'
            ),
        )
    if "method" not in msg:
        if id_ is not _NO_ID and ("result" in msg or "error" in msg):
            return Incoming("response", id=id_)
        return Incoming(
            "invalid",
            error=error_response(reply_id, INVALID_REQUEST, 'Invalid Request: missing "method"'),
        )
    method = msg["method"]
    if not isinstance(method, str):
        return Incoming(
            "invalid",
            error=error_response(
                reply_id, INVALID_REQUEST, 'Invalid Request: "method" must be a string'
            ),
        )
    if id_ is not _NO_ID and not _valid_id(id_):
        return Incoming(
            "invalid",
            error=error_response(
                None, INVALID_REQUEST, 'Invalid Request: "id" must be a string, an integer or null'
            ),
        )
    params = msg.get("params")
    if params is not None and not isinstance(params, (dict, list)):
        if id_ is _NO_ID:
            return Incoming(
                "invalid", method=method
            )  # a bad notification is dropped, never answered
        return Incoming(
            "invalid",
            error=error_response(
                reply_id, INVALID_REQUEST, 'Invalid Request: "params" must be an object or an array'
            ),
        )
    if id_ is _NO_ID:
        return Incoming("notification", method=method, params=params)
    return Incoming("request", method=method, id=id_, params=params)


def recover_id(head: bytes) -> tuple[bool, Any]:
    """The top-level `id` of a JSON-RPC message from the first bytes of its line (a message too
    long to read whole): `(True, id)` when the prefix shows it, else `(False, None)`. Only a key
    `"id"` at the top level of the object counts (not an `id` inside its params), and only a
    string or integer value (or null)."""
    text = head.decode("utf-8", "replace")
    i = text.find("{")
    if i < 0:
        return False, None
    depth = 0
    n = len(text)
    decoder = json.JSONDecoder()
    while i < n:
        c = text[i]
        if c == '"':
            try:
                value, end = decoder.raw_decode(text, i)
            except ValueError:
                return False, None  # cut inside a string
            if depth == 1 and value == "id":
                j = end
                while j < n and text[j] in " \t\r\n":
                    j += 1
                if j < n and text[j] == ":":
                    j += 1
                    while j < n and text[j] in " \t\r\n":
                        j += 1
                    try:
                        found, vend = decoder.raw_decode(text, j)
                    except ValueError:
                        return False, None
                    if vend >= n:
                        return False, None  # a number cut at the end of the prefix
                    if (
                        found is None
                        or isinstance(found, str)
                        or (isinstance(found, int) and not isinstance(found, bool))
                    ):
                        return True, found
                    return False, None
            i = end
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        i += 1
    return False, None
