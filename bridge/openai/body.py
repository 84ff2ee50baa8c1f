"""A request body's `tools` array decoded once, not with every request that repeats it.

OpenAI clients send every tool they offer, schemas and all, with every request of a conversation:
an agent framework's 80 tools are ~120 KB of a ~125 KB body, the same bytes each time, and decoding
them was most of what a request cost the door beyond the agent's own round trip.

`KnownTools.decode(body)` gives exactly what `json.loads(body)` gives. On the raw bytes, before
anything is decoded:

1. the first `"tools"` `:` `[` is looked for (that it is the body's top-level `tools` is proven in
   step 3, not assumed);
2. the bytes from that `[` are compared (a memcmp) with the arrays of the last few bodies; none
   matching, the array there is decoded alone, by the same scanner `json.loads` runs on each value;
3. the body with the array replaced by one sentinel token (`NaN`, or `Infinity` when the rest of
   the body holds the text `NaN`) is decoded by a decoder that turns that token, and only it, into
   a marker object (`NaN` and `Infinity` elsewhere decode to floats, as `json.loads` decodes them).
   The body is taken only if the token occurs nowhere else in it and the marker is the top-level
   `tools` value. That proves the bytes were that value: a `"tools"` key nested in a message or a
   schema, or a second top-level `tools` key (the last one wins), put the marker anywhere else.

The array's value then stands where the marker is. It is the same list object for every body that
repeats the bytes: nothing downstream writes to a request's values, and `function_tools` knows the
list it made definitions of by its identity. Anything doubtful — another encoding than UTF-8, bytes
that are not UTF-8, an array that does not decode, a marker out of place — leaves the body to
`json.loads`, so every error is exactly the plain path's.

Bounded: the last `entries` arrays (default 4), each kept only when its bytes are between
`min_bytes` (2 KB: a small array costs less to decode than to compare) and `max_bytes` (1 MB).
"""

from __future__ import annotations

import json
from typing import Any

from bridge.jsonrpc import skip_whitespace as _skip
from bridge.jsonrpc import with_sentinel

__all__ = ["KnownTools"]

_TOOLS = b'"tools"'
_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class KnownTools:
    def __init__(self, entries: int = 4, min_bytes: int = 2048, max_bytes: int = 1 << 20) -> None:
        self.entries = entries
        self.min_bytes = min_bytes
        self.max_bytes = max_bytes
        self._known: list[tuple[bytes, list[Any]]] = []  # oldest first
        self._scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
        self._decoder = json.JSONDecoder(parse_constant=self._constant)
        self._want = ""
        self._marker: object = None
        # For tests and benchmarks: whether the last body reused an array it had decoded before.
        self.reused = False

    def decode(self, body: bytes) -> Any:
        """`json.loads(body)`, decoding a `tools` array seen lately not again."""
        self.reused = False
        try:
            doc = self._decode(body)
        except (ValueError, RecursionError, StopIteration):  # UnicodeDecodeError included
            doc = None
        return json.loads(body) if doc is None else doc

    def _decode(self, body: bytes) -> Any:
        # Only UTF-8 (what JSON over HTTP is) holds `"tools"` as these bytes; a UTF-8 BOM, which
        # `json.loads` takes, is refused by the decoder below, and the body left to `json.loads`.
        i = body.find(_TOOLS)
        if i < 0:
            return None
        pos = _skip(body, i + len(_TOOLS))
        if body[pos : pos + 1] != b":":
            return None
        pos = _skip(body, pos + 1)
        if body[pos : pos + 1] != b"[":
            return None
        found = self._find(body, pos)
        if found is not None:
            raw, value = found
        else:
            text = body[pos:].decode("utf-8", "surrogatepass")
            value, end = self._scan(text, 0)
            raw = body[pos : pos + len(text[:end].encode("utf-8", "surrogatepass"))]
            if len(raw) < self.min_bytes:
                return None  # decoded whole for less than it costs to set aside
        head = body[:pos].decode("utf-8", "surrogatepass")
        tail = body[pos + len(raw) :].decode("utf-8", "surrogatepass")
        doc = self._decode_around(head, tail)
        if doc is None:
            return None
        doc["tools"] = value
        if found is not None:
            self.reused = True
        elif len(raw) <= self.max_bytes:
            self._known.append((raw, value))
            del self._known[: -self.entries]
        return doc

    def _find(self, body: bytes, pos: int) -> tuple[bytes, list[Any]] | None:
        known = self._known
        for i in range(len(known) - 1, -1, -1):
            if body.startswith(known[i][0], pos):
                if i != len(known) - 1:
                    known.append(known.pop(i))
                return known[-1]
        return None

    def _constant(self, name: str) -> Any:
        return self._marker if name == self._want else _CONSTANTS[name]

    def _decode_around(self, head: str, tail: str) -> dict[str, Any] | None:
        """`head` + sentinel + `tail` decoded, if the sentinel is provably its top-level `tools`."""
        spliced = with_sentinel(head, tail)
        if spliced is None:
            return None
        text, sentinel = spliced
        marker = object()
        self._want, self._marker = sentinel, marker
        try:
            doc = self._decoder.decode(text)
        finally:
            self._marker = None
        if type(doc) is not dict or doc.get("tools") is not marker:
            return None
        return doc
