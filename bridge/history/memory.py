"""What the tracker keeps between requests: the live sessions (`LiveSession`), their index by
committed history (`SessionIndex`), and the recent requests whose normalization a next request
may take over (`RecentRequests`)."""

from __future__ import annotations

from collections import OrderedDict
from operator import is_
from typing import Any

from bridge.history.keys import CHAIN_SEED, Normalized, normalize_all
from bridge.protocol import Message

RECENT = 8  # requests whose normalization `route` may reuse


class LiveSession:
    __slots__ = (
        "agent_key",
        "bucket",
        "chain",
        "committed",
        "committed_keys",
        "created_seq",
        "prov_keys",
        "provisional",
        "reply",
        "sid",
    )

    def __init__(self, sid: str, agent_key: str, created_seq: int) -> None:
        self.sid = sid
        self.agent_key = agent_key
        self.created_seq = created_seq
        self.committed: list[Message] = []
        self.committed_keys: list[Any] = []
        self.chain = CHAIN_SEED
        self.provisional: list[Message] = []
        self.prov_keys: list[Any] | None = []  # None: parts were streamed since the keys were made
        self.reply: Message | None = None  # the agent's reply: the last provisional message, ours
        self.bucket: tuple[Any, ...] | None = None


class RecentRequests:
    """Recent requests' messages and their normalization: a request that repeats one's very
    objects (the vscodelm door reuses the validated messages of a history it has seen) is
    normalized only from where it differs, so a turn's cost stays flat in length. Several,
    because a connection carries several conversations at once."""

    def __init__(self) -> None:
        # Each: the caller's list, the tracker's copy of it as it was, and their normalization.
        self._items: OrderedDict[int, tuple[list[Message], list[Message], Normalized]] = (
            OrderedDict()
        )
        self._seq = 0
        # The session each recent request was routed to: a session's are let go when it is
        # removed, so the memory of a conversation that ended is freed then, not by some later
        # request's `route` (where freeing a long conversation's objects cost as much as routing).
        self._owner: dict[int, str] = {}
        self.reused = 0  # messages whose normalization the last request took over

    def routed_to(self, session_id: str) -> None:
        """The last request normalized went to this session."""
        self._owner[self._seq] = session_id

    def forget_session(self, session_id: str) -> None:
        for seq in [seq for seq, owner in self._owner.items() if owner == session_id]:
            self._items.pop(seq, None)
            del self._owner[seq]

    def normalize(
        self,
        messages: list[Message],
        chain_upto: int,
        reuses: tuple[list[Message], int] | None = None,
    ) -> Normalized:
        """`normalize_all` of `messages`, taking what it can from the recent request that shares
        the longest run of leading message objects with them (`reuses`: see
        `HistoryTracker.route`). The lists returned are remembered: callers hand sessions copies."""
        start = 0
        known: Normalized | None = None
        used = 0
        if messages and reuses is not None:
            earlier, k = reuses
            for seq, (origin, seen, normalized) in reversed(self._items.items()):
                if origin is earlier:
                    start = min(k, len(seen), len(messages))
                    known, used = normalized, seq
                    break
        if messages and not used:
            first = messages[0]
            for seq, (_, seen, normalized) in reversed(self._items.items()):
                n = min(len(messages), len(seen))
                if n <= start or seen[0] is not first:
                    continue
                if all(map(is_, messages, seen)):  # pairs up the first n
                    common = n
                else:
                    common = 0
                    for a, b in zip(messages, seen):
                        if a is not b:
                            break
                        common += 1
                if common > start:
                    start, known, used = common, normalized, seq
        # A request that extends a remembered one supersedes it: its lists are taken over.
        superseded = self._items.pop(used) if used and start == len(self._items[used][1]) else None
        if superseded is not None:
            self._owner.pop(used, None)
        norm, keys, chain = normalize_all(
            messages, chain_upto, known, start, own=superseded is not None
        )
        self.reused = start
        if superseded is not None:
            seen = superseded[1]
            seen += messages[len(seen) :]
        else:
            seen = list(messages)  # a copy: the caller's list may change after this returns
        self._seq += 1
        self._items[self._seq] = (messages, seen, (norm, keys, chain))
        while len(self._items) > RECENT:
            seq, _ = self._items.popitem(last=False)
            self._owner.pop(seq, None)
        return norm, keys, chain


class SessionIndex:
    """The live sessions by `(agent, len(committed), hash chain of the committed keys)`, or, with
    nothing committed, `(agent, 0, first provisional key)`; and per agent the committed lengths
    in use, so that a lookup probes one bucket per distinct length."""

    def __init__(self) -> None:
        self.buckets: dict[tuple[Any, ...], dict[str, LiveSession]] = {}
        # agent key -> {committed length (> 0) -> number of sessions}
        self.lengths: dict[str, dict[int, int]] = {}

    @staticmethod
    def key(s: LiveSession) -> tuple[Any, ...]:
        L = len(s.committed_keys)
        if L:
            return (s.agent_key, L, s.chain)
        assert s.prov_keys is not None
        return (s.agent_key, 0, s.prov_keys[0] if s.prov_keys else None)

    def add(self, s: LiveSession) -> None:
        key = self.key(s)
        s.bucket = key
        self.buckets.setdefault(key, {})[s.sid] = s
        L = key[1]
        if L:
            lengths = self.lengths.setdefault(s.agent_key, {})
            lengths[L] = lengths.get(L, 0) + 1

    def remove(self, s: LiveSession) -> None:
        key = s.bucket
        if key is None:
            return
        s.bucket = None
        bucket = self.buckets.get(key)
        if bucket is not None:
            bucket.pop(s.sid, None)
            if not bucket:
                del self.buckets[key]
        L = key[1]
        if L:
            lengths = self.lengths[s.agent_key]
            if lengths[L] <= 1:
                del lengths[L]
                if not lengths:
                    del self.lengths[s.agent_key]
            else:
                lengths[L] -= 1
