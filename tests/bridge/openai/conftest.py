"""Fixtures: the OpenAI front door on a real uvicorn (tests/support/openai_server.py) with a settings
file that configures the test agents and an MCP server, and `openai` clients of it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.openai_server import (
    ServerThread,
    write_settings,
)


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
