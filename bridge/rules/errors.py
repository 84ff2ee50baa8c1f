"""A rule that cannot be used, and how a bad value is named in the error."""

from __future__ import annotations

from typing import Any


class RuleError(ValueError):
    """A rule that cannot be used. `field` names the offending key when there is one."""

    def __init__(self, reason: str, field: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field = field


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _show(example: Any) -> str:
    if isinstance(example, str):
        return repr(example)
    return "{" + ", ".join(f"{k} = {v!r}" for k, v in example.items()) + "}"


# --- deciding -------------------------------------------------------------------------------------
