"""Settings › Agents: the agents the chat can start, and which of them skip approval (bypass)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static

from bridge.settings import agent_display_name
from symposium_tui.screens.settings.agent_form import AgentForm
from symposium_tui.screens.settings.messages import SettingsChange, broken_settings
from symposium_tui.typed_app import console_app
from symposium_tui.widgets.fit import set_columns

if TYPE_CHECKING:
    from symposium_tui.app import SymposiumApp


def live_bypass(app: SymposiumApp) -> set[str]:
    """The agents the running bridge lets through without asking (none before it is up)."""
    bridge = app.bridge
    return set(bridge.approvals.policy.bypass_agents) if bridge is not None else set()


class AgentsPanel(Vertical):
    """The agents table: add, edit or remove an agent, and turn its bypass on or off. Changes are asked of the screen
    (`SettingsChange`), never written here."""

    app = console_app()

    BINDINGS = [
        Binding(
            "b,space",
            "toggle_bypass",
            "Bypass",
            tooltip="Bypass on/off for the agent: always allow it, or ask again",
        ),
        Binding("n", "new_agent", "New agent", tooltip="Add an agent the chat can start"),
        Binding("e", "edit_agent", "Edit", tooltip="Edit the selected agent (Enter does too)"),
        Binding(
            "x,delete", "remove_agent", "Remove", tooltip="Remove the selected agent (asks first)"
        ),
    ]

    def compose(self) -> ComposeResult:
        yield Static(
            "Agents the chat can start, and which agents skip approval (bypass). "
            "Bypass means every request of that agent is approved without a card.",
            classes="settings-hint",
        )
        table: DataTable[Any] = DataTable(cursor_type="row", id="agents-table", zebra_stripes=True)
        yield table

    # Bypass before the command: a long command must not push it off an 80-column screen.
    COLUMNS = (("Agent", "agent"), ("Bypass", "bypass"), ("Name", "name"), ("Command", "command"))
    FLOORS = (11, 27, 16, 8)  # the bypass cell says which rule still stops it: it gives way last

    def on_resize(self) -> None:
        self.call_after_refresh(self.refresh_rows)  # once the table has its new width

    def refresh_rows(self) -> None:
        table = self.query_one("#agents-table", DataTable)
        row = table.cursor_row
        settings = self.app.settings
        bypass = live_bypass(self.app)
        agents = dict(settings.agents) if settings is not None else {}
        rows: list[tuple[str, tuple[str, ...]]] = []
        if "eliza" not in agents:
            rows.append(
                (
                    "eliza",
                    (
                        "eliza",
                        "on" if "eliza" in bypass else "off",
                        agent_display_name("eliza"),
                        "(built in)",
                    ),
                )
            )
        for agent_id, agent in agents.items():
            if agent.command:
                command = shlex.join([agent.command, *agent.args])
            else:
                command = "(built in)" if agent_id == "eliza" else "(run by the editor)"
            rows.append(
                (
                    agent_id,
                    (
                        agent_id,
                        bypass_cell(settings, agent_id) if agent.bypass else "off",
                        agent_display_name(agent_id, settings),  # a bypass-only entry has no name
                        command,
                    ),
                )
            )
        set_columns(table, self.COLUMNS, rows, self.FLOORS)
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1))

    @on(DataTable.RowSelected, "#agents-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_edit_agent()

    def _selected(self) -> str | None:
        table = self.query_one("#agents-table", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key
        return str(key.value)

    def action_toggle_bypass(self) -> None:
        agent_id = self._selected()
        if agent_id is None:
            return
        settings = self.app.settings
        config = settings.agents.get(agent_id) if settings is not None else None
        current = config.bypass if config is not None else agent_id in live_bypass(self.app)

        def toggle(yes: bool | None = True) -> None:
            if yes:
                self.post_message(
                    SettingsChange(
                        self,
                        lambda store: store.set_agent_bypass(agent_id, not current),
                        f"Bypass for {agent_id} is {'off' if current else 'on'}.",
                    )
                )

        if current or self.app.settings_error:
            toggle()  # turning it off needs no confirmation (nor does a refused write)
            return
        from symposium_tui.screens.confirm import ConfirmBypass
        from symposium_tui.widgets.approvals import still_asked_by

        name = agent_display_name(agent_id, settings)
        self.app.push_screen(
            ConfirmBypass(name, still_asked_by(self.app, agent_id), approves=False), toggle
        )

    def action_new_agent(self) -> None:
        if broken_settings(self):
            return
        self.app.push_screen(AgentForm(None), self._save_agent)

    def action_edit_agent(self) -> None:
        agent_id = self._selected()
        settings = self.app.settings
        if agent_id is None or settings is None or agent_id not in settings.agents:
            self.notify("The built-in Eliza has no settings to edit; b toggles its bypass.")
            return
        if broken_settings(self):
            return
        self.app.push_screen(AgentForm(settings.agents[agent_id]), self._save_agent)

    def _save_agent(self, agent: Any) -> None:
        if agent is not None:
            self.post_message(
                SettingsChange(
                    self, lambda store: store.upsert_agent(agent), f"Saved agent {agent.id}."
                )
            )

    def action_remove_agent(self) -> None:
        from symposium_tui.screens.confirm import Confirm

        agent_id = self._selected()
        settings = self.app.settings
        if agent_id is None or settings is None or agent_id not in settings.agents:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.post_message(
                    SettingsChange(
                        self,
                        lambda store: store.remove_agent(agent_id),
                        f"Removed agent {agent_id}.",
                    )
                )

        self.app.push_screen(
            Confirm(f"Remove agent {agent_id} and its settings (its bypass too)?", "remove it"),
            answered,
        )


def bypass_cell(settings: Any, agent_id: str) -> str:
    """`on`, or `on, but rule 2 still denies` — a deny (or ask) rule beats bypass for what it
    matches (the rest is still bypassed: nothing here says the bypass is void)."""
    import fnmatch

    rules = settings.rules if settings is not None else []
    hits = [
        (i, rule.action)
        for i, rule in enumerate(rules, 1)
        if rule.action != "allow"
        and (rule.agent is None or fnmatch.fnmatchcase(agent_id, rule.agent))
    ]
    if not hits:
        return "on"
    if len(hits) == 1:
        verb = "denies" if hits[0][1] == "deny" else "asks"
        return f"on, but rule {hits[0][0]} still {verb}"
    return f"on, but rules {', '.join(str(i) for i, _ in hits)} still deny/ask"
