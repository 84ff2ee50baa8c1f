"""What a parsed command is: its parts (one per command that runs) and what cannot be known."""

from __future__ import annotations

from bridge.record import Frozen
from bridge.shell.words import join_words, quote_word

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from typing import Literal

    Role = Literal["command", "wrapper", "privileged", "implied"]
else:
    Role = str


class Part(Frozen):
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

    __slots__ = _fields = (
        "words",
        "writes",
        "role",
        "reach",
        "chain",
        "open_args",
        "unknown",
        "assigns",
    )

    def __init__(
        self,
        words: tuple[str, ...],
        writes: tuple[str, ...] = (),
        role: Role = "command",
        reach: int | None = None,
        chain: int = 0,
        open_args: bool = False,
        unknown: frozenset[int] = frozenset(),  # indexes of words only known when it runs (`$X`)
        # `NAME=value` given to it: written in front of it, or by `env` (an allow rule must name
        # them)
        assigns: tuple[str, ...] = (),
    ) -> None:
        self.words = words
        self.writes = writes
        self.role = role
        self.reach = reach
        self.chain = chain
        self.open_args = open_args
        self.unknown = unknown
        self.assigns = assigns

    def but(self, **changes: object) -> Part:
        """This part with `changes` to its fields (`dataclasses.replace`)."""
        return Part(**{**{name: getattr(self, name) for name in self._fields}, **changes})

    @property
    def text(self) -> str:
        return join_words(self.words) + "".join(f" > {quote_word(w)}" for w in self.writes)


class ParsedCommand(Frozen):
    """`parts`: one per command that runs. `opaque`: why some of it cannot be known (→ ask).
    `words`: every word the command names — arguments, wrapper options, assignment values,
    redirect targets, the words of nested scripts; not a command name without a slash, which is
    looked up in PATH — with whether it is only known when it runs; `dirs`: the directories it
    changes to (`cd DIR`, `pushd DIR`, `-C DIR`, `--chdir=DIR`; `~` for a bare `cd`). What path
    rules look at. `code`: text a shell or an interpreter runs that is not parsed into parts
    (`python -c CODE`, `ssh host CMD`, `git -c alias.x=…`): a deny or ask rule whose program it
    names is asked. `suspect`: why the command is asked whoever asks, bypass included (a control
    character in it)."""

    __slots__ = _fields = ("parts", "opaque", "words", "dirs", "code", "suspect")

    def __init__(
        self,
        parts: tuple[Part, ...],
        opaque: tuple[str, ...] = (),
        words: tuple[tuple[str, bool], ...] = (),
        dirs: tuple[str, ...] = (),
        code: tuple[str, ...] = (),
        suspect: tuple[str, ...] = (),
    ) -> None:
        self.parts = parts
        self.opaque = opaque
        self.words = words
        self.dirs = dirs
        self.code = code
        self.suspect = suspect
