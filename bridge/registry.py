"""`registry list` and `registry resolve-agent`: what the Symposium extension runs before each chat.

The extension spawns `<symposium.acpAgentPath> registry resolve-agent '<json>'` for every chat
request and `registry list` for its model picker, so both answer with the standard library alone:
they read the settings file's agents table themselves (`read_agents`, checked by the same
`bridge.agent_table` as `bridge.settings`) instead of importing the settings module and its rules.
Only the agents table counts here: a settings file that cannot be read, or whose agents table is
broken, leaves the built-in agent alone (the console and `symposium-tui config` report the
problem); a broken rule or preference elsewhere in the file does not hide the agents.
Distributions are resolved in upstream's priority order: local, npx, pipx, symposium.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping

TYPE_CHECKING = False  # (not `typing`'s: importing typing costs the start-up a millisecond)
if TYPE_CHECKING:
    from typing import Any

    from bridge.settings import Settings

ELIZA_ID = "elizacp"


class ResolveError(Exception):
    pass


def self_command(subcommand: list[str]) -> tuple[str, list[str]]:
    """How to run this program again with `subcommand`, from wherever it was started."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    base = os.path.basename(argv0)
    if argv0 and base not in ("-c", "-m", "__main__.py") and not base.endswith(".py"):
        if os.sep in argv0:  # (as a console script started from PATH always is)
            return os.path.abspath(argv0), subcommand
        import shutil  # (bz2, lzma, zlib: not on the common path)

        return os.path.abspath(shutil.which(argv0) or argv0), subcommand
    import shutil

    found = shutil.which("symposium-tui")
    if found:
        return found, subcommand
    return sys.executable, ["-m", "symposium_tui", *subcommand]


BUILTIN_NAME = "Eliza (built in)"  # as the chat, settings and Eliza's own agentInfo name it
BUILTIN_VERSION = "0.1.0"  # as Eliza's own agentInfo gives it (the card shows that one)


def builtin_agents() -> list[dict[str, Any]]:
    return [
        {
            "id": ELIZA_ID,
            "name": BUILTIN_NAME,
            "version": BUILTIN_VERSION,
            "description": "The classic ELIZA psychotherapist, built into Symposium TUI as an ACP agent",
            "distribution": {"symposium": {"subcommand": "eliza"}},
        }
    ]


def read_agents(path: str | None = None) -> dict[str, dict[str, Any]]:
    """The settings file's runnable agents (`bridge.agent_table.check_agent` fields by id), read
    with the standard library alone; none when the file is missing, unreadable, not TOML, or its
    agents table is broken (as `Settings.load_quietly` gives none)."""
    import tomllib

    from bridge.agent_table import AgentTableError, check_agent
    from bridge.paths import config_dir_path

    if path is None:
        path = os.path.join(config_dir_path(), "settings.toml")
    try:
        with open(path, "rb") as f:
            data = tomllib.loads(f.read().decode("utf-8-sig"))
        table = data.get("agents", {})
        if not isinstance(table, dict):
            return {}
        agents = {agent_id: check_agent(agent_id, entry) for agent_id, entry in table.items()}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AgentTableError):
        return {}
    return {agent_id: fields for agent_id, fields in agents.items() if fields["command"]}


def _runnable(settings: Settings | Mapping[str, Mapping[str, Any]] | None) -> dict[str, Any]:
    if settings is None:
        return read_agents()
    if isinstance(settings, Mapping):
        return dict(settings)
    return {
        agent_id: {
            "name": agent.name,
            "command": agent.command,
            "args": agent.args,
            "env": agent.env,
            "description": agent.description,
        }
        for agent_id, agent in settings.runnable_agents().items()
    }


def configured_agents(
    settings: Settings | Mapping[str, Mapping[str, Any]] | None,
) -> list[dict[str, Any]]:
    """The runnable agents as registry entries (a `local` distribution each): from `settings`, or
    read from the settings file (`read_agents`) when None."""
    out = []
    for agent_id, agent in _runnable(settings).items():
        args = [str(a) for a in agent["args"]]
        out.append(
            {
                "id": agent_id,
                "name": agent["name"],
                "description": agent["description"]
                or f"{agent['command']} {' '.join(args)}".strip(),
                "distribution": {
                    "local": {"command": agent["command"], "args": args, "env": dict(agent["env"])}
                },
            }
        )
    return out


