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
_HERE_BY_DEFAULT = frozenset({"grep", "egrep", "fgrep", "find", "rg"})


def follows_into(words: tuple[str, ...], bases: list[str], root: str) -> bool:
    """Whether a command that goes down folders following their symlinks (`words`: one simple
    command) may meet one that leads into `root` (or above it) — or has more entries than are
    looked at."""
    program = os.path.basename(words[0]) if words else ""
    if program not in _FOLLOWS:
        return False
    option = _FOLLOWS[program]
    if option is not None and not any(re.match(option, w) for w in words[1:]):
        return False
    folders = [real for real in operand_paths(words, bases) if os.path.isdir(real)]
    if not folders and program in _HERE_BY_DEFAULT:
        folders = list(bases)
    budget = [MAX_LINK_WALK]
    return any(_link_into(folder, root, budget) for folder in dict.fromkeys(folders))


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


def _link_into(folder: str, root: str, budget: list[int]) -> bool:
    """Whether a symlink below `folder` leads into `root` or above it (True, too, past the budget
    of entries looked at)."""
    stack = [folder]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    budget[0] -= 1
                    if budget[0] < 0:
                        return True
                    if entry.is_symlink():
                        real = os.path.realpath(entry.path)
                        if inside(real, root) or inside(root, real):
                            return True
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            continue
    return False
