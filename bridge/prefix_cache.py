"""Validate only what a chat request adds to a conversation the connection has already seen.

VS Code sends the whole conversation with every request, so validating every message each time
(pydantic, about 1.5 µs a message) makes a turn's cost grow with the conversation's length. This
cache keeps, for the last few requests of one connection, each raw message (the decoded JSON, as
received) beside the `Message` it validated to. A new request's messages are compared with a cached
request's raw messages; the longest run of messages that are *exactly* the same reuses the validated
objects, and only the rest is validated.

Exactly the same: dict equality (done in C), and, for a message whose content holds anything but
strings (a tool call's parameters, a tool result), its JSON text too — Python finds `1 == 1.0 ==
True`, the wire does not. A message that differs in any way (a tampered message inside the prefix
included) ends the reused run there, so it and everything after it are validated as usual. Any
failure falls back to validating the whole request, so error messages are exactly those of the
plain path.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from pydantic import TypeAdapter

from bridge.protocol import ChatResponseParams, Message

__all__ = ["PrefixCache"]

_MESSAGES = TypeAdapter(list[Message])


def _strict(raw: Any) -> str | None:
    """The JSON text a message must also match, or None when dict equality is already exact
    (every value in its content is a string)."""
    if type(raw) is dict:
        content = raw.get("content")
        if type(content) is list and all(
            type(p) is dict and all(type(v) is str for v in p.values()) for p in content
        ):
            if all(type(v) is str or v is content for v in raw.values()):
                return None
    return json.dumps(raw, sort_keys=True)


class _Entry:
    __slots__ = ("messages", "raw", "strict")

    def __init__(self, raw: list[Any], messages: list[Message], strict: dict[int, str]) -> None:
        self.raw = raw
        self.messages = messages
        self.strict = strict


class PrefixCache:
    """The validated messages of a connection's recent requests, reused for an exact raw prefix."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._entries: OrderedDict[int, _Entry] = OrderedDict()
        self._next = 0
        self.reused = 0  # messages reused by the last parse (for tests and benchmarks)

    def parse(self, params: dict[str, Any]) -> ChatResponseParams:
        """`ChatResponseParams.model_validate(params)`, reusing validated messages of an exact
        prefix. Raises pydantic's ValidationError exactly as `model_validate` does."""
        self.reused = 0
        raw = params.get("messages")
        if type(raw) is not list or not raw:
            return ChatResponseParams.model_validate(params)
        key, entry, n = self._longest(raw)
        if n == 0 or entry is None:
            parsed = ChatResponseParams.model_validate(params)
            self._remember(raw, parsed.messages, None, 0)
            return parsed
        try:
            rest = dict(params)
            rest["messages"] = []
            parsed = ChatResponseParams.model_validate(rest)
            tail = _MESSAGES.validate_python(raw[n:])
        except ValueError:  # pydantic's ValidationError: report it as the plain path does
            return ChatResponseParams.model_validate(params)
        parsed.messages = entry.messages[:n] + tail
        self.reused = n
        self._entries.pop(key, None)
        self._remember(raw, parsed.messages, entry, n)
        return parsed

    def _longest(self, raw: list[Any]) -> tuple[int, _Entry | None, int]:
        best: tuple[int, _Entry | None, int] = (-1, None, 0)
        first = raw[0]
        for key, entry in reversed(self._entries.items()):
            old = entry.raw
            if old[0] != first:
                continue
            n = _common(raw, entry)
            if n > best[2]:
                best = (key, entry, n)
                if n == len(raw):
                    break
        return best

    def _remember(
        self, raw: list[Any], messages: list[Message], entry: _Entry | None, n: int
    ) -> None:
        strict = {i: s for i, s in entry.strict.items() if i < n} if entry is not None else {}
        for i in range(n, len(raw)):
            s = _strict(raw[i])
            if s is not None:
                strict[i] = s
        self._next += 1
        self._entries[self._next] = _Entry(raw, messages, strict)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)


def _common(raw: list[Any], entry: _Entry) -> int:
    """How many leading messages of `raw` are exactly those of `entry`."""
    old = entry.raw
    n = min(len(raw), len(old))
    if raw[:n] != old[:n]:
        i = 0
        while i < n and raw[i] == old[i]:
            i += 1
        n = i
    for i, s in entry.strict.items():  # in index order
        if i >= n:
            break
        if json.dumps(raw[i], sort_keys=True) != s:
            return i
    return n
