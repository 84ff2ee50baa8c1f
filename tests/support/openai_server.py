"""The OpenAI front door for tests: a real uvicorn on 127.0.0.1 in a thread of its own (so the sync
`openai` client can be used from plain tests and the async one from async tests), the settings
file that configures the test agents and an MCP server, and `symposium-tui serve --openai` as a
real process."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TOOL_AGENT = REPO / "tests" / "bridge" / "openai" / "tool_agent.py"
ECHO_AGENT = REPO / "tests" / "agents" / "echo_agent.py"
CALC_SERVER = REPO / "tests" / "agents" / "calc_mcp_server.py"


def toml_str(value: str) -> str:
    return json.dumps(value)


def write_settings(config_dir: Path, *, tool_log: Path, calc_log: Path, extra: str = "") -> Path:
    config_dir.mkdir(parents=True, exist_ok=True)
    path = config_dir / "settings.toml"
    path.write_text(
        f"""
[agents.tool]
command = {toml_str(sys.executable)}
args = [{toml_str(str(TOOL_AGENT))}, {toml_str(str(tool_log))}]

[agents.echo]
command = {toml_str(sys.executable)}
args = [{toml_str(str(ECHO_AGENT))}]

[agents.broken]
command = {toml_str(sys.executable)}
args = [{toml_str(str(ECHO_AGENT))}, "--exit-on-start"]

[mcp_servers.calc]
command = {toml_str(sys.executable)}
args = [{toml_str(str(CALC_SERVER))}, {toml_str(str(calc_log))}]
tags = ["math", "local"]
{extra}
"""
    )
    return path


class ServerThread:
    """The bridge and its OpenAI server running in their own event loop thread."""

    def __init__(self, cwd: str, *, config: dict[str, Any] | None = None, **options: Any) -> None:
        self.cwd = cwd
        self.config = config or {}  # BridgeConfig fields beyond the tests' defaults
        self.options = options
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="openai-server", daemon=True
        )
        self.bridge: Any = None
        self.server: Any = None

    def call(self, coro: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self) -> ServerThread:
        self.thread.start()

        async def boot() -> None:
            from bridge.config import BridgeConfig
            from bridge.core import Bridge
            from bridge.openai import OpenAIServer

            self.bridge = Bridge(
                BridgeConfig(cwd=self.cwd, tool_batch_window=0.2, drain_timeout=5, **self.config)
            )
            self.server = OpenAIServer(self.bridge, "127.0.0.1:0", **self.options)
            await self.server.start()

        self.call(boot())
        return self

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def door(self) -> Any:
        return self.server.front_door

    def stop(self) -> None:
        self.stop_with(None)

    def stop_with(self, last: Any) -> None:
        """Stop; then await `last` (e.g. a fake model API's exit) in the server's loop."""

        async def down() -> None:
            await self.server.stop()
            await self.bridge.close()
            if last is not None:
                await last

        try:
            self.call(down())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "symposium_tui", "serve", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_line(proc: subprocess.Popen, needle: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if needle in line:
            return line
        if not line and proc.poll() is not None:
            raise AssertionError(f"serve exited {proc.returncode}: {proc.stderr.read()}")
    raise AssertionError(f"no {needle!r} line")
