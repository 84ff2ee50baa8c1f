"""What the settings panels ask of the settings screen (`SettingsScreen` handles each)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual.message import Message
from textual.widget import Widget

from bridge.settings import Settings, SettingsStore


@dataclass
class SettingsChange(Message):
    """One change of the settings file. The screen writes it through the store (locked,
    validated, atomic) and puts it live, or says why it could not — and then nothing else
    happens."""

    panel: Widget
    """The panel that asked (the cursor of its table moves to `select` once written)."""
    change: Callable[[SettingsStore], Settings]
    """The change, made on the store; it returns the settings written."""
    done: str | Callable[[Settings], str] | None = None
    """What to say once written: a line, or one made from the settings written."""
    select: int | None = None
    """The row of the panel's table to select once written (-1: the last)."""


@dataclass
class ThemeChosen(Message):
    """The theme picked in Preferences: shown at once (the app remembers it)."""

    theme: str


def broken_settings(widget: Widget) -> bool:
    """Whether the settings file is broken (then nothing can be written: said, as a toast). A form
    asks before it opens, so nothing typed into it is thrown away."""
    error = getattr(widget.app, "settings_error", None)
    if error:
        widget.notify(
            f"The settings file is broken; fix it, then press r to reload.\n{error}",
            severity="error",
            timeout=8,
        )
    return bool(error)
