"""How the bridge core is configured: decided once when a process starts, then only read.

A front door's process (the headless endpoint, the console's host, `serve`) builds one
`BridgeConfig` from its command line and preferences and gives it to `Bridge`; connections and
agent sessions read the same object. Standard library only at import.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["BridgeConfig"]


@dataclass(frozen=True, slots=True)
class BridgeConfig:
    # Where agents run. ACP's `session/new` takes an absolute cwd: "" is the process's own cwd,
    # and a relative one is made absolute when the configuration is built.
    cwd: str = ""
    # Seconds the agent gets to answer a cancelled turn's `session/prompt` before it is restarted.
    drain_timeout: float = 10.0
    # Seconds for an agent to answer `initialize` and `session/new`.
    start_timeout: float = 60.0
    # Client-tool calls made within this many seconds of each other land in the same response,
    # waiting at most `tool_batch_limit` seconds for calls the agent announced (decision 8).
    tool_batch_window: float = 0.05
    tool_batch_limit: float = 2.0
    # An idle session's agent is stopped after this many seconds (None: never).
    idle_timeout: float | None = 1800.0
    # At most this many agents run at once; the least recently used idle one makes room (None: no
    # limit).
    max_agents: int | None = 16

    def __post_init__(self) -> None:
        # Frozen: the one normalization happens here, before anyone can read the field.
        object.__setattr__(self, "cwd", os.path.abspath(self.cwd or os.getcwd()))
