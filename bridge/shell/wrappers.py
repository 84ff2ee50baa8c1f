"""Commands that run another command (`sudo`, `timeout`, `xargs`, `env -S`, …), each with its own
options, and how the command it runs is found among its words."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from bridge.record import Frozen
from bridge.shell.parts import Role
from bridge.shell.words import plain_script, split_words


class _Unknown(Exception):
    """A wrapper's words that cannot be read (an unknown option, a missing argument)."""


_Seen = list[tuple[str, str | None]]  # the options a wrapper was given: (name, value)


class _Unwrapped:
    """What a wrapper runs. (A plain class: a dataclass costs a hook process ~0.2 ms to define.)"""

    def __init__(
        self,
        inner: int | None,  # the index of the command it runs; None: it runs none
        script: str | None = None,  # a shell script it runs instead
        *,
        writes: tuple[str, ...] = (),
        open_args: bool = False,  # xargs: arguments are appended when it runs
        cut: int | None = None,  # xargs -I: words from here on are only known when it runs
        default: tuple[str, ...] | None = None,  # what runs when no command is given
        splice: tuple[str, ...] | None = None,  # env -S: these words stand for words[i+1:inner]
        assigns: tuple[str, ...] = (),  # `NAME=value` it puts in the command's environment
        dirs: tuple[str, ...] = (),  # the folders it changes to (`env -C DIR`)
    ) -> None:
        self.inner = inner
        self.script = script
        self.writes = writes
        self.open_args = open_args
        self.cut = cut
        self.default = default
        self.splice = splice
        self.assigns = assigns
        self.dirs = dirs


class Wrapper(Frozen):
    """A command that runs another one, and its options: `short` as getopt spells them (`k:`
    takes an argument, `k::` an optional one attached to it, `k` none), `long` likewise (`name=`,
    `name==`, `name`); GNU abbreviations of long options are understood. `positionals`: words
    between the options and the command (timeout's duration, chroot's new root). `stop`: options
    after which no command runs (`command -v`, `sudo -l`). `writes`: options whose argument is a
    file written (`time -o FILE`). `permute`: options may follow the positionals (su). `shell`:
    options after which, given no command, it starts a shell ("*": whatever its options)."""

    __slots__ = _fields = (
        "role",
        "short",
        "long",
        "positionals",
        "stop",
        "writes",
        "numeric",
        "special",
        "shell",
    )

    def __init__(
        self,
        role: Role,
        short: str = "",
        long: str = "",
        positionals: int = 0,
        stop: frozenset[str] = frozenset(),
        writes: frozenset[str] = frozenset(),
        numeric: bool = False,  # `nice -10`: a negative number is an option
        special: str = "",  # one with its own rules: env, xargs, su, eval, watch, flock, busybox
        shell: frozenset[str] = frozenset(),  # options after which, with no command, a shell runs
    ) -> None:
        self.role = role
        self.short = short
        self.long = long
        self.positionals = positionals
        self.stop = stop
        self.writes = writes
        self.numeric = numeric
        self.special = special
        self.shell = shell

    def options(self) -> tuple[dict[str, int], dict[str, int]]:
        return _option_table(self.short, self.long)

    def unwrap(self, words: Sequence[str], i: int) -> _Unwrapped:
        j, seen, rest = _getopt(self, words, i + 1)
        if self.special:
            return _SPECIALS[self.special](self, words, i, j, seen, rest)
        if any(name in self.stop for name, _ in seen):
            return _Unwrapped(None)
        j += self.positionals
        writes = tuple(v for name, v in seen if name in self.writes and v)
        # given no command, `sudo -s`, `chroot DIR`, `pkexec` start a shell (reading its input)
        shell = "*" in self.shell or any(name in self.shell for name, _ in seen)
        return _Unwrapped(j, writes=writes, default=("sh",) if shell else None)


@lru_cache(maxsize=64)
def _option_table(short: str, long: str) -> tuple[dict[str, int], dict[str, int]]:
    """{option: 0 (no argument) | 1 (an argument) | 2 (an optional, attached argument)}."""
    shorts: dict[str, int] = {}
    k = 0
    while k < len(short):
        letter = short[k]
        colons = 0
        while k + 1 + colons < len(short) and short[k + 1 + colons] == ":":
            colons += 1
        shorts[letter] = colons
        k += 1 + colons
    longs: dict[str, int] = {}
    for item in long.split():
        name = item.rstrip("=")
        longs[name] = len(item) - len(name)
    return shorts, longs


