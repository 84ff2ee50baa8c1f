"""Stored responses of the Responses API, which `previous_response_id` continues."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bridge.protocol import Message


@dataclass
class StoredResponse:
    id: str
    principal: str
    messages: list[Message]  # the conversation including this response's reply
    body: dict[str, Any]


class ResponseStore:
    """Stored responses (`store`, default true), per principal: at most `limit`, each for
    `max_age` seconds, the oldest dropped first. A `previous_response_id` naming one that was
    dropped is answered as an unknown id: 404, "Previous response with id … not found"."""

    def __init__(
        self,
        limit: int = 512,
        max_age: float = 24 * 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.max_age = max_age
        self._clock = clock
        self._items: OrderedDict[str, tuple[float, StoredResponse]] = OrderedDict()

    def get(self, response_id: str, principal: str) -> StoredResponse | None:
        self._expire()
        found = self._items.get(response_id)
        item = found[1] if found is not None else None
        return item if item is not None and item.principal == principal else None

    def put(self, item: StoredResponse) -> None:
        self._items[item.id] = (self._clock(), item)
        self._items.move_to_end(item.id)
        while len(self._items) > self.limit:
            self._items.popitem(last=False)
        self._expire()

    def __len__(self) -> int:
        return len(self._items)

    def _expire(self) -> None:
        cutoff = self._clock() - self.max_age
        while self._items:
            stored_at, _ = next(iter(self._items.values()))
            if stored_at > cutoff:
                break
            self._items.popitem(last=False)

    def delete(self, response_id: str, principal: str) -> bool:
        if self.get(response_id, principal) is None:
            return False
        del self._items[response_id]
        return True
