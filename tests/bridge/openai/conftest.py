"""Fixtures: the OpenAI front door on a real uvicorn on 127.0.0.1, in a thread of its own (so the
sync `openai` client can be used from plain tests and the async one from async tests), with a
settings file that configures the test agents and an MCP server."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
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


@pytest.fixture
def logs(tmp_path: Path) -> dict[str, Path]:
    return {"tool": tmp_path / "tool_agent.jsonl", "calc": tmp_path / "calc.jsonl"}


@pytest.fixture
def settings(logs: dict[str, Path]) -> Path:
    return write_settings(
        Path(os.environ["SYMPOSIUM_CONFIG_DIR"]), tool_log=logs["tool"], calc_log=logs["calc"]
    )


@pytest.fixture
def server(settings: Path, tmp_path: Path):
    srv = ServerThread(str(tmp_path), retry_grace=1.0).start()
    yield srv
    srv.stop()


@pytest.fixture
def client(server: ServerThread):
    import openai

    with openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=60) as c:
        yield c


@pytest.fixture
async def aclient(server: ServerThread):
    import openai

    async with openai.AsyncOpenAI(
        base_url=server.url, api_key="unused", max_retries=0, timeout=60
    ) as c:
        yield c


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
