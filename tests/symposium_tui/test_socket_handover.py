"""A console that leaves removes its own socket file only: one started while it was leaving (the
console restarted at once, in a new terminal) keeps the socket it made, and hooks and VS Code's
endpoints go on finding it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from symposium_tui.hosting.console_socket import ConsoleHost
from tests.support.console import make_hosted


async def answers(path: Path) -> bool:
    """Whether a console listens on `path` (a connection is accepted)."""
    try:
        _, writer = await asyncio.open_unix_connection(str(path))
    except OSError:
        return False
    writer.close()
    return True


@pytest.mark.parametrize("leaving", ["stop", "abandon", "exit"])
async def test_a_console_leaving_after_another_started_leaves_the_new_ones_socket(
    config_dir: Path, tmp_path: Path, leaving: str
) -> None:
    path = Path(os.environ["SYMPOSIUM_RUNTIME_DIR"]) / "console.sock"
    old_hosted = make_hosted(config_dir, str(tmp_path))
    new_hosted = make_hosted(config_dir, str(tmp_path))
    old, new = ConsoleHost(old_hosted.bridge, path), ConsoleHost(new_hosted.bridge, path)
    try:
        await old.start()
        assert old._server is not None
        old._server.close()  # the old console stops listening: the first step of its leaving
        await new.start()  # the new one finds a socket nobody answers on, and makes its own
        assert await answers(path)
        if leaving == "stop":
            await old.stop()
        elif leaving == "abandon":
            old.abandon()  # its terminal is gone
        else:
            old._remove_socket()  # what its exit handler runs
        assert path.exists(), "the leaving console removed the new console's socket"
        assert await answers(path)
    finally:
        await old.stop()
        await new.stop()
        await old_hosted.close()
        await new_hosted.close()
    assert not path.exists()  # the new console's own leaving removes it
