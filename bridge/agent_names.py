"""An agent's own name: what rules, bypass and the console know it by.

An agent started as `node script.js`, `npx -y @zed-industries/claude-agent-acp` or
`uv run agent.py` is not "node", "npx" or "uv": a name taken from the interpreter would make a
setting for one agent (its bypass above all) cover every agent started the same way. The agent's
name is, in order: its settings id (the person named it), the `agentInfo.name` it gives in its
`initialize` response, else the script, module or package its command line runs — never the
interpreter or package runner in front of it.
"""

from __future__ import annotations

import os
import re
from typing import Any

#: Programs that run an agent rather than being one: interpreters, package runners, shells.
INTERPRETERS = frozenset(
    {
        "node",
        "nodejs",
        "npx",
        "npm",
        "pnpm",
        "pnpx",
        "yarn",
        "bun",
        "bunx",
        "deno",
        "tsx",
        "ts-node",
        "python",
        "pythonw",
        "py",
        "pypy",
        "uv",
        "uvx",
        "pipx",
        "poetry",
        "pdm",
        "hatch",
        "ruby",
        "perl",
        "php",
        "java",
        "dotnet",
        "go",
        "cargo",
        "env",
        "sh",
        "bash",
        "zsh",
        "dash",
        "fish",
        "exec",
    }
)
# Words after a runner that say "run the next word": `uv run`, `uv tool run`, `npm exec`, `bun x`.
_SUBCOMMANDS = frozenset({"run", "exec", "x", "dlx", "tool", "-c"})
# Options whose value is what runs: `python -m pkg`, `npx --package pkg`, `uvx --from pkg`.
_RUNS_VALUE = frozenset({"-m", "--package", "-p", "--from", "--with"})
# Options that take a value which is not what runs (so it is skipped with them).
_TAKES_VALUE = frozenset({"--python", "--directory", "--project", "--cwd", "-r", "--require"})
_VERSION_TAIL = re.compile(r"[-_.]?\d+(\.\d+)*$")


def is_interpreter(name: str) -> bool:
    """`node`, `python3.12`, `/usr/bin/npx`, `bun.exe`: a program that runs agents."""
    base = os.path.basename(name.strip()).lower()
    base = base.removesuffix(".exe").removesuffix(".cmd")
    return base in INTERPRETERS or _VERSION_TAIL.sub("", base) in INTERPRETERS


def _package_name(spec: str) -> str:
    """`@scope/pkg@1.2.3` → `@scope/pkg`; `pkg==1.0` / `pkg@1` → `pkg`."""
    spec = re.split(r"==|>=|<=|~=|\[", spec, maxsplit=1)[0]
    at = spec.rfind("@")
    return spec[:at] if at > 0 else spec


_SCRIPT_EXTENSIONS = frozenset(
    {".js", ".mjs", ".cjs", ".ts", ".mts", ".py", ".pyz", ".rb", ".pl", ".php", ".sh", ".jar"}
)


def _script_name(word: str) -> str:
    """A script's name without its folder and extension (`./agents/main.mjs` → `main`); a
    package or module name as it is, without a version (`pkg==1.0` → `pkg`)."""
    if word.startswith("@") or "/" not in word:
        stem, ext = os.path.splitext(word)
        if ext.lower() in _SCRIPT_EXTENSIONS and stem:
            return stem
        return _package_name(word)
    base = os.path.basename(word.rstrip("/"))
    stem, ext = os.path.splitext(base)
    return stem if ext.lower() in _SCRIPT_EXTENSIONS and stem else base


def command_name(argv: list[str]) -> str:
    """The name of what a command line runs: the program itself, or — behind an interpreter or a
    package runner — the script, module or package it is given. Never the interpreter's name
    unless nothing follows it."""
    words = [w for w in argv if w]
    i = 0
    while i < len(words) and "=" in words[i] and not words[i].startswith("-"):
        i += 1  # env-style assignments (`env FOO=1 node …`)
    if i >= len(words):
        return "agent"
    if not is_interpreter(words[i]):
        return _script_name(words[i])
    interpreter = os.path.basename(words[i])
    i += 1
    while i < len(words):
        word = words[i]
        if word in _RUNS_VALUE and i + 1 < len(words):
            return _script_name(words[i + 1])
        if word in _TAKES_VALUE:
            i += 2
            continue
        if word.startswith("-") or word in _SUBCOMMANDS or "=" in word:
            i += 1
            continue
        if is_interpreter(word):  # `uv run python agent.py`, `env node x.js`
            interpreter = os.path.basename(word)
            i += 1
            continue
        return _script_name(word)
    return interpreter


def agent_info_name(result: Any) -> tuple[str | None, str | None]:
    """The agent's name and version from its `initialize` result (`agentInfo`), when it gave
    them: a name that is only an interpreter's is no name."""
    info = result.get("agentInfo") if isinstance(result, dict) else None
    if not isinstance(info, dict):
        return None, None
    name = info.get("name")
    version = info.get("version")
    name = name.strip()[:80] if isinstance(name, str) else ""
    version_text = version_text_of(version)
    if not name or is_interpreter(name):
        return None, version_text
    return name, version_text


def version_text_of(version: Any) -> str | None:
    """An agent's `agentInfo.version` as a card shows it: trimmed and bounded, None when empty."""
    return version.strip()[:40] if isinstance(version, str) and version.strip() else None
