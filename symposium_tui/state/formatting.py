"""Times, durations and session names as the panes print them."""

from __future__ import annotations

import re
from datetime import datetime

_RULE_NUMBER = re.compile(r"rule (\d+)\b")

__all__ = ["decided_by", "format_clock", "format_duration", "session_name"]

LONG_SESSION_ID = 12  # longer ids (an ACP session's UUID) are named after their connection


def session_name(connection: str, session_id: str) -> str:
    """What a person reads for a session: `vscodelm-1/s2`, or for a session with a long id (an ACP
    client's UUID) its connection, named after the client, and the id's last four characters to
    tell its sessions apart: `zed-3 …9f2c`. The whole id is in the detail views."""
    if len(session_id) <= LONG_SESSION_ID:
        return f"{connection}/{session_id}"
    return f"{connection} …{session_id[-4:]}"


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


def decided_by(resolver: str, rule: str | None = None, who: str | None = None) -> str:
    """Who settled an approval, in words that tell a rule from a person: `by rule 2` (the
    number F4's Rules tab shows), `by agent bypass`, `by a person (console@host)`, `in VS Code`."""
    if resolver == "policy":
        number = _RULE_NUMBER.match(rule or "")
        if number is not None:
            return f"by rule {number.group(1)}"
        return f"by {rule}" if rule else "by the rules"
    if resolver == "console":
        return f"by a person ({who})" if who else "by a person"
    return {
        "vscode": "in VS Code",
        "client": "in the client's own permission UI",
        "timeout": "by timeout (no one answered)",
        "default": "by default",
        "link": "(the link to its host was lost)",
    }.get(resolver, f"by {resolver}")
