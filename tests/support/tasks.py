"""Who owns a test's asyncio tasks: what is still running after a close."""

from __future__ import annotations

import asyncio
from typing import Any


def running_since(before: set[asyncio.Task[Any]], *also_ignored: asyncio.Future[Any]) -> list[str]:
    """Tasks started since `before` that have not ended, by name and coroutine."""
    ignored = {asyncio.current_task(), *also_ignored}
    return sorted(
        f"{t.get_name()} ({t.get_coro().__qualname__})"  # type: ignore[union-attr]
        for t in asyncio.all_tasks() - before
        if t not in ignored and not t.done()
    )
