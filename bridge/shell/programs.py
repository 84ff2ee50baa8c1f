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
    {"node", "nodejs", "deno", "bun", "osascript", "Rscript", "R", "julia", "tclsh", "wish",
     "expect", "pwsh", "powershell", "fish", "csh", "tcsh", "nu", "elvish", "xonsh", "awk",
     "gawk", "mawk", "nawk", "sed", "gsed", "gdb", "lldb", "vim", "vi", "nvim", "ex", "emacs",
     "ssh", "scp", "sftp", "rsync", "script", "tmux", "screen", "parallel", "strace", "ltrace",
     "unshare", "nsenter", "systemd-run", "firejail", "bwrap", "valgrind", "at", "batch",
     "docker", "podman", "kubectl", "make", "jshell", "groovy", "scala", "irb", "sqlite3",
     "psql", "mysql", "busybox", "nohup", "dbus-run-session", "chpst", "setpriv", "prlimit",
     "fakeroot", "faketime", "proot", "nix-shell", "just", "entr", "watchexec", "ghci", "runghc",
     "swift", "kotlin", "cmd.exe", "wsl"}
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


def _reads_stdin(words: Sequence[str], i: int) -> bool:
    """`sh`, `sh -s …`, `sh -` read their script from their input; `sh file` does not."""
    j = i + 1
    while j < len(words) and words[j].startswith("-") and words[j] not in ("-", "--"):
        if not words[j].startswith("--") and "s" in words[j][1:]:
            return True
        if words[j] in ("-o", "+o", "-O", "+O") and j + 1 < len(words):
            j += 1
        j += 1
    if j < len(words) and words[j] == "--":
        j += 1
    return j >= len(words) or words[j] == "-"


def _shell_script(words: Sequence[str], i: int) -> int | None:
    """The index of the script word of `sh [-opts] -c script …` (words[i] is the shell), else None."""
    j = i + 1
    while j < len(words) and words[j].startswith("-") and words[j] != "--":
        if not words[j].startswith("--") and "c" in words[j][1:]:
            return j + 1
        j += 1
    return None
