"""“Always for this pattern”: the rule proposed from a request, and what a rule covers beyond it."""

from __future__ import annotations

import os
import posixpath
import shlex
from collections.abc import Iterable

from bridge.rules.commands import EXACT_MARK, inert_assignment
from bridge.rules.request import Request
from bridge.rules.rule import Rule
from bridge.rules.urls import split_url
from bridge.shell import Part, is_assignment

# Programs that only read, by themselves or with these subcommands: `p` proposes the program (and
# subcommand) with any arguments. Everything else is proposed as the exact command.
READ_ONLY_PROGRAMS = frozenset(
    {
        "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "pwd", "file", "stat",
        "du", "df", "which", "whoami", "id", "date", "tree", "diff", "cmp", "basename",
        "dirname", "realpath", "readlink", "uname", "echo", "true", "false",
    }
)  # fmt: skip
READ_ONLY_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": frozenset(
        {"status", "log", "diff", "show", "blame", "ls-files", "rev-parse", "describe", "shortlog"}
    ),
    "kubectl": frozenset({"get", "describe", "logs", "version"}),
    "docker": frozenset({"ps", "images", "logs", "inspect", "version"}),
    "cargo": frozenset({"tree", "metadata", "version"}),
    "npm": frozenset({"ls", "view", "outdated"}),
}
# Options with which a read-only program runs a program or writes a file: never proposed broadly.
_RISKY_OPTIONS = (
    "-c", "--config", "--config-env", "--output", "-o", "--ext-diff", "--exec", "-exec",
    "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fls", "--pre", "-C", "--upload-pack",
    "--receive-pack", "--textconv", "--open-files-in-pager", "-O",
)  # fmt: skip
# Programs that destroy, change or run what they are given: only ever proposed exactly, and a
# rule that allows one with any arguments is called out as such.
DESTRUCTIVE_PROGRAMS = frozenset(
    {
        "rm", "rmdir", "dd", "mkfs", "shred", "wipefs", "fdisk", "sfdisk", "parted", "truncate",
        "chmod", "chown", "chgrp", "kill", "killall", "pkill", "reboot", "shutdown", "halt",
        "poweroff", "mv", "cp", "ln", "find", "xargs", "git", "sudo", "doas", "su", "curl",
        "wget", "docker", "kubectl", "terraform", "helm", "npm", "pip", "apt", "apt-get",
        "yum", "dnf", "brew", "systemctl", "crontab", "iptables", "sh", "bash", "zsh", "python",
        "python3", "node", "perl", "ruby", "eval", "exec", "env",
    }
)  # fmt: skip


def _is_destructive(program: str) -> bool:
    name = posixpath.basename(program)
    return name in DESTRUCTIVE_PROGRAMS or name.startswith("mkfs")


def _read_only(words: tuple[str, ...]) -> tuple[str, ...] | None:
    """The program (and subcommand) a read-only command is proposed by, or None when it is not
    read-only (or is written with an option that runs a program or writes a file)."""
    if any(w.startswith(_RISKY_OPTIONS) for w in words[1:]):
        return None
    program = words[0]
    if program in READ_ONLY_PROGRAMS:
        return (program,)
    subcommands = READ_ONLY_SUBCOMMANDS.get(program)
    if subcommands is not None and len(words) > 1 and words[1] in subcommands:
        return words[:2]
    return None


def exact_command(words: tuple[str, ...] | list[str]) -> str:
    """The command prefix that allows exactly these words (`rm -rf build $`)."""
    return shlex.join(words) + " " + EXACT_MARK


def command_prefix(part: Part) -> str:
    """What `p` proposes for one command: `git status -s` → `git status`, `ls -la` → `ls` (a
    read-only program and its subcommand, with any arguments); anything else exactly as written
    (`rm -rf build` → `rm -rf build $`, `run the tests` → `run the tests $`)."""
    broad = _read_only(part.words)
    return shlex.join(broad) if broad is not None else exact_command(part.words)


def _proposed_prefixes(parts: tuple[Part, ...]) -> Iterable[str]:
    """A prefix per command; a harmless wrapper needs none, a privileged one is named exactly,
    with the command it runs (`sudo apt update $`)."""
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.role in ("wrapper", "implied"):
            i += 1
        elif part.role == "privileged":
            yield exact_command(part.words)
            i += 1 + (part.chain if part.reach is not None else 0)
        else:  # with the assignments it is given, which an allow rule must name
            named = [shlex.quote(a) for a in part.assigns if not inert_assignment(a)]
            yield " ".join([*named, command_prefix(part)])
            i += 1


