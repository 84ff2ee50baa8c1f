"""One `[agents.<id>]` table of the settings file, checked with the standard library alone.

`bridge.settings` builds its `AgentConfig`s from what `check_agent` returns, and the `registry`
commands (which the VS Code extension spawns before every chat) read the agents table with it
without importing the settings module, so both accept and refuse exactly the same tables.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (not `typing`'s: the `registry` commands do without importing typing)
if TYPE_CHECKING:
    from typing import Any

AGENT_KEYS = ("name", "command", "args", "env", "description", "bypass")


class AgentTableError(Exception):
    """A table that cannot be used: `key` is the path below the agent's table (`()` for the table
    itself), `reason` what is wrong with it."""

    def __init__(self, key: tuple[str, ...], reason: str) -> None:
        super().__init__(reason)
        self.key = key
        self.reason = reason


def describe(value: Any) -> str:
    """A TOML value as an error message names it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    return f"a {type(value).__name__}"


def _string(value: Any, key: tuple[str, ...]) -> str:
    if not isinstance(value, str):
        raise AgentTableError(key, f"expected a string, not {describe(value)}")
    return value


def check_agent(agent_id: str, entry: Any) -> dict[str, Any]:
    """The fields of a valid agent table (`name` defaulting to the id, `command` None when the
    entry only carries settings for an agent someone else runs), with `unknown`: the keys it does
    not know, which the settings report and everyone ignores. Raises AgentTableError."""
    if not agent_id.strip():
        raise AgentTableError((), "an agent id must not be empty")
    if not isinstance(entry, dict):
        raise AgentTableError((), f"expected a table of agent settings, not {describe(entry)}")
    name = entry.get("name")
    if name is not None:
        _string(name, ("name",))
    command = entry.get("command")
    if command is not None:
        _string(command, ("command",))
        if not command.strip():
            raise AgentTableError(("command",), "must not be empty")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise AgentTableError(("args",), "expected a list of strings")
    env = entry.get("env", {})
    if not isinstance(env, dict):
        raise AgentTableError(("env",), f"expected a table of strings, not {describe(env)}")
    for k, v in env.items():
        _string(v, ("env", k))
    description = entry.get("description")
    if description is not None:
        _string(description, ("description",))
    bypass = entry.get("bypass", False)
    if not isinstance(bypass, bool):
        raise AgentTableError(("bypass",), f"expected true or false, not {describe(bypass)}")
    return {
        "name": name or agent_id,
        "command": command,
        "args": list(args),
        "env": dict(env),
        "description": description,
        "bypass": bypass,
        "unknown": [key for key in entry if key not in AGENT_KEYS],
    }
