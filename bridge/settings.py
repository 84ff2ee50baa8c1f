"""The settings file (architecture decision 12): agents, approval rules, preferences.

`$SYMPOSIUM_CONFIG_DIR/settings.toml`, else `$XDG_CONFIG_HOME/symposium/settings.toml`
(`bridge.paths.settings_path`). A person edits it by hand and the program edits it too (the
console's Bypass answer, rules, preferences), so:

* reading validates everything and a broken file is reported with its line — never "fixed";
* every program edit goes through `SettingsStore.update`: an exclusive `flock` on a sibling
  `settings.toml.lock`, re-read, validate, apply the change to a `tomlkit` document (a person's
  comments and layout survive), validate the result, write atomically (temp file in the same
  directory, fsync, `os.replace`, fsync the directory; file 0600, a directory it creates 0700).
  Two processes updating at once lose nothing; a reader never sees half a file; a broken file is
  left byte-for-byte as it was.

Everything that reads the file reads it here (`Settings.load`, or `Settings.load_quietly` where a
broken file is reported elsewhere): the console, the CLI, the `registry` commands and the OpenAI
front door's catalog. The module imports only the standard library, so the `registry` commands the
editor runs per chat stay cheap; `tomlkit` (editing) and the approval broker load when first used.

```toml
[preferences]                 # `Preferences`: theme, mouse, arm_delay, idle_timeout, max_agents, …
theme = "textual-dark"

[agents.claude]               # name, command, args, env, description, bypass
command = "npx"
args = ["-y", "@zed-industries/claude-agent-acp"]
bypass = false

[agents.zed-claude-code]      # an agent named by the extension: only its bypass
bypass = true

[[rules]]                     # bridge.rules.Rule: action (allow/ask/deny), agent, kind, title,
                              # title_regex, command, path, url, reason, match, not_match
action = "allow"
kind = "read"

[mcp_servers.calc]            # `McpServerConfig`: given to agents by the OpenAI front door
command = "python"
args = ["calc_mcp_server.py"]
```
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge.agent_table import AgentTableError, check_agent
from bridge.agent_table import describe as _describe
from bridge.paths import settings_path

if TYPE_CHECKING:
    import tomlkit
    import tomlkit.items

    from bridge.approvals import Policy
    from bridge.rules import Rule

__all__ = [
    "NEW_FILE_HEADER",
    "AgentConfig",
    "McpServerConfig",
    "Preferences",
    "Settings",
    "SettingsError",
    "SettingsStore",
    "agent_display_name",
]

NEW_FILE_HEADER = (
    "# Symposium TUI settings. Edit freely: when the program changes something it keeps\n"
    "# your comments and layout. `symposium-tui config` shows what is in effect.\n"
)

TOP_KEYS = ("preferences", "agents", "rules", "mcp_servers", "notify")
# Known preferences and what they must be (`Preferences` documents each); any other key is
# free-form and kept as written.
PREFERENCE_TYPES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "theme": ("a string", lambda v: isinstance(v, str)),
    "replay": ("a string", lambda v: isinstance(v, str)),
    "mouse": ("true or false", lambda v: isinstance(v, bool)),
    "idle_timeout": ("a number of seconds, 0 or more", lambda v: _is_number(v) and v >= 0),
    "max_agents": (
        "a whole number, 0 or more",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    ),
    "arm_delay": ("a number of seconds from 0 to 5", lambda v: _is_number(v) and 0 <= v <= 5),
    "approval_timeout": (
        "a number of seconds, 0 or more (0: wait for ever)",
        lambda v: _is_number(v) and v >= 0,
    ),
    "hook_no_console": ('"ask" or "deny"', lambda v: v in ("ask", "deny")),
    "hook_wait": ("a number of seconds, more than 0", lambda v: _is_number(v) and v > 0),
}
NOTIFY_KEYS = ("command", "interval", "burst", "timeout")


@dataclass(frozen=True)
class NotifyConfig:
    """`[notify]`: a command run (never through a shell) for each new pending approval, with the
    agent, the host and the title appended as arguments; rate-limited (`burst` runs back to back,
    then one per `interval` seconds), each run killed after `timeout` seconds."""

    command: tuple[str, ...]
    interval: float = 2.0
    burst: int = 5
    timeout: float = 10.0


KeyPath = tuple[str | int, ...]


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key_part(part: str) -> str:
    if _BARE_KEY.fullmatch(part):
        return part
    return '"' + part.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_key(path: KeyPath) -> str:
    """`agents.claude.args`, `agents."Claude Code".bypass`, `rules[2].action` (rules count from 1,
    as in `symposium-tui config` and the approval audit log)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part + 1}]"
        else:
            out += ("." if out else "") + _key_part(part)
    return out