def all_agents(settings: Settings | None) -> list[dict[str, Any]]:
    agents: dict[str, dict[str, Any]] = {}
    for agent in builtin_agents() + configured_agents(settings):
        agents[agent["id"]] = agent
    return list(agents.values())


def list_entries(settings: Settings | None) -> list[dict[str, Any]]:
    return [
        {k: agent[k] for k in ("id", "name", "version", "description") if agent.get(k) is not None}
        for agent in all_agents(settings)
    ]


def _env_list(env: Any) -> list[dict[str, str]]:
    if isinstance(env, dict):
        return [{"name": str(k), "value": str(v)} for k, v in env.items()]
    if isinstance(env, list):
        out = []
        for item in env:
            if isinstance(item, dict) and "name" in item:
                out.append({"name": str(item["name"]), "value": str(item.get("value", ""))})
        return out
    return []


def resolve(request: Any, settings: Settings | None = None) -> dict[str, Any]:
    """An agent id or `{"id", "name", "distribution"}` → a flat stdio McpServer object. A request
    that brings its distribution and its name needs no settings (none are read)."""
    if isinstance(request, str):
        request = {"id": request}
    if not isinstance(request, dict):
        raise ResolveError("expected an agent id or an object with id, name and distribution")
    agent_id = request.get("id")
    distribution = request.get("distribution") or {}
    entry = None
    if isinstance(agent_id, str) and not (distribution and request.get("name")):
        entry = {a["id"]: a for a in all_agents(settings)}.get(agent_id)
    if not distribution and entry is not None:
        distribution = entry["distribution"]
    if not isinstance(distribution, dict):
        raise ResolveError("distribution must be an object")
    name = request.get("name") or (entry or {}).get("name") or agent_id or "agent"
    if not distribution:
        raise ResolveError(f"unknown agent {agent_id!r} and no distribution to run it from")

    if "local" in distribution:
        local = distribution["local"] or {}
        if not local.get("command"):
            raise ResolveError("local distribution needs a command")
        return {
            "name": name,
            "command": local["command"],
            "args": [str(a) for a in local.get("args") or []],
            "env": _env_list(local.get("env")),
        }
    if "npx" in distribution:
        npx = distribution["npx"] or {}
        if not npx.get("package"):
            raise ResolveError("npx distribution needs a package")
        return {
            "name": name,
            "command": "npx",
            "args": ["-y", npx["package"], *map(str, npx.get("args") or [])],
            "env": _env_list(npx.get("env")),
        }
    if "pipx" in distribution:
        pipx = distribution["pipx"] or {}
        if not pipx.get("package"):
            raise ResolveError("pipx distribution needs a package")
        return {
            "name": name,
            "command": "pipx",
            "args": ["run", pipx["package"], *map(str, pipx.get("args") or [])],
            "env": _env_list(pipx.get("env")),
        }
    if "symposium" in distribution:
        sub = (distribution["symposium"] or {}).get("subcommand")
        if sub != "eliza":
            raise ResolveError(f"unknown symposium subcommand {sub!r} (this build provides: eliza)")
        command, args = self_command(
            [sub, *map(str, (distribution["symposium"] or {}).get("args") or [])]
        )
        return {"name": name, "command": command, "args": args, "env": []}
    kinds = ", ".join(sorted(distribution)) or "none"
    raise ResolveError(
        f"cannot run agent {agent_id!r} here: its distribution ({kinds}) needs a binary download, which "
        "symposium-tui does not do; install the agent yourself and add it to the settings file as a local command"
    )


def main(argv: list[str], settings: Settings | None = None) -> int:
    """The `registry` command line (`settings` None: the agents table read by `read_agents`)."""
    if not argv or argv[0] not in ("list", "resolve-agent"):
        print(
            "usage: symposium-tui registry list | registry resolve-agent <id or json>",
            file=sys.stderr,
        )
        return 2
    if argv[0] == "list":
        print(json.dumps(list_entries(settings)))
        return 0
    if len(argv) != 2:
        print("usage: symposium-tui registry resolve-agent <id or json>", file=sys.stderr)
        return 2
    raw = argv[1]
    try:
        request = json.loads(raw) if raw.lstrip().startswith(("{", '"')) else raw
        print(json.dumps(resolve(request, settings)))
    except (json.JSONDecodeError, RecursionError) as exc:
        print(f"symposium-tui registry: invalid JSON: {exc}", file=sys.stderr)
        return 2
    except ResolveError as exc:
        print(f"symposium-tui registry: {exc}", file=sys.stderr)
        return 1
    return 0
