"""What is wrong with a settings file: `SettingsError` (shown to a person), `SchemaError` (a
setting named by its key path, before its line is found)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge.settings.toml_lines import KeyPath


class SettingsError(Exception):
    """The settings file cannot be used (or a change would break it). `str()` names the file, the
    line when known, and the key for schema errors:
    `…/settings.toml line 7, column 5: expected '=' after a key in a key/value pair`,
    `…/settings.toml line 9: agents.claude.args: expected a list of strings`."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        reason: str,
        *,
        line: int | None = None,
        column: int | None = None,
        key: str | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.reason = reason
        self.line = line
        self.column = column
        self.key = key
        super().__init__(self._format())

    def _format(self) -> str:
        where = str(self.path) if self.path is not None else "settings"
        if self.line is not None:
            where += f" line {self.line}"
            if self.column is not None:
                where += f", column {self.column}"
        return f"{where}: {self.key}: {self.reason}" if self.key else f"{where}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path) if self.path is not None else None,
            "line": self.line,
            "column": self.column,
            "key": self.key,
            "reason": self.reason,
            "message": str(self),
        }


class SchemaError(Exception):
    """A setting that does not fit the schema, named by its key path: `Settings.parse` turns it
    into a SettingsError with the line (`toml_lines.locate`)."""

    def __init__(self, path: KeyPath, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason
