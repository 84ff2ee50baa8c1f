"""Approval rules: what a rule can match, and how a rule set decides one permission request.

A rule matches a request's **agent** (glob), **tool kind**, **title** (glob, case-insensitive, or a
regular expression), **shell command** (a command prefix checked against every simple command the
request runs), **paths** (inside a directory, after resolving `~`, `..` and symlinks) and **URLs**
(scheme + host + path prefix). Every field a rule gives must match; a rule without fields matches
everything. The paths and URLs are every one the tool call names (`tool_call_targets`); a deny rule
matches any of them in any reading, an allow rule needs every one plain and covered (see
docs/rules-urls-paths.md).

Precedence (never file order across actions): **deny > ask > allow**. An agent's bypass is an
allow: a matching deny or ask rule still beats it. Within one action the first rule in the file is
the one reported.

Shell commands are parsed by `bridge.shell` (with `bashlex`, a port of bash's own grammar), never
split with a regex: every simple command of a pipeline, a `&&`/`||`/`;` list, a subshell, a
`{ …; }` group, a loop or an `if`, a `$(…)`/backtick substitution and a `<(…)` process
substitution is checked on its own, and so is the command a wrapper runs (`sudo git push` is
`sudo git push` and `git push`).

* a command rule that **denies** (or asks) matches when *any* part matches; its first word also
  matches by basename (`deny rm` catches `/bin/rm -rf x`), and its further words match with
  options skipped between them (`deny git push` catches `git -C dir push`, not `git log --grep
  push`; see `_match_rest`);
* **allow** needs *every* part allowed (each by some allow rule); the first word must be written
  exactly as the rule writes it (`allow git status` does not allow `./git status`). A prefix
  ending in a lone `$` allows the command exactly as written, nothing appended (`allow rm -rf
  build $` does not allow `rm -rf build /`); a deny or ask rule ignores the `$`. A harmless
  wrapper (`timeout 5`, `nice`, `time`, `nohup`, `env`, …) needs nothing of its own; a
  privileged one (`sudo`, `doas`, `su`, `runuser`, `pkexec`, `chroot`) needs an allow rule of
  its own as well (`allow sudo`), unless one prefix names both (`allow sudo apt update`); `xargs
  cmd` appends arguments, so only a prefix its written words already cover allows it;
* a part that writes to a file by redirection (`> f`, `>> f`, `&> f`; not `/dev/null` or `>&2`)
  is never allowed by a command rule — the redirect is a file write the prefix does not describe;
* a deny or ask **path** rule also matches a shell command run inside its directory, or whose
  words name a path inside it (`named_paths`: `~`, `$HOME`, braces and globs expanded, relative
  to the cwd and every `cd`/`-C` directory, symlinks resolved); a word only known when it runs
  or a longer word with the directory's name in it is a MIGHT. An allow path rule never allows a
  shell command by itself;
* what cannot be known is **ask**: a script bashlex cannot parse, a command name that is itself an
  expansion (`$CMD`, `$(which rm)`), a substitution hidden in `${…}`, a dynamic `sh -c` script, a
  wrapper option that is not known. When a deny or ask rule *might* match it (`git $SUB` or
  `xargs git` against `deny git push`; anything unknowable against any deny command rule) the
  verdict is an ask that beats bypass, as a deny would.

Rules may carry their own tests, `match = [...]` and `not_match = [...]`: example requests (a string
is the rule's main field — its command, URL, path or title — a table gives any of `agent`, `kind`,
`title`, `command`, `path`, `url`). Fields an example does not give are not compared.
`check_examples` runs them; the settings layer refuses a file whose examples fail.

The package, one concern a module: `request` (what a tool call asks), `targets` (the paths and
URLs it names), `paths` and `urls` (how they are compared), `named` (the paths a command's words
name), `commands` (a command prefix against one command, and allow rules against every part of
it), `rule` (one rule: its fields, what it matches, its examples), `table` (a rule's settings
table, `RuleError`), `ruleset` (deciding), `guards` (what governs the agents: asked), `explain`
(a decision part by part), `proposals` ("always for this pattern"), `bounds` (what is too large
to check), `verdicts` (actions, YES/MIGHT/NO, decisions). `paths`, `named`, `urls` and `proposals` are loaded with their first use
(see `_LAZY`).
"""

