"""What the start-up paths read from the settings file, kept beside it so they need not parse it.

`symposium-tui registry list|resolve-agent` and `symposium-tui hook CLI` are a new process for
every call: parsing the settings (`tomllib`, and for the hook the settings module with its rules)
costs more than the rest of their start-up. Each keeps what it needs in a JSON file next to the
settings file, `.settings.toml.<kind>-cache.json`:

- `registry`: the runnable agents as `bridge.registry.read_agents` reads them (name, command, args,
  env, description: `resolve-agent` prints the command line and environment it runs an agent
  with, so these are what the command answers anyway); nothing else of the file;
- `hook`: the rules (each as `Rule.to_dict()` and its line), the agents on bypass and the
  `hook_no_console` preference; no agent commands, environments, MCP servers or notify commands.

A cache is used only when everything about it holds: it is a regular file (not a link) owned by
this user with mode 0600, beside a settings file owned by this user, it names its kind and the
format version, and its key — the settings file's device, inode, size, mtime and ctime (ns) —
is the settings file's now. Anything else (a missing, corrupt, foreign or stale cache) means the
settings are read as they would be without it, and the cache is written again. A settings file
changed less than `RACY_SECONDS` ago is not cached: two writes within one tick of the file
system's clock can leave the same size and times on different content (git's "racy clean").
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping

VERSION = 1
RACY_SECONDS = 2.0  # a settings file younger than this is read, not cached

TYPE_CHECKING = False  # (`typing` costs these paths a millisecond: names for the checker only)
if TYPE_CHECKING:
    from typing import Any


def settings_file() -> str:
    """The settings file these paths read (`bridge.paths.settings_path()`, as a string)."""
    from bridge.paths import config_dir_path

    return os.path.join(config_dir_path(), "settings.toml")


def cache_file(settings: str, kind: str) -> str:
    folder, name = os.path.split(settings)
    return os.path.join(folder, f".{name}.{kind}-cache.json")


def key_of(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def settings_stat(settings: str) -> os.stat_result | None:
    """The settings file's stat when a cache may stand for it: a regular file of this user's."""
    try:
        st = os.stat(settings)
    except OSError:
        return None
    if st.st_uid != os.getuid() or (st.st_mode & 0o170000) != 0o100000:
        return None
    return st


def load(kind: str, settings: str) -> dict[str, Any] | None:
    """The cached payload of `kind` for `settings`, or None whenever it cannot be trusted."""
    st = settings_stat(settings)
    if st is None:
        return None
    try:
        fd = os.open(
            cache_file(settings, kind), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        )
    except OSError:
        return None
    try:
        own = os.fstat(fd)
        if (
            own.st_uid != os.getuid()
            or (own.st_mode & 0o170000) != 0o100000
            or (own.st_mode & 0o7777) != 0o600
            or own.st_size > 16 * 1024 * 1024
        ):
            return None
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        data = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if (
        not isinstance(data, dict)
        or data.get("version") != VERSION
        or data.get("kind") != kind
        or data.get("key") != key_of(st)
        or not isinstance(data.get("payload"), dict)
    ):
        return None
    payload: dict[str, Any] = data["payload"]
    return payload


def store(kind: str, settings: str, before: os.stat_result | None, payload: dict[str, Any]) -> None:
    """Keep `payload`, read from `settings` when it had the stat `before`, unless the file changed
    since, is too young to key safely, or is not this user's. Never raises: it is only a cache."""
    if before is None:
        return
    now = settings_stat(settings)
    if now is None or key_of(now) != key_of(before):
        return
    if time.time_ns() - max(before.st_mtime_ns, before.st_ctime_ns) < RACY_SECONDS * 1e9:
        return
    target = cache_file(settings, kind)
    temporary = f"{target}.{os.getpid()}.tmp"
    try:
        text = json.dumps(
            {"version": VERSION, "kind": kind, "key": key_of(before), "payload": payload},
            allow_nan=False,
        )
        fd = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
    except (OSError, TypeError, ValueError):  # (a value JSON cannot hold: not cached)
        return
    try:
        os.fchmod(fd, 0o600)
        data = text.encode()
        while data:
            data = data[os.write(fd, data) :]
        os.close(fd)
        fd = -1
        os.replace(temporary, target)
    except OSError:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(temporary)
        except OSError:
            pass


# --- the registry commands -------------------------------------------------------------------------

REGISTRY_FIELDS = ("name", "command", "args", "env", "description")


def _agents_ok(agents: object) -> bool:
    return isinstance(agents, dict) and all(
        isinstance(fields, dict)
        and isinstance(fields.get("command"), str)
        and isinstance(fields.get("name"), str)
        and isinstance(fields.get("args"), list)
        and isinstance(fields.get("env"), dict)
        for fields in agents.values()
    )


def registry_agents() -> dict[str, dict[str, Any]]:
    """The settings file's runnable agents as `bridge.registry.read_agents()` reads them: from the
    cache when it holds, else read (and cached)."""
    settings = settings_file()
    cached = load("registry", settings)
    if cached is not None and _agents_ok(cached.get("agents")):
        agents: dict[str, dict[str, Any]] = cached["agents"]
        return agents
    from bridge.registry import read_agents

    before = settings_stat(settings)
    agents = read_agents(settings)
    kept = {
        agent_id: {k: fields[k] for k in REGISTRY_FIELDS} for agent_id, fields in agents.items()
    }
    store("registry", settings, before, {"agents": kept})
    return agents


class RegistryAgents(Mapping[str, Mapping[str, "Any"]]):
    """`registry_agents()`, read when first looked at: a `resolve-agent` request that brings its
    own distribution and name reads no settings at all."""

    def __init__(self) -> None:
        self._agents: dict[str, dict[str, Any]] | None = None

    def _read(self) -> dict[str, dict[str, Any]]:
        if self._agents is None:
            self._agents = registry_agents()
        return self._agents

    def __getitem__(self, agent_id: str) -> Mapping[str, Any]:
        return self._read()[agent_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())
