"""Fixtures for the console's tests: a real bridge (built-in Eliza, real broker) with its settings in
the test's own config dir."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bridge.core import Bridge
from bridge.settings import SettingsStore
from tests.console.helpers import Asker, make_bridge


@pytest.fixture
def config_dir() -> Path:
    return Path(os.environ["SYMPOSIUM_CONFIG_DIR"])


@pytest.fixture
def store(config_dir: Path) -> SettingsStore:
    return SettingsStore(config_dir / "settings.toml")


@pytest.fixture
async def bridge(config_dir: Path, tmp_path: Path):
    b = make_bridge(config_dir, str(tmp_path))
    yield b
    for approval_id in list(b.approvals.pending):
        b.approvals.withdraw(approval_id, "test over")
    await b.close()


@pytest.fixture
def make_app(bridge: Bridge) -> Callable[..., Any]:
    from symposium_tui.app import SymposiumApp

    def make(**options: Any) -> SymposiumApp:
        options.setdefault("arm_delay", 0.0)
        options.setdefault("linger", 0.0)
        options.setdefault("deterministic_eliza", True)
        app = SymposiumApp(bridge, **options)
        app.animation_level = "none"  # no tab-underline slides to wait for
        return app

    return make


@pytest.fixture
async def asker(bridge: Bridge):
    a = Asker(bridge)
    yield a
    for approval_id in list(bridge.approvals.pending):
        bridge.approvals.withdraw(approval_id, "test over")
    await asyncio.gather(*a.tasks, return_exceptions=True)
