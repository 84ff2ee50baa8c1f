"""What every form screen shares: the F-keys that work over it, the centred modal with Save and
Cancel, and a checkbox that shows its state without colour."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.binding import Binding
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox

# A form's own footer (a modal screen shows only its own keys) names the F-keys that work over it:
# SymposiumApp's priority bindings act on them first (F1 opens over the form, F2–F4 ask to leave).
FORM_KEYS = [
    Binding("f1", "app.help", "Help"),
    Binding("f2", "app.queue", "Queue…"),
    Binding("f3", "app.chat", "Chat…"),
    Binding("f4", "app.settings", "Settings…"),
]


class TickBox(Checkbox):
    """A checkbox whose state is a shape, not only a colour: X when on, blank when off
    (Textual's shows X either way, which NO_COLOR and monochrome terminals cannot tell apart)."""

    @property
    def _button(self) -> Content:
        self.BUTTON_INNER = "X" if self.value else " "
        return super()._button


class FormScreen(ModalScreen[Any]):
    """A centred modal form with Save / Cancel buttons; Esc or Cancel dismisses with None."""

    HOLDS_KEYS = True  # F1 opens over it; F2–F4 ask this first (SymposiumApp)
    LEAVE_QUESTION = "Leave this form? What you typed in it is not saved."

    BINDINGS = [Binding("escape", "cancel", "Cancel"), *FORM_KEYS]

    DEFAULT_CLASSES = "dialog"  # the look every dialog shares (app.tcss)
    DEFAULT_CSS = """
    FormScreen > Vertical {
        width: 70;
        height: auto;
    }
    FormScreen Input {
        margin-bottom: 0;
    }
    FormScreen .form-buttons {
        height: auto;
        align-horizontal: right;
    }
    FormScreen .form-row {
        height: auto;
    }
    FormScreen .form-label {
        width: 10;
        color: $text-muted;
    }
    FormScreen .form-row > Input, FormScreen .form-row > Select {
        width: 1fr;
    }
    FormScreen .form-note {
        padding-left: 10;
    }
    FormScreen .form-error {
        color: $text-error;
    }
    """

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
