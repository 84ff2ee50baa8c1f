"""What a shell command runs: every simple command of a script, wrappers unwrapped.

`parse_command` turns a command (a script, or an argv list) into `Part`s, one per command that runs,
and the reasons some of it cannot be known (`opaque`: approval rules ask a person then). Scripts
are parsed with `bashlex` (a port of bash's own grammar), never split with a regex (a plain command,
and a plain list or pipeline of them, is split without bashlex where that gives its reading:
`plain`): every simple
command of a pipeline, a `&&`/`||`/`;` list, a subshell, a `{ …; }` group, a loop or an `if`, a
`$(…)`/backtick substitution and a `<(…)` process substitution is a part of its own.

**Wrappers** are commands that run another command: `sudo git push` runs `git push`. Each wrapper is
known with its own options (which take an argument, which mean no command runs, which name a
script); the wrapper is a part (`role` "wrapper" when it is harmless — `time`, `nice`, `timeout`,
`nohup`, `stdbuf`, `command`, `exec`, `env`, `xargs`, … — "privileged" when it changes who runs the
command — `sudo`, `doas`, `su`, `runuser`, `pkexec`, `chroot`) and so is the command it runs. A
wrapper option that is not known, or a wrapper word only known when it runs (`sudo $OPT git push`),
makes the rest unknowable. `sh|bash|… -c 'script'`, `su -c 'script'`, `eval 'script'`, `watch
'script'` and `flock FILE -c 'script'` are the commands of the script, parsed the same way (to
depth 4). The commands `find … -exec CMD {} ;` runs are parts too (`find` itself is one).

The package: `parts` (what a parsed command is), `parser` (the walk over bashlex's trees),
`simple` (one simple command, wrappers unwrapped), `wrappers` (each wrapper and its options),
`runs` (what a command runs besides itself), `programs` (what programs do with their words),
`words` (assignments, quote removal, expansions), `plain` (plain lists read without bashlex), `grammar` (bashlex and its guards), `heredocs`.
"""

from __future__ import annotations

from bridge.shell.parts import ParsedCommand, Part, Role
from bridge.shell.plain import is_assignment
from bridge.shell.programs import (
    EVALUATES_SUBSCRIPTS,
    HARMLESS_REDIRECT_TARGETS,
    MAX_SHELL_DEPTH,
    RUNS_CODE,
    RUNS_CODE_WHEN,
    SHELLS,
)
from bridge.shell.words import GLOB_CHARS, unknown_target, word_text

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from typing import Any

    from bridge.shell.parser import Parser, parse_cached, parse_command
    from bridge.shell.parser import Parser as _Parser
    from bridge.shell.wrappers import WRAPPERS, Wrapper

# The parser and the wrappers' table load with their first use, not with the package: the rules
# import the package for its records and constants, and a hook process deciding an Edit or a Read
# by its kind or path parses no command.
_LAZY = {
    "Parser": ("parser", "Parser"),
    "_Parser": ("parser", "Parser"),
    "parse_cached": ("parser", "parse_cached"),
    "parse_command": ("parser", "parse_command"),
    "WRAPPERS": ("wrappers", "WRAPPERS"),
    "Wrapper": ("wrappers", "Wrapper"),
}


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"bridge.shell.{where[0]}"), where[1])
    globals()[name] = value
    return value


__all__ = [
    "EVALUATES_SUBSCRIPTS",
    "GLOB_CHARS",
    "HARMLESS_REDIRECT_TARGETS",
    "MAX_SHELL_DEPTH",
    "RUNS_CODE",
    "RUNS_CODE_WHEN",
    "SHELLS",
    "WRAPPERS",
    "ParsedCommand",
    "Parser",
    "Part",
    "Role",
    "Wrapper",
    "_Parser",
    "is_assignment",
    "parse_cached",
    "parse_command",
    "unknown_target",
    "word_text",
]
