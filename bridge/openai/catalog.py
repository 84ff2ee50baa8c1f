"""What the OpenAI front door offers: models (agents) and the configured MCP servers' tools.

Both come from the settings file (`bridge.paths.settings_path()`), read by `bridge.settings` (the one
settings model) and re-read when its modification time changes, so a person's edit shows up without
a restart:

```toml
[agents.claude]                  # a model id (bridge.registry lists these)
command = "npx"
args = ["-y", "@zed-industries/claude-agent-acp"]

[mcp_servers.calc]               # auto-execute: given to the agent, which runs the tools itself
command = "python"               # stdio: command, args, env
args = ["calc_mcp_server.py"]
env = { CALC_LOG = "/tmp/calc.log" }
tags = ["math", "local"]

[mcp_servers.docs]               # or a URL: type = "http" (default) or "sse", headers
url = "http://127.0.0.1:9000/mcp"
headers = { Authorization = "Bearer …" }
tags = ["docs"]
```

Model ids: `eliza` (built in; `elizacp`, the registry's id, is an alias) and every configured
agent with a `command`.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bridge import mcp_client
from bridge.mcp_client import McpTarget
from bridge.paths import settings_path
from bridge.settings import McpServerConfig, Settings, SettingsError

__all__ = ["ELIZA_ALIASES", "ELIZA_MODEL", "Catalog", "McpServerConfig", "list_server_tools"]

log = logging.getLogger(__name__)

ELIZA_MODEL = "eliza"
ELIZA_ALIASES = ("eliza", "elizacp")
CREATED = 1_700_000_000  # a fixed `created` for the model list (agents have no release date)


@dataclass
class _Snapshot:
    key: Any = None
    settings: Settings = field(default_factory=Settings)
    error: str | None = None


class Catalog:
    """Models and MCP servers from the settings file (cached by its mtime), and the servers' tools."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        tool_ttl: float = 30.0,
        list_timeout: float = 20.0,
    ) -> None:
        self._path = Path(path) if path is not None else None
        self._snapshot = _Snapshot()
        self.tool_ttl = tool_ttl
        self.list_timeout = list_timeout
        self._tools: dict[McpServerConfig, tuple[float, list[dict[str, Any]]]] = {}
        self._tool_locks: dict[McpServerConfig, asyncio.Lock] = {}

    @property
    def path(self) -> Path:
        return self._path or settings_path()

    def settings(self) -> Settings:
        """The settings, re-read when the file changes; empty (the error logged) when it is broken."""
        path = self.path
        try:
            st = path.stat()
            key: tuple[str, int | None, int | None] = (str(path), st.st_mtime_ns, st.st_size)
        except OSError:
            key = (str(path), None, None)
        snap = self._snapshot
        if snap.key == key:
            return snap.settings
        settings = Settings(path=path)
        error = None
        if key[1] is not None:
            try:
                settings = Settings.load(path)
            except SettingsError as exc:
                error = str(exc)
                log.error("settings not read: %s", error)
            for warning in settings.warnings:
                log.warning("settings: %s", warning)
        self._snapshot = _Snapshot(key, settings, error)
        return settings

    # --- models ---------------------------------------------------------------------------------

    def agents(self) -> dict[str, dict[str, Any]]:
        """Configured agents that can be run: id → the flat McpServer object the core takes."""
        return {
            agent_id: agent.spawn_spec()
            for agent_id, agent in self.settings().runnable_agents().items()
        }

    def models(self) -> list[dict[str, Any]]:
        models = [
            {"id": ELIZA_MODEL, "object": "model", "created": CREATED, "owned_by": "symposium"}
        ]
        for agent_id in self.agents():
            if agent_id not in ELIZA_ALIASES:
                models.append(
                    {
                        "id": agent_id,
                        "object": "model",
                        "created": CREATED,
                        "owned_by": "symposium-settings",
                    }
                )
        return models

    def agent_for(self, model: str) -> Any | None:
        """The core's `agent` for a model id, or None when there is no such model."""
        configured = self.agents().get(model)
        if configured is not None:
            return configured
        if model in ELIZA_ALIASES:
            return {"eliza": {}}
        return None

    # --- MCP servers and their tools ------------------------------------------------------------------

    def mcp_servers(self) -> list[McpServerConfig]:
        return list(self.settings().mcp_servers)

    async def tools(
        self, *, tags: list[str] | None = None, name: str | None = None
    ) -> list[dict[str, Any]]:
        """`GET /v1/tools`: every configured server's tools, each tagged with its server's
        tags and name; `tags` keeps tools having any of them, `name` is a shell-style wildcard."""
        servers = self.mcp_servers()
        listed = await asyncio.gather(*(self._server_tools(s) for s in servers))
        out = []
        wanted = {t for t in (tags or []) if t}
        for tools in listed:
            for tool in tools:
                if wanted and not wanted.intersection(tool["tags"]):
                    continue
                if name and not fnmatch.fnmatchcase(tool["name"], name):
                    continue
                out.append(tool)
        return out

    async def _server_tools(self, server: McpServerConfig) -> list[dict[str, Any]]:
        cached = self._tools.get(server)
        now = time.monotonic()
        if cached is not None and now - cached[0] < self.tool_ttl:
            return cached[1]
        lock = self._tool_locks.setdefault(server, asyncio.Lock())
        async with lock:
            cached = self._tools.get(server)
            if cached is not None and time.monotonic() - cached[0] < self.tool_ttl:
                return cached[1]
            try:
                raw = await asyncio.wait_for(list_server_tools(server), self.list_timeout)
            except Exception as exc:  # noqa: BLE001 - one broken server must not hide the others
                log.warning(
                    "MCP server %s: cannot list its tools: %s",
                    server.name,
                    mcp_client.error_text(exc),
                )
                return []
            tags = [*server.tags, server.name]
            tools = [
                {
                    "name": t.name,
                    "description": t.description or "",
                    "inputSchema": t.input_schema
                    if isinstance(getattr(t, "input_schema", None), dict)
                    else {"type": "object"},
                    "tags": list(dict.fromkeys(tags)),
                    "server": server.name,
                }
                for t in raw
            ]
            self._tools[server] = (time.monotonic(), tools)
            return tools


async def list_server_tools(server: McpServerConfig) -> list[Any]:
    """tools/list of one configured server, every page of it."""
    if server.type == "stdio":
        target = McpTarget(
            type="stdio", command=server.command or "", args=server.args, env=dict(server.env)
        )
    else:
        kind: Literal["sse", "http"] = "sse" if server.type == "sse" else "http"
        target = McpTarget(type=kind, url=server.url or "", headers=dict(server.headers))
    async with mcp_client.connect(target) as client:
        return await mcp_client.list_tools(client)
