"""The committed/provisional history tracker (docs/upstream.md, "How upstream's bridge works";
architecture decisions 5, 6 and 9).

Stateless clients send the whole conversation with every request; agents are stateful sessions.
For one connection this module keeps the live sessions, each with the part of its conversation
the client has proven it kept (`committed`) and the last exchange it may still abandon
(`provisional`: the messages sent to the agent plus what the agent answered). `route()` works out
from a request's messages which session it continues and whether the provisional exchange was
kept (COMMIT / CONTINUE), abandoned (CANCEL) or whether this is a conversation nobody has seen
(NEW_SESSION), applies that, and returns the decision with its evidence.

Two matching policies share this engine (one per front door, chosen when the tracker is made):

* `MatchPolicy.SUPERSEDE` (the VS Code door): a request that shares a session's committed prefix
  (or, with nothing committed, its first message) but not its provisional exchange *cancels* that
  exchange — the client moved on (edited, regenerated, or abandoned it).
* `MatchPolicy.EXTEND` (the OpenAI door, a stateless API used by many independent callers): a
  request continues a session only when it extends that session's *complete* transcript — every
  message so far, the reply the agent produced included — and that session is not answering
  another request at the moment (`busy`). Nothing is ever cancelled by routing: anything else is a
  conversation of its own (NEW_SESSION; its earlier turns are replayed to the new agent session).

Either way, an assistant message that carries tool calls is matched by its tool calls (ids, names,
arguments by value) and not by its text: clients echo a reply that mixed text and tool calls in
their own way (VS Code keeps only the call; Chat Completions puts the text first), and the call ids
are what identify the exchange.

Pure state: no I/O, no asyncio, no clock. Everything "why was my conversation cancelled?" can be
unit-tested and replayed from a trace.

Cost: each message gets a canonical key once per request (a `(role, text)` tuple for the usual
single-text message, the bare string for a user one; only tool parts need a walk over their JSON
values). Sessions are indexed by
`(agent, len(committed), hash chain of the committed keys)`, so a lookup hashes the incoming keys
once and probes one bucket per distinct committed length; a hit is verified by comparing key
lists. Sessions with nothing committed are indexed by their first provisional message instead,
because that message is what decision 6 requires a match to share.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from operator import is_, itemgetter
from typing import Any

from bridge.protocol import ContentPart, Message, TextPart, ToolCallPart, ToolResultPart

__all__ = [
    "Decision",
    "DecisionKind",
    "HistoryTracker",
    "MatchPolicy",
    "SessionView",
    "message_key",
    "normalize_message",
]


class DecisionKind(str, Enum):
    NEW_SESSION = "new_session"  # no session matched: a new one holds all messages as provisional
    CONTINUE = "continue"  # matched; nothing was provisional; the new messages extend the session
    COMMIT = "commit"  # matched and the request extends the provisional exchange: it is committed
    CANCEL = "cancel"  # matched the committed prefix but not the provisional exchange: discarded


class MatchPolicy(str, Enum):
    """How a request is matched to a live session (see the module docstring)."""

    SUPERSEDE = "supersede"  # VS Code: a request that diverges from an exchange cancels it
    EXTEND = "extend"  # OpenAI: continue only a complete transcript; otherwise a new session


@dataclass(frozen=True)
class Decision:
    seq: int
    session_id: str
    kind: DecisionKind
    agent_key: str
    committed_len: int
    new_messages: list[Message]
    prompt_start: int
    mismatch_index: int | None = None
    expected: dict[str, Any] | None = None
    received: dict[str, Any] | None = None
    candidates: int = 0
    reason: str = ""

    @property
    def to_prompt(self) -> list[Message]:
        """The new messages the agent has not received yet (upstream re-sent them: B8)."""
        return self.new_messages[self.prompt_start :]

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "session_id": self.session_id,
            "kind": self.kind.value,
            "agent_key": self.agent_key,
            "committed_len": self.committed_len,
            "new_messages": [_wire(m) for m in self.new_messages],
            "prompt_start": self.prompt_start,
            "mismatch_index": self.mismatch_index,
            "expected": self.expected,
            "received": self.received,
            "candidates": self.candidates,
            "reason": self.reason,
        }


@dataclass
class SessionView:
    """A read-only snapshot of one session (copies; later routing does not change it)."""

    session_id: str
    agent_key: str
    committed: list[Message]
    provisional: list[Message]
    created_seq: int


# --- canonical keys ------------------------------------------------------------------------------
#
# A key is a tuple `(role, *part_keys)`: a text part's key is its (run-merged) string, a tool part's
# key a tuple, so the forms cannot collide; a user message that is one text is keyed by the bare
# string, which no tuple equals. JSON values are walked into hashable forms where numbers
# are floats (2 == 2.0, and integers beyond 2**53 compare as the double JavaScript holds them, so a
# JS echo of a large integer still matches), booleans are tagged (true != 1), objects are sorted by
# key and arrays keep their order.

_TRUE = ("#bool", True)
_FALSE = ("#bool", False)
_PENDING = object()


def _canon_leaf(value: Any) -> Any:
    t = type(value)
    if t is str or value is None:
        return value
    if t is bool or isinstance(value, bool):
        return _TRUE if value else _FALSE
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:  # beyond any double; only equal to itself
            return int(value)
    if isinstance(value, float):
        return float(value) if not math.isnan(value) else ("#nan",)
    if isinstance(value, str):
        return str(value)
    return ("#repr", repr(value))


_DEEP = 64  # nesting beyond which the walk continues without recursion
_first = itemgetter(0)


def _canon(value: Any, depth: int = 0) -> Any:
    """The hashable canonical form of a JSON value."""
    t = type(value)
    if t is str or value is None:
        return value
    if t is dict:
        if depth > _DEEP:
            return _canon_deep(value)
        d = depth + 1
        pairs = [(k if type(k) is str else str(k), _canon(v, d)) for k, v in value.items()]
        pairs.sort(key=_first)
        return ("{", *pairs)
    if t is list:
        if depth > _DEEP:
            return _canon_deep(value)
        d = depth + 1
        return ("[", *[_canon(v, d) for v in value])
    if t is int:
        try:
            return float(value)
        except OverflowError:  # beyond any double; only equal to itself
            return value
    if t is float:
        return value if value == value else ("#nan",)
    if t is bool:
        return _TRUE if value else _FALSE
    if isinstance(value, (dict, list, tuple)):
        return _canon_deep(value)
    return _canon_leaf(value)


def _canon_deep(root: Any) -> Any:
    """`_canon` without recursion, for values nested deeper than `_DEEP` (a client may)."""
    stack: list[tuple[str, list[str] | None, list[Any], list[Any]]] = []
    value = root
    while True:
        if isinstance(value, dict):
            items = sorted(((str(k), v) for k, v in value.items()), key=_first)
            stack.append(("{", [k for k, _ in items], [v for _, v in items], []))
            result: Any = _PENDING
        elif isinstance(value, (list, tuple)):
            stack.append(("[", None, list(value), []))
            result = _PENDING
        else:
            result = _canon_leaf(value)
        while True:  # hand the result up; descend into the next child, or finish the container
            if result is not _PENDING:
                if not stack:
                    return result
                stack[-1][3].append(result)
            tag, keys, children, done = stack[-1]
            if len(done) < len(children):
                value = children[len(done)]
                break
            stack.pop()
            result = (tag,) + (tuple(zip(keys, done)) if keys is not None else tuple(done))


def _part_key(part: ContentPart) -> Any:
    if isinstance(part, ToolCallPart):
        return ("#call", part.toolCallId, part.toolName, _canon(part.parameters))
    if isinstance(part, ToolResultPart):
        return ("#result", part.toolCallId, _canon(part.result))
    return ("#part", repr(part))  # not reachable with the wire models


_ROLES = {"user": "user", "assistant": "assistant"}  # one object per role: compared by identity


def _text_key(role: str, text: str) -> Any:
    """The key of a message that is one text: the bare string for a user message (the most common
    kind of message gets the cheapest key), `(role, text)` otherwise."""
    return text if role == "user" else (_ROLES.get(role, role), text)


def _normalized(msg: Message) -> tuple[Message, Any]:
    """The message with each run of text parts merged (VS Code may echo a reply split
    differently), and its canonical key."""
    content = msg.content
    role = _ROLES.get(msg.role, msg.role)
    if len(content) == 1:  # the common case: nothing to merge
        part = content[0]
        if type(part) is TextPart:
            return msg, _text_key(role, part.value)
        return msg, (role, _part_key(part))
    if not content:
        return msg, (role,)
    norm, key = _normalized_parts(msg, role)
    if role == "assistant" and any(isinstance(p, ToolCallPart) for p in content):
        # Matched by its tool calls, not its text (see the module docstring).
        key = (role, *[_part_key(p) for p in content if isinstance(p, ToolCallPart)])
    return norm, key


def _normalized_parts(msg: Message, role: str) -> tuple[Message, Any]:
    content = msg.content
    key: list[Any] = [role]
    parts: list[Any] = []
    run: list[str] | None = None
    merged = False
    for part in content:
        if isinstance(part, TextPart):
            if run is None:
                run = [part.value]
            else:
                run.append(part.value)
                merged = True
            continue
        if run is not None:
            text = run[0] if len(run) == 1 else "".join(run)
            key.append(text)
            parts.append(text)
            run = None
        key.append(_part_key(part))
        parts.append(part)
    if run is not None:
        text = run[0] if len(run) == 1 else "".join(run)
        key.append(text)
        parts.append(text)
    final = _text_key(role, key[1]) if len(key) == 2 and type(key[1]) is str else tuple(key)
    if not merged:
        return msg, final
    content_out = [TextPart(value=p) if type(p) is str else p for p in parts]
    return Message.model_construct(role=msg.role, content=content_out), final


_Normalized = tuple[list[Message], list[Any], list[int]]


def _normalize_all(
    messages: list[Message],
    chain_upto: int = 0,
    known: _Normalized | None = None,
    start: int = 0,
    own: bool = False,
) -> _Normalized:
    """The hot loop of route(): the normalized messages (a new list), their keys, and the hash
    chain of the first `chain_upto` keys (`chain[i]` covers `keys[:i]`), made while the keys are
    fresh in the cache rather than in a second pass.

    `known`: the result for a list whose first `start` messages are these very objects; their
    normalized forms and keys are taken from it rather than made again. `own`: nothing else holds
    the lists of `known`, so they are cut to `start` and extended rather than copied."""
    if known is not None and start:
        k_norm, k_keys, k_chain = known
        upto = min(start, chain_upto)
        if own:
            norm, keys, chain = k_norm, k_keys, k_chain
            del norm[start:], keys[start:], chain[upto + 1 :]
        else:
            norm, keys, chain = k_norm[:start], k_keys[:start], k_chain[: upto + 1]
        norm += messages[start:]
        h = chain[-1]
        for key in keys[len(chain) - 1 : upto]:
            h = hash((h, key))
            chain.append(h)
    else:
        start = 0
        norm = list(messages)
        keys = []
        h = _CHAIN_SEED
        chain = [h]
    add = keys.append
    roles = _ROLES
    extend = chain.append
    for i in range(start, len(messages)):
        m = messages[i]
        content = m.content
        if len(content) == 1 and type(part := content[0]) is TextPart:  # _normalized's fast path
            role = m.role
            k: Any = part.value if role == "user" else (roles.get(role, role), part.value)
        else:
            nm, k = _normalized(m)
            if nm is not m:
                norm[i] = nm
        add(k)
        if i < chain_upto:
            h = hash((h, k))
            extend(h)
    return norm, keys, chain


def normalize_message(msg: Message) -> Message:
    """Merge each run of consecutive text parts into one: nothing else changes (no trimming, no
    reordering), so a reply VS Code echoes split differently still compares equal."""
    return _normalized(msg)[0]


def message_key(msg: Message) -> Any:
    """The hashable form two messages are compared by (equal keys ⇔ equal normalized messages)."""
    return _normalized(msg)[1]


_CHAIN_SEED = 0x5EED
_RECENT = 8  # requests whose normalization `route` may reuse


def _extend_chain(h: int, keys: list[Any]) -> int:
    for k in keys:
        h = hash((h, k))
    return h


# --- sessions ------------------------------------------------------------------------------------


class _Session:
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
        self.chain = _CHAIN_SEED
        self.provisional: list[Message] = []
        self.prov_keys: list[Any] | None = []  # None: parts were streamed since the keys were made
        self.reply: Message | None = None  # the agent's reply: the last provisional message, ours
        self.bucket: tuple[Any, ...] | None = None


@dataclass
class _Match:
    session: _Session
    cancel: bool
    length: int  # matched prefix: len(C)+len(P), or len(C) for a cancel


def _wire(msg: Message) -> dict[str, Any]:
    try:
        return msg.model_dump(mode="json")
    except ValueError:  # pydantic refuses JSON nested deeper than it serializes
        return {
            "role": msg.role,
            "content": [{"type": "unserializable", "error": "nested too deeply to show"}],
        }


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class _RecentRequests:
    """Recent requests' messages and their normalization: a request that repeats one's very
    objects (the vscodelm door reuses the validated messages of a history it has seen) is
    normalized only from where it differs, so a turn's cost stays flat in length. Several,
    because a connection carries several conversations at once."""

    def __init__(self) -> None:
        # Each: the caller's list, the tracker's copy of it as it was, and their normalization.
        self._items: OrderedDict[int, tuple[list[Message], list[Message], _Normalized]] = (
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
    ) -> _Normalized:
        """`_normalize_all` of `messages`, taking what it can from the recent request that shares
        the longest run of leading message objects with them (`reuses`: see
        `HistoryTracker.route`). The lists returned are remembered: callers hand sessions copies."""
        start = 0
        known: _Normalized | None = None
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
        norm, keys, chain = _normalize_all(
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
        while len(self._items) > _RECENT:
            seq, _ = self._items.popitem(last=False)
            self._owner.pop(seq, None)
        return norm, keys, chain


class _SessionIndex:
    """The live sessions by `(agent, len(committed), hash chain of the committed keys)`, or, with
    nothing committed, `(agent, 0, first provisional key)`; and per agent the committed lengths
    in use, so that a lookup probes one bucket per distinct length."""

    def __init__(self) -> None:
        self.buckets: dict[tuple[Any, ...], dict[str, _Session]] = {}
        # agent key -> {committed length (> 0) -> number of sessions}
        self.lengths: dict[str, dict[int, int]] = {}

    @staticmethod
    def key(s: _Session) -> tuple[Any, ...]:
        L = len(s.committed_keys)
        if L:
            return (s.agent_key, L, s.chain)
        assert s.prov_keys is not None
        return (s.agent_key, 0, s.prov_keys[0] if s.prov_keys else None)

    def add(self, s: _Session) -> None:
        key = self.key(s)
        s.bucket = key
        self.buckets.setdefault(key, {})[s.sid] = s
        L = key[1]
        if L:
            lengths = self.lengths.setdefault(s.agent_key, {})
            lengths[L] = lengths.get(L, 0) + 1

    def remove(self, s: _Session) -> None:
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


class HistoryTracker:
    """The live sessions of one connection and the routing of its requests to them."""

    def __init__(self, policy: MatchPolicy = MatchPolicy.SUPERSEDE) -> None:
        self.policy = policy
        self._seq = 0
        self._next_sid = 0
        self._sessions: dict[str, _Session] = {}
        self._idx = _SessionIndex()
        self._dirty: set[_Session] = set()
        self._recent = _RecentRequests()

    @property
    def reused(self) -> int:
        """Messages whose normalization the last route took over (tests, benchmarks)."""
        return self._recent.reused

    # --- queries ---------------------------------------------------------------------------------

    def session(self, session_id: str) -> SessionView | None:
        s = self._sessions.get(session_id)
        return self._view(s) if s is not None else None

    def sessions(self) -> list[SessionView]:
        return [self._view(s) for s in self._sessions.values()]

    def __len__(self) -> int:
        return len(self._sessions)

    def _view(self, s: _Session) -> SessionView:
        provisional = list(s.provisional)
        if provisional and provisional[-1] is s.reply:  # may still be streamed into
            last = provisional[-1]
            provisional[-1] = Message.model_construct(role=last.role, content=list(last.content))
        return SessionView(s.sid, s.agent_key, list(s.committed), provisional, s.created_seq)

    # --- the agent's side ------------------------------------------------------------------------

    def record_part(self, session_id: str, part: ContentPart) -> None:
        """The agent streamed `part` into the session's provisional exchange (appended to its last
        message when that is the assistant's, else as a new assistant message).

        Parts of one exchange gather in one assistant message, the reply, as the client will echo
        it. An assistant message the client sent at the end of its request is not the reply: the
        reply starts a message of its own (upstream appended to it, and then never matched the
        client's echo).
        """
        s = self._sessions.get(session_id)
        if s is None:  # a late part of a removed session
            return
        prov = s.provisional
        reply = s.reply
        if reply is not None and prov and prov[-1] is reply:
            reply.content.append(part)
        else:
            s.reply = Message.model_construct(role="assistant", content=[part])
            prov.append(s.reply)
        if s.prov_keys is not None:
            s.prov_keys = None
            self._dirty.add(s)

    def set_reply(self, session_id: str, parts: list[ContentPart]) -> None:
        """The client was answered with `parts` rather than with everything the agent streamed (a
        stop sequence or token limit cut it; a structured answer was re-serialized): that is the
        reply the client will echo, so it is what the next request is matched against."""
        s = self._sessions.get(session_id)
        if s is None or s.reply is None or not s.provisional or s.provisional[-1] is not s.reply:
            return
        if parts:
            s.reply = Message.model_construct(role="assistant", content=list(parts))
            s.provisional[-1] = s.reply
        else:
            s.provisional.pop()
            s.reply = None
        s.prov_keys = None
        self._dirty.add(s)

    def complete(self, session_id: str) -> None:
        """The exchange's response finished: normalize the provisional messages."""
        s = self._sessions.get(session_id)
        if s is None:
            return
        self._refresh(s)

    def remove(self, session_id: str) -> None:
        """The session died: forget it; its conversation's next request starts a new session."""
        s = self._sessions.pop(session_id, None)
        if s is None:
            return
        self._dirty.discard(s)
        self._idx.remove(s)
        self._recent.forget_session(session_id)

    # --- routing ---------------------------------------------------------------------------------

    def route(
        self,
        agent_key: str,
        messages: list[Message],
        busy: Callable[[str], bool] | None = None,
        reuses: tuple[list[Message], int] | None = None,
    ) -> Decision:
        """Decide which session `messages` belongs to and how, apply it, and say why.

        `busy(session_id)`: is that session answering a request right now? Under the EXTEND policy
        a busy session is never continued (a request cannot extend an answer it has not seen).

        `reuses=(earlier, k)`: the caller vouches that `messages[:k]` are the very objects
        `earlier[:k]`, where `earlier` is a list given to an earlier `route` and unchanged since
        (the vscodelm door knows it of the messages its prefix cache reused). Their normalization
        is then taken over without comparing them one by one.
        """
        self._seq += 1
        for s in tuple(self._dirty):
            self._refresh(s)

        lengths = self._idx.lengths.get(agent_key)
        norm, keys, chain = self._recent.normalize(messages, max(lengths) if lengths else 0, reuses)
        decision = self._decide(agent_key, norm, keys, chain, busy)
        self._recent.routed_to(decision.session_id)
        return decision

    def _decide(
        self,
        agent_key: str,
        norm: list[Message],
        keys: list[Any],
        chain: list[int],
        busy: Callable[[str], bool] | None,
    ) -> Decision:
        if not keys:
            return self._start(agent_key, norm, keys, 0, "the request has no messages")
        matches = self._matches(agent_key, keys, chain)
        if self.policy is MatchPolicy.EXTEND:
            return self._route_extend(agent_key, norm, keys, matches, busy)
        if not matches:
            return self._start(agent_key, norm, keys, 0, None)
        best = max(matches, key=lambda m: (m.length, not m.cancel, m.session.created_seq))
        if best.cancel:
            return self._cancel(best.session, norm, keys, len(matches))
        return self._extend(best.session, norm, keys, len(matches))

    def _route_extend(
        self,
        agent_key: str,
        norm: list[Message],
        keys: list[Any],
        matches: list[_Match],
        busy: Callable[[str], bool] | None,
    ) -> Decision:
        """The EXTEND policy: continue the longest idle session whose whole transcript this
        request extends; otherwise a new session (nothing is cancelled)."""
        n = len(keys)
        full = [m for m in matches if not m.cancel and m.length < n]
        idle = [m for m in full if busy is None or not busy(m.session.sid)]
        if idle:
            best = max(idle, key=lambda m: (m.length, m.session.created_seq))
            return self._extend(best.session, norm, keys, len(idle))
        if full:
            why = (
                f"the conversation this request extends is still being answered by "
                f"{', '.join(m.session.sid for m in full)}: a conversation of its own"
            )
        else:
            why = "no idle session's complete transcript is a prefix of this request"
        return self._start(agent_key, norm, keys, len(full), why)

    def _matches(self, agent_key: str, keys: list[Any], chain: list[int]) -> list[_Match]:
        n = len(keys)
        found: list[_Match] = []
        # Nothing committed: a match must share the first provisional message (decision 6), or the
        # session must be empty (nothing to contradict).
        for bucket_key in ((agent_key, 0, None), (agent_key, 0, keys[0])):
            for s in self._idx.buckets.get(bucket_key, {}).values():
                m = self._match_rest(s, keys, 0)
                if m is not None:
                    found.append(m)
        # Something committed: one probe per distinct committed length, by the chain of that prefix.
        for L in self._idx.lengths.get(agent_key, ()):
            if n < L:
                continue
            bucket = self._idx.buckets.get((agent_key, L, chain[L]))
            if not bucket:
                continue
            prefix = keys[:L]
            for s in bucket.values():
                if s.committed_keys != prefix:  # a hash collision, not a match
                    continue
                m = self._match_rest(s, keys, L)
                if m is not None:
                    found.append(m)
        return found

    @staticmethod
    def _match_rest(s: _Session, keys: list[Any], L: int) -> _Match | None:
        """Match the rest of a request against a session whose committed keys equal keys[:L]: it
        extends the provisional exchange (a commit), or differs inside it (a cancel), or —
        with nothing committed — must at least share the first provisional message."""
        pk = s.prov_keys
        assert pk is not None  # refreshed at the start of route()
        p = len(pk)
        if keys[L : L + p] == pk:
            return _Match(s, False, L + p)
        if L > 0 or (p and len(keys) > L and keys[L] == pk[0]):
            return _Match(s, True, L)
        return None

    # --- applying --------------------------------------------------------------------------------

    def _start(
        self, agent_key: str, norm: list[Message], keys: list[Any], candidates: int, why: str | None
    ) -> Decision:
        self._next_sid += 1
        s = _Session(f"s{self._next_sid}", agent_key, self._seq)
        s.provisional = list(norm)  # copies: the session appends; `_normalize` keeps the lists
        s.prov_keys = list(keys)
        self._sessions[s.sid] = s
        self._idx.add(s)
        if why is None:
            others = sum(1 for o in self._sessions.values() if o.agent_key == agent_key) - 1
            why = (
                f"no session of this agent shares this conversation's history (of {others} live)"
                if others
                else "no live session of this agent"
            )
        reason = f"{why}; started {s.sid} with {_count(len(norm), 'message')}"
        return Decision(
            seq=self._seq,
            session_id=s.sid,
            kind=DecisionKind.NEW_SESSION,
            agent_key=agent_key,
            committed_len=0,
            new_messages=list(norm),
            prompt_start=0,
            candidates=candidates,
            reason=reason,
        )

    def _extend(
        self, s: _Session, norm: list[Message], keys: list[Any], candidates: int
    ) -> Decision:
        L = len(s.committed_keys)
        pk = s.prov_keys
        assert pk is not None
        p = len(pk)
        self._idx.remove(s)
        if p:
            kind = DecisionKind.COMMIT
            s.committed.extend(s.provisional)
            # The request's own keys (equal to `pk`: that is the match): the next request reuses
            # these very objects, so comparing the committed prefix costs an identity check each.
            s.committed_keys.extend(keys[L : L + p])
            s.chain = _extend_chain(s.chain, pk)
            what = (
                f"request extends the provisional exchange of {s.sid} "
                f"({_count(p, 'message')}); committed it"
            )
        else:
            kind = DecisionKind.CONTINUE
            what = (
                f"request extends {s.sid} ({_count(L, 'committed message')}, nothing provisional)"
            )
        new = norm[L + p :]
        s.provisional = new
        s.prov_keys = keys[L + p :]
        s.reply = None
        self._idx.add(s)
        return Decision(
            seq=self._seq,
            session_id=s.sid,
            kind=kind,
            agent_key=s.agent_key,
            committed_len=len(s.committed),
            new_messages=list(new),
            prompt_start=0,
            candidates=candidates,
            reason=f"{what}; {_count(len(new), 'new message')}",
        )

    def _cancel(
        self, s: _Session, norm: list[Message], keys: list[Any], candidates: int
    ) -> Decision:
        L = len(s.committed_keys)
        old_msgs = s.provisional
        old_keys = s.prov_keys
        assert old_keys is not None
        rest_keys = keys[L:]
        common = 0
        for a, b in zip(rest_keys, old_keys):
            if a != b:
                break
            common += 1
        mismatch = L + common
        expected = _wire(old_msgs[common])  # a cancel means old_keys is not a prefix of rest_keys
        received = _wire(norm[mismatch]) if mismatch < len(norm) else None
        prompt_start = common
        if common == len(rest_keys) and rest_keys:
            # The request stops inside the abandoned exchange (a "regenerate"): the agent did receive
            # these messages, but only prompting the trailing non-assistant messages again gets the
            # client a new answer.
            prompt_start = len(rest_keys)
            while prompt_start > 0 and norm[L + prompt_start - 1].role != "assistant":
                prompt_start -= 1
        self._idx.remove(s)
        new = norm[L:]
        s.provisional = new
        s.prov_keys = rest_keys
        s.reply = None
        self._idx.add(s)
        if received is None:
            where = (
                f"the request ends at message {mismatch}, inside the provisional exchange of "
                f"{s.sid} ({_count(len(old_keys), 'message')})"
            )
        else:
            where = (
                f"message {mismatch} differs from the provisional exchange of {s.sid} "
                f"({_count(len(old_keys), 'message')})"
            )
        kept = f"kept {_count(L, 'committed message')}" if L else "nothing was committed"
        resent = f"; {_count(prompt_start, 'message')} already sent" if prompt_start else ""
        return Decision(
            seq=self._seq,
            session_id=s.sid,
            kind=DecisionKind.CANCEL,
            agent_key=s.agent_key,
            committed_len=L,
            new_messages=list(new),
            prompt_start=prompt_start,
            mismatch_index=mismatch,
            expected=expected,
            received=received,
            candidates=candidates,
            reason=f"{where}; discarded it, {kept}{resent}",
        )

    # --- index -----------------------------------------------------------------------------------

    def _refresh(self, s: _Session) -> None:
        """Normalize the provisional messages and remake their keys (after streamed parts)."""
        self._dirty.discard(s)
        norm, keys, _ = _normalize_all(s.provisional)
        if s.reply is not None:  # normalizing may have replaced the reply (still ours) by a copy
            s.reply = norm[-1] if s.provisional and s.provisional[-1] is s.reply else None
        s.provisional = norm
        s.prov_keys = keys
        if not s.committed_keys:  # the bucket depends on the first provisional message
            self._idx.remove(s)
            self._idx.add(s)
