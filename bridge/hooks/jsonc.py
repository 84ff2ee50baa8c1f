"""A CLI's JSON settings file with comments in it (Gemini CLI reads `//` and `/* */` comments in
its `settings.json`), edited without losing them: the one top-level member the hook installer
changes (`hooks`) is replaced, added or removed in the text, and every other byte is kept.

Comments are blanked out (same length, newlines kept) to parse the file with `json`, so positions
in the blanked text are positions in the original.
"""

from __future__ import annotations

import json
from typing import Any

_WHITESPACE = " \t\r\n"
_DECODER = json.JSONDecoder()


def blank_comments(text: str) -> str:
    """`text` with every comment replaced by spaces (its newlines kept); ValueError for a block
    comment that never ends. Text inside strings is never a comment."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("a /* comment that never ends")
            for j in range(i, end + 2):
                if out[j] != "\n":
                    out[j] = " "
            i = end + 2
        else:
            i += 1
    return "".join(out)


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WHITESPACE:
        i += 1
    return i


def _members(blank: str) -> tuple[list[tuple[str, int, int, int]], int, int]:
    """The top-level object's members as (key, key start, value start, value end), and the
    positions of its `{` and `}`."""
    open_at = _skip(blank, 0)
    if not blank.startswith("{", open_at):
        raise ValueError("not a JSON object")
    members = []
    i = _skip(blank, open_at + 1)
    while not blank.startswith("}", i):
        key, after_key = _DECODER.raw_decode(blank, i)
        colon = _skip(blank, after_key)
        if not blank.startswith(":", colon):
            raise ValueError(f"expected ':' at character {colon}")
        start = _skip(blank, colon + 1)
        _, end = _DECODER.raw_decode(blank, start)
        members.append((key, i, start, end))
        i = _skip(blank, end)
        if blank.startswith(",", i):
            i = _skip(blank, i + 1)
        elif not blank.startswith("}", i):
            raise ValueError(f"expected ',' or '}}' at character {i}")
    return members, open_at, i


def _indent_of(text: str, at: int) -> str:
    line = text[text.rfind("\n", 0, at) + 1 : at]
    return line[: len(line) - len(line.lstrip(" \t"))]


def set_member(text: str, key: str, value: Any) -> str:
    """`text` (a JSON object with comments) with its top-level `key` set to `value` — or removed,
    for None — and everything else as it was."""
    blank = blank_comments(text)
    members, open_at, _ = _members(blank)
    found = [m for m in members if m[0] == key]
    if value is None:
        if not found:
            return text
        index = members.index(found[-1])
        _, key_at, _, end = found[-1]
        if index > 0:  # from the end of the member before it: its comma goes too
            return text[: members[index - 1][3]] + text[end:]
        if index + 1 < len(members):  # the first of several: up to the next member
            return text[:key_at] + text[members[index + 1][1] :]
        head = text[:key_at]  # the only one: comments before and after it stay
        if not head[open_at + 1 :].strip():
            head = text[: open_at + 1]
        return head + text[end:]
    if found:
        _, key_at, start, end = found[-1]
        indent = _indent_of(text, key_at)
        return text[:start] + _dumps(value, indent) + text[end:]
    if members:
        last_key_at, last_end = members[-1][1], members[-1][3]
        indent = _indent_of(text, last_key_at)
        member = f"{json.dumps(key)}: {_dumps(value, indent)}"
        return f"{text[:last_end]},\n{indent}{member}{text[last_end:]}"
    indent = _indent_of(text, open_at) + "  "
    member = f"{json.dumps(key)}: {_dumps(value, indent)}"
    return f"{text[: open_at + 1]}\n{indent}{member}\n{text[open_at + 1 :]}"


def _dumps(value: Any, indent: str) -> str:
    return json.dumps(value, indent=2).replace("\n", "\n" + indent)
