"""What programs do with their words: shells, interpreters and programs that run code, builtins
that evaluate subscripts, and how a shell is given its script."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "rbash", "yash", "posh"})
# Builtins that evaluate array subscripts as arithmetic, where `a[$(cmd)]` runs cmd even quoted.
EVALUATES_SUBSCRIPTS = frozenset(
    {"let", "declare", "typeset", "local", "readonly", "export", "printf", "read", "test", "[",
     "[[", "unset", "mapfile", "readarray", "wait", "getopts", "(("}
)  # fmt: skip
# Programs whose arguments are code run by an interpreter, another shell, another machine or a
# container: not parsed, looked at by name (`_INTERPRETER` adds versioned names: python3.12).
RUNS_CODE = frozenset(
    {"ed", "red", "zip", "npx", "pnpx", "bunx", "logsave", "capsh", "node", "nodejs", "deno", "bun", "osascript", "Rscript", "R", "julia", "tclsh", "wish",
     "expect", "pwsh", "powershell", "fish", "csh", "tcsh", "nu", "elvish", "xonsh", "awk",
     "gawk", "mawk", "nawk", "sed", "gsed", "gdb", "lldb", "vim", "vi", "nvim", "ex", "emacs",
     "ssh", "scp", "sftp", "rsync", "script", "tmux", "screen", "parallel", "strace", "ltrace",
     "unshare", "nsenter", "systemd-run", "firejail", "bwrap", "valgrind", "at", "batch",
     "docker", "podman", "kubectl", "make", "jshell", "groovy", "scala", "irb", "sqlite3",
     "psql", "mysql", "busybox", "nohup", "dbus-run-session", "chpst", "setpriv", "prlimit",
     "fakeroot", "faketime", "proot", "nix-shell", "just", "entr", "watchexec", "ghci", "runghc",
     "swift", "kotlin", "cmd.exe", "wsl"}
)  # fmt: skip
# The commands that run another command (`bridge.shell.wrappers.WRAPPERS`, loaded with the first
# one a command names: most commands name none; tests/bridge/test_shell_lazy.py keeps them equal)
WRAPPER_NAMES = frozenset(
    {"time", "nice", "timeout", "nohup", "stdbuf", "command", "builtin", "coproc", "exec",
     "setsid", "ionice", "taskset", "env", "xargs", "eval", "watch", "flock", "busybox", "chrt",
     "setarch", "linux32", "linux64", "i386", "x86_64", "uname26", "ssh-agent", "toybox", "sudo",
     "doas", "su", "runuser", "sg", "pkexec", "chroot", "noglob", "nocorrect", "repeat"}
)  # fmt: skip
_INTERPRETER = r"(python|pypy|perl|ruby|php|lua|luajit)[0-9.]*"
_INTERPRETER_NAMES = ("python", "pypy", "perl", "ruby", "php", "lua")


def is_interpreter(name: str) -> bool:
    """`python3.12`, `perl5`, `luajit`: an interpreter by a versioned name too. (Its pattern is
    compiled with the first name that starts like one.)"""
    return name.startswith(_INTERPRETER_NAMES) and _interpreter().fullmatch(name) is not None


@lru_cache(maxsize=1)
def _interpreter() -> re.Pattern[str]:
    return re.compile(_INTERPRETER)


def _runs_in_container(words: Sequence[str]) -> bool:
    """`docker exec|run …`, `kubectl exec|run|debug …`: a command runs in a container."""
    return any(w in ("exec", "run", "debug", "attach", "create") for w in words[1:4])


def _script_runs_commands(words: Sequence[str]) -> bool:
    """A sed or awk script that runs commands or writes files (or cannot be read)."""
    from bridge.options import unsafe_options

    return bool(unsafe_options(tuple(words)))


# Programs in RUNS_CODE whose words are code only in some uses.
RUNS_CODE_WHEN: dict[str, Callable[[Sequence[str]], bool]] = {
    **dict.fromkeys(("docker", "podman", "kubectl"), _runs_in_container),
    **dict.fromkeys(("sed", "gsed", "awk", "gawk", "mawk", "nawk"), _script_runs_commands),
}
HARMLESS_REDIRECT_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
MAX_SHELL_DEPTH = 4


def reads_input(path: str, moved: bool = False) -> bool:
    """Whether a file a shell is given as its script is its input (a here-string or a pipe, on
    whichever descriptor): `/dev/stdin`, `/dev/fd/N`, `/proc/self/fd/N`, `-`, however spelled
    (`//dev/./stdin`) — relative too, from a folder only known when it runs: after `..`
    (`../../../dev/stdin` climbs to `/`), or after the command changed folder (`moved`: `env -C
    /dev bash stdin`, `cd /dev/fd && bash 0`), any end of such a path (`stdin`, `fd/0`, `0`)."""
    if path == "-":
        return True
    import posixpath

    if not path.startswith("/"):
        names = path.split("/")
        if ".." not in names and not moved:
            return False
        tail = names[max((k for k, n in enumerate(names) if n == ".."), default=-1) + 1 :]
        return bool(re.fullmatch(_INPUT_TAIL, "/".join(n for n in tail if n not in ("", "."))))
    normal = posixpath.normpath("/" + path.lstrip("/"))
    return (
        normal == "/dev/stdin"
        or normal.startswith(("/dev/fd/", "/proc/self/fd/"))
        or (normal.startswith("/proc/") and "/fd/" in normal)
    )


# the last names of a path that is a descriptor (`/dev/stdin`, `/dev/fd/N`, `/proc/PID/fd/N`,
# `/proc/self/task/TID/fd/N`): what a relative path from somewhere only known when it runs may be
_INPUT_TAIL = r"(?:dev/)?stdin|(?:(?:(?:proc/)?[^/]+/)?(?:task/[^/]+/)?|dev/)?fd/\d+|\d+"


# A shell's long options that take a file; the others take nothing (`--norc`, `--posix`, …)
_SHELL_LONG_FILE = frozenset({"--rcfile", "--init-file"})
_SHELL_LONG = frozenset(
    {"--debugger", "--dump-po-strings", "--dump-strings", "--help", "--login", "--noediting",
     "--noprofile", "--norc", "--posix", "--pretty-print", "--protected", "--restricted",
     "--verbose", "--version", "--wordexp"}
)  # fmt: skip


class ShellUse:
    """How a shell at words[i] is given its script (`read_shell`): `kind` "script" (`-c`: the
    script is words[at]), "file" (a script file, words[at]), "stdin" (its input: `sh`, `sh -s`,
    `bash /dev/stdin`), "none" (`sh -c` and no script: it fails), or "unknown" (an option this
    reading does not know, `why`). `opaque`: options that make what it runs unknowable."""

    def __init__(self, kind: str, at: int = -1, why: str = "") -> None:
        self.kind = kind
        self.at = at
        self.why = why
        self.opaque: list[str] = []


def read_shell(words: Sequence[str], i: int) -> ShellUse:
    """Read a shell's options as bash reads them — `-o NAME`/`-O NAME` take a word, `--` or `-`
    ends them, `-c` may come anywhere among them (`bash -c -- 'ls'`, `bash -o pipefail -c 'ls'`,
    `bash -ec 'ls'`) and the script is then the first word that is not an option — and say where
    its script comes from, and which options make its commands unknowable (`shell_option`)."""
    j = i + 1
    command = stdin = False
    opaque: list[str] = []
    while j < len(words):
        word = words[j]
        if word in ("--", "-"):
            j += 1
            break
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name in _SHELL_LONG_FILE:
                value = value if eq else (words[j + 1] if j + 1 < len(words) else "")
                if value != "/dev/null":  # an interactive shell sources it before the script
                    opaque.append(f"a shell given {name} {value!r} first runs that file")
                j += 1 if eq else 2
                continue
            if name not in _SHELL_LONG:
                return ShellUse("unknown", why=f"a shell option {word!r} is not known")
            j += 1
            continue
        if word[:1] not in ("-", "+") or len(word) == 1:
            break
        takes = 0
        for letter in word[1:]:
            if letter in "oO":
                takes += 1
                named = words[j + takes] if j + takes < len(words) else ""
                opaque.extend(shell_option(named, on=word[0] == "-", shopt=letter == "O"))
            else:
                opaque.extend(shell_option(letter, on=word[0] == "-"))
            if letter == "c" and word[0] == "-":
                command = True
            elif letter == "s" and word[0] == "-":
                stdin = True
        j += 1 + takes
    if command:
        use = ShellUse("script", j) if j < len(words) else ShellUse("none")
    elif stdin or j >= len(words) or reads_input(words[j]):
        use = ShellUse("stdin")
    else:
        use = ShellUse("file", j)
    use.opaque = opaque
    return use


def shell_option(name: str, *, on: bool, shopt: bool = False) -> list[str]:
    """Why setting (`on`) or unsetting a shell option — a letter (`-k`), a `-o`/`set -o` name
    or a `shopt` name — makes the commands of the script after it unknowable as they are read
    here: `-k` (`keyword`) makes every `NAME=value` word of a command an assignment to it
    (`git diff GIT_EXTERNAL_DIFF=…`); without `interactive_comments` a `#` starts no comment
    in an interactive shell (`ls #; rm …` runs rm). (`-i`/`-l` alone are not: the startup files
    they source are the user's own, not in the command, and writing one is a request of its
    own; a file named by `--rcfile`/`--init-file` is, in `read_shell`.)"""
    if on and not shopt and name in ("k", "keyword"):
        return ["the keyword option makes NAME=value arguments assignments to the command"]
    if not on and name in (("interactive_comments",) if shopt else ("interactive-comments",)):
        return [f"without {name} a '#' starts no comment in an interactive shell"]
    return []


# Prompts bash expands when it prints them (their `$(…)` run): PS4 under `set -x`, the others in
# an interactive shell; PROMPT_COMMAND is a script run before each prompt
PROMPTS = frozenset({"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND"})
# Variables whose value a program runs as a command line (through a shell, or `|cmd` for less)
RUN_BY_PROGRAMS = frozenset(
    {
        "PROMPT_COMMAND", "EDITOR", "VISUAL", "FCEDIT", "PAGER", "MANPAGER", "BROWSER",
        "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_SSH_COMMAND", "GIT_SSH",
        "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_PROXY_COMMAND",
        "LESSOPEN", "LESSCLOSE", "SYSTEMD_PAGER", "DIFF_PAGER", "SVN_EDITOR", "RSYNC_RSH",
        "CVS_RSH",
    }
)  # fmt: skip
# Variables that give programs options, configuration or a script to run first: what they say is
# only read when the program runs (`TAR_OPTIONS='--checkpoint-action=exec=…' tar …`)
GIVES_OPTIONS = frozenset(
    {"TAR_OPTIONS", "WGETRC", "CURL_HOME", "GREP_OPTIONS", "BASH_ENV", "ENV", "TF_CLI_ARGS"}
)


# Variables that choose how bash (and every program after it) reads bytes as characters: in a
# locale whose characters may end in a `\` or a quote byte (BIG5, GBK, Shift JIS), `"両\"` ends
# at the `\`, so a script reads otherwise than in UTF-8
CHARSET_VARIABLES = frozenset({"LC_ALL", "LC_CTYPE", "LANG"})


def plain_charset(value: str) -> bool:
    """Whether a locale (`C`, `POSIX`, `en_US.UTF-8`, `C.utf8@x`) reads bytes as ASCII or UTF-8."""
    name = value.partition("@")[0]
    if name in ("", "C", "POSIX"):
        return True
    charset = name.rpartition(".")[2] if "." in name else ""
    return charset.lower().replace("-", "") == "utf8"


def gives_options(name: str) -> bool:
    """Whether a variable gives a program options, configuration or a script (`GIVES_OPTIONS`,
    `TF_CLI_ARGS_*`, git's `GIT_CONFIG_*`)."""
    return name in GIVES_OPTIONS or name.startswith(("TF_CLI_ARGS_", "GIT_CONFIG"))
