"""Helpers for the console's tests: permission requests made straight to the broker, the bridge
the console runs on, and waiting on the app instead of sleeping."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bridge.approvals import ApprovalContext
from bridge.core import Bridge
from bridge.settings import SettingsStore
from symposium_tui.hosting.hosted import Hosted, build_hosted

ELIZA_OPTIONS = [
    {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
    {"optionId": "reject_always", "name": "Always reject", "kind": "reject_always"},
]
ONCE_OPTIONS = [ELIZA_OPTIONS[0], ELIZA_OPTIONS[2]]

OLD = "def add(a, b):\n    return a - b\n"
NEW = "def add(a, b):\n    return a + b\n"


def edit_call(path: str = "src/calc.py", call_id: str = "call-1") -> dict[str, Any]:
    return {
        "toolCallId": call_id,
        "title": f"Edit {path}",
        "kind": "edit",
        "status": "pending",
        "rawInput": {"file_path": path, "old_string": OLD, "new_string": NEW},
        "content": [{"type": "diff", "path": path, "oldText": OLD, "newText": NEW}],
        "locations": [{"path": path}],
    }


def run_call(title: str = "run the tests", call_id: str = "call-2") -> dict[str, Any]:
    return {
        "toolCallId": call_id,
        "title": title,
        "kind": "execute",
        "rawInput": {"command": title},
    }


def make_hosted(config_dir: Path, cwd: str) -> Hosted:
    """What `host.build_hosted` assembles, minus the audit log: settings-backed policy and bypass
    (a broken settings file: an empty policy, and the console says why)."""
    return build_hosted(
        cwd=cwd,
        settings_store=SettingsStore(config_dir / "settings.toml"),
        audit=False,
        bridge_options={"idle_timeout": None},
    )


class Asker:
    """Permission requests straight to the broker, as an agent session would make them."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.tasks: list[asyncio.Task[Any]] = []

    def ask(
        self,
        tool_call: dict[str, Any] | None = None,
        *,
        agent: str = "claude-code",
        session: str = "s1",
        connection: str = "vscodelm-1",
        options: list[dict[str, Any]] | None = None,
        agent_version: str | None = None,
    ) -> asyncio.Task[Any]:
        ctx = ApprovalContext(
            connection,
            session,
            agent,
            tool_call or run_call(),
            options or ELIZA_OPTIONS,
            agent_version=agent_version,
        )
        task = asyncio.ensure_future(self.bridge.approvals.request(ctx))
        self.tasks.append(task)
        return task


async def wait_for(
    pilot: Any, condition: Callable[[], Any], timeout: float = 10.0, what: str = ""
) -> Any:
    """Let the app run until `condition()` is truthy (never a timing assertion: the limit only
    stops a broken test from hanging)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.02)


async def drawn_card(pilot: Any, index: int = 0, call_id: str | None = None) -> Any:
    """The queue's pending card at `index` (or the one asking about `call_id`, focused: the card
    the keys go to) once it is on screen and waits for an answer: mounted, its key legend drawn
    (a card joins the queue a moment before it mounts), and still asking (a card just answered
    stays in the queue, taking no keys, until the answer is confirmed)."""

    def drawn() -> Any:
        pending = pilot.app.queue.pending
        if call_id is not None:
            pending = [c for c in pending if c.info.tool_call.get("toolCallId") == call_id]
            index_ = 0
        else:
            index_ = index
        if len(pending) <= index_ or pending[index_].state != "pending":
            return None
        card = pending[index_]
        if call_id is not None and not card.has_focus:
            return None
        legends = card.query(".card-keys") if card.is_mounted else []
        return card if legends and str(legends[0].render()) else None

    what = f"the card for {call_id}" if call_id else f"pending card {index}"
    return await wait_for(pilot, drawn, what=f"{what} drawn")


def shown_text(widgets: Any) -> str:
    """What the widgets show, as plain text (a Rich table included), one line per row."""
    import io

    from rich.console import Console

    console = Console(width=400, file=io.StringIO(), record=True, color_system=None)
    for widget in widgets:
        content = widget.content  # a Rich renderable, or text (Content, str)
        console.print(content if hasattr(content, "__rich_console__") else str(content))
    return console.export_text()


def tab_laid_out(tab: Any) -> bool:
    """The tab is laid out as wide as its label (a relabelled tab gets its new width at the next
    layout of its screen, not when the label is set)."""
    return bool(tab.virtual_region.shrink(tab.styles.gutter).width == tab.label.cell_length)


def underline_under_active_tab(tabs: Any) -> bool:
    """The tab bar's underline spans its active tab's label, as that tab is laid out now (true of a
    tab bar with no active tab)."""
    from textual.widgets import Tab
    from textual.widgets._tabs import Underline

    active = [tab for tab in tabs.query(Tab) if tab.has_class("-active")]
    if not active:
        return True
    underline = tabs.query_one(Underline)
    span = active[0].virtual_region.shrink(active[0].styles.gutter).column_span
    return bool((underline.highlight_start, underline.highlight_end) == span)


def underlines_caught_up(app: Any) -> bool:
    """On every screen, every tab bar's active tab is laid out at its label's width and the
    underline spans it."""
    from textual.widgets import Tab, Tabs

    for screen in app.screen_stack:
        for tabs in screen.query(Tabs):
            active = [tab for tab in tabs.query(Tab) if tab.has_class("-active")]
            if active and not tab_laid_out(active[0]):
                return False
            if not underline_under_active_tab(tabs):
                return False
    return True
