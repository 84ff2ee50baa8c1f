"""A command's words read with the table into one spelling (see the package docstring)."""

from __future__ import annotations

import re
from collections.abc import Callable

from bridge.options.programs import PROGRAMS, Program, program_name
from bridge.record import Frozen


class Spelling(Frozen):
    """A command's words in one spelling. `words`: the program, then every word with options
    written canonically (`-r`, `-f`, `--force-with-lease`, `-X=DELETE`); a value given as the next
    word stays a word of its own (it may also be read as an argument). `unknown`: the indexes of
    `words` only known when it runs. `options`: canonical option → the values it was given (None
    for none). `ended`: the index of `--` in `words`, or len(words)."""

    __slots__ = _fields = ("words", "unknown", "options", "ended", "values", "expanded")

    def __init__(
        self,
        words: tuple[str, ...],
        unknown: frozenset[int],
        options: dict[str, tuple[str | None, ...]],
        ended: int,
        values: frozenset[int] = frozenset(),  # indexes of words that are an option's value
        expanded: frozenset[str] = frozenset(),  # options that stand for others (`-D`: `-d -f`)
    ) -> None:
        self.words = words
        self.unknown = unknown
        self.options = options
        self.ended = ended
        self.values = values
        self.expanded = expanded

    def reads_more_options(self) -> bool:
        """Whether the program is also given options a file, its input or its configuration
        holds (`curl -K -` reading `request = DELETE`, `git -c clean.requireForce=false clean`):
        which ones cannot be known here."""
        return any(option in self.options for option in _MORE_OPTIONS.get(self.words[0], ()))

    def required(self) -> dict[str, tuple[str | None, ...]]:
        """What a rule written this way asks for: its options, those that stand for others
        replaced by them."""
        return {k: v for k, v in self.options.items() if k not in self.expanded}


# Options that give a program more options (or settings that change what its options mean)
_MORE_OPTIONS = {
    "curl": ("-K",),  # --config FILE
    "wget": ("-e", "--config"),  # --execute COMMAND (a .wgetrc line), --config FILE
    "git": ("-c", "--config-env"),
}


def read(words: tuple[str, ...], unknown: frozenset[int] = frozenset()) -> Spelling:
    """Read a command's words with the table (see the module docstring)."""
    base = words[0].rsplit("/", 1)[-1] if words else ""
    if base.startswith("git-") and len(base) > 4:  # git's own `git-push` is `git push`
        words = ("git", base[4:], *words[1:])
        unknown = frozenset(k + 1 for k in unknown)
    reader = _Reader(words, unknown)
    reader.read()
    return reader.spelling()


