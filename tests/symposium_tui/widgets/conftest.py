"""Fixtures for the panes' tests: a real in-process bridge (the built-in Eliza behind it)."""

from __future__ import annotations

import pytest

from bridge.config import BridgeConfig
from bridge.core import Bridge


@pytest.fixture
async def bridge(tmp_path):
    b = Bridge(BridgeConfig(cwd=str(tmp_path), idle_timeout=None))
    yield b
    await b.close()
