from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.lmclient import LmClient


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path_factory, monkeypatch):
    """No test reads or writes the real user's settings, runtime or state files."""
    base = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("SYMPOSIUM_RUNTIME_DIR", str(base / "run"))
    monkeypatch.setenv("SYMPOSIUM_STATE_DIR", str(base / "state"))
    yield


@pytest.fixture
async def lost_exceptions() -> Any:
    """What reaches the loop's exception handler ("Task exception was never retrieved", ...)."""
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    yield seen
    loop.set_exception_handler(previous)


@pytest.fixture
async def lm(tmp_path):
    client = await LmClient.start("--cwd", str(tmp_path))
    yield client
    await client.close()


# -- third-party agents, installed once per test session (a failed install fails the test with the
#    installer's output; skipped only when the installer says this machine cannot run the agent) ----


def _install_agent(name: str) -> None:
    import time

    from tests.agents import install as agents

    started = time.monotonic()
    try:
        agents.install(name, quiet=False)
    except agents.InstallUnsupported as exc:
        # Only the installer's own verdict that this machine cannot run it at all skips.
        pytest.skip(f"this machine cannot run {name} (said its installer): {exc}")
    except agents.InstallError as exc:
        pytest.fail(f"installing {name} failed:\n{exc}", pytrace=False)
    took = time.monotonic() - started
    if took > 1:
        print(f"[agents] installed {name} in {took:.1f} s")


@pytest.fixture(scope="session")
def fast_agent_ready() -> None:
    _install_agent("fast-agent")


@pytest.fixture(scope="session")
def claude_ready() -> None:
    _install_agent("claude")


@pytest.fixture(scope="session")
def gemini_ready() -> None:
    _install_agent("gemini")


@pytest.fixture(scope="session")
def codex_acp_ready() -> None:
    _install_agent("codex-acp")


@pytest.fixture(scope="session")
def frameworks_python() -> str:
    """The Python of the OpenAI client frameworks' venv (openai-agents, langchain-openai,
    pydantic-ai), installed once."""
    _install_agent("frameworks")
    from tests.agents.install import frameworks_python as python

    return python()


@pytest.fixture(scope="session")
def acpx_ready() -> None:
    _install_agent("acpx")


@pytest.fixture(scope="session")
def toad_ready() -> None:
    """Toad and its CPython 3.14 (unpacked from Debian unstable), installed once."""
    _install_agent("toad")