class _Reader:
    """One command's words read into one spelling, word by word (see `Spelling`). `spec` follows
    the subcommand (`git push` reads with push's table)."""

    def __init__(self, words: tuple[str, ...], unknown: frozenset[int]) -> None:
        self.words = words
        self.unknown = unknown
        self.name, implied = program_name(words[0])
        self.spec = PROGRAMS.get(self.name)
        self.out: list[str] = [self.name]
        self.dyn: set[int] = set()
        self.values: set[int] = set()
        self.expanded: set[str] = set()
        self.options: dict[str, list[str | None]] = {}
        self.ended: int | None = None
        self.positionals = 0
        for option in implied:
            key, _, value = option.partition("=")
            self.add(key, value, attach=True)

    def add(self, option: str, value: str | None, *, attach: bool) -> None:
        value = _path(value) if value else value
        self.options.setdefault(option, []).append(value)
        more = self.spec.implies.get(option.lstrip("-"), ()) if self.spec else ()
        if more:
            self.expanded.add(option)
        for other in more:
            self.options.setdefault("-" + other, []).append(None)
        self.out.append(f"{option}={value}" if attach and value is not None else option)

    def read(self) -> None:
        words, unknown = self.words, self.unknown
        value_next = False
        k = 1
        while k < len(words):
            word = words[k]
            if k in unknown or value_next:
                if k in unknown:
                    self.dyn.add(len(self.out))
                if value_next:
                    self.values.add(len(self.out))
                self.out.append(word)
                value_next = False
                k += 1
            elif self.ended is None and word == "--":
                self.ended = len(self.out)
                self.out.append(word)
                k += 1
            elif self.ended is not None or not word.startswith("-") or word == "-":
                k = self.operand(word, k)
            else:
                value_next = _option(self.spec, words, k, unknown, self.add)
                k += 1

    def operand(self, word: str, k: int) -> int:
        """A word that is no option at words[k]: `NAME=value` for a program of operands (dd), a
        subcommand, else an argument (in the table's words); the index of the next word."""
        spec = self.spec
        if spec is not None and spec.operands and "=" in word and self.ended is None:
            key, _, value = word.partition("=")
            self.add("--" + key, value, attach=True)
            return k + 1
        if (
            spec is not None
            and self.ended is None
            and self.positionals == 0
            and word in spec.subcommands
        ):
            return self.subcommand(spec, word, k)
        if self.name == "chmod" and self.positionals == 0:  # the mode: `0777`, `a=rwx` are 777
            word = _chmod_mode(word)
        if spec is not None and spec.words:
            for piece in word.split("/", 1) if "/" in word else (word,):
                self.out.append(",".join(_kind(spec.words, p) for p in piece.split(",")))
        else:
            self.out.append(_path(word))
        self.positionals += 1
        return k + 1

    def subcommand(self, spec: Program, word: str, k: int) -> int:
        """A subcommand (an alias of it written canonically): the words after it read with its
        own table; the index of the next word."""
        rest = tuple(self.words[k : k + 3])
        sub = word
        for alias, canonical in spec.aliases.items():
            if rest[: len(alias)] == alias:
                self.out.extend(canonical)
                k += len(alias)
                sub = canonical[0]
                break
        else:
            self.out.append(word)
            k += 1
        self.spec = spec.subcommands.get(sub, spec)
        self.positionals += 1
        return k

    def spelling(self) -> Spelling:
        out, options = self.out, self.options
        if self.name == "git" and "push" in out:
            for word in out[2:]:  # `+main` force-pushes, `:main` deletes
                if word[:1] == "+" and len(word) > 1:
                    self.add("-f", None, attach=False)
                    out.pop()
                elif word[:1] == ":" and len(word) > 1:
                    self.add("-d", None, attach=False)
                    out.pop()
        if self.name == "rm" and (
            "-r" in options or any(_never(v) for v in options.get("--interactive", ()))
        ):
            # Never prompts: what `-f` is there for. With no terminal (an agent's command has
            # none) `rm -r` asks nothing, write-protected files included, and a prompt of `-i`
            # is answered by whatever the command's input holds (`yes | rm -ri`).
            options.setdefault("-f", []).append(None)
        if self.name == "mv" and not (
            "-n" in options or any(v in ("none", "none-fail") for v in options.get("-u", ()))
        ):
            # Never prompts either: with no terminal (an agent's command has none) `mv` replaces
            # a write-protected file without asking, and `-i` takes its answer from the input.
            options.setdefault("-f", []).append(None)
        if self.name == "chmod" and "--reference" in options:
            # the mode is another file's, only known when it runs: maybe 777 (a glob in the mode's
            # place, first: a deny rule's mode word matches it as MIGHT)
            out.insert(1, "*")
            self.dyn = {k + 1 for k in self.dyn}
            self.values = {k + 1 for k in self.values}
            self.ended = None if self.ended is None else self.ended + 1
        if self.name == "terraform" and "apply" in out and "--destroy" in options:
            out[out.index("apply")] = "destroy"
        return Spelling(
            tuple(out),
            frozenset(self.dyn),
            {key: tuple(v) for key, v in options.items()},
            len(out) if self.ended is None else self.ended,
            frozenset(self.values),
            frozenset(self.expanded),
        )


def _kind(words: dict[str, str], piece: str) -> str:
    """A word in the table's spelling (`ns` is `namespace`); a kind of kubectl's in any case
    (`Namespace`, `NS`: kubectl reads them so)."""
    low = piece.lower()
    if low in words:
        return words[low]
    return low if low in words.values() else piece


def _path(word: str) -> str:
    """An absolute path as one spelling: `//etc`, `/etc/`, `/./etc`, `/dev//sda` and `/etc/.`
    name the same file as `/etc` and `/dev/sda`, as do `/../etc` and `/proc/self/root/etc` (any
    other `..` is left: through a symlink it is not)."""
    if not word.startswith("/") or (
        "//" not in word and "/." not in word and word[-1] != "/" and "/root" not in word
    ):
        return word
    parts = [p for p in word.split("/") if p not in ("", ".")]
    while (
        parts[:1] == [".."]
        or (  # `/..` is `/` itself: `/../etc` is `/etc`
            parts[:1] == ["proc"]
            and parts[1:2] in (["self"], ["thread-self"])
            and parts[2:3] == ["root"]
        )
    ):  # (and the command's own root is `/`)
        del parts[: 1 if parts[0] == ".." else 3]
    return "/" + "/".join(parts)


