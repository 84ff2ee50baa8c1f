from __future__ import annotations

import os

import pytest

from tests.lmclient import LmClient


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path_factory, monkeypatch):
    """No test reads or writes the real user's settings or runtime files."""
    base = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("SYMPOSIUM_RUNTIME_DIR", str(base / "run"))
    yield


@pytest.fixture
async def lm(tmp_path):
    client = await LmClient.start("--cwd", str(tmp_path))
    yield client
    await client.close()
