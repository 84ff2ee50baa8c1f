"""The agents of the settings file: `[agents.<id>]` entries and the name a person reads for one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bridge.agent_table import AgentTableError, check_agent, describe
from bridge.settings.errors import SchemaError
from bridge.settings.toml_lines import KeyPath, format_key

if TYPE_CHECKING:
    from bridge.settings.file import Settings


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


def agent_from(agent_id: str, entry: Any, warnings: list[str]) -> AgentConfig:
    """One `[agents.<id>]` entry, checked as the `registry` commands check it
    (`bridge.agent_table`); its unknown keys are warnings."""
    base: KeyPath = ("agents", agent_id)
    try:
        fields = check_agent(agent_id, entry)
    except AgentTableError as exc:
        raise SchemaError((*base, *exc.key), exc.reason) from None
    for key in fields.pop("unknown"):
        hint = (
            " (did you mean bypass?)" if key in ("bypassPermissions", "bypass_permissions") else ""
        )
        warnings.append(f"{format_key((*base, key))}: unknown key, ignored{hint}")
    return AgentConfig(id=agent_id, **fields)


def agents_from(data: dict[str, Any], warnings: list[str]) -> dict[str, AgentConfig]:
    """The `[agents.<id>]` entries. A bypass keyed by an interpreter's name is a warning (it is
    never applied: `Settings.bypass_agents`)."""
    agents_raw = data.get("agents", {})
    if not isinstance(agents_raw, dict):
        raise SchemaError(
            ("agents",), f"expected a table of agents ([agents.<id>]), not {describe(agents_raw)}"
        )
    agents = {
        agent_id: agent_from(agent_id, entry, warnings) for agent_id, entry in agents_raw.items()
    }
    from bridge.agent_names import is_interpreter

    for agent_id, agent in agents.items():
        if agent.bypass and is_interpreter(agent_id):
            warnings.append(
                f"{format_key(('agents', agent_id, 'bypass'))}: {agent_id!r} names an "
                "interpreter, not an agent; its bypass would cover every agent it runs and is "
                "not applied (agents are now known by their own name)"
            )
    return agents


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
