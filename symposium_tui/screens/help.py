"""F1: every key, grouped by where it works, read from the bindings themselves so it cannot drift."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

INTRO = (
    "Symposium approves or denies what agents ask to do, shows why each request was "
    "committed or cancelled, follows every tool call, and lets you chat with an agent.\n"
    "Every action is also in the command palette (Ctrl+P). Nothing needs a mouse."
)

CARD_NOTES = (
    "A card ignores its keys until it has been on screen for a moment (the arming delay), and "
    "again whenever focus moves to it by itself, so a key meant for something else never answers "
    "it. Three ways not to be asked again: b bypasses the agent (everything it asks, saved in the "
    "settings; y confirms it, and the header says it is on), A is the agent's own “always allow” "
    "(every later request of the session it covers, kept by the agent and audited here; nothing "
    "is saved here), p saves a rule for requests like this one, as narrow as the request allows."
)


HelpGroup = tuple[str, list[BindingType], list[tuple[str, str]]]
"""A section of the help: its title, the bindings it lists, and extra (key, description) rows."""


def console_help_groups(app_bindings: list[BindingType]) -> list[HelpGroup]:
    """Every key of the console, grouped by where it works, read from the bindings themselves
    (`app_bindings`: the app's own, which work anywhere)."""
    from symposium_tui.screens.settings import AgentsPanel, RulesPanel, SettingsScreen
    from symposium_tui.widgets.approvals import ApprovalCard, ApprovalQueue
    from symposium_tui.widgets.chat import ChatPane
    from symposium_tui.widgets.sessions import SessionsPane
    from symposium_tui.widgets.toollog import ToolLogPane, ToolLogView

    return [
        (
            "Anywhere",
            list(app_bindings),
            [
                ("ctrl+p", "Command palette: every action, themes"),
                ("tab", "Next widget"),
                ("shift+tab", "Previous widget"),
            ],
        ),
        (
            "On an approval card",
            ApprovalCard.BINDINGS + ApprovalQueue.BINDINGS,
            [("enter", "(in the deny reason) Deny, with the reason if one was typed")],
        ),
        ("Sessions (2)", list(SessionsPane.BINDINGS), []),
        ("Tool calls (3)", ToolLogPane.BINDINGS + ToolLogView.BINDINGS, []),
        ("In the chat", list(ChatPane.BINDINGS), [("enter", "Send the message")]),
        (
            "Settings (F4)",
            SettingsScreen.BINDINGS + AgentsPanel.BINDINGS + RulesPanel.BINDINGS,
            [],
        ),
    ]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        # Not F1: an F-key goes somewhere and never closes anything (F1 again: still here).
        Binding("escape,q,question_mark", "dismiss", "Close"),
    ]

    DEFAULT_CLASSES = "dialog"  # its look: app.tcss
    DEFAULT_CSS = """
    HelpScreen .help-title {
        text-style: bold;
        color: $primary;
        margin-top: 1;
    }
    """

    def __init__(self, groups: list[HelpGroup]) -> None:
        """`groups`: what the app says is where (`SymposiumApp.help_groups`), so this screen
        needs to know nothing of the widgets it describes."""
        super().__init__()
        self.groups = groups

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(
                Text.assemble(("Symposium console — keys", "bold"), "  (Esc closes)"),
                classes="help-title",
            )
            yield Static(INTRO)
            for title, bindings, extra in self.groups:
                yield Static(title, classes="help-title")
                yield Static(self._table(bindings, extra))
                if title == "On an approval card":
                    yield Static(Text(CARD_NOTES, style="italic"))
            yield Static(
                Text(
                    "Esc or q closes this screen. F1–F4 always take you to their place and never "
                    "close one; Esc goes back.",
                    style="italic",
                ),
                classes="help-title",
            )

    def on_mount(self) -> None:
        self.query_one("#help").focus()

    def _table(self, bindings: list[BindingType], extra: list[tuple[str, str]]) -> Table:
        rows: list[tuple[str, str]] = []
        for binding in bindings:
            if not isinstance(binding, Binding) or not binding.description:
                continue
            keys = " / ".join(
                self.app.get_key_display(Binding(key.strip(), binding.action))
                for key in binding.key.split(",")
            )
            row = (keys, binding.tooltip or binding.description)
            if row not in rows:
                rows.append(row)
        rows.extend(
            (self.app.get_key_display(Binding(key, "")), description) for key, description in extra
        )
        # Two columns: a description that wraps stays in its own column, under its first line.
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True, style="bold")
        table.add_column(ratio=1)
        for keys, description in rows:
            table.add_row(keys, description)
        return table