def _getopt(spec: Wrapper, words: Sequence[str], j: int) -> tuple[int, _Seen, list[int]]:
    """Read the wrapper's options from words[j]: (the index after them, the options seen as
    (name, value), and for a permuting wrapper the indexes of the non-options among them)."""
    shorts, longs = spec.options()
    seen: _Seen = []
    rest: list[int] = []
    while j < len(words):
        word = words[j]
        if word == "--":
            j += 1
            if spec.special == "su":
                rest.extend(range(j, len(words)))
                j = len(words)
            break
        if word == "-" and spec.special == "su":
            seen.append(("-", None))
        elif not word.startswith("-") or word == "-":
            if spec.special != "su":
                break
            rest.append(j)  # su: options may come after the user
        elif spec.numeric and re.fullmatch(r"-\d+", word):
            seen.append(("n", word[1:]))
        elif word.startswith("--"):
            j = _long_option(longs, words, j, seen)
        else:
            j = _short_options(shorts, words, j, seen)
        j += 1
    return j, seen, rest


def _long_option(longs: dict[str, int], words: Sequence[str], j: int, seen: _Seen) -> int:
    """`--name`, `--name=value` or `--name value` (GNU abbreviations understood) at words[j]
    into `seen`: the index of its last word. Refused (_Unknown): an unknown or ambiguous name,
    a value given to an option that takes none, a missing value."""
    name, eq, value = words[j][2:].partition("=")
    matches = [n for n in longs if n == name] or [n for n in longs if n.startswith(name)]
    if len(matches) != 1:
        raise _Unknown(f"option --{name} is not known")
    name = matches[0]
    takes = longs[name]
    if takes == 0 and eq:
        raise _Unknown(f"option --{name} takes no argument")
    if takes == 1 and not eq:
        if j + 1 >= len(words):
            raise _Unknown(f"option --{name} needs an argument")
        value = words[j + 1]
        j += 1
    seen.append((name, value if (eq or takes == 1) else None))
    return j


def _short_options(shorts: dict[str, int], words: Sequence[str], j: int, seen: _Seen) -> int:
    """`-abc`, `-kVALUE` or `-k VALUE` at words[j] into `seen`: the index of its last word.
    Refused (_Unknown): an unknown letter, a missing value."""
    word = words[j]
    k = 1
    while k < len(word):
        letter = word[k]
        if letter not in shorts:
            raise _Unknown(f"option -{letter} is not known")
        takes = shorts[letter]
        if takes == 0:
            seen.append((letter, None))
            k += 1
            continue
        value = word[k + 1 :]
        if takes == 1 and not value:
            if j + 1 >= len(words):
                raise _Unknown(f"option -{letter} needs an argument")
            j += 1
            value = words[j]
        seen.append((letter, value))
        break
    return j


_Special = Callable[["Wrapper", Sequence[str], int, int, _Seen, list[int]], _Unwrapped]


