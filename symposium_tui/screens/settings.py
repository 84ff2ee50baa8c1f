"""F4: agents (and their bypass), approval rules and preferences, written through the settings layer.

Every change goes through `bridge.settings.SettingsStore` (locked, validated, atomic, comments
kept) and then into the live policy. A settings file that cannot be read is shown with its line
and is never written: the screen refuses changes until the file is fixed and reloaded (`r`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.coordinate import Coordinate
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Footer,
    Header,
    Input,
    Label,
    Select,
    Static,
    TabbedContent,
    TabPane,
)

from bridge.settings import (
    AgentConfig,
    Preferences,
    Settings,
    SettingsError,
    SettingsStore,
    agent_display_name,
)
from symposium_tui.screens.forms import FORM_KEYS
from symposium_tui.typed_app import console_app
from symposium_tui.widgets.fit import set_columns

if TYPE_CHECKING:
    from symposium_tui.app import SymposiumApp

TOOL_KINDS = (
    "read",
    "edit",
    "delete",
    "move",
    "search",
    "execute",
    "think",
    "fetch",
    "switch_mode",
    "other",
)


def _live_bypass(app: SymposiumApp) -> set[str]:
    """The agents the running bridge lets through without asking (none before it is up)."""
    bridge = app.bridge
    return set(bridge.approvals.policy.bypass_agents) if bridge is not None else set()


def _write(
    widget: AgentsPanel | RulesPanel | PreferencesPanel, change: Callable[[SettingsStore], Settings]
) -> bool:
    """Run one settings change; report what went wrong instead of raising."""
    app = widget.app
    if app.settings_error:
        app.notify(
            f"The settings file is broken; fix it, then press r to reload.\n{app.settings_error}",
            severity="error",
            timeout=8,
        )
        return False
    store = app.settings_store
    if store is None:
        app.notify("No settings file is available.", severity="error")
        return False
    try:
        settings = change(store)
    except SettingsError as exc:
        app.notify(str(exc), severity="error", timeout=8)
        return False
    except (ValueError, IndexError) as exc:
        app.notify(str(exc), severity="error", timeout=8)
        return False
    app.settings_changed(settings)
    screen = widget.screen if isinstance(widget.screen, SettingsScreen) else None
    if screen is not None:
        screen.refresh_all()
    return True


class TickBox(Checkbox):
    """A checkbox whose state is a shape, not only a colour: X when on, blank when off
    (Textual's shows X either way, which NO_COLOR and monochrome terminals cannot tell apart)."""

    @property
    def _button(self) -> Content:
        self.BUTTON_INNER = "X" if self.value else " "
        return super()._button


class AgentsPanel(Vertical):
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
    FLOORS = (11, 33, 16, 8)  # the bypass cell says which rule shadows it: it gives way last

    def on_resize(self) -> None:
        self.call_after_refresh(self.refresh_rows)  # once the table has its new width

    def refresh_rows(self) -> None:
        table = self.query_one("#agents-table", DataTable)
        row = table.cursor_row
        settings = self.app.settings
        bypass = _live_bypass(self.app)
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
                        _bypass_cell(settings, agent_id) if agent.bypass else "off",
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
        current = config.bypass if config is not None else agent_id in _live_bypass(self.app)

        def toggle(yes: bool | None = True) -> None:
            if yes and _write(self, lambda store: store.set_agent_bypass(agent_id, not current)):
                self.app.notify(f"Bypass for {agent_id} is {'off' if current else 'on'}.")

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
        self.app.push_screen(AgentForm(None), self._save_agent)

    def action_edit_agent(self) -> None:
        agent_id = self._selected()
        settings = self.app.settings
        if agent_id is None or settings is None or agent_id not in settings.agents:
            self.app.notify("The built-in Eliza has no settings to edit; b toggles its bypass.")
            return
        self.app.push_screen(AgentForm(settings.agents[agent_id]), self._save_agent)

    def _save_agent(self, agent: Any) -> None:
        if agent is not None and _write(self, lambda store: store.upsert_agent(agent)):
            self.app.notify(f"Saved agent {agent.id}.")

    def action_remove_agent(self) -> None:
        from symposium_tui.screens.confirm import Confirm

        agent_id = self._selected()
        settings = self.app.settings
        if agent_id is None or settings is None or agent_id not in settings.agents:
            return

        def answered(yes: bool | None) -> None:
            if yes and _write(self, lambda store: store.remove_agent(agent_id)):
                self.app.notify(f"Removed agent {agent_id}.")

        self.app.push_screen(
            Confirm(f"Remove agent {agent_id} and its settings (its bypass too)?", "remove it"),
            answered,
        )


def _bypass_cell(settings: Any, agent_id: str) -> str:
    """`on`, or `on, shadowed: rule 2 denies first` — a deny (or ask) rule beats bypass."""
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
        return f"on, shadowed: rule {hits[0][0]} {verb} first"
    return f"on, shadowed: rules {', '.join(str(i) for i, _ in hits)} deny/ask first"


MOVE = Binding.Group("Move")  # K and J share one footer entry


class RulesPanel(Vertical):
    app = console_app()

    BINDINGS = [
        Binding("n", "new_rule", "New rule", tooltip="Add a rule (at the end of the list)"),
        Binding("e", "edit_rule", "Edit", tooltip="Edit the selected rule (Enter does too)"),
        Binding(
            "K,shift+up",
            "move_rule(-1)",
            "Move up",
            tooltip="Move the selected rule up: within one action the first matching rule decides",
            group=MOVE,
        ),
        Binding(
            "J,shift+down",
            "move_rule(1)",
            "Move down",
            tooltip="Move the selected rule down",
            group=MOVE,
        ),
        Binding(
            "x,delete", "remove_rule", "Remove", tooltip="Remove the selected rule (asks first)"
        ),
    ]

    def compose(self) -> ComposeResult:
        yield Static(
            "Standing decisions, tried in this order before a card is shown; every field a rule "
            "gives must match. Across actions deny > ask > an agent's bypass > allow, whatever the "
            "order; within one action the first matching rule decides, and its reason is what the "
            "agent is told. A command rule checks every part of a shell command; a path rule, the "
            "files after resolving symlinks.",
            classes="settings-hint",
        )
        table: DataTable[Any] = DataTable(cursor_type="row", id="rules-table", zebra_stripes=True)
        yield table
        yield Static(
            "No rules yet: every request an agent makes is asked on a card. Press n to add the "
            "first rule here, or p on a card for a rule that decides requests like that one.",
            id="rules-empty",
            classes="settings-hint",
        )

    COLUMNS = (
        ("#", "number"),
        ("Action", "action"),
        ("Agent", "agent"),
        ("Kind", "kind"),
        ("Title", "title"),
        ("Path", "path"),
        ("Command / URL", "command"),
    )
    FLOORS = (2, 6, 5, 4, 5, 4, 10)

    def on_resize(self) -> None:
        self.call_after_refresh(self.refresh_rows)  # once the table has its new width

    def refresh_rows(self) -> None:
        table = self.query_one("#rules-table", DataTable)
        row = table.cursor_row
        rules = self._rules()
        rows = [
            (
                str(i - 1),
                (
                    str(i),
                    rule.action,
                    rule.agent or "any",
                    rule.kind or "any",
                    rule.title or (f"/{rule.title_regex}/" if rule.title_regex else "any"),
                    rule.path or "any",
                    " or ".join(rule.command) if rule.command else (rule.url or "any"),
                ),
            )
            for i, rule in enumerate(rules, 1)
        ]
        set_columns(table, self.COLUMNS, rows, self.FLOORS)
        self.query_one("#rules-empty").display = not rules
        table.set_class(not rules, "-empty")  # the hint right under the header
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1))
        self.refresh_bindings()

    def _rules(self) -> list[Any]:
        settings = self.app.settings
        return list(settings.rules) if settings is not None else []

    def _selected(self) -> tuple[int, Any] | None:
        table = self.query_one("#rules-table", DataTable)
        rules = self._rules()
        if not table.row_count or not 0 <= table.cursor_row < len(rules):
            return None
        return table.cursor_row, rules[table.cursor_row]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("edit_rule", "remove_rule", "move_rule"):
            return bool(self._rules())  # nothing to select: only "New rule" is offered
        return True

    @on(DataTable.RowSelected, "#rules-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_edit_rule()

    def action_new_rule(self) -> None:
        self.app.push_screen(RuleForm(), self._save_rule)

    def _save_rule(self, rule: Any) -> None:
        if rule is not None and _write(self, lambda store: store.add_rule(rule)):
            added = len(self._rules())
            self.query_one("#rules-table", DataTable).move_cursor(row=added - 1)  # select it
            self.app.notify(f"Added rule {added}: {rule.describe()}.")

    def action_edit_rule(self) -> None:
        selected = self._selected()
        if selected is None:
            return
        index, old = selected

        def save(rule: Any) -> None:
            if rule is not None and _write(
                self, lambda store: store.replace_rule(index, rule, expect=old)
            ):
                self.app.notify(f"Saved rule {index + 1}: {rule.describe()}.")

        self.app.push_screen(RuleForm(old, index + 1), save)

    def action_move_rule(self, step: int) -> None:
        selected = self._selected()
        if selected is None:
            return
        index, rule = selected
        to = index + step
        if not 0 <= to < len(self._rules()):
            self.app.notify(f"Rule {index + 1} is already {'first' if step < 0 else 'last'}.")
            return
        if _write(self, lambda store: store.move_rule(index, to, expect=rule)):
            self.query_one("#rules-table", DataTable).move_cursor(row=to)
            self.app.notify(f"Rule {index + 1} is now rule {to + 1}: {rule.describe()}.")

    def action_remove_rule(self) -> None:
        from symposium_tui.screens.confirm import Confirm

        selected = self._selected()
        if selected is None:
            return
        index, rule = selected

        def answered(yes: bool | None) -> None:
            if yes and _write(self, lambda store: store.remove_rule(index, expect=rule)):
                self.app.notify(f"Removed rule {index + 1}: {rule.describe()}.")

        self.app.push_screen(
            Confirm(f"Remove rule {index + 1}: {rule.describe()}?", "remove it"), answered
        )


class PreferencesPanel(VerticalScroll):
    app = console_app()

    def compose(self) -> ComposeResult:
        with Horizontal(classes="pref-row"):
            yield Label("Theme", classes="pref-label")
            yield Select(
                self._theme_options(),
                value=self.app.theme,
                allow_blank=False,
                id="pref-theme",
                compact=True,
            )
        with Horizontal(classes="pref-row"):
            yield Label("Mouse", classes="pref-label")
            yield TickBox(
                "Capture the mouse (next start; off suits SSH)", id="pref-mouse", compact=True
            )
        yield Static("", id="pref-path", classes="settings-hint")

    def _theme_options(self) -> list[tuple[str, str]]:
        """The bundled themes first; the others say they are not checked for contrast."""
        from symposium_tui.themes import ordered_themes

        return [
            (label, name)
            for name, label in ordered_themes(self.app.available_themes, self.app.theme_sources)
        ]

    def refresh_rows(self) -> None:
        app = self.app
        themes = self.query_one("#pref-theme", Select)
        with self.prevent(Select.Changed, Checkbox.Changed):
            themes.set_options(self._theme_options())
            themes.value = app.theme
            settings = self.app.settings
            prefs = settings.prefs if settings is not None else Preferences()
            self.query_one("#pref-mouse", Checkbox).value = prefs.mouse
        store = app.settings_store
        path = store.path if store is not None else None
        self.query_one("#pref-path", Static).update(f"Settings file: {path}" if path else "")

    @on(Select.Changed, "#pref-theme")
    def _theme(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.app.theme:
            self.app.set_theme(event.value)

    @on(Checkbox.Changed, "#pref-mouse")
    def _mouse(self, event: Checkbox.Changed) -> None:
        _write(self, lambda store: store.set_preference("mouse", event.value))


class SettingsScreen(Screen[None]):
    app = console_app()

    BINDINGS = [
        Binding("escape", "close", "Back", tooltip="Back to where F4 came from"),
        Binding(
            "r",
            "reload",
            "Reload",
            show=False,  # the broken-file banner says to press it; F1 lists it
            tooltip="Read the settings file again (after fixing it by hand)",
        ),
        Binding("left_square_bracket", "switch(-1)", "Prev section", show=False),
        Binding("right_square_bracket", "switch(1)", "Next section", show=False),
    ]

    DEFAULT_CSS = """
    SettingsScreen #settings-error {
        display: none;
        background: $surface;
        color: $text-error;
        border-left: thick $error;
        padding: 0 1;
    }
    SettingsScreen #settings-tabs {
        height: 1fr;
    }
    SettingsScreen .settings-hint {
        color: $text-muted;
        padding: 0 1;
    }
    SettingsScreen DataTable {
        height: 1fr;
    }
    SettingsScreen DataTable.-empty {
        height: auto;
    }
    SettingsScreen .pref-row {
        height: auto;
        padding: 0 1;
        margin-top: 1;
    }
    SettingsScreen .pref-label {
        width: 10;
    }
    SettingsScreen #pref-theme {
        width: 32;
    }
    /* K J Move: spaced like the footer's other keys */
    SettingsScreen Footer.-compact FooterKey.-grouped {
        margin: 0 1 0 0;
    }
    SettingsScreen Footer.-compact FooterLabel {
        margin: 0 1 0 0;
    }
    """

    SECTIONS = ("agents", "rules", "preferences")
    AUTO_FOCUS = None  # on_mount focuses the section shown

    def compose(self) -> ComposeResult:
        yield Header(icon="§")
        yield Static("", id="settings-error")
        with TabbedContent(id="settings-tabs", initial=self.section):
            with TabPane("Agents", id="agents"):
                yield AgentsPanel()
            with TabPane("Rules", id="rules"):
                yield RulesPanel()
            with TabPane("Preferences", id="preferences"):
                yield PreferencesPanel()
        yield Footer(compact=True)

    def __init__(self, section: str = "agents") -> None:
        super().__init__()
        self.section = section

    def on_mount(self) -> None:
        self.sub_title = "Settings"
        # What changed elsewhere since the console last read the file (Bypass on a card, an
        # editor, another console) is shown without a manual reload: read it now, then whenever
        # the file changes while this screen is open.
        self._stamp = self._file_stamp()
        self._load(quiet=True)
        self.set_interval(1.0, self._check_file)
        # The section's own table (or list) has the focus, never a widget of a hidden section:
        # keys go to what is shown, and coming back to this screen does not switch sections.
        for widget in self.query_one(f"#{self.section}", TabPane).query("DataTable, Select"):
            widget.focus()
            break

    def refresh_all(self) -> None:
        error = self.query_one("#settings-error", Static)
        message = self.app.settings_error
        error.display = bool(message)
        if message:
            error.update(
                Text.assemble(
                    ("The settings file is broken and will not be changed. ", "bold"),
                    message,
                    "\nFix it in an editor, then press r to reload.",
                )
            )
        self.query_one(AgentsPanel).refresh_rows()
        self.query_one(RulesPanel).refresh_rows()
        self.query_one(PreferencesPanel).refresh_rows()

    @on(TabbedContent.TabActivated, "#settings-tabs")
    def _section(self, event: TabbedContent.TabActivated) -> None:
        pane = event.pane
        for widget in pane.query("DataTable, Select"):
            widget.focus()
            break

    def action_switch(self, step: int) -> None:
        tabs = self.query_one("#settings-tabs", TabbedContent)
        index = (self.SECTIONS.index(tabs.active) + step) % len(self.SECTIONS)
        tabs.active = self.SECTIONS[index]

    def action_reload(self) -> None:
        self._load(quiet=False)

    def _file_stamp(self) -> tuple[int, int] | None:
        store = self.app.settings_store
        try:
            st = store.path.stat() if store is not None else None
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size) if st is not None else None

    def _check_file(self) -> None:
        stamp = self._file_stamp()
        if stamp != self._stamp:
            self._stamp = stamp
            self._load(quiet=True)

    def _load(self, *, quiet: bool) -> None:
        store = self.app.settings_store
        if store is None:
            self.refresh_all()
            return
        try:
            settings = store.load()
        except SettingsError as exc:
            self.app.settings_error = str(exc)
            if not quiet:
                self.app.notify(str(exc), severity="error", timeout=8)
        else:
            self.app.settings_error = None
            self.app.settings_changed(settings)
            if not quiet:
                self.app.notify("Settings reloaded.")
        self.refresh_all()

    def action_close(self) -> None:
        self.app.close_settings(self)


class _FormScreen(ModalScreen[Any]):
    """A centred modal form with Save / Cancel buttons; Esc or Cancel dismisses with None."""

    HOLDS_KEYS = True  # F1 opens over it; F2–F4 ask this first (SymposiumApp)
    LEAVE_QUESTION = "Leave this form? What you typed in it is not saved."

    BINDINGS = [Binding("escape", "cancel", "Cancel"), *FORM_KEYS]

    DEFAULT_CSS = """
    _FormScreen {
        align: center middle;
    }
    _FormScreen > Vertical {
        width: 70;
        max-width: 100%;
        height: auto;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    _FormScreen Input {
        margin-bottom: 0;
    }
    _FormScreen .form-buttons {
        height: auto;
        align-horizontal: right;
    }
    _FormScreen .form-row {
        height: auto;
    }
    _FormScreen .form-label {
        width: 10;
        color: $text-muted;
    }
    _FormScreen .form-row > Input, _FormScreen .form-row > Select {
        width: 1fr;
    }
    _FormScreen .form-note {
        padding-left: 10;
    }
    _FormScreen .form-error {
        color: $text-error;
    }
    """

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


AGENT_ID = re.compile(r"[A-Za-z0-9._-]+")


class AgentForm(_FormScreen):
    """Add or edit one `[agents.<id>]` entry. Enter in any field saves; Esc cancels. Every field
    has its label; what cannot be saved (no command, an id with spaces or one already taken) is
    said under its field, and nothing is saved."""

    FIELDS = (
        ("id", "Id", "e.g. claude: rules, bypass and --agent use it"),
        ("name", "Name", "what the chat and the cards call it"),
        ("command", "Command", "the program to run, e.g. npx"),
        ("args", "Args", "its arguments, as in a shell"),
        ("description", "About", "a line on what it is (optional)"),
    )

    def __init__(self, agent: Any) -> None:
        super().__init__()
        self.agent = agent

    def compose(self) -> ComposeResult:
        a = self.agent
        values = {
            "id": a.id if a else "",
            "name": a.name if a else "",
            "command": (a.command or "") if a else "",
            "args": shlex.join(a.args) if a else "",
            "description": (a.description or "") if a else "",
        }
        with Vertical():
            yield Label(
                (f"Agent {a.id}" if a is not None else "New agent") + " · Enter saves, Esc cancels",
                classes="form-title",
            )
            for name, label, placeholder in self.FIELDS:
                with Horizontal(classes="form-row"):
                    yield Label(label, classes="form-label")
                    yield Input(
                        values[name],
                        placeholder=placeholder,
                        id=f"agent-{name}",
                        disabled=name == "id" and a is not None,
                        compact=True,
                    )
                yield Static("", id=f"agent-{name}-error", classes="form-error form-note")
            yield TickBox(
                "Bypass: always allow this agent",
                bool(a and a.bypass),
                id="agent-bypass",
                compact=True,
            )
            with Horizontal(classes="form-buttons"):
                yield Button("Save", variant="primary", id="save", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        for error in self.query(".form-error"):
            error.display = False
        self.query_one("#agent-name" if self.agent is not None else "#agent-id").focus()

    def _value(self, name: str) -> str:
        return self.query_one(f"#agent-{name}", Input).value.strip()

    def _problems(self) -> dict[str, str]:
        """What keeps this entry from being saved, by field."""
        from bridge.settings import BUILTIN_AGENT_IDS

        problems: dict[str, str] = {}
        agent_id = self._value("id")
        if self.agent is None:
            settings = getattr(self.app, "settings", None)
            taken = settings.agents if settings is not None else {}
            if not agent_id:
                problems["id"] = "An agent needs an id."
            elif not AGENT_ID.fullmatch(agent_id):
                problems["id"] = (
                    "Letters, digits, - _ and . only (no spaces): rules, bypass and "
                    "`acp --agent` name the agent by its id."
                )
            elif agent_id in BUILTIN_AGENT_IDS:
                problems["id"] = f"{agent_id} is the built-in Eliza's id: choose another."
            elif agent_id in taken:
                problems["id"] = f"There is an agent {agent_id} already: choose another id."
        # An entry that only carries settings (a bypass given on a card) may stay without one.
        needs_command = self.agent is None or bool(self.agent.command)
        if needs_command and not self._value("command"):
            problems["command"] = "An agent needs the program that runs it (e.g. npx)."
        try:
            shlex.split(self._value("args"))
        except ValueError as exc:
            problems["args"] = f"Not as in a shell: {exc}."
        return problems

    def _show_problems(self, problems: dict[str, str]) -> None:
        for name, _, _ in self.FIELDS:
            error = self.query_one(f"#agent-{name}-error", Static)
            error.update(problems.get(name, ""))
            error.display = name in problems
        first = next((name for name, _, _ in self.FIELDS if name in problems), None)
        if first is not None:
            self.query_one(f"#agent-{first}", Input).focus()

    def _save(self) -> None:
        problems = self._problems()
        self._show_problems(problems)
        if problems:
            return
        env = dict(self.agent.env) if self.agent is not None else {}
        agent_id = self._value("id")
        config = AgentConfig(
            id=agent_id,
            name=self._value("name") or agent_id,
            command=self._value("command") or None,
            args=shlex.split(self._value("args")),
            env=env,
            description=self._value("description") or None,
            bypass=self.query_one("#agent-bypass", Checkbox).value,
        )
        if not config.bypass or (self.agent is not None and self.agent.bypass):
            self.dismiss(config)
            return
        # Turning bypass on here is as deliberate as on a card: the same question first.
        from symposium_tui.screens.confirm import ConfirmBypass
        from symposium_tui.widgets.approvals import still_asked_by

        def answered(yes: bool | None) -> None:
            if yes:
                self.dismiss(config)

        still = still_asked_by(self.app, agent_id)
        self.app.push_screen(ConfirmBypass(config.name, still, approves=False), answered)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._save()

    @on(Button.Pressed, "#save")
    def _save_pressed(self) -> None:
        self._save()


def _commands_text(commands: tuple[str, ...] | None) -> str:
    return "; ".join(commands or ())


def _split_commands(text: str) -> tuple[str, ...]:
    """`git status; git log -1` → ("git status", "git log -1"): prefixes apart at an unquoted `;`."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";")
    lexer.whitespace_split = True
    prefixes: list[str] = []
    words: list[str] = []
    for token in [*lexer, ";"]:  # ValueError on an unbalanced quote
        if token and set(token) == {";"}:
            if words:
                prefixes.append(shlex.join(words))
            words = []
        else:
            words.append(token)
    return tuple(prefixes)


class RuleForm(_FormScreen):
    """A new approval rule, or one to edit: every field a rule has (leave one empty to match
    anything). A rule's examples (`match`, `not_match`) are kept and run when it is saved."""

    def __init__(self, rule: Any = None, number: int | None = None) -> None:
        super().__init__()
        self.rule = rule
        self.number = number

    def compose(self) -> ComposeResult:
        r = self.rule
        kinds = list(TOOL_KINDS)
        if r is not None and r.kind and r.kind not in kinds:
            kinds.append(r.kind)
        with Vertical():
            yield Label(
                (f"Rule {self.number}" if r is not None else "New rule")
                + " · empty fields match anything · Enter saves, Esc cancels",
                classes="form-title",
            )
            with Horizontal(classes="form-row"):
                yield Label("Action", classes="form-label")
                yield Select(
                    [("allow", "allow"), ("ask", "ask"), ("deny", "deny")],
                    value=r.action if r is not None else "allow",
                    allow_blank=False,
                    id="rule-action",
                    compact=True,
                )
            with Horizontal(classes="form-row"):
                yield Label("Agent", classes="form-label")
                yield Input(
                    (r.agent or "") if r else "",
                    placeholder="agent id (a pattern, e.g. claude*)",
                    id="rule-agent",
                    compact=True,
                )
            yield Static(self._agent_ids(), id="rule-agent-ids", classes="settings-hint form-note")
            with Horizontal(classes="form-row"):
                yield Label("Kind", classes="form-label")
                yield Select(
                    [(k, k) for k in kinds],
                    value=r.kind if r is not None and r.kind else Select.NULL,
                    prompt="any",
                    id="rule-kind",
                    compact=True,
                )
            for name, label, value, placeholder in (
                ("title", "Title", r and r.title, "a pattern, e.g. read *"),
                (
                    "title-regex",
                    "Title re",
                    r and r.title_regex,
                    "a regular expression, e.g. ^git ",
                ),
                ("path", "Path", r and r.path, "a directory the call's files must lie in"),
                (
                    "command",
                    "Commands",
                    r and _commands_text(r.command),
                    "prefixes, ; between them (e.g. git status; git diff)",
                ),
                ("url", "URL", r and r.url, "a prefix, e.g. https://docs.rs/"),
                ("reason", "Reason", r and r.reason, "told to the agent when it denies"),
            ):
                with Horizontal(classes="form-row"):
                    yield Label(label, classes="form-label")
                    yield Input(
                        value or "", placeholder=placeholder, id=f"rule-{name}", compact=True
                    )
            if r is not None and (r.match or r.not_match):
                yield Static(
                    f"Examples kept: {len(r.match)} it must match, {len(r.not_match)} it must not; "
                    "they run when you save (edit them in the settings file).",
                    classes="settings-hint",
                )
            with Horizontal(classes="form-buttons"):
                yield Button(
                    "Save" if r is not None else "Add", variant="primary", id="save", compact=True
                )
                yield Button("Cancel", id="cancel", compact=True)
        yield Footer(compact=True)

    def _agent_ids(self) -> str:
        """The ids a rule's agent is matched against, each with the name a person knows it by."""
        from bridge.settings import agent_display_name

        settings = getattr(self.app, "settings", None)
        ids = ["eliza", *(settings.agents if settings is not None else ())]
        named = [
            f"{agent_id} = {agent_display_name(agent_id, settings)}"
            if agent_display_name(agent_id, settings) != agent_id
            else agent_id
            for agent_id in dict.fromkeys(ids)
        ]
        return "Agent ids: " + ", ".join(named)

    def on_mount(self) -> None:
        self.query_one("#rule-action").focus()

    def _save(self) -> None:
        from bridge.rules import Rule, RuleError

        def text(name: str) -> str | None:
            return self.query_one(f"#rule-{name}", Input).value.strip() or None

        kind = self.query_one("#rule-kind", Select).value
        action = self.query_one("#rule-action", Select).value
        old = self.rule
        command_text = text("command") or ""
        try:
            if old is not None and command_text == _commands_text(old.command):
                commands = old.command  # as written in the file
            else:
                commands = _split_commands(command_text) or None
        except ValueError as exc:
            self.app.notify(f"command: {exc}", severity="error")
            return
        try:
            rule = Rule(
                action=str(action),  # type: ignore[arg-type]  # a bad action raises RuleError, shown below
                kind=kind if isinstance(kind, str) else None,
                title=text("title"),
                title_regex=text("title-regex"),
                agent=text("agent"),
                path=text("path"),
                command=commands,
                url=text("url"),
                reason=text("reason"),
                match=list(old.match) if old is not None else [],
                not_match=list(old.not_match) if old is not None else [],
            )
        except RuleError as exc:
            self.app.notify(f"{exc.field or 'rule'}: {exc.reason}", severity="error")
            return
        problems = rule.check_examples()
        if problems:
            self.app.notify(
                "Not saved: the rule " + "; ".join(problems) + ". Change the rule, or its "
                "examples in the settings file.",
                severity="error",
                timeout=8,
            )
            return
        self.dismiss(rule)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._save()

    @on(Button.Pressed, "#save")
    def _save_pressed(self) -> None:
        self._save()
