"""One simple command, wrappers unwrapped: the parts it adds (each wrapper, the command it runs,
what that command implies), with the files they write and the assignments they are given."""

from __future__ import annotations

import posixpath
import re

from bridge.shell.parts import Part, Role
from bridge.shell.programs import (
    HARMLESS_REDIRECT_TARGETS,
    MAX_SHELL_DEPTH,
    SHELLS,
    WRAPPER_NAMES,
    read_shell,
    reads_input,
)
from bridge.shell.runs import note_dirs, runs_code
from bridge.shell.words import (
    _skip_assignments,
    _unknown,
    _unknown_name,
    join_words,
    plain_script,
    split_words,
)

# the folders installed programs are run from by their path (`/usr/bin/git`)
_INSTALLED = frozenset(
    f"{root}/{d}" for root in ("", "/usr", "/usr/local") for d in ("bin", "sbin")
) | {"/usr/lib/git-core", "/usr/libexec/git-core"}

# a process's own program, or an open file, run by its path (`/proc/self/exe`, `/dev/fd/3`)
_DESCRIPTOR_PROGRAM = r"(?:^|/)(?:exe|stdin|fd/\d+|map_files/[^/]+)$"

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from bridge.shell.parser import Parser
    from bridge.shell.wrappers import Wrapper


def simple(
    parser: Parser,
    words: tuple[str, ...],
    dynamic: tuple[bool, ...],
    writes: tuple[str, ...],
    depth: int,
    *,
    assigns: tuple[str, ...] = (),
    stdin: str | None = None,
) -> None:
    """`dynamic[i]`: word i holds an expansion (`$X`, `$(…)`), only known when it runs — it may
    even become several words or none. `assigns`: `NAME=value` written before it; `stdin`:
    what a here-document or here-string feeds it."""
    first = _skip_assignments(words, 0)
    given = [*assigns, *words[:first]]
    for k in range(first):  # (the assignments of bashlex's `assigns` were read by the parser)
        name, _, value = words[k].partition("=")
        parser.run_value(name.rstrip("+"), value, dynamic[k], depth)
    parser.git_environment(given)
    if first < len(words) and not dynamic[first] and words[first] in parser.aliases:
        # an alias defined earlier in the script (`alias r=rm; r -rf x`): what it stands for
        value = parser.aliases.pop(words[first])  # bash does not expand an alias inside itself
        try:
            if not plain_script(value):
                raise ValueError
            replaced = tuple(split_words(value))
            rest, more = _after_alias(parser, words, dynamic, first + 1, value)
        except ValueError:
            parser.opaque.append(f"the alias {words[first]!r} cannot be read: {value!r}")
        else:
            if depth < MAX_SHELL_DEPTH:
                simple(
                    parser,
                    (*words[:first], *replaced, *rest),
                    (*dynamic[:first], *(False,) * len(replaced), *more),
                    writes,
                    depth + 1,
                    assigns=assigns,
                    stdin=stdin,
                )
                parser.aliases[words[first]] = value
                return
            parser.opaque.append("aliases nested too deep")
        finally:
            parser.aliases.setdefault(words[first], value)
    if first == len(words):  # only assignments (an argv, or a plain script)
        parser.words.extend((w.partition("=")[2], d) for w, d in zip(words, dynamic, strict=True))
        parser.assignments(tuple(given), writes)
        return
    parser.words.extend(
        (w, d)
        for k, (w, d) in enumerate(zip(words, dynamic, strict=True))
        if k != first or "/" in w  # a command name without a slash is looked up in PATH
    )
    note_dirs(parser, words, dynamic)
    pos = len(parser.parts)
    command = SimpleCommand(parser, words, dynamic, writes, depth, given, stdin)
    command.unwrap(first)
    parser.parts[pos:] = command.parts(parser.parts[pos:])


def _after_alias(
    parser: Parser, words: tuple[str, ...], dynamic: tuple[bool, ...], k: int, value: str
) -> tuple[tuple[str, ...], tuple[bool, ...]]:
    """The words after an alias at words[k - 1] whose value is `value`: when the value ends in a
    blank, bash expands the next word too when it is an alias (`alias t='timeout 9 ' r=rm; t r
    -rf /` runs `timeout 9 rm -rf /`), and so on. ValueError: one that cannot be read."""
    out: list[str] = []
    seen: set[str] = set()
    while value[-1:] in (" ", "\t") and k < len(words) and not dynamic[k]:
        if words[k] not in parser.aliases or words[k] in seen:
            break
        seen.add(words[k])
        value = parser.aliases[words[k]]
        if not plain_script(value):
            raise ValueError
        out.extend(split_words(value))
        k += 1
    return (*out, *words[k:]), (*(False,) * len(out), *dynamic[k:])


