"""The console's own keys, which work anywhere: the F-keys to its places, the tab digits, Esc back,
Tab through the widgets, Ctrl+Q. F1's list shows them as "Anywhere"."""

from __future__ import annotations

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
