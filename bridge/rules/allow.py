"""Allow rules against every part of a command: wrappers, privileged wrappers, writes."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from bridge.rules.verdicts import PartVerdict
from bridge.shell import Part

if TYPE_CHECKING:
    from bridge.rules.rule import Rule


Find = Callable[[Part, "int | None"], "tuple[int, Rule] | None"]


def allow_walk(
    parts: Iterable[Part], find: Find, writable: Callable[[str], str | None] | None = None
) -> tuple[list[PartVerdict], tuple[int, Rule] | None, bool]:
    """Allow rules against every part: (each part's verdict, the first rule used, whether some
    part is not allowed). A harmless wrapper needs nothing (the command it runs decides); a
    privileged one needs an allow rule of its own as well; a rule whose prefix also names the
    command a wrapper runs (`allow sudo apt update`) covers that command too. A part that writes
    to a file (by redirection, `tee`) is a path request too: allowed only when `writable` names
    an allow path rule for every file it writes. A part implied by another (`find -delete` is
    `rm -r -f`) is for deny rules only."""
    parts = list(parts)
    verdicts: list[PartVerdict] = []
    first: tuple[int, Rule] | None = None
    missing = False
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.role == "implied":
            verdicts.append(
                PartVerdict(part.text, None, "what the command before it does", "implied")
            )
            i += 1
            continue
        if part.writes and (writable is None or not all(writable(w) for w in part.writes)):
            missing = True
            verdicts.append(PartVerdict(part.text, None, "writes to a file by redirection"))
            i += 1
            continue
        if part.role != "command" and part.reach is not None:
            cand = find(part, part.reach)
            if cand is not None:
                covered = parts[i : i + 1 + part.chain]
                label = cand[1].label(cand[0])
                verdicts.extend(PartVerdict(p.text, "allow", label, p.role) for p in covered)
                first = first if first is not None and first[0] <= cand[0] else cand
                i += len(covered)
                continue
        if part.role == "wrapper":
            verdicts.append(
                PartVerdict(part.text, None, "a wrapper: the command it runs decides", "wrapper")
            )
            i += 1
            continue
        cand = find(part, None)
        if cand is None:
            missing = True
            why = (
                "a privileged wrapper: it needs an allow rule"
                if part.role == "privileged"
                else "no rule"
            )
            verdicts.append(PartVerdict(part.text, None, why, part.role))
        else:
            verdicts.append(PartVerdict(part.text, "allow", cand[1].label(cand[0]), part.role))
            first = first if first is not None and first[0] <= cand[0] else cand
        i += 1
    return verdicts, first, missing