# --- errors ---------------------------------------------------------------------------------------


class SettingsError(Exception):
    """The settings file cannot be used (or a change would break it). `str()` names the file, the
    line when known, and the key for schema errors:
    `…/settings.toml line 7, column 5: expected '=' after a key in a key/value pair`,
    `…/settings.toml line 9: agents.claude.args: expected a list of strings`."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        reason: str,
        *,
        line: int | None = None,
        column: int | None = None,
        key: str | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.reason = reason
        self.line = line
        self.column = column
        self.key = key
        super().__init__(self._format())

    def _format(self) -> str:
        where = str(self.path) if self.path is not None else "settings"
        if self.line is not None:
            where += f" line {self.line}"
            if self.column is not None:
                where += f", column {self.column}"
        return f"{where}: {self.key}: {self.reason}" if self.key else f"{where}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path) if self.path is not None else None,
            "line": self.line,
            "column": self.column,
            "key": self.key,
            "reason": self.reason,
            "message": str(self),
        }


class _SchemaError(Exception):
    def __init__(self, path: KeyPath, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


def _decode(raw: bytes, path: Path | None) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SettingsError(path, "not valid UTF-8 text", line=line, column=column) from None


def _parse_toml(text: str, path: Path | None) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        line = column = None
        m = _TOML_POS.search(message)
        if m:
            line, column = int(m.group(1)), int(m.group(2))
            message = message[: m.start()]
        elif _TOML_END.search(message):
            message = _TOML_END.sub("", message) + " at the end of the file"
            line = text.count("\n") + (0 if text.endswith("\n") or not text else 1) or 1
        message = message[:1].lower() + message[1:]
        raise SettingsError(path, message, line=line, column=column) from None


# --- locating a key in the text (for schema errors) -------------------------------------------------


def _split_key(raw: str) -> list[str] | None:
    """`a."b.c".d` → ["a", "b.c", "d"]; None when it does not look like a key."""
    parts: list[str] = []
    i, n = 0, len(raw)
    while True:
        while i < n and raw[i] in " \t":
            i += 1
        if i >= n:
            return None
        if raw[i] in "\"'":
            quote = raw[i]
            j = i + 1
            buf = []
            while j < n and raw[j] != quote:
                if quote == '"' and raw[j] == "\\" and j + 1 < n:
                    buf.append(raw[j + 1])
                    j += 2
                    continue
                buf.append(raw[j])
                j += 1
            if j >= n:
                return None
            parts.append("".join(buf))
            i = j + 1
        else:
            m = _BARE_KEY.match(raw, i)
            if not m:
                return None
            parts.append(m.group(0))
            i = m.end()
        while i < n and raw[i] in " \t":
            i += 1
        if i >= n:
            return parts
        if raw[i] != ".":
            return None
        i += 1


def _locate(text: str, target: KeyPath) -> int | None:
    """Best effort: the line of the header or `key =` that names the longest prefix of `target`."""
    best_line, best_len = None, 0
    header: list[str | int] = []
    aot_counts: dict[tuple[str | int, ...], int] = {}
    in_multiline: str | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if in_multiline:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        full: list[str | int] | None = None
        if stripped.startswith("[["):
            end = stripped.find("]]")
            keys = _split_key(stripped[2:end]) if end > 0 else None
            if keys is None:
                continue
            parent = tuple(keys)
            index = aot_counts.get(parent, 0)
            aot_counts[parent] = index + 1
            header = [*keys, index]
            full = header
        elif stripped.startswith("["):
            end = stripped.find("]")
            keys = _split_key(stripped[1:end]) if end > 0 else None
            if keys is None:
                continue
            header = list(keys)
            full = header
        else:
            eq = _find_equals(stripped)
            if eq is None:
                continue
            keys = _split_key(stripped[:eq])
            if keys is None:
                continue
            full = [*header, *keys]
            value = stripped[eq + 1 :]
            for quote in ('"""', "'''"):
                if value.count(quote) % 2 == 1:
                    in_multiline = quote
                    break
        n = len(full)
        if best_len <= n <= len(target) and tuple(full) == tuple(target[:n]) and n > 0:
            if n > best_len or best_line is None:
                best_line, best_len = lineno, n
    return best_line


def _find_equals(s: str) -> int | None:
    quote = None
    for i, ch in enumerate(s):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "=":
            return i
    return None


