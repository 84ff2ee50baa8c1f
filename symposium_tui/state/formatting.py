"""Times and durations as the panes print them."""

from __future__ import annotations

from datetime import datetime

__all__ = ["format_clock", "format_duration"]


def format_clock(ts: float, millis: bool = False) -> str:
    """Local wall-clock time of a timestamp, HH:MM:SS (and .mmm)."""
    try:
        dt = datetime.fromtimestamp(ts)
    except (OverflowError, OSError, ValueError):
        return "--:--:--"
    text = dt.strftime("%H:%M:%S")
    return f"{text}.{dt.microsecond // 1000:03d}" if millis else text


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "…"
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.1f}s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
