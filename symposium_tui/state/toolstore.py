"""The tool-call log's store: a bounded ring with a change journal for incremental views."""

from __future__ import annotations

import itertools
import sys
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, cast

from symposium_tui.state.records import ToolEntry

__all__ = ["ToolCallStore"]


DEFAULT_MAX_BYTES = 128 * 1024 * 1024
"""What the tool calls held may weigh together (`entry_size`), besides the count bound."""
ENTRY_OVERHEAD = 400  # the entry object, its key, its slots and small strings, roughly
_PLACEHOLDER = ("placeholder of the key index",)  # never a tool call's key (those have 3-4 parts)


def value_size(value: Any, depth: int = 0) -> int:
    """Roughly how many bytes a JSON-like value holds: its strings' lengths plus a few dozen bytes
    per number, container and item (deeper than 32 levels counted as a flat 64)."""
    if isinstance(value, str):
        return 49 + len(value)
    if isinstance(value, (bytes, bytearray)):
        return 33 + len(value)
    if depth > 32:
        return 64
    if isinstance(value, dict):
        return 64 + sum(
            24 + value_size(k, depth + 1) + value_size(v, depth + 1) for k, v in value.items()
        )
    if isinstance(value, (list, tuple)):
        return 56 + sum(8 + value_size(v, depth + 1) for v in value)
    return 32


def entry_size(entry: ToolEntry) -> int:
    """What a tool call holds, roughly: its input, output, title and details, and the entry."""
    return (
        ENTRY_OVERHEAD
        + value_size(entry.input)
        + value_size(entry.output)
        + value_size(entry.title)
        + value_size(entry.detail)
    )


class ToolCallStore:
    """The last `capacity` tool calls, at most `max_bytes` of them together (`entry_size`, counted
    again when an entry changes), the oldest dropped first. The newest call is always kept,
    whatever its size.

    Entries get consecutive sequence numbers, kept in a ring so `get(seq)` is O(1). Every addition
    and update is written to a change journal; a reader keeps a cursor into it and asks
    `changes_since(cursor)` what to re-examine, so a filtered view is maintained incrementally.
    """

    def __init__(
        self,
        capacity: int = 100_000,
        journal: int | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        if capacity < 1:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self.max_bytes = max_bytes
        self._ring: list[ToolEntry | None] = []
        self._sizes: list[int] = []
        self.bytes = 0
        self.first_seq = 0
        self.next_seq = 0
        self._by_key: dict[tuple[Any, ...], ToolEntry] = {}
        self._journal: deque[int] = deque(maxlen=journal or max(1024, capacity // 2))
        self.change_no = 0
        self.dropped = 0
        self.on_drop: Callable[[ToolEntry], None] | None = None  # told of each call dropped

    def __len__(self) -> int:
        return self.next_seq - self.first_seq

    def __iter__(self) -> Iterator[ToolEntry]:
        for seq in range(self.first_seq, self.next_seq):
            entry = self._ring[seq % self.capacity]
            assert entry is not None
            yield entry

    def get(self, seq: int) -> ToolEntry | None:
        if self.first_seq <= seq < self.next_seq:
            return self._ring[seq % self.capacity]
        return None

    def find(self, key: tuple[Any, ...]) -> ToolEntry | None:
        return self._by_key.get(key)

    def add(self, key: tuple[Any, ...], entry: ToolEntry) -> ToolEntry:
        seq = self.next_seq
        if seq - self.first_seq >= self.capacity:
            self._drop_oldest()  # (its slot is the one this entry takes)
        entry.seq = seq
        entry.key = key
        size = entry_size(entry)
        slot = seq % self.capacity
        if len(self._ring) < self.capacity:
            self._ring.append(entry)
            self._sizes.append(size)
        else:
            self._ring[slot] = entry
            self._sizes[slot] = size
        self.bytes += size
        self.next_seq = seq + 1
        self._by_key[key] = entry
        self._journal_change(entry)
        self._shrink()
        return entry

    def _drop_oldest(self) -> None:
        if not self.dropped:
            self._settle_index()
        slot = self.first_seq % self.capacity
        old = self._ring[slot]
        if old is not None:
            self._forget(old)
            if self.on_drop is not None:
                self.on_drop(old)
        self._ring[slot] = None
        self.bytes -= self._sizes[slot]
        self._sizes[slot] = 0
        self.first_seq += 1
        self.dropped += 1

    def _settle_index(self) -> None:
        """Give the key index, now that the store is full, the table it keeps from here on.

        A dict that has only grown has room left for up to as many keys again as it holds. Once the
        store replaces its entries, each deletion leaves a dead slot and each insertion takes a
        new one; when they run out CPython rebuilds the table for three times the keys it holds
        (twice its size, 5 MB -> 10 MB for 100,000 calls) and keeps that size from then on. Left
        alone, that happens once, some 75,000 replacements after the store filled: memory that
        steps up long after the log is full. Spending the free slots now (a placeholder key
        inserted and deleted until the table is rebuilt: ~15 ms for 100,000 calls, once) makes
        the store's memory flat from the moment it is full.
        """
        index = cast("dict[Any, Any]", self._by_key)  # the placeholder maps to None
        size = sys.getsizeof(index)
        for _ in range(2 * len(index) + 8):  # more than a table has free slots
            index[_PLACEHOLDER] = None
            del index[_PLACEHOLDER]
            if sys.getsizeof(index) != size:
                break

    def _shrink(self) -> None:
        while self.bytes > self.max_bytes and self.next_seq - self.first_seq > 1:
            self._drop_oldest()

    def _forget(self, old: ToolEntry) -> None:
        if old.key is not None and self._by_key.get(old.key) is old:
            del self._by_key[old.key]

    def changed(self, entry: ToolEntry) -> None:
        """`entry` was updated: journal it, and weigh it again."""
        if self.first_seq <= entry.seq < self.next_seq:
            slot = entry.seq % self.capacity
            if self._ring[slot] is entry:
                size = entry_size(entry)
                self.bytes += size - self._sizes[slot]
                self._sizes[slot] = size
        self._journal_change(entry)
        self._shrink()

    def _journal_change(self, entry: ToolEntry) -> None:
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
