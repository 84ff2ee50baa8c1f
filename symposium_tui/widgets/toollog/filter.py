"""Which tool calls the log shows: a session, a source or kind, a status, and a search on whole
words. The model of the filter bar, apart from any widget."""

from __future__ import annotations

import re

from symposium_tui.state import (
    AGENT_SOURCE,
    CLIENT_SOURCE,
    PERMISSION_SOURCE,
    ToolEntry,
)

SOURCES = (AGENT_SOURCE, CLIENT_SOURCE, PERMISSION_SOURCE)


def search_pattern(text: str) -> re.Pattern[str] | None:
    """The search box's text as a pattern on whole words: `rm` finds `rm -rf build` and the
    program of `/bin/rm x`, not `run the tests`; a phrase (`git log`) its words in that order;
    `*` stands for any letters or digits, so `rm*` finds `rmdir` and `*test*` any text containing
    `test`. None for an empty search. Case does not matter."""
    needle = " ".join(text.split()).lower()
    if not needle:
        return None
    body = r"\w*".join(re.escape(part) for part in needle.split("*"))
    return re.compile(rf"(?<!\w){body}(?!\w)")


class ToolFilter:
    """Which entries the log shows: a session, a source or kind, a status, and a search text
    (matched on whole words, `search_pattern`)."""

    __slots__ = ("_needle", "_pattern", "kind", "search", "session", "status")

    def __init__(
        self, session: str = "", kind: str = "", status: str = "", search: str = ""
    ) -> None:
        self.session = session
        self.kind = (
            kind  # a source ("agent", "client", "permission") or an ACP kind ("execute", ...)
        )
        self.status = status
        self.search = search
        self._needle = search.strip().lower()
        self._pattern = search_pattern(search)

    @property
    def active(self) -> bool:
        return bool(self.session or self.kind or self.status or self._needle)

    def matches(self, entry: ToolEntry) -> bool:
        if self.session and entry.session_label != self.session:
            return False
        if self.kind and not (
            entry.source == self.kind if self.kind in SOURCES else entry.kind == self.kind
        ):
            return False
        if self.status and entry.status != self.status:
            return False
        return self._pattern is None or self._pattern.search(entry.haystack()) is not None

    def describe(self) -> str:
        parts = []
        if self.session:
            parts.append(f"session {self.session}")
        if self.kind:
            parts.append(f"kind {self.kind}")
        if self.status:
            parts.append(f"status {self.status}")
        if self._needle:
            parts.append(f'search "{self.search.strip()}"')
        return ", ".join(parts) if parts else "no filter"