# (patterns compiled by `re` when a chmod mode is first read: a hook process seldom needs them)
_MODE_CLAUSE = r"([ugoa]*)((?:[-+=](?:[ugo]|[rwxXst]*))+)"
_MODE_ACTION = r"([-+=])([ugo]|[rwxXst]*)"


def _chmod_mode(word: str) -> str:
    """A chmod mode in one spelling where it gives everyone read, write and execute: `777`
    (written `0777`, `1777` with the sticky bit, `=777`, `a=rwx`, `ugo+rwx`, `u=rwx,go=rwx`, a
    class's bits copied to the others: `u=rwx,go=u`, …); any other mode as written (a numeric one
    without its leading zeros)."""
    digits = word[1:] if word[:1] in "=+" else word
    if digits.isdigit():
        digits = digits.lstrip("0") or "0"
        if digits.endswith("777"):  # (a leading digit: setuid, setgid, sticky)
            return "777"
        return digits if word[:1] not in "=+" else word
    granted: dict[str, set[str]] = {"u": set(), "g": set(), "o": set()}
    for clause in word.split(","):
        found = re.fullmatch(_MODE_CLAUSE, clause)
        if found is None:
            return word  # `-7`, `g=uw`: not a mode chmod reads
        who = found.group(1).replace("a", "ugo") or "ugo"  # (no letters: the umask's aside)
        for op, perms in re.findall(_MODE_ACTION, found.group(2)):
            if perms in granted:  # `go=u`: the bits u has so far (as GNU chmod copies them)
                bits = set(granted[perms])
            else:
                bits = {"x" if p == "X" else p for p in perms} & {"r", "w", "x"}
            for c in who:
                if op == "=":
                    granted[c] = set(bits)
                elif op == "+":
                    granted[c] |= bits
                else:
                    granted[c] -= bits
    return "777" if all(len(granted[c]) == 3 for c in "ugo") else word


def _never(value: str | None) -> bool:
    """GNU rm's `--interactive=WHEN` that never prompts: `never`, `no`, `none`, or any
    abbreviation of them (they all mean the same, so even `n` is not ambiguous to rm)."""
    return bool(value) and any(word.startswith(value or "") for word in ("never", "no", "none"))


def _option(
    spec: Program | None,
    words: tuple[str, ...],
    k: int,
    unknown: frozenset[int],
    add: Callable[..., None],
) -> bool:
    """Read the option at words[k], calling `add(option, value, attach=…)` for each option it
    holds; whether it takes the next word as its value."""
    word = words[k]
    nxt = words[k + 1] if k + 1 < len(words) else None
    if (spec is not None and spec.dash_long) or word.startswith("--"):
        name, eq, value = word.lstrip("-").partition("=")
        longs = spec.long if spec is not None else {}
        if name in longs:
            matches = [name]
        else:  # GNU and git accept an unambiguous abbreviation (`--f`, `--recur`); more than
            # one: the program errs. (Not a one-letter `-d` of find's words: that is `-depth`.)
            abbreviates = len(name) >= 2 or (len(name) == 1 and word.startswith("--"))
            matches = [n for n in longs if n.startswith(name)] if abbreviates else []
        if not matches:
            add("--" + name, value if eq else None, attach=bool(eq))
            return False
        used = False
        for match in matches:
            short, takes = longs[match]
            canonical = "-" + short if short else "--" + match
            if eq:
                add(canonical, value, attach=True)
            elif takes == 1 and nxt is not None:
                add(canonical, None if k + 1 in unknown else nxt, attach=False)
                used = True
            else:
                add(canonical, None, attach=False)
        return used and len(matches) == 1
    takes_arg = spec.takes() if spec is not None else {}
    j = 1
    while j < len(word):
        letter = word[j]
        if takes_arg.get(letter):
            value = word[j + 1 :]
            if value:
                add("-" + letter, value, attach=True)
                return False
            add("-" + letter, None if k + 1 in unknown else nxt, attach=False)
            return nxt is not None
        add("-" + letter, None, attach=False)
        j += 1
    return False
