"""Canonical message keys: each message's hashable form (two messages compare equal when their
keys do), the normalization it is made from (runs of text parts merged), and the hash chain over
a prefix of keys that the session index is built on. Pure functions; the hot loop of routing."""

from __future__ import annotations

import math
from operator import itemgetter
from typing import Any

from bridge.protocol import ContentPart, Message, TextPart, ToolCallPart, ToolResultPart

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


Normalized = tuple[list[Message], list[Any], list[int]]


def normalize_all(
    messages: list[Message],
    chain_upto: int = 0,
    known: Normalized | None = None,
    start: int = 0,
    own: bool = False,
) -> Normalized:
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
        h = CHAIN_SEED
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


CHAIN_SEED = 0x5EED


def extend_chain(h: int, keys: list[Any]) -> int:
    for k in keys:
        h = hash((h, k))
    return h


def starts_with(keys: list[Any], prefix: list[Any]) -> bool:
    """`keys[:len(prefix)] == prefix`, without copying the run. The keys past it (a request's
    provisional and new messages: a few) are set aside and put back, so the comparison is the
    list's own, pointer by pointer: a key that is the very object costs no reference-count write,
    where copying a long history's run wrote one on each of its keys (a cache miss each, when the
    client and the agent have run in between)."""
    n = len(prefix)
    if len(keys) < n:
        return False
    if len(keys) == n:
        return keys == prefix
    rest = keys[n:]
    del keys[n:]
    try:
        return keys == prefix  # keys are strings and tuples of plain values: no code runs here
    finally:
        keys += rest