def _env(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    # `env [options] [NAME=value …] [command …]`; -S splits a string into more words
    split = [v for name, v in seen if name in ("S", "split-string")]
    # (the folder it changes to, however its option is spelled: `-iC DIR`, `--ch=DIR`)
    dirs = tuple(v for name, v in seen if name in ("C", "chdir") and v)
    if split:
        text = split[-1] or ""
        if not plain_script(text):
            raise _Unknown("an -S string with escapes or expansions is not understood")
        try:
            return _Unwrapped(j, splice=tuple(split_words(text)))
        except ValueError:
            raise _Unknown("an -S string with an unbalanced quote") from None
    return _Unwrapped(j, dirs=dirs)


def _xargs(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    replace_with: str | None = None
    for name, value in seen:
        if name == "I":
            replace_with = value
        elif name in ("i", "replace"):
            replace_with = value or "{}"
    cut = None
    if replace_with:
        for k in range(j, len(words)):
            if replace_with in words[k]:
                if k == j:
                    raise _Unknown("the command name comes from its input")
                cut = k
                break
    # `--process-slot-var=NAME` puts NAME (a slot's number) in each command's environment, as
    # `env NAME=0` would (`BASH_ENV`: a file `0` its shell runs first — in `/dev/fd`, its input)
    slots = tuple(f"{value}=0" for name, value in seen if name == "process-slot-var" and value)
    return _Unwrapped(j, open_args=True, cut=cut, default=("echo",), assigns=slots)


def _su(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    # su [options] [-] [user [args…]]: args go to the user's shell; -c is a script
    if any(name in ("u", "user") for name, _ in seen):  # runuser -u USER [--] command …
        if any(name in ("c", "command", "session-command") for name, _ in seen):
            raise _Unknown("-u with -c is not understood")
        return _Unwrapped(rest[0] if rest else None)
    if len([k for k in rest if words[k] != "-"]) > 1:
        raise _Unknown("arguments for the user's shell are not understood")
    scripts = [v for name, v in seen if name in ("c", "command", "session-command")]
    if scripts:
        return _Unwrapped(None, script=scripts[-1] or "")
    return _Unwrapped(None, default=("sh",))  # a shell as that user (reading its input)


def _eval(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    if j >= len(words):
        return _Unwrapped(None)
    return _Unwrapped(None, script=" ".join(words[j:]))


def _watch(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    if j >= len(words):
        return _Unwrapped(None)
    if any(name in ("x", "exec") for name, _ in seen):
        return _Unwrapped(j)
    return _Unwrapped(None, script=" ".join(words[j:]))  # watch runs `sh -c "ARGS…"`


def _flock(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    # flock [options] FILE|DIR command …  /  flock [options] FILE|DIR -c script  /  flock [options] FD
    # (the lock file is created when it is not there: a file it writes; a number with nothing
    # after it is a descriptor, before a command a file's name)
    lock = words[j] if j < len(words) else ""
    fd = lock.isdigit() and j + 1 == len(words) and not seen
    writes = () if fd or lock in ("", "/dev/null") else (lock,)
    scripts = [v for name, v in seen if name in ("c", "command")]
    if scripts:
        return _Unwrapped(None, script=scripts[-1] or "", writes=writes)
    j += 1
    if j < len(words) and words[j] in ("-c", "--command"):
        if j + 1 >= len(words):
            raise _Unknown("-c needs a script")
        return _Unwrapped(None, script=words[j + 1], writes=writes)
    return _Unwrapped(j if j < len(words) else None, writes=writes)


def _busybox(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    if seen:
        return _Unwrapped(None)  # --list, --install, --help: no applet runs
    return _Unwrapped(j)


def _setarch(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    # setarch ARCH [options] [command …] (its other names — linux64, i386, … — have no ARCH)
    if posixpath.basename(words[i]) == "setarch":
        if j < len(words) and j == i + 1:  # the architecture comes before its options
            j, seen, _ = _getopt(spec, words, j + 1)
        else:
            raise _Unknown("an architecture is expected first")
    if any(name in ("list", "help", "version", "h", "V") for name, _ in seen):
        return _Unwrapped(None)
    return _Unwrapped(j, default=("sh",))  # with no command it starts a shell


def _sg(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    # sg [-] [GROUP [[-c] COMMAND]]: the command is a script for /bin/sh
    j += 1  # the group
    if j < len(words) and words[j] == "-c":
        j += 1
    if j >= len(words):
        return _Unwrapped(None, default=("sh",))  # a shell with that group
    return _Unwrapped(None, script=" ".join(words[j:]))


def _ssh_agent(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    # it listens on a socket it creates: `-a SOCKET`, or one in a new folder under $TMPDIR
    if any(name in spec.stop for name, _ in seen):
        return _Unwrapped(None)
    sockets = [v for name, v in seen if name == "a" and v] or ["$TMPDIR/ssh-XXXXXXXXXX/agent.PID"]
    return _Unwrapped(j, writes=tuple(sockets))


_SPECIALS: dict[str, _Special] = {
    "ssh-agent": _ssh_agent,
    "setarch": _setarch,
    "sg": _sg,
    "env": _env,
    "xargs": _xargs,
    "su": _su,
    "eval": _eval,
    "watch": _watch,
    "flock": _flock,
    "busybox": _busybox,
}

_SUDO_LONG = (
    "askpass background bell close-from= login-class= chdir= preserve-env== edit group= "
    "set-home help host= login remove-timestamp reset-timestamp list non-interactive "
    "preserve-groups prompt= chroot= role= stdin shell type= command-timeout= other-user= "
    "user= version validate no-update"
)

WRAPPERS: dict[str, Wrapper] = {
    # harmless: the command they run decides
    "time": Wrapper(
        "wrapper",
        short="af:o:pqvV",
        long="append format= output= portability quiet verbose help version",
        writes=frozenset({"o", "output"}),
        stop=frozenset({"V", "help", "version"}),
    ),
    "nice": Wrapper(
        "wrapper",
        short="n:",
        long="adjustment= help version",
        numeric=True,
        stop=frozenset({"help", "version"}),
    ),
    "timeout": Wrapper(
        "wrapper",
        short="k:s:v",
        long="kill-after= signal= foreground preserve-status verbose help version",
        positionals=1,
        stop=frozenset({"help", "version"}),
    ),
    "nohup": Wrapper("wrapper", long="help version", stop=frozenset({"help", "version"})),
    "stdbuf": Wrapper(
        "wrapper",
        short="i:o:e:",
        long="input= output= error= help version",
        stop=frozenset({"help", "version"}),
    ),
    "command": Wrapper("wrapper", short="pvV", stop=frozenset({"v", "V"})),
    "builtin": Wrapper("wrapper"),
    "coproc": Wrapper("wrapper"),  # `coproc cmd …` runs cmd in the background
    # zsh's precommand modifiers and `repeat N cmd` (a program of that name, elsewhere)
    "noglob": Wrapper("wrapper"),
    "nocorrect": Wrapper("wrapper"),
    "repeat": Wrapper("wrapper", positionals=1),
    "exec": Wrapper("wrapper", short="cla:"),
    "setsid": Wrapper(
        "wrapper",
        short="cfw",
        long="ctty fork wait help version",
        stop=frozenset({"help", "version"}),
    ),
    "ionice": Wrapper(
        "wrapper",
        short="c:n:tpPu",
        long="class= classdata= ignore pid pgid uid help version",
        stop=frozenset({"p", "P", "u", "pid", "pgid", "uid", "help", "version"}),
    ),
    "taskset": Wrapper(
        "wrapper",
        short="acp",
        long="all-tasks cpu-list pid help version",
        positionals=1,
        stop=frozenset({"p", "pid", "help", "version"}),
    ),
    "env": Wrapper(
        "wrapper",
        short="iu:0C:S:va:",
        long="ignore-environment unset= null chdir= split-string= debug argv0= "
        "ignore-signal== default-signal== block-signal== list-signal-handling help version",
        special="env",
    ),
    "xargs": Wrapper(
        "wrapper",
        short="0a:d:E:e::I:i::L:l::n:P:s:prtxo",
        long="null arg-file= delimiter= eof== replace== max-lines== max-args= max-procs= "
        "max-chars= process-slot-var= interactive no-run-if-empty open-tty verbose exit "
        "show-limits help version",
        special="xargs",
    ),
    "eval": Wrapper("wrapper", special="eval"),
    "watch": Wrapper(
        "wrapper",
        short="bcCd::eghn:pq:rtwx",
        long="beep color no-color differences== errexit chgexit help interval= precise "
        "equexit= no-rerun no-title no-wrap exec version",
        special="watch",
    ),
    "flock": Wrapper(
        "wrapper",
        short="sxenouc:w:E:FV",
        long="shared exclusive nonblock nb no-fork unlock close command= wait= timeout= "
        "conflict-exit-code= verbose help version",
        special="flock",
    ),
    "busybox": Wrapper("wrapper", long="list list-full install help", special="busybox"),
    "chrt": Wrapper(
        "wrapper",
        short="abdefimoprRT:P:D:vhV",
        long="all-tasks batch deadline ext fifo idle max other pid rr reset-on-fork "
        "sched-runtime= sched-period= sched-deadline= verbose help version",
        positionals=1,  # the priority
        stop=frozenset({"m", "max", "p", "pid", "h", "help", "V", "version"}),
    ),
    **{
        name: Wrapper(
            "wrapper",
            short="v3BFILRSTXZhV",
            long="verbose 3gb 4gb uname-2.6 addr-no-randomize fdpic-funcptrs mmap-page-zero "
            "addr-compat-layout read-implies-exec 32bit short-inode whole-seconds "
            "sticky-timeouts list help version",
            special="setarch",
        )
        for name in ("setarch", "linux32", "linux64", "i386", "x86_64", "uname26")
    },
    "ssh-agent": Wrapper(
        "wrapper", short="cDdsa:E:O:P:t:k", stop=frozenset({"k"}), special="ssh-agent"
    ),  # the socket file it creates (`-a SOCKET`)
    "toybox": Wrapper("wrapper", long="help version", special="busybox"),
    # privileged: they change who (or where) runs the command
    "sudo": Wrapper(
        "privileged",
        short="Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv",
        long=_SUDO_LONG,
        stop=frozenset(
            {
                "e",
                "edit",
                "l",
                "list",
                "V",
                "version",
                "v",
                "validate",
                "K",
                "remove-timestamp",
                "help",
            }
        ),
        shell=frozenset({"s", "shell", "i", "login"}),
    ),
    "doas": Wrapper(
        "privileged", short="a:C:Lnsu:", stop=frozenset({"L", "C"}), shell=frozenset({"s"})
    ),
    "su": Wrapper(
        "privileged",
        short="c:g:G:lmpPs:w:fh",
        long="command= session-command= group= supp-group= login preserve-environment pty "
        "shell= whitelist-environment= fast help version",
        special="su",
    ),
    "runuser": Wrapper(
        "privileged",
        short="c:g:G:lmpPs:u:w:fh",
        long="command= session-command= group= supp-group= login preserve-environment pty "
        "shell= user= whitelist-environment= fast help version",
        special="su",
    ),
    "sg": Wrapper("privileged", special="sg"),
    "pkexec": Wrapper(
        "privileged",
        long="user= disable-internal-agent keep-cwd help version",
        stop=frozenset({"help", "version"}),
        shell=frozenset({"*"}),
    ),
    "chroot": Wrapper(
        "privileged",
        long="userspec= groups= skip-chdir help version",
        positionals=1,
        stop=frozenset({"help", "version"}),
        shell=frozenset({"*"}),
    ),
}