from __future__ import annotations

from bridge.rules.bounds import (
    MAX_BRACES,
    MAX_COMMAND,
    MAX_EXPANSIONS,
    MAX_GLOB_LEVELS,
    MAX_INPUT_DEPTH,
    MAX_INPUT_NODES,
    MAX_LOOSE_PATHS,
    MAX_URL_CANDIDATES,
)
from bridge.rules.commands import EXACT_MARK, Find, allow_walk, inert_assignment, spell
from bridge.rules.request import EXECUTE_KEYS, Request, command_of
from bridge.rules.rule import Rule
from bridge.rules.ruleset import RuleSet
from bridge.rules.table import EXAMPLE_KEYS, RULE_KEYS, RuleError
from bridge.rules.targets import (
    COMMAND_KEYS,
    PATH_KEYS,
    TEXT_KEYS,
    URL_KEYS,
    Targets,
    tool_call_targets,
)
from bridge.rules.verdicts import ACTIONS, MIGHT, NO, YES, Action, Decision, PartVerdict
from bridge.shell import ParsedCommand, Part

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from typing import Any

    from bridge.rules.named import NamedPaths, named_paths
    from bridge.rules.paths import inside, resolve_checked, resolve_path
    from bridge.rules.proposals import (
        DESTRUCTIVE_PROGRAMS,
        READ_ONLY_PROGRAMS,
        READ_ONLY_SUBCOMMANDS,
        breadth,
        command_prefix,
        exact_command,
        propose_rule,
        scope_text,
    )
    from bridge.rules.urls import (
        DEFAULT_PORTS,
        UrlReading,
        UrlView,
        _whatwg_reading,
        read_url,
        split_url,
        url_allows,
        url_denies,
        url_prefix_matches,
    )
    from bridge.shell.parser import parse_command

# Loaded with their first use, not with the package: a hook process deciding one call by a
# command or kind rule needs neither paths resolved, a command's named paths, URLs nor proposals,
# and one deciding an Edit by its kind no shell parser (`tests/bench/bench_hooks.py`).
_LAZY = {
    "parse_command": "bridge.shell.parser",
    **dict.fromkeys(("NamedPaths", "named_paths"), "named"),
    **dict.fromkeys(("inside", "resolve_checked", "resolve_path"), "paths"),
    **dict.fromkeys(
        (
            "DESTRUCTIVE_PROGRAMS",
            "READ_ONLY_PROGRAMS",
            "READ_ONLY_SUBCOMMANDS",
            "breadth",
            "command_prefix",
            "exact_command",
            "propose_rule",
            "scope_text",
        ),
        "proposals",
    ),
    **dict.fromkeys(
        (
            "DEFAULT_PORTS",
            "UrlReading",
            "UrlView",
            "_whatwg_reading",
            "read_url",
            "split_url",
            "url_allows",
            "url_denies",
            "url_prefix_matches",
        ),
        "urls",
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module if "." in module else f"bridge.rules.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ACTIONS", "COMMAND_KEYS", "DEFAULT_PORTS", "DESTRUCTIVE_PROGRAMS", "EXACT_MARK", "EXAMPLE_KEYS",
    "EXECUTE_KEYS", "MAX_BRACES", "MAX_COMMAND", "MAX_EXPANSIONS", "MAX_GLOB_LEVELS",
    "MAX_INPUT_DEPTH", "MAX_INPUT_NODES", "MAX_LOOSE_PATHS", "MAX_URL_CANDIDATES", "MIGHT", "NO",
    "PATH_KEYS", "READ_ONLY_PROGRAMS", "READ_ONLY_SUBCOMMANDS", "RULE_KEYS", "TEXT_KEYS", "URL_KEYS",
    "YES", "Action", "Decision", "Find", "NamedPaths", "ParsedCommand", "Part", "PartVerdict",
    "Request", "Rule", "RuleError", "RuleSet", "Targets", "UrlReading", "UrlView",
    "_whatwg_reading", "allow_walk", "breadth", "command_of", "command_prefix", "exact_command",
    "inert_assignment", "inside", "named_paths", "parse_command", "propose_rule", "read_url",
    "resolve_checked", "resolve_path", "scope_text", "spell", "split_url", "tool_call_targets",
    "url_allows", "url_denies", "url_prefix_matches",
]  # fmt: skip
