"""Read and validate only what a chat request adds to a conversation the connection has seen.

VS Code sends the whole conversation with every request. Decoding the line (JSON) and validating
every message (pydantic) each time would make a turn's cost grow with the conversation. This module
recognises, on the raw bytes and before anything is decoded, the part of a request line the
connection has already read, and reuses what it made of it.

For the last few chat requests of a connection it keeps the line, where each message of
`params.messages` ends in it, the decoded messages and their validated `Message`s. A new line
(`predecode`, which the JSON-RPC peer calls before its own decoding):

1. `"messages"` `:` `[` is looked for (its first occurrence: that this is the request's
   `params.messages` is proven in step 4, not assumed);
2. the longest run of a remembered line's leading messages whose bytes are exactly the bytes that
   follow is found (a memcmp);
3. the rest of the array is decoded value by value, exactly as the JSON decoder's array loop does
   it (whitespace, `,`, `]`; the same scanner);
4. the line with the array's contents replaced by one sentinel token (`NaN`, or `Infinity` when
   the rest of the line holds the text `NaN`) is decoded by a decoder that turns that token, and
   only it, into a marker object (the ordinary decoder rejects both tokens). The line is taken
   only if the token occurs nowhere else in it, is decoded once, and the marker is the one element
   of the top-level `params.messages`. That proves the array sits where the request's
   `params.messages` is read from: a look-alike key inside a string (`"x\\"messages\\":["`), a
   nested `messages`, or a duplicate `messages`/`params` key (the last one wins) all put the
   marker anywhere else.

The request's messages are then the remembered messages of the run plus the new ones: decoding the
whole line gives the very same values (the same bytes parsed from the same state). Anything
doubtful — invalid UTF-8, malformed JSON, a sentinel that cannot be made unique, a new value
nested deeper than `_MAX_DEPTH` — leaves the line to the ordinary decoder, so every error is
exactly the plain path's.

What follows the array — the request's `agent` and `options`, whose tool list is most of the line
when a client offers its tools (VS Code: ~100 KB of schemas, resent with every request) — is
nearly always the previous request's, byte for byte. When it is the same text as the last tail
that passed step 4, the line is decoded up to the sentinel followed by `]}}` instead (the same
proof: the marker the one element of the top-level `params.messages`, which puts the decoder
exactly where the tail starts), and the tail's members are added as the decoder would have added
them (later keys win, in place): decoded once, alone, in that same place (`{"params":{"messages":
[0` + tail, with the ordinary decoder), the second time the tail is seen. The same objects then
stand in every request that repeats them; nothing downstream writes to a request's values.

The handler's `parse` then validates only the new messages (pydantic validates a list's messages
one by one, so the reused ones, valid alone before, are valid now) and remembers the request; any
validation failure re-validates the whole request, so -32602 messages are the plain path's too.
"""

from __future__ import annotations

import json
import sys
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter

from bridge.jsonrpc import Incoming, classify_message, scan_value, with_sentinel
from bridge.jsonrpc import skip_whitespace as _skip
from bridge.protocol import Message
from bridge.vscodelm.fastpath import CHAT_RESPONSE
from bridge.vscodelm.wire import ChatRequestOptions, ChatResponseParams

__all__ = ["PrefixCache"]

_MESSAGES = TypeAdapter(list[Message])
_KEY = b'"messages"'
# A new message nested deeper than this is left to the ordinary decoder: it reads the array's
# values three levels deeper (the request, its params, the array) and from another frame, so only
# far from the recursion limit is it sure to decode them as this module did.
_MAX_DEPTH = 200
_PENDING = 32  # predecoded requests whose handler has not run yet
# What the decoder reads after the sentinel when the tail is a known one: it closes the array,
# `params` and the request, which only a head ending inside the top-level `params.messages` allows.
_CLOSE = "]}}"
# Where a known tail is decoded alone: the same place as in a request, after one element.
_TAIL_CONTEXT = '{"params":{"messages":[0'