# --- the schema ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Preferences:
    """`[preferences]`, typed and defaulted: what the program uses. (`Settings.preferences` keeps
    the table as written, free-form keys included, for display and editing.)"""

    theme: str | None = None
    """The console's theme by name; None → the default theme."""
    mouse: bool = True
    """Whether the console captures the mouse (off suits SSH)."""
    arm_delay: float = 0.5
    """Seconds a new approval card ignores its keys, so a keystroke meant for something else never
    answers it."""
    idle_timeout: float | None = None
    """Seconds before an idle agent is stopped; 0 → never; None → the bridge's default."""
    max_agents: int | None = None
    """Agents kept running at once; 0 → no limit; None → the bridge's default."""
    replay: str | None = None
    """How a new session is given earlier turns (reserved; read by nothing yet)."""
    approval_timeout: float | None = None
    """Seconds an approval waits for a console before it is denied; 0 → for ever; None → the
    default (600 s for `serve`, for ever in the console)."""
    hook_no_console: str = "ask"
    """What a CLI's hook (`symposium-tui hook`) answers when the rules leave a call to a person and
    no console is running, or none answered in time: "ask" hands it to the CLI's own prompt,
    "deny" refuses it."""
    hook_wait: float | None = None
    """Seconds a CLI's hook waits for a console card before answering `hook_no_console`; None →
    until a little before the timeout `hook install` gave the CLI (docs/hooks.md)."""

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> Preferences:
        """From a `[preferences]` table already checked against PREFERENCE_TYPES."""
        return cls(
            theme=table.get("theme"),
            mouse=table.get("mouse", True),
            arm_delay=float(table.get("arm_delay", 0.5)),
            idle_timeout=table.get("idle_timeout"),
            max_agents=table.get("max_agents"),
            replay=table.get("replay"),
            approval_timeout=table.get("approval_timeout"),
            hook_no_console=table.get("hook_no_console", "ask"),
            hook_wait=table.get("hook_wait"),
        )

    def bridge_options(self) -> dict[str, Any]:
        """The `BridgeConfig(...)` fields these preferences set (0 → no limit)."""
        options: dict[str, Any] = {}
        if self.idle_timeout is not None:
            options["idle_timeout"] = self.idle_timeout or None
        if self.max_agents is not None:
            options["max_agents"] = self.max_agents or None
        return options


@dataclass
class AgentConfig:
    """One `[agents.<id>]` table. An entry without `command` only carries settings (its bypass)
    for an agent that someone else (the VS Code extension) names and runs."""

    id: str
    name: str = ""  # "" → the id
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict, repr=False)  # often API keys: not in logs
    description: str | None = None
    bypass: bool = False

    def __post_init__(self) -> None:
        if not self.name:
            self.name = self.id

    @property
    def runnable(self) -> bool:
        return bool(self.command)

    def spawn_spec(self) -> dict[str, Any]:
        """The agent as the core's `agent` value: the flat stdio McpServer object (`id`, `name`,
        `command`, `args`, `env` as name/value pairs) that `bridge.sessions` spawns. Only for a
        runnable agent."""
        if not self.command:
            raise ValueError(f"agent {self.id!r} has no command to run")
        return {
            "id": self.id,
            "name": self.name,
            "command": self.command,
            "args": list(self.args),
            "env": [{"name": k, "value": v} for k, v in self.env.items()],
        }

    def to_public_dict(self, *, redact_env: bool = True) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "command": self.command,
            "args": list(self.args),
            "env": {k: ("<set>" if redact_env else v) for k, v in self.env.items()},
            "description": self.description,
            "bypass": self.bypass,
        }


@dataclass(frozen=True)
class McpServerConfig:
    """One `[mcp_servers.<name>]` table: an MCP server the OpenAI front door gives its agents
    (stdio: `command`, `args`, `env`; or `url` with `type` = "http" (default) or "sse", `headers`),
    with `tags` to select its tools by. `enabled = false` leaves it out."""

    name: str
    type: str  # stdio | http | sse
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    tags: tuple[str, ...] = ()
    description: str | None = None

    def acp(self) -> dict[str, Any]:
        """The ACP `McpServer` object the agent is given at `session/new`."""
        if self.type == "stdio":
            return {
                "name": self.name,
                "command": self.command,
                "args": list(self.args),
                "env": [{"name": k, "value": v} for k, v in self.env],
            }
        return {
            "type": self.type,
            "name": self.name,
            "url": self.url,
            "headers": [{"name": k, "value": v} for k, v in self.headers],
        }


def _expect_str(value: Any, path: KeyPath, what: str = "a string") -> str:
    if not isinstance(value, str):
        raise _SchemaError(path, f"expected {what}, not {_describe(value)}")
    return value


def _agent_from(agent_id: str, entry: Any, warnings: list[str]) -> AgentConfig:
    base: KeyPath = ("agents", agent_id)
    try:
        fields = check_agent(agent_id, entry)
    except AgentTableError as exc:
        raise _SchemaError((*base, *exc.key), exc.reason) from None
    for key in fields.pop("unknown"):
        hint = (
            " (did you mean bypass?)" if key in ("bypassPermissions", "bypass_permissions") else ""
        )
        warnings.append(f"{format_key((*base, key))}: unknown key, ignored{hint}")
    return AgentConfig(id=agent_id, **fields)


