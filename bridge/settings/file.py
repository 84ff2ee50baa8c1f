"""The settings file, validated: `Settings`, the one model every reader uses, and how it is
read (`Settings.load`, `Settings.parse`, `rule_problems`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge.paths import settings_path
from bridge.settings.agents import AgentConfig, agent_display_name, agents_from
from bridge.settings.errors import SchemaError, SettingsError
from bridge.settings.model import McpServerConfig, NotifyConfig, Preferences
from bridge.settings.parse import (
    TOP_KEYS,
    decode_text,
    mcp_servers_from,
    notify_from,
    parse_toml,
    preferences_from,
    rule_from,
    rules_from,
)
from bridge.settings.toml_lines import format_key, locate

if TYPE_CHECKING:
    from bridge.approvals import Policy
    from bridge.rules import Rule


def settings_from(data: dict[str, Any], path: Path | None, text: str | None = None) -> Settings:
    """The settings in parsed TOML `data`; SchemaError names the key of the first problem (the
    line is found from the `text`). Unknown keys and broken `[mcp_servers]` entries are
    warnings."""
    warnings = [
        f"{format_key((key,))}: unknown setting, ignored" for key in data if key not in TOP_KEYS
    ]
    preferences = preferences_from(data)
    agents = agents_from(data, warnings)
    rules = rules_from(data, text)
    mcp_servers = mcp_servers_from(data.get("mcp_servers"), warnings)
    return Settings(
        agents=agents,
        rules=rules,
        preferences=preferences,
        mcp_servers=mcp_servers,
        path=path,
        warnings=warnings,
        notify=notify_from(data.get("notify"), warnings),
    )


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
        text = decode_text(text, p) if isinstance(text, bytes) else text.removeprefix("\ufeff")
        data = parse_toml(text, p)
        try:
            settings = settings_from(data, p, text)
        except SchemaError as exc:
            raise SettingsError(
                p, exc.reason, line=locate(text, exc.path), key=format_key(exc.path)
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
    text = decode_text(raw, p)
    data = parse_toml(text, p)
    rules_raw = data.get("rules", [])
    problems: list[SettingsError] = []
    if isinstance(rules_raw, list):
        good = []
        for i, entry in enumerate(rules_raw):
            try:
                rule_from(i, entry)
                good.append(entry)
            except SchemaError as exc:
                problems.append(
                    SettingsError(
                        p, exc.reason, line=locate(text, exc.path), key=format_key(exc.path)
                    )
                )
        data = {**data, "rules": good}
    try:
        settings = settings_from(data, p)
    except SchemaError as exc:
        raise SettingsError(
            p, exc.reason, line=locate(text, exc.path), key=format_key(exc.path)
        ) from None
    settings.exists = True
    return problems, settings