class _Tail:
    """The text after the messages array of the last request that passed the marker proof, and
    once seen again, its members: (params' members, the request's members)."""

    __slots__ = ("decoded", "members", "raw", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.raw = text.encode("utf-8")  # its bytes (it was decoded from them: the same bytes)
        self.members: tuple[dict[str, Any], dict[str, Any]] | None = None
        self.decoded = False  # decoded alone once (members None after that: it did not decode)


class _Entry:
    """A chat request the connection validated: its line, where its messages are in it, and what
    they decoded and validated to."""

    __slots__ = ("at", "ends", "key", "line", "messages", "raw", "start", "view")

    def __init__(
        self,
        line: bytes,
        start: int,
        ends: array[int],
        raw: list[Any],
        messages: list[Message],
    ) -> None:
        self.line = line
        self.view = memoryview(line)
        self.start = start  # offset of the first message's first byte
        self.ends = ends  # offset (from `start`) just past each message
        self.raw = raw
        self.messages = messages
        self.key = 0
        self.at = 0.0  # when it was parsed (the cache's clock)


class _Pending:
    """A predecoded request on its way to the handler."""

    __slots__ = ("base", "ends", "line", "raw", "reused", "start")

    def __init__(
        self,
        line: bytes,
        start: int,
        ends: array[int],
        raw: list[Any],
        base: _Entry | None,
        reused: int,
    ) -> None:
        self.line = line
        self.start = start
        self.ends = ends
        self.raw = raw
        self.base = base
        self.reused = reused


class PrefixCache:
    """A connection's recent chat requests, recognised again on the bytes of the next one: at most
    `size` of them, each for `max_age` seconds after it was parsed, the oldest dropped first (a
    request that extends a dropped one is simply read and validated whole)."""

    def __init__(
        self, size: int = 8, max_age: float = 1800.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.size = size
        self.max_age = max_age
        self._clock = clock
        self._entries: OrderedDict[int, _Entry] = OrderedDict()
        self._pending: OrderedDict[int, _Pending] = OrderedDict()
        self._next = 0
        self._decoder = json.JSONDecoder(parse_constant=self._constant)
        self._want = ""
        self._marker: object = None
        self._hits = 0
        # For tests and benchmarks: messages the last predecoded line did not decode (None: the
        # line was left to the ordinary decoder), and messages the last parse did not validate.
        self.skipped: int | None = None
        self.reused = 0
        self._reuses: tuple[ChatResponseParams, list[Message], int] | None = None
        self._tail: _Tail | None = None
        # The options object of the last parsed request (as decoded; None when it had none) and
        # what it validated to: a request that repeats the tail carries the very same object.
        self._options: tuple[Any, ChatRequestOptions] | None = None
        # For tests and benchmarks: whether the last predecoded line reused a known tail, and
        # whether its messages list is the one it continues, extended (`_extended`).
        self.tail_reused = False
        self.extended = False
        self._last: tuple[ChatResponseParams, _Entry] | None = None  # the last `parse`, its entry

    # --- the line ------------------------------------------------------------------------------

    def predecode(self, line: bytes) -> Incoming | None:
        """What `bridge.jsonrpc.classify(line)` gives, reading only what follows the longest
        remembered run of messages; None leaves the line to `classify`."""
        self.skipped = None
        self.extended = False
        start = _messages_start(line)
        if start < 0:
            return None
        if self._entries:
            self._expire()
        base, k = self._match(line, start)
        pos = start + (base.ends[k - 1] if base is not None and k else 0)
        rest = self._read_rest(line, pos, k > 0)
        if rest is None:
            return None
        text, (values, ends, _), tail = rest
        try:
            head = line[:start].decode("utf-8")
        except UnicodeDecodeError:
            return None
        if not _shallow(text, ends[-1] if ends else 0, values):
            return None
        doc = self._decode_request(head, tail)
        if doc is None:
            return None
        params = doc["params"]
        raw = self._extended(base, k, values) if base is not None and k else values
        params["messages"] = raw
        incoming = classify_message(doc)
        self.skipped = k
        if incoming.kind == "request" and incoming.method == CHAT_RESPONSE:
            offset = pos - start
            if text.isascii():
                new_ends = [offset + e for e in ends]
            else:
                new_ends = []
                at = 0
                for e in ends:
                    offset += len(text[at:e].encode("utf-8"))
                    new_ends.append(offset)
                    at = e
            ends_all = base.ends[:k] if base is not None and k else array("q")  # a copy
            ends_all.extend(new_ends)
            pending = _Pending(line, start, ends_all, raw, base, k)
            self._pending[id(raw)] = pending
            while len(self._pending) > _PENDING:
                self._pending.popitem(last=False)
        return incoming

    def _extended(self, base: _Entry, k: int, values: list[Any]) -> list[Any]:
        """`base.raw[:k] + values`: the messages this request's line holds. When the run is all of
        `base.raw` and nothing but `base` holds that list (its request is done with it: CPython's
        reference count says so), the list itself, extended. A request that another request
        extends is superseded by it, and copying a long history's list wrote a reference count on
        each of its messages, a cache miss each once the client and the agent have run. Only
        appended to, the list still begins with `base`'s `k` messages (`_head` cuts it to them)."""
        if k == len(base.raw) and _holders(base) <= _SOLE:  # (before any local names the list)
            seq = base.raw
            seq += values
            self.extended = True
            return seq
        head: list[Any] = _head(base.raw, k)
        return head + values

    def _read_rest(
        self, line: bytes, pos: int, after_value: bool
    ) -> tuple[str, tuple[list[Any], list[int], int], str] | None:
        """The text from `pos` to the array's `]`, the array's rest read from it (`scan_array`),
        and the text after the array: None where the decoder would fail. A line that ends with a
        known tail is read only up to that tail's `]`, which must then close the array (else the
        line is read whole): the tail is neither copied nor decoded again."""
        known = self._tail
        if (
            known is not None
            and known.members is not None
            and len(known.raw) < len(line) - pos
            and line.endswith(known.raw)
        ):
            try:
                text = line[pos : len(line) - len(known.raw) + 1].decode("utf-8")
            except UnicodeDecodeError:
                return None
            scanned = scan_array(text, after_value)
            if scanned is not None and scanned[2] == len(text) - 1:
                return text, scanned, known.text
        try:
            text = line[pos:].decode("utf-8")
        except UnicodeDecodeError:
            return None
        scanned = scan_array(text, after_value)
        if scanned is None:
            return None
        return text, scanned, text[scanned[2] :]

    def _match(self, line: bytes, start: int) -> tuple[_Entry | None, int]:
        """The remembered request with the longest run of leading messages whose bytes `line`
        has at `start`, and the run's length."""
        best: _Entry | None = None
        best_k = 0
        startswith = line.startswith
        for entry in reversed(self._entries.values()):
            ends = entry.ends
            n = len(ends)
            if n <= best_k:
                continue
            view, s = entry.view, entry.start
            if startswith(view[s : s + ends[-1]], start):
                k = n
            elif not startswith(view[s : s + ends[0]], start):
                continue
            else:  # the longest matching run: matching is monotonic in the run's length
                lo, hi = 1, n - 1
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if startswith(view[s : s + ends[mid - 1]], start):
                        lo = mid
                    else:
                        hi = mid - 1
                k = lo
            if k > best_k:
                best, best_k = entry, k
        return best, best_k

    def _constant(self, name: str) -> Any:
        if name == self._want and not self._hits:
            self._hits = 1
            return self._marker
        raise ValueError(f"{name} is not valid JSON")

    def _decode_request(self, head: str, tail: str) -> dict[str, Any] | None:
        """The request decoded from `head` + the array + `tail` (its messages array the one
        marker, as `_decode_around` makes it), reusing a known tail's decoded members."""
        self.tail_reused = False
        known = self._tail
        if known is not None and known.text == tail:
            if not known.decoded:
                known.decoded = True
                known.members = self._decode_tail(tail)
            if known.members is not None:
                doc = self._decode_around(head, _CLOSE)
                if doc is not None:
                    params_members, request_members = known.members
                    doc["params"].update(params_members)
                    doc.update(request_members)
                    self.tail_reused = True
                    return doc
        doc = self._decode_around(head, tail)
        if doc is not None and (known is None or known.text != tail):
            self._tail = _Tail(tail)
        return doc

    def _decode_tail(self, tail: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """A tail's members, decoded by the ordinary (strict) decoder where a request has it. Only
        a tail that passed the marker proof gets here: it redefines neither `params` nor
        `params.messages` (either would have moved the marker)."""
        self._want, self._hits = "", 1  # every NaN/Infinity is rejected, as `classify` does
        try:
            doc = self._decoder.decode(_TAIL_CONTEXT + tail)
        except (ValueError, RecursionError):
            return None
        if type(doc) is not dict or type(doc.get("params")) is not dict:
            return None
        params = doc["params"]
        if params.get("messages") != [0]:
            return None
        return (
            {k: v for k, v in params.items() if k != "messages"},
            {k: v for k, v in doc.items() if k != "params"},
        )

    def _decode_around(self, head: str, tail: str) -> dict[str, Any] | None:
        """The request decoded from `head` + sentinel + `tail` (`tail` starts at the array's `]`),
        if the sentinel is provably the one element of its top-level `params.messages`."""
        spliced = with_sentinel(head, tail)
        if spliced is None:
            return None
        text, sentinel = spliced
        marker = object()
        self._want, self._marker, self._hits = sentinel, marker, 0
        try:
            doc = self._decoder.decode(text)
        except (ValueError, RecursionError):
            return None
        finally:
            self._marker = None
        if self._hits != 1 or type(doc) is not dict:
            return None
        params = doc.get("params")
        if type(params) is not dict:
            return None
        messages = params.get("messages")
        if type(messages) is not list or len(messages) != 1 or messages[0] is not marker:
            return None
        return doc

    # --- the handler ---------------------------------------------------------------------------

    def parse(self, params: dict[str, Any]) -> ChatResponseParams:
        """`ChatResponseParams.model_validate(params)`, validating only the messages that follow
        a remembered run when `params` came from `predecode`. Raises pydantic's ValidationError
        exactly as `model_validate` does."""
        self.reused = 0
        self._reuses = None
        raw = params.get("messages")
        pending = self._pending.pop(id(raw), None) if type(raw) is list else None
        if pending is None or pending.raw is not raw:
            return ChatResponseParams.model_validate(params)
        k = pending.reused
        base = pending.base
        options = params.get("options")
        # The very options object the last request validated (a repeated tail), or none again (no
        # `options`, or null): what it validated to is taken as it is (pydantic takes a model
        # instance given for a model field as it is), its tools not validated again, and the same
        # object stands in both requests (nothing writes to a validated request's options).
        known = self._options if self._options and options is self._options[0] else None
        try:
            if known is not None or (k and base is not None):
                rest = dict(params)
                rest["messages"] = []
                if known is not None:
                    rest["options"] = known[1]
                parsed = ChatResponseParams.model_validate(rest)
                if known is not None and options is None:
                    parsed.model_fields_set.discard("options")  # as for no options: unset
                parsed.messages = (
                    _head(base.messages, k) + _MESSAGES.validate_python(raw[k:])
                    if k and base is not None
                    else _MESSAGES.validate_python(raw)
                )
            else:
                parsed = ChatResponseParams.model_validate(params)
        except ValueError:  # pydantic's ValidationError: report it as the plain path does
            return ChatResponseParams.model_validate(params)
        if options is None or type(options) is dict:
            self._options = (options, parsed.options)
        self.reused = k
        if base is not None:
            if k:
                self._reuses = (parsed, base.messages, k)
            self._entries.pop(base.key, None)  # superseded by this request, which extends it
        entry = _Entry(pending.line, pending.start, pending.ends, raw, parsed.messages)
        self._last = (parsed, entry)
        self._next += 1
        entry.key = self._next
        entry.at = self._clock()
        self._entries[entry.key] = entry
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return parsed

    def line_of(self, parsed: ChatResponseParams) -> tuple[bytes, int, int] | None:
        """The line the last `parse` read `parsed` from, when it did (and still remembers it):
        with the offsets of its first message's first byte and of the byte just past its last
        message (None for a request without messages)."""
        last = self._last
        if last is None or last[0] is not parsed or not last[1].ends:
            return None
        entry = last[1]
        if self._entries.get(entry.key) is not entry:
            return None
        return entry.line, entry.start, entry.start + entry.ends[-1]

    def closes_params(self, tail: bytes) -> bool:
        """`tail` (from a request's `]` that closes `params.messages` to the end of its line) is
        the last tail that passed the marker proof, and adds no member to the request itself
        (only to `params`): a line of the same head and this tail has the head's `id` and
        `method`, however its messages differ."""
        known = self._tail
        if known is None or known.raw != tail:
            return False
        if not known.decoded:
            known.decoded = True
            known.members = self._decode_tail(known.text)
        return known.members is not None and not known.members[1]

    def _expire(self) -> None:
        cutoff = self._clock() - self.max_age
        entries = self._entries
        while entries and next(iter(entries.values())).at <= cutoff:
            entries.popitem(last=False)

    def reuses(self, parsed: ChatResponseParams) -> tuple[list[Message], int] | None:
        """`(earlier, k)` when the first k messages of `parsed` (the last `parse`'s result) are
        the very objects that begin `earlier`, the messages of a request parsed before (and never
        changed: nothing here or downstream writes to a parsed request's list)."""
        reuses = self._reuses
        if reuses is None or reuses[0] is not parsed:
            return None
        return reuses[1], reuses[2]


def _holders(entry: _Entry) -> int:
    """How many references `entry.raw` has, counted as `_SOLE` was."""
    return sys.getrefcount(entry.raw)


# `_holders` of a list that only its entry holds (what the count includes differs between
# Python versions: it is measured here, the way `_extended` measures).
_SOLE = _holders(_Entry(b"", 0, array("q"), [], []))


def _head(seq: Any, k: int) -> Any:
    """`seq[:k]`, or `seq` itself when that is all of it (concatenation copies it anyway)."""
    return seq if k == len(seq) else seq[:k]


def _messages_start(line: bytes) -> int:
    """The offset of the first byte after `"messages"` `:` `[` and whitespace, or -1."""
    i = line.find(_KEY)
    if i < 0:
        return -1
    i = _skip(line, i + len(_KEY))
    if line[i : i + 1] != b":":
        return -1
    i = _skip(line, i + 1)
    if line[i : i + 1] != b"[":
        return -1
    return _skip(line, i + 1)


def scan_array(text: str, after_value: bool) -> tuple[list[Any], list[int], int] | None:
    """The values of an array's remaining elements in `text` (which starts at an element when
    `after_value` is false, else right after one), the index just past each, and the index of
    the closing `]`; None where the JSON decoder would fail or the array is empty."""
    values: list[Any] = []
    ends: list[int] = []
    i = 0
    scan = not after_value
    while True:
        if scan:
            try:
                value, i = scan_value(text, i)
            except (StopIteration, ValueError, RecursionError):
                return None
            values.append(value)
            ends.append(i)
        scan = True
        i = _skip(text, i)
        c = text[i : i + 1]
        if c == "]":
            return values, ends, i
        if c != ",":
            return None
        i = _skip(text, i + 1)


def _shallow(text: str, end: int, values: list[Any]) -> bool:
    """No value in `values` (read from `text[:end]`) nests deeper than _MAX_DEPTH; counting the
    brackets first is usually enough."""
    if text.count("{", 0, end) + text.count("[", 0, end) <= _MAX_DEPTH:
        return True
    for value in values:
        stack = [(value, 1)]
        while stack:
            node, depth = stack.pop()
            if depth > _MAX_DEPTH:
                return False
            if type(node) is dict:
                stack.extend((v, depth + 1) for v in node.values() if type(v) in (dict, list))
            elif type(node) is list:
                stack.extend((v, depth + 1) for v in node if type(v) in (dict, list))
    return True