def _rule_from(index: int, entry: Any) -> Rule:
    # The rules module (and the shell parser it uses) loads with the first rule read: a console
    # with no rules draws its first frame without it.
    from bridge.rules import Rule, RuleError

    base: KeyPath = ("rules", index)
    if not isinstance(entry, dict):
        raise _SchemaError(base, f"expected a table (a [[rules]] entry), not {_describe(entry)}")
    try:
        rule = Rule.from_dict(dict(entry))
    except RuleError as exc:
        raise _SchemaError((*base, exc.field) if exc.field else base, exc.reason) from None
    problems = rule.check_examples()
    if problems:
        # The rule's own tests fail: the file is not applied (the last good rules stay in force).
        raise _SchemaError(base, "; ".join(problems))
    return rule


def _str_pairs(value: Any, where: str, problems: list[str]) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        problems.append(f"{where}: expected a table of strings; ignored")
        return ()
    return tuple((str(k), v) for k, v in value.items())


def _mcp_servers_from(raw: Any, problems: list[str]) -> list[McpServerConfig]:
    """The `[mcp_servers.*]` tables. A broken entry is skipped and reported (a warning), never
    fatal: one bad server must not take the agents and rules down with it."""
    if raw is None:
        return []
    if not isinstance(raw, dict):
        problems.append("mcp_servers: expected tables [mcp_servers.<name>]; ignored")
        return []
    out = []
    for name, entry in raw.items():
        where = f"mcp_servers.{name}"
        if not isinstance(entry, dict):
            problems.append(f"{where}: expected a table; ignored")
            continue
        if entry.get("enabled", True) is False:
            continue
        command, url = entry.get("command"), entry.get("url")
        kind = entry.get("type") or ("stdio" if command else "http")
        if kind not in ("stdio", "http", "sse"):
            problems.append(f"{where}.type: expected stdio, http or sse; ignored")
            continue
        if kind == "stdio" and not (isinstance(command, str) and command):
            problems.append(f"{where}: a stdio server needs a command; ignored")
            continue
        if kind != "stdio" and not (isinstance(url, str) and url):
            problems.append(f"{where}: an {kind} server needs a url; ignored")
            continue
        args = entry.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            problems.append(f"{where}.args: expected a list of strings; ignored")
            continue
        tags = entry.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            problems.append(f"{where}.tags: expected a list of strings; tags ignored")
            tags = []
        description = entry.get("description")
        out.append(
            McpServerConfig(
                name=name,
                type=kind,
                command=command if kind == "stdio" else None,
                args=tuple(args),
                env=_str_pairs(entry.get("env"), f"{where}.env", problems),
                url=url if kind != "stdio" else None,
                headers=_str_pairs(entry.get("headers"), f"{where}.headers", problems),
                tags=tuple(tags),
                description=description if isinstance(description, str) else None,
            )
        )
    return out


def _settings_from(data: dict[str, Any], path: Path | None, text: str | None = None) -> Settings:
    warnings: list[str] = []
    for key in data:
        if key not in TOP_KEYS:
            warnings.append(f"{format_key((key,))}: unknown setting, ignored")
    prefs = data.get("preferences", {})
    if not isinstance(prefs, dict):
        raise _SchemaError(("preferences",), f"expected a table, not {_describe(prefs)}")
    for key, (what, ok) in PREFERENCE_TYPES.items():
        if key in prefs and not ok(prefs[key]):
            raise _SchemaError(
                ("preferences", key), f"expected {what}, not {_describe(prefs[key])}"
            )
    agents_raw = data.get("agents", {})
    if not isinstance(agents_raw, dict):
        raise _SchemaError(
            ("agents",), f"expected a table of agents ([agents.<id>]), not {_describe(agents_raw)}"
        )
    agents = {
        agent_id: _agent_from(agent_id, entry, warnings) for agent_id, entry in agents_raw.items()
    }
    from bridge.agent_names import is_interpreter

    for agent_id, agent in agents.items():
        if agent.bypass and is_interpreter(agent_id):
            warnings.append(
                f"{format_key(('agents', agent_id, 'bypass'))}: {agent_id!r} names an "
                "interpreter, not an agent; its bypass would cover every agent it runs and is "
                "not applied (agents are now known by their own name)"
            )
    rules_raw = data.get("rules", [])
    if not isinstance(rules_raw, list):
        raise _SchemaError(
            ("rules",), f"expected a list of rules ([[rules]] entries), not {_describe(rules_raw)}"
        )
    rules = [_rule_from(i, entry) for i, entry in enumerate(rules_raw)]
    if text is not None:
        for i, rule in enumerate(rules):
            rule.line = _locate(text, ("rules", i))
    mcp_servers = _mcp_servers_from(data.get("mcp_servers"), warnings)
    return Settings(
        agents=agents,
        rules=rules,
        preferences=dict(prefs),
        mcp_servers=mcp_servers,
        path=path,
        warnings=warnings,
        notify=_notify_from(data.get("notify"), warnings),
    )


