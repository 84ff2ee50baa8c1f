"""The F4 screen: the Agents, Rules and Preferences panels in tabs, the broken-file banner, and
the one place that writes a change the panels ask for (`SettingsChange`) and reloads the file."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from bridge.settings import Settings, SettingsError
from symposium_tui.screens.settings.agents import AgentsPanel
from symposium_tui.screens.settings.messages import SettingsChange, ThemeChosen, broken_settings
from symposium_tui.screens.settings.preferences import PreferencesPanel
from symposium_tui.screens.settings.rules import RulesPanel
from symposium_tui.typed_app import console_app


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

    CSS_PATH = "settings.tcss"

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

    @on(SettingsChange)
    def _change(self, event: SettingsChange) -> None:
        event.stop()
        settings = self._write(event)
        if settings is None:
            return
        self.refresh_all()
        if event.select is not None:
            table = event.panel.query_one(DataTable)
            if table.row_count:
                table.move_cursor(row=event.select % table.row_count)
        done = event.done(settings) if callable(event.done) else event.done
        if done:
            self.notify(done)

    def _write(self, event: SettingsChange) -> Settings | None:
        """Run one settings change; report what went wrong instead of raising."""
        app = self.app
        if broken_settings(self):
            return None
        store = app.settings_store
        if store is None:
            self.notify("No settings file is available.", severity="error")
            return None
        try:
            settings = event.change(store)
        except (SettingsError, ValueError, IndexError) as exc:
            self.notify(str(exc), severity="error", timeout=8)
            return None
        app.settings_changed(settings)
        return settings

    @on(ThemeChosen)
    def _theme(self, event: ThemeChosen) -> None:
        event.stop()
        self.app.set_theme(event.theme)

    def action_close(self) -> None:
        self.app.close_settings(self)
