"""What every form screen shares."""

from __future__ import annotations

from textual.binding import Binding

# A form's own footer (a modal screen shows only its own keys) names the F-keys that work over it:
# SymposiumApp's priority bindings act on them first (F1 opens over the form, F2–F4 ask to leave).
FORM_KEYS = [
    Binding("f1", "app.help", "Help"),
    Binding("f2", "app.queue", "Queue…"),
    Binding("f3", "app.chat", "Chat…"),
    Binding("f4", "app.settings", "Settings…"),
]
