"""Key paths and the lines of the settings text that hold them.

A setting is named by its key path (`("agents", "claude", "args")`, `("rules", 2, "action")`):
`format_key` writes one as a person reads it, `locate` finds the line of the header or `key =`
that sets it, so that an error in a setting names its line. The finder reads the text itself
(`tomllib` keeps no positions); it is best effort and never fails.
"""

from __future__ import annotations

import re

KeyPath = tuple[str | int, ...]


BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key_part(part: str) -> str:
    if BARE_KEY.fullmatch(part):
        return part
    return '"' + part.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_key(path: KeyPath) -> str:
    """`agents.claude.args`, `agents."Claude Code".bypass`, `rules[2].action` (rules count from 1,
    as in `symposium-tui config` and the approval audit log)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part + 1}]"
        else:
            out += ("." if out else "") + _key_part(part)
    return out


def split_key(raw: str) -> list[str] | None:
    """`a."b.c".d` → ["a", "b.c", "d"]; None when it does not look like a key."""
    parts: list[str] = []
    i, n = 0, len(raw)
    while True:
        while i < n and raw[i] in " \t":
            i += 1
        if i >= n:
            return None
        if raw[i] in "\"'":
            quote = raw[i]
            j = i + 1
            buf = []
            while j < n and raw[j] != quote:
                if quote == '"' and raw[j] == "\\" and j + 1 < n:
                    buf.append(raw[j + 1])
                    j += 2
                    continue
                buf.append(raw[j])
                j += 1
            if j >= n:
                return None
            parts.append("".join(buf))
            i = j + 1
        else:
            m = BARE_KEY.match(raw, i)
            if not m:
                return None
            parts.append(m.group(0))
            i = m.end()
        while i < n and raw[i] in " \t":
            i += 1
        if i >= n:
            return parts
        if raw[i] != ".":
            return None
        i += 1


def locate(text: str, target: KeyPath) -> int | None:
    """Best effort: the line of the header or `key =` that names the longest prefix of `target`."""
    best_line, best_len = None, 0
    header: list[str | int] = []
    aot_counts: dict[tuple[str | int, ...], int] = {}
    in_multiline: str | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if in_multiline:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        full: list[str | int] | None = None
        if stripped.startswith("[["):
            end = stripped.find("]]")
            keys = split_key(stripped[2:end]) if end > 0 else None
            if keys is None:
                continue
            parent = tuple(keys)
            index = aot_counts.get(parent, 0)
            aot_counts[parent] = index + 1
            header = [*keys, index]
            full = header
        elif stripped.startswith("["):
            end = stripped.find("]")
            keys = split_key(stripped[1:end]) if end > 0 else None
            if keys is None:
                continue
            header = list(keys)
            full = header
        else:
            eq = find_equals(stripped)
            if eq is None:
                continue
            keys = split_key(stripped[:eq])
            if keys is None:
                continue
            full = [*header, *keys]
            value = stripped[eq + 1 :]
            for quote in ('"""', "'''"):
                if value.count(quote) % 2 == 1:
                    in_multiline = quote
                    break
        n = len(full)
        if best_len <= n <= len(target) and tuple(full) == tuple(target[:n]) and n > 0:
            if n > best_len or best_line is None:
                best_line, best_len = lineno, n
    return best_line


def find_equals(s: str) -> int | None:
    quote = None
    for i, ch in enumerate(s):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "=":
            return i
    return None
