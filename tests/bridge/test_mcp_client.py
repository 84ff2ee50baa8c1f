"""`bridge.mcp_client`: the one paged `tools/list` and failure wording shared by Eliza's tool
commands and the OpenAI door's tool catalog."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bridge.mcp_client import error_text, list_tools


@dataclass
class _Page:
    tools: list[str]
    next_cursor: str | None


class _PagedClient:
    """Answers `list_tools` as an MCP server with three pages does (cursor → page)."""

    def __init__(self) -> None:
        self.cursors: list[str | None] = []
        self.pages: dict[Any, _Page] = {
            None: _Page(["a", "b"], "p2"),
            "p2": _Page(["c"], "p3"),
            "p3": _Page(["d"], ""),
        }

    async def list_tools(self, cursor: str | None = None) -> _Page:
        self.cursors.append(cursor)
        return self.pages[cursor]


async def test_list_tools_follows_every_cursor_to_the_last_page() -> None:
    client = _PagedClient()
    assert await list_tools(client) == ["a", "b", "c", "d"]
    assert client.cursors == [None, "p2", "p3"]


def test_error_text_names_the_first_leaf_of_a_group_or_its_type() -> None:
    group = ExceptionGroup("outer", [ConnectionError("refused by 127.0.0.1:9"), ValueError("x")])
    assert error_text(group) == "refused by 127.0.0.1:9"
    assert error_text(TimeoutError()) == "TimeoutError"
