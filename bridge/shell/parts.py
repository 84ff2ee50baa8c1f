"""What a parsed command is: its parts (one per command that runs) and what cannot be known."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Literal

Role = Literal["command", "wrapper", "privileged", "implied"]


@dataclass(frozen=True)
class Part:
    """One command that runs: its words (quotes removed) and the files it writes by redirection.

    A wrapper is a part of its own, with all its words (`sudo -u x git push`), followed by the
    part(s) of the command it runs (`git push`): `role` says what it needs to be allowed — a
    "command" an allow rule of its own, a "wrapper" nothing (the command it runs decides), a
    "privileged" wrapper an allow rule of its own *and* the command it runs. `reach`: a prefix of
    more than `reach` words names the command the wrapper runs, too (`allow sudo apt update`
    covers `sudo apt update -y`); None when it runs a script. `chain`: how many of the following
    parts are the wrappers and the command it runs (the commands `find -exec` runs, or a script,
    come after them and are parts on their own). `open_args`: arguments are added when it runs
    (`xargs git`). `unknown`: the words that hold an expansion (`git $SUB`): they may become
    anything, even several words or none."""

    words: tuple[str, ...]
    writes: tuple[str, ...] = ()
    role: Role = "command"
    reach: int | None = None
    chain: int = 0
    open_args: bool = False
    unknown: frozenset[int] = frozenset()  # indexes of words only known when it runs (`$X`)
    # `NAME=value` given to it: written in front of it, or by `env` (an allow rule must name them)
    assigns: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return shlex.join(self.words) + "".join(f" > {shlex.quote(w)}" for w in self.writes)


@dataclass(frozen=True)
class ParsedCommand:
    parts: tuple[Part, ...]
    opaque: tuple[str, ...] = ()  # why some of it cannot be known (→ ask)
    # Every word the command names — arguments, wrapper options, assignment values, redirect
    # targets, the words of nested scripts; not a command name without a slash, which is looked up
    # in PATH — with whether it is only known when it runs; and the
    # directories it changes to (`cd DIR`, `pushd DIR`, `-C DIR`, `--chdir=DIR`; `~` for a bare
    # `cd`). What path rules look at.
    words: tuple[tuple[str, bool], ...] = ()
    dirs: tuple[str, ...] = ()
    # Text a shell or an interpreter runs that is not parsed into parts (`python -c CODE`,
    # `ssh host CMD`, `git -c alias.x=…`): a deny or ask rule whose program it names is asked.
    code: tuple[str, ...] = ()
    # Why the command is asked whoever asks, bypass included (a control character in it).
    suspect: tuple[str, ...] = ()
