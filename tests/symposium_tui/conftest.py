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
from symposium_tui.hosting.hosted import Hosted
from tests.support.console import Asker, make_hosted


@pytest.fixture
def config_dir() -> Path:
    return Path(os.environ["SYMPOSIUM_CONFIG_DIR"])


@pytest.fixture
def store(config_dir: Path) -> SettingsStore:
    return SettingsStore(config_dir / "settings.toml")


@pytest.fixture
async def hosted(config_dir: Path, tmp_path: Path):
    h = make_hosted(config_dir, str(tmp_path))
    yield h
    for approval_id in list(h.bridge.approvals.pending):
        h.bridge.approvals.withdraw(approval_id, "test over")
    await h.close()


@pytest.fixture
def bridge(hosted: Hosted) -> Bridge:
    return hosted.bridge


@pytest.fixture
def make_app(hosted: Hosted) -> Callable[..., Any]:
    from symposium_tui.app import SymposiumApp

    def make(**options: Any) -> SymposiumApp:
        options.setdefault("arm_delay", 0.0)
        options.setdefault("linger", 0.0)
        options.setdefault("deterministic_eliza", True)
        app = SymposiumApp(hosted, **options)
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
