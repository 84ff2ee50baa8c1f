"""Settings › Preferences: the theme (at once) and mouse capture (from the next start)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Checkbox, Label, Select, Static

from bridge.settings import Preferences
from symposium_tui.screens.forms import TickBox
from symposium_tui.screens.settings.messages import SettingsChange, ThemeChosen
from symposium_tui.typed_app import console_app


class PreferencesPanel(VerticalScroll):
    """The theme and mouse preferences. Changes are asked of the screen
    (`SettingsChange`), never written here."""

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
            self.post_message(ThemeChosen(event.value))

    @on(Checkbox.Changed, "#pref-mouse")
    def _mouse(self, event: Checkbox.Changed) -> None:
        self.post_message(
            SettingsChange(self, lambda store: store.set_preference("mouse", event.value))
        )
