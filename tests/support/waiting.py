"""Waiting for a state, never for time: poll a condition until it holds (the limit only stops a
broken test from hanging, it is not a timing assertion)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


async def until(condition: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
    try:
        async with asyncio.timeout(timeout):
            while not (value := condition()):
                await asyncio.sleep(0.02)
            return value
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what or condition}") from None


def gone(pid: int) -> bool:
    """The process no longer exists."""
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False