def propose_rule(req: Request) -> Rule | None:
    """The rule "always allow this pattern" proposes for a request, with it as its first example:
    as narrow as the request allows (see `command_prefix`; `breadth` says what it covers beyond
    the request). None when nothing narrow can be said: a command that writes files, or holds
    what is only known when it runs."""
    example = req.to_example()
    parsed = req.parsed
    if parsed is not None:
        if (
            parsed.opaque
            or parsed.suspect
            or not parsed.parts
            or any(
                p.writes or p.unknown or p.open_args or is_assignment(p.words[0])
                for p in parsed.parts
            )
        ):
            return None  # nothing a command prefix could allow
        prefixes = tuple(dict.fromkeys(_proposed_prefixes(parsed.parts)))
        return Rule("allow", agent=req.agent or None, command=prefixes, match=[example])
    if req.urls:
        split = split_url(req.urls[0])
        if split is not None:
            scheme, host, path = split
            directory = path if path.endswith("/") else posixpath.dirname(path).rstrip("/") + "/"
            return Rule(
                "allow",
                agent=req.agent or None,
                kind=req.kind or None,
                url=f"{scheme}://{host}{directory}",
                match=[example],
            )
    if req.paths and (req.cwd or all(os.path.isabs(os.path.expanduser(p)) for p in req.paths)):
        real = req.real_paths()
        dirs = {p if os.path.isdir(p) else os.path.dirname(p) for p in real}
        root = os.path.commonpath(sorted(dirs)) if dirs else None
        if root and root != os.sep:
            return Rule(
                "allow", agent=req.agent or None, kind=req.kind or None, path=root, match=[example]
            )
    if req.title:
        return Rule(
            "allow",
            agent=req.agent or None,
            kind=req.kind or None,
            title=req.title,
            match=[example],
        )
    return None


def breadth(rule: Rule) -> list[str]:
    """What an allow rule covers beyond one request, one sentence each, for the screen that shows
    a proposed (or edited) rule: a command prefix with any arguments (loudest when it names a
    destructive program), every URL under a path, everything inside a directory, any call by its
    title (which the agent writes). Empty when it allows exact commands only."""
    if rule.action != "allow":
        return []
    out = []
    for prefix, exact in zip(rule._prefixes, rule._exact, strict=True):
        if exact:
            continue
        shown = shlex.join(prefix)
        if _is_destructive(prefix[0]) and _read_only(prefix) is None:
            out.append(
                f"⚠ Broad: `{shown}` with any arguments lets "
                f"{posixpath.basename(prefix[0])} do whatever they say. Allow the exact command "
                "instead (end it with ` $`)."
            )
        else:
            out.append(f"Broad: `{shown}` with any arguments, not only this request.")
    if rule.url:
        out.append(f"Broad: every URL under {rule.url}.")
    if rule.path:
        out.append(f"Broad: every {rule.kind or 'request'} inside {rule.path}.")
    if rule.title and not rule.command:
        out.append(
            f"Broad: any {rule.kind or 'call'} titled “{rule.title}”, whatever it runs (the "
            "agent writes the title)."
        )
    return out


def scope_text(rule: Rule, agent_name: str | None = None) -> str:
    """One line for the card: what "always" would allow (the agent by `agent_name` when given)."""
    bits = []
    if rule.command:
        pairs = list(zip(rule._prefixes, rule._exact, strict=True))
        exact = [shlex.join(p) for p, e in pairs if e]
        broad = [shlex.join(p) for p, e in pairs if not e]
        if exact:
            bits.append("exactly " + ", ".join(f"`{c}`" for c in exact))
        if broad:
            bits.append("commands starting " + ", ".join(f"`{c}`" for c in broad))
    if rule.url:
        bits.append(f"URLs under {rule.url}")
    if rule.path:
        bits.append(f"{rule.kind or 'anything'} inside {rule.path}")
    if rule.title and not rule.path and not rule.url:
        bits.append(f"{rule.kind or 'calls'} titled “{rule.title}”")
    who = f" by {agent_name or rule.agent}" if rule.agent else ""
    return "always allow " + "; ".join(bits) + who
