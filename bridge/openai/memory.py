"""What the OpenAI wire format loses of an agent's reply, kept so the history tracker gets it back."""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from bridge.openai.content import core_parts
from bridge.protocol import TextPart, ToolCallPart


class ReplyMemory:
    """What the wire format loses and the tracker needs back.

    * A reply whose text continues after a tool call (an agent's rendered tool progress) is echoed
      by a Chat client as one `content` string plus `tool_calls`: the order of the parts is kept
      here, by the reply's first call id, and restored when the echo matches.
    * A legacy `function_call` has no id: the id the agent's call got is kept by (name, arguments).

    Each table keeps at most `limit` entries, each for `max_age` seconds, the oldest dropped
    first. A reply whose shape was dropped is read in the wire's order (text, then calls); a
    legacy call whose id was dropped gets the id derived from its name and arguments.
    """

    def __init__(
        self,
        limit: int = 2048,
        max_age: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.max_age = max_age
        self._clock = clock
        self._replies: OrderedDict[str, list[Any]] = OrderedDict()
        self._legacy: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._stored_at: dict[int, OrderedDict[Any, float]] = {
            id(self._replies): OrderedDict(),
            id(self._legacy): OrderedDict(),
        }

    def remember_reply(self, parts: list[Any]) -> None:
        first_call = next((p for p in parts if isinstance(p, ToolCallPart)), None)
        if first_call is None:
            return
        first_index = parts.index(first_call)
        if not any(isinstance(p, TextPart) for p in parts[first_index:]):
            return  # text only before the calls: the echo's natural order is already right
        self._put(self._replies, first_call.toolCallId, list(parts))

    def restore_reply(self, text: str, calls: list[ToolCallPart]) -> list[Any] | None:
        if not calls:
            return None
        self._expire(self._replies)
        parts = self._replies.get(calls[0].toolCallId)
        if parts is None:
            return None
        recorded_text = "".join(p.value for p in parts if isinstance(p, TextPart))
        recorded_calls = [p for p in parts if isinstance(p, ToolCallPart)]
        if recorded_text != text or [(c.toolCallId, c.toolName) for c in recorded_calls] != [
            (c.toolCallId, c.toolName) for c in calls
        ]:
            return None
        by_id = {c.toolCallId: c for c in calls}  # the client's parameters (compared by value)
        return [by_id[p.toolCallId] if isinstance(p, ToolCallPart) else p for p in parts]

    def remember_answer(self, parts: list[dict[str, Any]], *, legacy: bool) -> None:
        """Keep what an answer's echo will lose: its parts' order, a legacy call's id."""
        if legacy:
            for p in parts:
                if p["type"] == "tool_call":
                    self.remember_legacy(
                        p["toolName"], json.dumps(p["parameters"]), p["toolCallId"]
                    )
                    break
        if any(p["type"] == "tool_call" for p in parts):
            self.remember_reply(core_parts(parts))

    def remember_legacy(self, name: str, arguments: str, call_id: str) -> None:
        self._put(self._legacy, (name, _canonical_args(arguments)), call_id)

    def legacy_id(self, name: str, arguments: str) -> str:
        key = (name, _canonical_args(arguments))
        self._expire(self._legacy)
        found = self._legacy.get(key)
        if found is not None:
            return found
        return "call_" + hashlib.sha256(f"{key[0]}\0{key[1]}".encode()).hexdigest()[:24]

    def _put(self, table: OrderedDict[Any, Any], key: Any, value: Any) -> None:
        stored_at = self._stored_at[id(table)]
        table[key] = value
        table.move_to_end(key)
        stored_at[key] = self._clock()
        stored_at.move_to_end(key)
        while len(table) > self.limit:
            old, _ = table.popitem(last=False)
            stored_at.pop(old, None)
        self._expire(table)

    def _expire(self, table: OrderedDict[Any, Any]) -> None:
        stored_at = self._stored_at[id(table)]
        cutoff = self._clock() - self.max_age
        while stored_at:
            key, when = next(iter(stored_at.items()))
            if when > cutoff:
                break
            del stored_at[key]
            table.pop(key, None)


def _canonical_args(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        return arguments
