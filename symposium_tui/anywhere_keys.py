"""The console's own keys, which work anywhere: the F-keys to its places, the tab digits, Esc back
(or first hiding an error message), Tab through the widgets, Ctrl+Q. F1's list shows them as
"Anywhere"."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType

ANYWHERE_KEYS: list[BindingType] = [
    # F1–F4 go to their place from anywhere (priority: also from a modal screen, or while
    # typing) and never close it: over a form F1 opens on top of it, and F2–F4 first ask to
    # leave the form (what was typed is not saved); they wait while a question is open
    # (check_action).
    Binding("f1", "help", "Help", priority=True, tooltip="This list of keys"),
    Binding(
        "question_mark",
        "help",
        "Help",
        show=False,
        tooltip="This list of keys (when not typing)",
    ),
    Binding(
        "f2",
        "queue",
        "Queue",
        priority=True,
        tooltip="Jump to the oldest pending approval; Esc comes back",
    ),
    Binding("f3", "chat", "Chat", show=False, priority=True, tooltip="The built-in chat"),
    Binding(
        "f4",
        "settings",
        "Settings",
        show=False,
        priority=True,
        tooltip="Agents, bypass, rules, preferences; Esc comes back",
    ),
    Binding("1", "show_tab('approvals')", "Approvals tab (not while typing)", show=False),
    Binding("2", "show_tab('sessions')", "Sessions tab (not while typing)", show=False),
    Binding("3", "show_tab('toolcalls')", "Tool calls tab (not while typing)", show=False),
    Binding("4", "show_tab('chat')", "Chat tab (not while typing)", show=False),
    Binding(
        "escape",
        "close_keys_panel",
        "",  # no row in F1's list, whose own Esc row covers closing things
        priority=True,  # before any widget's own Esc (the chat input, a screen's close)
        show=False,
        tooltip="Close the keys panel (palette: Keys) when it is open",
    ),
    Binding(
        "escape",
        "go_back",
        "Back",
        show=False,
        tooltip="From the queue, back to where F2 came from",
    ),
    # Tab moves the focus as it arrives (priority), not after the widget that had the focus
    # has passed it on: Textual hands each key to the widget focused when the key arrives,
    # so keys typed fast after a Tab (a paste, tmux send-keys) would otherwise still land in
    # the field the Tab was meant to leave. No row in F1's list (its own rows name Tab).
    Binding("tab", "focus_step(1)", "", show=False, priority=True),
    Binding("shift+tab", "focus_step(-1)", "", show=False, priority=True),
    Binding(
        "ctrl+q",
        "quit",
        "Quit",
        priority=True,
        show=False,
        tooltip="Quit; pending approvals only this console holds are denied",
    ),
]


ESC_HIDES = " (Esc hides this.)"


def taken_first(app: Any, event: events.Key) -> bool:
    """A key the console takes before its screens see it: one typed before it was ready
    (`EarlyKeys`), or Esc hiding an error message."""
    return bool(app.early_keys.hold(event)) or hide_errors(app, event)


def hide_errors(app: App[Any], event: events.Key) -> bool:
    """Esc while an error message is shown over the screen hides the messages, and does only
    that (the screen's own Esc, and the footer, stay as they were): one may cover half a card at
    80x24 for minutes, and a terminal without a mouse cannot click it away. True when it did."""
    if event.key != "escape" or not any(n.severity == "error" for n in app._notifications):
        return False
    app.clear_notifications()
    return True
