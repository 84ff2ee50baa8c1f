"""The tool-call log's store: a bounded ring with a change journal for incremental views."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator
from typing import Any

from symposium_tui.state.records import ToolEntry

__all__ = ["ToolCallStore"]


class ToolCallStore:
    """The last `capacity` tool calls, oldest dropped first.

    Entries get consecutive sequence numbers, kept in a ring so `get(seq)` is O(1). Every addition
    and update is written to a change journal; a reader keeps a cursor into it and asks
    `changes_since(cursor)` what to re-examine, so a filtered view is maintained incrementally.
    """

    def __init__(self, capacity: int = 100_000, journal: int | None = None) -> None:
        if capacity < 1:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self._ring: list[ToolEntry] = []
        self.first_seq = 0
        self.next_seq = 0
        self._by_key: dict[tuple[Any, ...], ToolEntry] = {}
        self._journal: deque[int] = deque(maxlen=journal or max(1024, capacity // 2))
        self.change_no = 0
        self.dropped = 0

    def __len__(self) -> int:
        return self.next_seq - self.first_seq

    def __iter__(self) -> Iterator[ToolEntry]:
        for seq in range(self.first_seq, self.next_seq):
            yield self._ring[seq % self.capacity]

    def get(self, seq: int) -> ToolEntry | None:
        if self.first_seq <= seq < self.next_seq:
            return self._ring[seq % self.capacity]
        return None

    def find(self, key: tuple[Any, ...]) -> ToolEntry | None:
        return self._by_key.get(key)

    def add(self, key: tuple[Any, ...], entry: ToolEntry) -> ToolEntry:
        seq = self.next_seq
        entry.seq = seq
        if len(self._ring) < self.capacity:
            self._ring.append(entry)
        else:
            slot = seq % self.capacity
            old = self._ring[slot]
            self._forget(old)
            self._ring[slot] = entry
            self.first_seq += 1
            self.dropped += 1
        self.next_seq = seq + 1
        entry.key = key
        self._by_key[key] = entry
        self.changed(entry)
        return entry

    def _forget(self, old: ToolEntry) -> None:
        if old.key is not None and self._by_key.get(old.key) is old:
            del self._by_key[old.key]

    def changed(self, entry: ToolEntry) -> None:
        self.change_no += 1
        self._journal.append(entry.seq)

    def changes_since(self, cursor: int) -> list[int] | None:
        """Sequence numbers added or updated after `cursor` (a past `change_no`), oldest first;
        None when the journal no longer reaches back that far (the reader must rebuild)."""
        base = self.change_no - len(self._journal)
        if cursor < base:
            return None
        if cursor >= self.change_no:
            return []
        return list(itertools.islice(self._journal, cursor - base, None))
