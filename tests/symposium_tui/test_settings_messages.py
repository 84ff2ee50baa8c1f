"""A settings panel never writes the settings file itself: it asks with a `SettingsChange` message,
and only the settings screen (or whatever hosts the panel and handles the message) writes it."""

from __future__ import annotations

from textual import on
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from bridge.approvals import Rule
from bridge.settings import SettingsStore
from symposium_tui.screens.settings import RulesPanel, SettingsChange
from tests.support.console import wait_for

FIRST = Rule("deny", kind="execute", reason="nothing runs here")
SECOND = Rule("deny", command="rm", reason="use trash instead")


class PanelHost(App[None]):
    """The Rules panel alone, with the settings the console's app would hand it; the messages it
    posts are kept rather than carried out."""

    def __init__(self, store: SettingsStore) -> None:
        super().__init__()
        self.settings_store = store
        self.settings = store.load()
        self.settings_error: str | None = None
        self.bridge = None
        self.asked: list[SettingsChange] = []

    def compose(self) -> ComposeResult:
        yield RulesPanel()

    def on_mount(self) -> None:
        self.query_one(RulesPanel).refresh_rows()

    @on(SettingsChange)
    def _asked(self, event: SettingsChange) -> None:
        self.asked.append(event)


async def test_moving_a_rule_asks_for_the_change_and_writes_nothing_itself(store):
    store.add_rule(FIRST)
    store.add_rule(SECOND)
    before = store.path.read_text()
    app = PanelHost(store)
    async with app.run_test(size=(100, 20)) as pilot:
        table = app.query_one("#rules-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2)
        table.focus()
        table.move_cursor(row=1)
        await wait_for(pilot, lambda: table.cursor_row == 1)
        await pilot.press("K")
        await wait_for(pilot, lambda: len(app.asked) == 1)

        asked = app.asked[0]
        assert asked.panel is app.query_one(RulesPanel)
        assert store.path.read_text() == before, "the panel wrote the file itself"
        assert asked.select == 0  # once written, the cursor follows the moved rule
        assert asked.done == f"Rule 2 is now rule 1: {SECOND.describe()}."
        written = asked.change(store)  # what the screen does with it
        assert written.rules == [SECOND, FIRST] == store.load().rules