def _notify_from(entry: Any, warnings: list[str]) -> NotifyConfig | None:
    if entry is None:
        return None
    if not isinstance(entry, dict):
        raise _SchemaError(("notify",), f"expected a table, not {_describe(entry)}")
    for key in entry:
        if key not in NOTIFY_KEYS:
            warnings.append(f"{format_key(('notify', key))}: unknown key, ignored")
    command = entry.get("command")
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(c, str) and c for c in command)
    ):
        raise _SchemaError(
            ("notify", "command"),
            "expected a non-empty list of strings (the program and its first arguments; "
            "it is run without a shell)",
        )
    numbers: dict[str, Any] = {}
    for key, what, ok in (
        ("interval", "a number of seconds, 0 or more", lambda v: _is_number(v) and v >= 0),
        ("timeout", "a number of seconds, more than 0", lambda v: _is_number(v) and v > 0),
        (
            "burst",
            "a whole number, 1 or more",
            lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        ),
    ):
        if key in entry:
            if not ok(entry[key]):
                raise _SchemaError(("notify", key), f"expected {what}, not {_describe(entry[key])}")
            numbers[key] = entry[key]
    return NotifyConfig(command=tuple(command), **numbers)


@dataclass
class Settings:
    """The settings file, validated: the one model every reader uses."""

    agents: dict[str, AgentConfig] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)  # in order, their examples checked
    preferences: dict[str, Any] = field(default_factory=dict)  # [preferences] as written
    mcp_servers: list[McpServerConfig] = field(default_factory=list)  # enabled, well-formed ones
    path: Path | None = None  # where they were read from
    exists: bool = False  # whether that file existed
    warnings: list[str] = field(default_factory=list)  # unknown keys and skipped entries
    notify: NotifyConfig | None = None  # [notify]: a command per new pending approval

    @cached_property
    def prefs(self) -> Preferences:
        """The preferences, typed and defaulted."""
        return Preferences.from_table(self.preferences)

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> Settings:
        """The settings in `path` (default: `bridge.paths.settings_path()`); empty when the file does
        not exist. Raises SettingsError when it cannot be read or is broken."""
        p = Path(path) if path is not None else settings_path()
        try:
            raw = p.read_bytes()
        except FileNotFoundError:
            return cls(path=p)
        except OSError as exc:
            raise SettingsError(p, f"cannot read: {exc.strerror or exc}") from None
        return cls.parse(raw, p)

    @classmethod
    def load_quietly(cls, path: str | os.PathLike[str] | None = None) -> Settings:
        """`load`, but empty settings when the file cannot be used: for readers that run where a
        broken file is reported by someone else (the `registry` commands, the console's first
        frame). The OpenAI catalog logs the error instead (`Catalog.settings`)."""
        try:
            return cls.load(path)
        except SettingsError:
            return cls(path=Path(path) if path is not None else settings_path())

    @classmethod
    def parse(cls, text: str | bytes, path: str | os.PathLike[str] | None = None) -> Settings:
        """Validate settings text; raises SettingsError naming the line (and the key)."""
        p = Path(path) if path is not None else None
        text = _decode(text, p) if isinstance(text, bytes) else text.removeprefix("\ufeff")
        data = _parse_toml(text, p)
        try:
            settings = _settings_from(data, p, text)
        except _SchemaError as exc:
            raise SettingsError(
                p, exc.reason, line=_locate(text, exc.path), key=format_key(exc.path)
            ) from None
        settings.exists = True
        return settings

    def policy(self) -> Policy:
        """The persisted part of the approval policy: the agents with bypass, and the rules."""
        from bridge.approvals import Policy

        return Policy(bypass_agents=self.bypass_agents(), rules=list(self.rules))

    def bypass_agents(self) -> set[str]:
        """The agents whose asks are all allowed. A bypass keyed by an interpreter's name (`node`,
        `npx`, `uv`…) is never one: it would cover every agent started through it (reported
        at load)."""
        from bridge.agent_names import is_interpreter

        return {
            agent_id
            for agent_id, agent in self.agents.items()
            if agent.bypass and not is_interpreter(agent_id)
        }

    def runnable_agents(self) -> dict[str, AgentConfig]:
        return {agent_id: agent for agent_id, agent in self.agents.items() if agent.runnable}

    def agent_name(self, agent_id: str) -> str:
        """What a person reads for an agent id (`agent_display_name`)."""
        return agent_display_name(agent_id, self)

    def to_public_dict(self, *, redact_env: bool = True) -> dict[str, Any]:
        """For display (`symposium-tui config --json`): env values are hidden unless asked for."""
        return {
            "path": str(self.path) if self.path is not None else None,
            "exists": self.exists,
            "agents": {
                agent_id: agent.to_public_dict(redact_env=redact_env)
                for agent_id, agent in self.agents.items()
            },
            "bypass_agents": sorted(self.bypass_agents()),
            "rules": [rule.to_dict() for rule in self.rules],
            "preferences": dict(self.preferences),
            "mcp_servers": [server.name for server in self.mcp_servers],
            "notify": (
                {
                    "command": list(self.notify.command),
                    "interval": self.notify.interval,
                    "burst": self.notify.burst,
                    "timeout": self.notify.timeout,
                }
                if self.notify is not None
                else None
            ),
            "warnings": list(self.warnings),
        }


