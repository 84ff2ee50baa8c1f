"""Reading settings text: decoding, TOML, and the checks of each table (`bridge.settings.file`
puts them together into `Settings`).

A broken file is reported, never fixed: text that is not UTF-8 or not TOML, a preference of the
wrong type, a rule that cannot be used or whose examples fail, and a broken `[notify]` raise (a
SettingsError with the line, or a SchemaError with the key path); a broken `[mcp_servers]` entry
is skipped with a warning, so one bad server does not take the agents and rules down with it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge.agent_table import describe
from bridge.settings.errors import SchemaError, SettingsError
from bridge.settings.model import McpServerConfig, NotifyConfig
from bridge.settings.toml_lines import KeyPath, format_key, locate

if TYPE_CHECKING:
    from bridge.rules import Rule

TOP_KEYS = ("preferences", "agents", "rules", "mcp_servers", "notify")


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# Known preferences and what they must be (`Preferences` documents each); any other key is
# free-form and kept as written.
PREFERENCE_TYPES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "theme": ("a string", lambda v: isinstance(v, str)),
    "replay": ("a string", lambda v: isinstance(v, str)),
    "mouse": ("true or false", lambda v: isinstance(v, bool)),
    "idle_timeout": ("a number of seconds, 0 or more", lambda v: is_number(v) and v >= 0),
    "max_agents": (
        "a whole number, 0 or more",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    ),
    "arm_delay": ("a number of seconds from 0 to 5", lambda v: is_number(v) and 0 <= v <= 5),
    "approval_timeout": (
        "a number of seconds, 0 or more (0: wait for ever)",
        lambda v: is_number(v) and v >= 0,
    ),
    "hook_no_console": ('"ask" or "deny"', lambda v: v in ("ask", "deny")),
    "hook_wait": ("a number of seconds, more than 0", lambda v: is_number(v) and v > 0),
}
NOTIFY_KEYS = ("command", "interval", "burst", "timeout")


_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


def decode_text(raw: bytes, path: Path | None) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SettingsError(path, "not valid UTF-8 text", line=line, column=column) from None


def parse_toml(text: str, path: Path | None) -> dict[str, Any]:
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


def preferences_from(data: dict[str, Any]) -> dict[str, Any]:
    """`[preferences]` as written, its known keys checked against PREFERENCE_TYPES."""
    prefs = data.get("preferences", {})
    if not isinstance(prefs, dict):
        raise SchemaError(("preferences",), f"expected a table, not {describe(prefs)}")
    for key, (what, ok) in PREFERENCE_TYPES.items():
        if key in prefs and not ok(prefs[key]):
            raise SchemaError(("preferences", key), f"expected {what}, not {describe(prefs[key])}")
    return dict(prefs)


def rule_from(index: int, entry: Any) -> Rule:
    # The rules module (and the shell parser it uses) loads with the first rule read: a console
    # with no rules draws its first frame without it.
    from bridge.rules import Rule, RuleError

    base: KeyPath = ("rules", index)
    if not isinstance(entry, dict):
        raise SchemaError(base, f"expected a table (a [[rules]] entry), not {describe(entry)}")
    try:
        rule = Rule.from_dict(dict(entry))
    except RuleError as exc:
        raise SchemaError((*base, exc.field) if exc.field else base, exc.reason) from None
    problems = rule.check_examples()
    if problems:
        # The rule's own tests fail: the file is not applied (the last good rules stay in force).
        raise SchemaError(base, "; ".join(problems))
    return rule


def rules_from(data: dict[str, Any], text: str | None) -> list[Rule]:
    """The `[[rules]]` entries in order, each checked and its examples run; each knows its line
    when the `text` is given."""
    rules_raw = data.get("rules", [])
    if not isinstance(rules_raw, list):
        raise SchemaError(
            ("rules",), f"expected a list of rules ([[rules]] entries), not {describe(rules_raw)}"
        )
    rules = [rule_from(i, entry) for i, entry in enumerate(rules_raw)]
    if text is not None:
        for i, rule in enumerate(rules):
            rule.line = locate(text, ("rules", i))
    return rules


def _str_pairs(value: Any, where: str, problems: list[str]) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        problems.append(f"{where}: expected a table of strings; ignored")
        return ()
    return tuple((str(k), v) for k, v in value.items())


def mcp_servers_from(raw: Any, problems: list[str]) -> list[McpServerConfig]:
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


def notify_from(entry: Any, warnings: list[str]) -> NotifyConfig | None:
    if entry is None:
        return None
    if not isinstance(entry, dict):
        raise SchemaError(("notify",), f"expected a table, not {describe(entry)}")
    for key in entry:
        if key not in NOTIFY_KEYS:
            warnings.append(f"{format_key(('notify', key))}: unknown key, ignored")
    command = entry.get("command")
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(c, str) and c for c in command)
    ):
        raise SchemaError(
            ("notify", "command"),
            "expected a non-empty list of strings (the program and its first arguments; "
            "it is run without a shell)",
        )
    numbers: dict[str, Any] = {}
    for key, what, ok in (
        ("interval", "a number of seconds, 0 or more", lambda v: is_number(v) and v >= 0),
        ("timeout", "a number of seconds, more than 0", lambda v: is_number(v) and v > 0),
        (
            "burst",
            "a whole number, 1 or more",
            lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        ),
    ):
        if key in entry:
            if not ok(entry[key]):
                raise SchemaError(("notify", key), f"expected {what}, not {describe(entry[key])}")
            numbers[key] = entry[key]
    return NotifyConfig(command=tuple(command), **numbers)


def rule_from_toml(text: str) -> Rule:
    """The one `[[rules]]` entry in `text`, validated, its examples run; SettingsError if not."""
    data = parse_toml(text, None)
    rules = data.get("rules")
    if set(data) - {"rules"} or not isinstance(rules, list) or len(rules) != 1:
        raise SettingsError(None, "expected exactly one [[rules]] entry")
    try:
        return rule_from(0, rules[0])
    except SchemaError as exc:
        raise SettingsError(
            None, exc.reason, line=locate(text, exc.path), key=format_key(exc.path)
        ) from None
