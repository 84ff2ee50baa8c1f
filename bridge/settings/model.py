"""The typed tables of the settings file: `[preferences]`, `[notify]`, `[mcp_servers.<name>]`.

(`[agents.<id>]` is `bridge.settings.agents.AgentConfig`; `[[rules]]` is `bridge.rules.Rule`; the
whole file is `bridge.settings.file.Settings`.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class NotifyConfig:
    """`[notify]`: a command run (never through a shell) for each new pending approval, with the
    agent, the host and the title appended as arguments; rate-limited (`burst` runs back to back,
    then one per `interval` seconds), each run killed after `timeout` seconds."""

    command: tuple[str, ...]
    interval: float = 2.0
    burst: int = 5
    timeout: float = 10.0


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