BUILTIN_AGENT_IDS = ("eliza", "elizacp")  # the chat's and the extension's id for the built-in agent


def agent_display_name(agent_id: str, settings: Settings | None = None) -> str:
    """An agent's name for a person (the id stays the key: rules, bypass, the settings file):
    the settings' name for it, "Eliza (built in)" for the built-in agent, else the id."""
    if settings is not None:
        config = settings.agents.get(agent_id)
        if config is not None and config.name and config.name != agent_id:
            return config.name
    if agent_id in BUILTIN_AGENT_IDS:
        from bridge.registry import BUILTIN_NAME

        return BUILTIN_NAME
    return agent_id


def rule_problems(
    path: str | os.PathLike[str] | None = None,
) -> tuple[list[SettingsError], Settings]:
    """Every rule that cannot be used or whose examples fail (not just the first), each with its
    line; and the settings without those rules. Raises SettingsError when the file itself is
    broken elsewhere (not TOML, a bad agent, …)."""
    p = Path(path) if path is not None else settings_path()
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        return [], Settings(path=p)
    except OSError as exc:
        raise SettingsError(p, f"cannot read: {exc.strerror or exc}") from None
    text = _decode(raw, p)
    data = _parse_toml(text, p)
    rules_raw = data.get("rules", [])
    problems: list[SettingsError] = []
    if isinstance(rules_raw, list):
        good = []
        for i, entry in enumerate(rules_raw):
            try:
                _rule_from(i, entry)
                good.append(entry)
            except _SchemaError as exc:
                problems.append(
                    SettingsError(
                        p, exc.reason, line=_locate(text, exc.path), key=format_key(exc.path)
                    )
                )
        data = {**data, "rules": good}
    try:
        settings = _settings_from(data, p)
    except _SchemaError as exc:
        raise SettingsError(
            p, exc.reason, line=_locate(text, exc.path), key=format_key(exc.path)
        ) from None
    settings.exists = True
    return problems, settings


# --- the store -------------------------------------------------------------------------------------


def _ensure_dir(directory: Path) -> None:
    from bridge.paths import make_private_dir

    make_private_dir(directory)  # 0700, parents too, whatever the umask


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _table_of(items: dict[str, Any]) -> tomlkit.items.Table:
    import tomlkit

    table = tomlkit.table()
    for key, value in items.items():
        table[key] = value
    return table


def _agents_container(doc: tomlkit.TOMLDocument, *, create: bool) -> Any:
    import tomlkit

    if "agents" not in doc:
        if not create:
            return None
        doc["agents"] = tomlkit.table(is_super_table=True)
    return doc["agents"]


def _new_agent_table(values: dict[str, Any]) -> tomlkit.items.Table:
    import tomlkit

    table = _table_of(values)
    table.add(tomlkit.nl())
    return table