class SimpleCommand:
    """The wrappers of one simple command (`layers`: each one's index and role) and what the
    innermost runs (`runs`: the index of its command; `default`: what runs when none is given),
    read word by word. The parts of nested scripts are added to the parser as they are found."""

    def __init__(
        self,
        parser: Parser,
        words: tuple[str, ...],
        dynamic: tuple[bool, ...],
        writes: tuple[str, ...],
        depth: int,
        given: list[str],
        stdin: str | None,
    ) -> None:
        self.parser = parser
        self.words = words
        self.dynamic = dynamic
        self.depth = depth
        self.given = given  # the assignments given to the command (an allow rule must name them)
        self.stdin = stdin
        self.layers: list[tuple[int, Role]] = []
        self.writes = list(writes)
        self.open_args = False
        self.cut = len(words)  # xargs -I: words from here on are only known when it runs
        self.runs: int | None = None  # the index of the command the last wrapper runs
        self.default: tuple[str, ...] | None = None
        self.implied: list[Part] = []
        self.splices = 0

    def unwrap(self, i: int) -> None:
        """Every wrapper from word `i` on, until the command that runs (or what cannot be known)."""
        while i < len(self.words):
            nxt = self.step(i)
            if nxt is None:
                return
            i = nxt
        if self.layers:  # `sudo A=1` and nothing after: it fails
            self.layers[-1] = (self.layers[-1][0], "command")

    def step(self, i: int) -> int | None:
        """The word where the command words[i] runs its own command, or None when there is none
        to read further (it is the command, it runs a script, or the rest cannot be known)."""
        name = self.words[i]
        if name[:1] == "=" and len(name) > 1 and "/" not in name and "=" not in name[1:]:
            # zsh's `=` expansion: `=rm` is rm's path there (bash finds no such program): rm
            name = name[1:]
            self.words = (*self.words[:i], name, *self.words[i + 1 :])
        if self.dynamic[i] or _unknown_name(name):
            self.parser.opaque.append(f"the command name {name!r} is only known when it runs")
            return None
        if "/" in name and re.search(_DESCRIPTOR_PROGRAM, posixpath.normpath(name)):
            # `/proc/self/exe` is the shell that runs it; `/proc/self/fd/3`, `/dev/stdin` the file
            # a redirection opened (`3</usr/bin/rm`)
            self.parser.opaque.append(f"the program {name!r} is only known when it runs")
            return None
        if self.layers and name.startswith("-"):
            self.parser.opaque.append(f"a wrapper runs {name!r}, not a command")
            return None
        base = posixpath.basename(name)
        if base in SHELLS:
            self.shell(i, base)
            return None
        if base in (".", "source"):
            self.source(i, base)
            return None
        if base not in WRAPPER_NAMES:
            self.command(i, base)
            return None
        from bridge.shell.wrappers import WRAPPERS  # (the table: with the first wrapper)

        return self.wrapper(i, base, WRAPPERS[base])

    def shell(self, i: int, base: str) -> None:
        """`bash -c SCRIPT` (the script's commands), `bash file.sh` (the command itself), `… | bash`
        and `bash /dev/stdin <<< …` (what its input gives it)."""
        words, parser = self.words, self.parser
        use = read_shell(words, i)
        moved = bool(parser.dirs)  # (a relative file after `env -C /dev`: `stdin` may be input)
        if (
            use.kind == "file"
            and not self.dynamic[use.at]
            and reads_input(words[use.at], self.moved(words[use.at]))
        ):
            use.kind = "stdin"
        parser.opaque.extend(f"{base}: {why}" for why in use.opaque)
        for given in self.given:  # `BASH_ENV=F bash -c …`: F is sourced first
            name, _, value = given.partition("=")
            if name in ("BASH_ENV", "ENV"):
                if reads_input(value, moved) and self.stdin is not None:
                    parser.script(self.stdin, self.depth + 1)
                else:
                    parser.opaque.append(f"{base} first runs the script {name} names: {value!r}")
        if use.kind == "unknown":
            parser.opaque.append(f"{base}: {use.why}")
            self.runs = i
        elif use.kind == "stdin":
            self.runs = i
            if self.stdin is not None:
                parser.script(self.stdin, self.depth + 1)
            else:
                parser.opaque.append(
                    f"{base} runs what its input gives it, which is not known here"
                )
        elif use.kind == "none":
            if self.open_args:  # `… | xargs sh -c`: the script is what xargs reads
                parser.opaque.append(f"{base} runs a script its input gives it")
            # else `sh -c` without a script: it fails
        elif any(self.dynamic[i : use.at + 1]) or use.at >= self.cut:
            what = "script" if use.kind == "script" else "script file"
            parser.opaque.append(
                f"a shell runs a {what} only known when it runs: {words[use.at]!r}"
            )
            self.runs = i if use.kind == "file" else None
        elif use.kind == "file":
            self.runs = i  # `bash file.sh`: the command itself
            parser.script_files.append(words[use.at])
        else:
            parser.script(words[use.at], self.depth + 1)

    def source(self, i: int, base: str) -> None:
        """`. FILE` / `source FILE`: the script in FILE runs in this shell — the command itself,
        unless the file is its input (`source /dev/stdin <<< …`) or only known when it runs
        (`. <(curl …)`)."""
        words, parser = self.words, self.parser
        self.runs = i
        at = i + 2 if words[i + 1 : i + 2] == ("--",) else i + 1
        if at >= len(words):
            return
        if self.dynamic[at]:
            parser.opaque.append(f"{base} runs a script only known when it runs: {words[at]!r}")
        elif reads_input(words[at], self.moved(words[at])):
            if self.stdin is not None:
                parser.script(self.stdin, self.depth + 1)
            else:
                parser.opaque.append(
                    f"{base} runs what its input gives it, which is not known here"
                )
        else:
            parser.script_files.append(words[at])

    def moved(self, name: str) -> bool:
        """Whether a script file's relative name may be found somewhere only known when it runs:
        the command changed folder (`env -C /dev bash stdin`), or a name without a `/` is looked
        up in a PATH it set (`PATH=/dev:$PATH; . stdin`: bash and `.` search PATH for it)."""
        if self.parser.dirs:
            return True
        return "/" not in name and any(
            w.startswith("PATH=")
            for w in (
                *self.given,
                *(w for part in self.parser.parts for w in (*part.words, *part.assigns)),
            )
        )

    def command(self, i: int, base: str) -> None:
        """A command that is no wrapper: it runs, with what it implies (one run from a file that
        is no installed program, `./x.sh`, is a script file, as `bash x.sh`'s is)."""
        self.runs = i
        if i and base in ("cd", "pushd"):  # `builtin cd /`, `command cd /`: as `cd /` is
            note_dirs(self.parser, self.words[i:], self.dynamic[i:])
        if "/" in self.words[i] and posixpath.dirname(self.words[i]) not in _INSTALLED:
            self.parser.script_files.append(self.words[i])
        self.implied = runs_code(self.parser, self.words, self.dynamic, i, self.depth, self.stdin)
        if base == "tee":  # the files it writes (after `--`, a word starting with `-` too)
            if self.open_args:  # `… | xargs tee`: files its input names
                self.parser.opaque.append("tee writes the files xargs gives it from its input")
            args = self.words[i + 1 :]
            end = args.index("--") if "--" in args else len(args)
            self.writes.extend(
                w
                for k, w in enumerate(args)
                if (k > end or not w.startswith("-") or w == "-")  # (`tee -` writes a file `-`)
                and w not in HARMLESS_REDIRECT_TARGETS
            )

    def wrapper(self, i: int, base: str, spec: Wrapper) -> int | None:
        """A wrapper at word i: the word where the command it runs starts, or None."""
        from bridge.shell.wrappers import _Unknown

        words, parser = self.words, self.parser
        self.layers.append((i, spec.role))
        try:
            u = spec.unwrap(words, i)
        except _Unknown as exc:
            parser.opaque.append(f"{base}: {exc}: {join_words(words[i:])}")
            return None
        if u.inner is None and u.script is None:
            self.runs_nothing(i, u.default)
            return None
        end = u.inner if u.inner is not None else len(words)
        if any(self.dynamic[i + 1 : end]):
            parser.opaque.append(
                f"{base}: its options are only known when it runs: {join_words(words[i:])}"
            )
            return None
        if u.splice is not None:  # env -S 'a b' c: env a b c
            return self.splice(i, end, u.splice, base)
        self.writes.extend(u.writes)
        parser.dirs.extend(u.dirs)
        if u.script is not None:
            parser.script(u.script, self.depth + 1)
            return None
        assert u.inner is not None
        if u.inner >= len(words):
            self.runs_nothing(i, u.default)  # `timeout 5`: it fails, running nothing
            return None
        self.open_args = self.open_args or u.open_args
        if u.cut is not None:
            self.cut = u.cut
        for given in u.assigns:  # (a value only known when it runs: xargs's slot number)
            self.given.append(given)
            parser.run_value(given.partition("=")[0], "", True, self.depth)
        nxt = _skip_assignments(words, u.inner)
        self.given.extend(words[u.inner : nxt])
        parser.git_environment((*u.assigns, *words[u.inner : nxt]))
        for k in range(u.inner, nxt):  # `env GIT_EDITOR='…' git commit`: as a prefix would be
            name, _, value = words[k].partition("=")
            parser.run_value(name, value, self.dynamic[k], self.depth)
        return nxt

    def runs_nothing(self, i: int, default: tuple[str, ...] | None) -> None:
        """A wrapper given no command: it is the command, or runs its default (`xargs`: echo; a
        shell reading its input: `setarch x86_64`, `sudo -s`, `su`, `chroot DIR`) — unless an
        `xargs` around it appends words: then they are the command it runs."""
        if self.open_args:  # `… | xargs xargs`, `… | xargs env`, `… | xargs timeout`
            self.parser.opaque.append(
                f"{posixpath.basename(self.words[i])} runs the command xargs gives it from its input"
            )
            return
        if default is None:
            self.layers[-1] = (i, "command")  # nothing else runs: the wrapper is the command
            return
        self.default = default
        self.open_args = True
        if default[0] in SHELLS:  # `setarch x86_64`, `sudo -s`: a shell reads its input
            if self.stdin is not None:
                self.parser.script(self.stdin, self.depth + 1)
            else:
                self.parser.opaque.append(
                    f"{posixpath.basename(self.words[i])} starts a shell that runs what its "
                    "input gives it, which is not known here"
                )

    def splice(self, i: int, end: int, splice: tuple[str, ...], base: str) -> int | None:
        """`env -S 'a b' c`: the words of the string stand for the wrapper's options, read again."""
        self.splices += 1
        if self.splices > MAX_SHELL_DEPTH:
            self.parser.opaque.append(f"{base}: too many -S strings")
            return None
        self.layers.pop()
        if self.cut >= end:
            self.cut += len(splice) - (end - i - 1)
        self.words = (*self.words[: i + 1], *splice, *self.words[end:])
        self.dynamic = (*self.dynamic[: i + 1], *(False,) * len(splice), *self.dynamic[end:])
        return i

    def parts(self, nested: list[Part]) -> list[Part]:
        """Each wrapper's part, the command's, what it implies, then the parts of the scripts it
        runs (`nested`), which get the files it writes and the assignments it is given."""
        words, dynamic, writes = self.words, self.dynamic, tuple(self.writes)
        assigned = tuple(self.given)
        if writes:
            nested = [p.but(writes=p.writes + writes) for p in nested]
        if assigned:  # `BASH_ENV=x bash -c 'ls'`: the script's commands get them too
            nested = [p.but(assigns=p.assigns + assigned) for p in nested]
        runs = self.runs
        below = 1 if runs is not None or self.default is not None else 0
        new = [
            Part(
                words[start:],
                writes,
                role,
                reach=runs - start if runs is not None else None,
                chain=below + len(self.layers) - k - 1,
                unknown=_unknown(dynamic, start, len(words)),
                assigns=assigned,
            )
            for k, (start, role) in enumerate(self.layers)
        ]
        if runs is not None:
            stop = max(self.cut, runs + 1)
            new.append(
                Part(
                    words[runs:stop],
                    writes,
                    "command",
                    open_args=self.open_args,
                    unknown=_unknown(dynamic, runs, stop),
                    assigns=assigned,
                )
            )
        elif self.default is not None:
            new.append(Part(self.default, writes, "command", open_args=True, assigns=assigned))
        return new + self.implied + nested
