"""A rule's settings table: the fields it may have, each checked. A field that cannot be used is an
error naming it (`RuleError`), never ignored: an unknown or misspelt field would silently widen the
rule."""

from __future__ import annotations

from bridge.rules.verdicts import ACTIONS

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from typing import Any

    from bridge.rules.rule import Rule


class RuleError(ValueError):
    """A rule that cannot be used. `field` names the offending key when there is one."""

    def __init__(self, reason: str, field: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field = field


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _show(example: Any) -> str:
    if isinstance(example, str):
        return repr(example)
    return "{" + ", ".join(f"{k} = {v!r}" for k, v in example.items()) + "}"


# --- deciding -------------------------------------------------------------------------------------


RULE_KEYS = (
    "action",
    "agent",
    "kind",
    "title",
    "title_regex",
    "command",
    "path",
    "url",
    "reason",
    "match",
    "not_match",
)
EXAMPLE_KEYS = ("agent", "kind", "title", "command", "path", "url")
STRING_KEYS = ("kind", "title", "title_regex", "agent", "path", "url", "reason")


def rule_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The fields of the rule a settings table describes; RuleError (naming the field) when it is
    not usable. Refused: an unknown field, no action or another action than allow/ask/deny, a
    field that is not a string or is empty, a command that is not a prefix or a list of them,
    examples that are not a list of strings and tables of known string fields."""
    for key in data:
        # An unknown key would silently widen the rule (a misspelt `title` makes an allow rule
        # match everything), so it is an error, not a warning.
        if key not in RULE_KEYS:
            raise RuleError(f"unknown rule field (a rule has {', '.join(RULE_KEYS)})", key)
    if "action" not in data:
        raise RuleError('a rule needs an action: "allow", "ask" or "deny"')
    action = data["action"]
    if action not in ACTIONS:
        raise RuleError(f'expected "allow", "ask" or "deny", not {action!r}', "action")
    for key in STRING_KEYS:
        if key in data:
            if not isinstance(data[key], str):
                raise RuleError(f"expected a string, not {_describe(data[key])}", key)
            if not data[key]:
                raise RuleError("must not be empty (leave the field out to match anything)", key)
    command = _command(data.get("command"))
    return {
        "action": action,
        **{key: data.get(key) for key in STRING_KEYS},
        "command": tuple(command) if command else None,
        "match": _examples(data, "match"),
        "not_match": _examples(data, "not_match"),
    }


def _command(command: Any) -> list[str] | None:
    """A rule's command prefixes: one string or a non-empty list of non-blank strings."""
    if command is None:
        return None
    if isinstance(command, str):
        command = [command]
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(c, str) and c.strip() for c in command)
    ):
        raise RuleError("expected a command prefix or a list of them", "command")
    return command


def _examples(data: dict[str, Any], key: str) -> list[Any]:
    """A rule's `match` or `not_match`: a list of strings and tables of example fields."""
    value = data.get(key, [])
    if not isinstance(value, list):
        raise RuleError("expected a list of example requests", key)
    for example in value:
        if isinstance(example, dict):
            for k, v in example.items():
                if k not in EXAMPLE_KEYS:
                    raise RuleError(
                        f"unknown example field {k!r} (an example has {', '.join(EXAMPLE_KEYS)})",
                        key,
                    )
                if not isinstance(v, str):
                    raise RuleError(f"example field {k!r} must be a string", key)
        elif not isinstance(example, str):
            raise RuleError("an example is a string or a table", key)
    return [dict(e) if isinstance(e, dict) else e for e in value]


def rule_table(rule: Rule) -> dict[str, Any]:
    """A rule as its settings table (only the fields it gives)."""
    out: dict[str, Any] = {"action": rule.action}
    for key in ("agent", "kind", "title", "title_regex"):
        if getattr(rule, key):
            out[key] = getattr(rule, key)
    if rule.command:
        out["command"] = rule.command[0] if len(rule.command) == 1 else list(rule.command)
    for key in ("path", "url", "reason"):
        if getattr(rule, key):
            out[key] = getattr(rule, key)
    if rule.match:
        out["match"] = list(rule.match)
    if rule.not_match:
        out["not_match"] = list(rule.not_match)
    return out
