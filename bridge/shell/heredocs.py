"""Quoted here-document delimiters, which bashlex cannot parse: each is set aside with its body."""

from __future__ import annotations

import re

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from typing import Any

# a here-document operator and its delimiter word (quoted in whole or in part: `'E'`, `E'F'`,
# `\E`, `E"F"`); not a here-string's `<<<`
_QUOTED_HEREDOC = re.compile(
    r"""(?<!<)<<(?!<)(-?)[ \t]*((?:[^\s;&|<>()'"\\]|'[^'\n]*'|"[^"\n]*"|\\.)+)"""
)
_QUOTE = re.compile(r"""'([^']*)'|"([^"]*)"|\\(.)""")


def quoted_heredoc(script: str) -> bool:
    """Whether the script has a here-document whose delimiter is quoted (in whole or in part):
    its body is literal text, and it ends at the delimiter's line with the quotes removed."""
    return any(set(m.group(2)) & set("'\"\\") for m in _QUOTED_HEREDOC.finditer(script))


_STAND_IN = "SYMPOSIUM_QUOTED_HEREDOC_"


def _unquote_heredocs(script: str) -> tuple[str, dict[str, str]]:
    """The script with each quoted here-document delimiter (`<<'EOF'`, `<<"EOF"`, `<<\\EOF`,
    `<<E'OF'`) replaced by a stand-in and its body emptied, and stand-in → body. Nothing when a
    body has no end (or the script already holds a stand-in)."""
    if _STAND_IN in script:
        return script, {}
    bodies: dict[str, str] = {}
    out: list[str] = []
    k = search = 0
    while True:
        found = _QUOTED_HEREDOC.search(script, search)
        if found is not None and not set(found.group(2)) & set("'\"\\"):
            search = found.end()  # (an unquoted delimiter: bashlex reads it)
            continue
        if found is None:
            out.append(script[k:])
            break
        # bash ends the body at the delimiter with its quotes removed (`E'F'`: at `EF`)
        delimiter = _QUOTE.sub(lambda m: m.group(1) or m.group(2) or m.group(3) or "", found[2])
        strip_tabs = bool(found.group(1))
        line_end = script.find("\n", found.end())
        if line_end == -1:
            return script, {}
        line_start = script.rfind("\n", 0, found.start()) + 1
        if script.count("<<", line_start, line_end) > 1:
            return script, {}  # which body is whose: bash reads them in order; not worth guessing
        lines_start = line_end + 1
        pos = lines_start
        body_lines: list[str] = []
        while True:
            nl = script.find("\n", pos)
            line = script[pos:] if nl == -1 else script[pos:nl]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                end = len(script) if nl == -1 else nl
                break
            if nl == -1:
                return script, {}
            body_lines.append(line)
            pos = nl + 1
        stand_in = f"{_STAND_IN}{len(bodies)}"
        bodies[stand_in] = "".join(line + "\n" for line in body_lines)
        out.append(script[k : found.start()])
        out.append(f"<<{found.group(1)}{stand_in}")
        out.append(script[found.end() : lines_start])
        out.append(stand_in)
        k = search = end
    return "".join(out), bodies


def _count_heredocs(node: Any, bodies: dict[str, str]) -> int:
    """How many here-document redirections of the tree use one of the stand-in delimiters."""
    count = 0
    if getattr(node, "kind", None) == "redirect" and getattr(node, "type", "") in ("<<", "<<-"):
        target = getattr(node, "output", None)
        if getattr(target, "word", None) in bodies:
            count += 1
    for attr in ("parts", "list"):
        for child in getattr(node, attr, None) or ():
            count += _count_heredocs(child, bodies)
    for attr in ("command", "output", "heredoc"):
        child = getattr(node, attr, None)
        if child is not None and hasattr(child, "kind"):
            count += _count_heredocs(child, bodies)
    return count
