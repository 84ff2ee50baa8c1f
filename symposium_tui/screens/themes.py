"""Choose a theme with a live preview: moving through the list applies each theme, Enter keeps it
(and remembers it in the settings), Escape restores the one you had."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from symposium_tui.themes import ordered_themes
from symposium_tui.typed_app import console_app


class ThemePicker(ModalScreen[str | None]):
    app = console_app()

    BINDINGS = [Binding("escape", "cancel", "Keep the old theme")]

    DEFAULT_CLASSES = "dialog"  # its look: app.tcss
    DEFAULT_CSS = """
    ThemePicker OptionList {
        height: auto;
        max-height: 16;
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self.original = ""

    def compose(self) -> ComposeResult:
        app = self.app
        self.original = app.theme
        options = [
            Option(f"{label}  ✓ current" if name == self.original else label, id=name)
            for name, label in ordered_themes(app.available_themes, app.theme_sources)
        ]
        with Vertical():
            yield Static(
                "Theme — ↑/↓ previews, Enter keeps, Esc goes back. The first ones are the "
                "console's own, checked for contrast on every screen."
            )
            yield OptionList(*options, id="themes")

    def on_mount(self) -> None:
        themes = self.query_one("#themes", OptionList)
        try:
            themes.highlighted = themes.get_option_index(self.original)
        except Exception:
            themes.highlighted = 0
        themes.focus()

    @on(OptionList.OptionHighlighted, "#themes")
    def _preview(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id:
            self.app.theme = event.option.id

    @on(OptionList.OptionSelected, "#themes")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        name = event.option.id
        if name:
            self.app.set_theme(name)
        self.dismiss(name)

    def action_cancel(self) -> None:
        self.app.theme = self.original
        self.dismiss(None)
