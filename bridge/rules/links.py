"""Symlinks met going down a folder: a program that follows them (`grep -R`, `find -L`, `zip -r`)
reads what they lead to, a deny or ask path rule's directory too (`grep -R key .` with `./sub/up`
a symlink to `~/.ssh`)."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator

from bridge.rules.bounds import MAX_LINK_WALK
from bridge.rules.paths import inside, resolve_path

# Programs that follow the symlinks they meet going down a folder: always (`zip`), or with one of
# these options (in a group of short ones too: `-rL`). What a grep, find or rg with no folder
# searches is the one it runs in.
_FOLLOWS: dict[str, str | None] = {
    **dict.fromkeys(("grep", "egrep", "fgrep"), r"-[A-Za-z]*R|--dereference-recursive$"),
    "find": r"-L$|-follow$",
    **dict.fromkeys(("ls", "du", "cp", "chmod", "chown", "chgrp"), r"-[A-Za-z]*L|--dereference$"),
    "rg": r"-[A-Za-z]*L|--follow$",
    "tar": r"-[A-Za-z]*h|--dereference$",
    "rsync": r"-[A-Za-z]*[Lk]|--copy-links$|--copy-dirlinks$",
    "tree": r"-[A-Za-z]*l",
    "zip": None,
}
FOLLOWING = frozenset(_FOLLOWS)  # the programs `follows_into` looks at
_HERE_BY_DEFAULT = frozenset({"grep", "egrep", "fgrep", "find", "rg"})


# Per request: the folders a command goes down → the symlink targets met there, and whether the
# walk stopped at its budget (each deny or ask path rule asks; the folders are walked once).
LinkWalks = dict[tuple[str, ...], tuple[tuple[str, ...], bool]]


def follows_into(
    words: tuple[str, ...], bases: list[str], root: str, walks: LinkWalks | None = None
) -> bool:
    """Whether a command that goes down folders following their symlinks (`words`: one simple
    command) may meet one that leads into `root` (or above it) — or has more entries than are
    looked at. `walks`: what earlier questions about the same request found."""
    program = os.path.basename(words[0]) if words else ""
    if program not in _FOLLOWS:
        return False
    option = _FOLLOWS[program]
    if option is not None and not any(re.match(option, w) for w in words[1:]):
        return False
    folders = [real for real in operand_paths(words, bases) if os.path.isdir(real)]
    if not folders and program in _HERE_BY_DEFAULT:
        folders = list(bases)
    key = tuple(dict.fromkeys(folders))
    found = walks.get(key) if walks is not None else None
    if found is None:
        found = _link_targets(key)
        if walks is not None:
            walks[key] = found
    targets, exhausted = found
    return exhausted or any(inside(real, root) or inside(root, real) for real in targets)


def operand_paths(
    words: tuple[str, ...], bases: list[str], skip: Collection[int] = ()
) -> Iterator[str]:
    """The real paths a simple command's operands name (its words after the first that are not
    options, nor at an index in `skip`), a relative one read against each of `bases`."""
    for k, word in enumerate(words[1:], 1):
        if k in skip or not word or word.startswith("-"):
            continue
        path = os.path.expanduser(word)
        for base in [""] if os.path.isabs(path) else bases:
            yield resolve_path(os.path.join(base, path) if base else path)


def _link_targets(folders: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """Where the symlinks below `folders` lead, and whether there were more entries than the
    budget lets be looked at."""
    budget = MAX_LINK_WALK
    targets: dict[str, None] = {}
    stack = list(reversed(folders))
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    budget -= 1
                    if budget < 0:
                        return tuple(targets), True
                    if entry.is_symlink():
                        targets[os.path.realpath(entry.path)] = None
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            continue
    return tuple(targets), False