class SettingsStore:
    """Reads and edits one settings file; safe across threads and processes."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else settings_path()

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    def load(self) -> Settings:
        return Settings.load(self.path)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        _ensure_dir(self.path.parent)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def update(self, mutate: Callable[[tomlkit.TOMLDocument], None]) -> Settings:
        """Apply `mutate` to the file under an exclusive lock and return the new settings.

        A file that is broken now raises SettingsError and is not touched; so is a change that
        would break it. Exceptions from `mutate` propagate and nothing is written. Blocks while
        another process holds the lock (updates take milliseconds); from async code, consider
        `asyncio.to_thread`."""
        import tomlkit

        with self._locked():
            target = Path(os.path.realpath(self.path))  # write through a symlinked settings file
            try:
                raw: bytes | None = target.read_bytes()
            except FileNotFoundError:
                raw = None
            except OSError as exc:
                raise SettingsError(self.path, f"cannot read: {exc.strerror or exc}") from None
            if raw is None:
                old_text = None
                doc = tomlkit.parse(NEW_FILE_HEADER)
            else:
                old_text = _decode(raw, self.path)
                Settings.parse(
                    old_text, self.path
                )  # broken → SettingsError; the file stays as it is
                try:
                    doc = tomlkit.parse(old_text)
                except tomlkit.exceptions.ParseError as exc:
                    raise SettingsError(
                        self.path, f"cannot edit this file: {exc}", line=exc.line, column=exc.col
                    ) from None
            mutate(doc)
            new_text = doc.as_string()
            try:
                settings = Settings.parse(new_text, self.path)
            except SettingsError as exc:
                raise SettingsError(
                    self.path,
                    f"the change was not written, it would break the file: {exc.reason}",
                    key=exc.key,
                ) from None
            if new_text == (old_text if old_text is not None else NEW_FILE_HEADER):
                settings.exists = old_text is not None
                return settings  # nothing changed: no write
            self._write(target, new_text.encode("utf-8"))
            return settings

    @staticmethod
    def _write(target: Path, data: bytes) -> None:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                os.fchmod(f.fileno(), 0o600)
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _fsync_dir(target.parent)

    # conveniences ------------------------------------------------------------------------------------

    def set_agent_bypass(self, agent_id: str, value: bool) -> Settings:
        """Persist (or clear) an agent's bypass; creates a bypass-only `[agents.<id>]` entry for an
        agent the settings do not configure."""

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            agents = _agents_container(doc, create=False)
            if agents is not None and agent_id in agents:
                entry = agents[agent_id]
                if entry.get("bypass") != value or "bypass" not in entry:
                    entry["bypass"] = value
            elif value:
                agents = _agents_container(doc, create=True)
                agents[agent_id] = _new_agent_table({"bypass": True})

        return self.update(mutate)

    def add_rule(self, rule: Rule, index: int | None = None) -> Settings:
        """Append a rule (or insert it at 0-based `index`; rules are tried in order)."""
        import tomlkit

        if rule.action not in ("allow", "ask", "deny"):
            raise ValueError(f"rule action must be allow, ask or deny, not {rule.action!r}")
        values = _rule_values(rule)

        def mutate(doc: tomlkit.TOMLDocument) -> None:

            if "rules" not in doc:
                aot = tomlkit.aot()
                aot.append(_table_of(values))
                doc["rules"] = aot
                return
            rules = doc["rules"]
            if isinstance(rules, tomlkit.items.AoT):
                new: Any = _table_of(values)
                if len(rules) and (index is None or index >= len(rules)):
                    last = rules[len(rules) - 1]
                    if not last.as_string().endswith("\n\n"):
                        last.add(tomlkit.nl())  # a blank line between [[rules]] entries
                    if list(doc)[-1] != "rules":
                        new.add(tomlkit.nl())  # and before the table that follows them
            else:  # rules = [{…}, …]
                new = tomlkit.inline_table()
                new.update(values)
            if index is None or index >= len(rules):
                rules.append(new)
            else:
                rules.insert(index, new)

        return self.update(mutate)

    def remove_rule(self, index: int, *, expect: Rule | None = None) -> Settings:
        """Remove the rule at 0-based `index` (as in `Settings.rules`). With `expect`, refuse (ValueError)
        when the rule there is not that one any more (someone edited the file meanwhile)."""

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            rules = _rules_at(doc, index, expect)
            del rules[index]
            if len(rules) == 0:
                del doc["rules"]

        return self.update(mutate)

    def replace_rule(self, index: int, rule: Rule, *, expect: Rule | None = None) -> Settings:
        """Put `rule` in place of the rule at 0-based `index`, editing its entry in place (its
        comments and its place in the order stay). `expect` as for `remove_rule`."""
        if rule.action not in ("allow", "ask", "deny"):
            raise ValueError(f"rule action must be allow, ask or deny, not {rule.action!r}")
        values = _rule_values(rule)

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            rules = _rules_at(doc, index, expect)
            entry = rules[index]
            for key in [k for k in entry if k not in values]:
                del entry[key]
            for key, value in values.items():
                if key not in entry or _plain(entry[key]) != _plain(value):
                    entry[key] = value

        return self.update(mutate)

    def move_rule(self, index: int, to: int, *, expect: Rule | None = None) -> Settings:
        """Move the rule at 0-based `index` to position `to` (rules are tried in order: within one
        action the first that matches decides, and its reason is the one given). Its entry moves
        whole, with the comments inside it. `expect` as for `remove_rule`."""
        import tomlkit

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            rules = _rules_at(doc, index, expect)
            if not 0 <= to < len(rules):
                raise IndexError(f"there is no place {to + 1} (the file has {len(rules)} rules)")
            if to == index:
                return
            entry = rules[index]
            del rules[index]
            rules.insert(to, entry)
            if isinstance(rules, tomlkit.items.AoT):
                # A blank line between [[rules]] entries, wherever the moved one came from.
                for n in range(len(rules) - 1):
                    if not rules[n].as_string().endswith("\n\n"):
                        rules[n].add(tomlkit.nl())

        return self.update(mutate)

    def set_preference(self, key: str, value: Any) -> Settings:
        """Set `[preferences] key = value`; None removes it."""

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            import tomlkit

            if "preferences" not in doc:
                if value is None:
                    return
                doc["preferences"] = tomlkit.table()
            prefs = doc["preferences"]
            if value is None:
                if key in prefs:
                    del prefs[key]
            elif (
                key not in prefs
                or _plain(prefs[key]) != value
                or type(_plain(prefs[key])) is not type(value)
            ):
                prefs[key] = value

        return self.update(mutate)

    def upsert_agent(self, agent: AgentConfig) -> Settings:
        """Create or replace `[agents.<agent.id>]` with these values, editing an existing entry in
        place (its comments stay). Defaults (no command, no args, …) are left out of a new entry."""
        if not agent.id.strip():
            raise ValueError("an agent id must not be empty")
        values: dict[str, Any] = {
            "name": agent.name if agent.name and agent.name != agent.id else None,
            "command": agent.command,
            "args": list(agent.args) if agent.args else None,
            "env": dict(agent.env) if agent.env else None,
            "description": agent.description,
            "bypass": agent.bypass,
        }

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            agents = _agents_container(doc, create=True)
            if agent.id in agents:
                entry = agents[agent.id]
                for key, value in values.items():
                    present = key in entry
                    if key == "bypass":
                        if present or value:
                            if not present or entry[key] != value:
                                entry[key] = value
                    elif value is None:
                        if present:
                            del entry[key]
                    elif not present or _plain(entry[key]) != value:
                        entry[key] = _env_item(value) if key == "env" else value
            else:
                new = {
                    k: (_env_item(v) if k == "env" else v)
                    for k, v in values.items()
                    if v is not None and v is not False
                }
                agents[agent.id] = _new_agent_table(new)

        return self.update(mutate)

    def remove_agent(self, agent_id: str) -> Settings:
        """Remove `[agents.<agent_id>]`; nothing happens when there is none."""

        def mutate(doc: tomlkit.TOMLDocument) -> None:
            agents = _agents_container(doc, create=False)
            if agents is not None and agent_id in agents:
                del agents[agent_id]

        return self.update(mutate)


def _rules_at(doc: tomlkit.TOMLDocument, index: int, expect: Rule | None) -> Any:
    """The document's rules, after checking there is a rule at `index` (and that it is still
    `expect`, when given: someone may have edited the file since it was shown)."""
    rules = doc.get("rules")
    if rules is None or not 0 <= index < len(rules):
        raise IndexError(
            f"there is no rule {index + 1} (the file has {0 if rules is None else len(rules)})"
        )
    from bridge.rules import Rule

    if expect is not None and Rule.from_dict(dict(rules[index])).to_dict() != expect.to_dict():
        raise ValueError(f"rule {index + 1} is no longer {expect.describe()!r}; the file changed")
    return rules


def _rule_values(rule: Rule) -> dict[str, Any]:
    """A rule's settings values, its examples as inline tables one per line."""
    import tomlkit

    values = rule.to_dict()
    for key in ("match", "not_match"):
        if key in values:
            examples = tomlkit.array()
            for example in values[key]:
                if isinstance(example, dict):
                    item = tomlkit.inline_table()
                    item.update(example)
                    examples.add_line(item)
                else:
                    examples.add_line(example)
            examples.add_line(indent="")
            values[key] = examples
    return values


def rule_toml(rule: Rule) -> str:
    """One rule as the `[[rules]]` entry it would be in the settings file (for editing)."""
    import tomlkit

    doc = tomlkit.document()
    aot = tomlkit.aot()
    aot.append(_table_of(_rule_values(rule)))
    doc["rules"] = aot
    return doc.as_string()


def rule_from_toml(text: str) -> Rule:
    """The one `[[rules]]` entry in `text`, validated, its examples run; SettingsError if not."""
    data = _parse_toml(text, None)
    rules = data.get("rules")
    if set(data) - {"rules"} or not isinstance(rules, list) or len(rules) != 1:
        raise SettingsError(None, "expected exactly one [[rules]] entry")
    try:
        return _rule_from(0, rules[0])
    except _SchemaError as exc:
        raise SettingsError(
            None, exc.reason, line=_locate(text, exc.path), key=format_key(exc.path)
        ) from None


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def _env_item(env: dict[str, str]) -> Any:
    import tomlkit

    table = tomlkit.inline_table()
    table.update(env)
    return table
