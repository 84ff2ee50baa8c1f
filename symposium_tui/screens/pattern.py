""" "Always for this pattern": the rule a card proposes, shown for editing before it is saved.

The rule is built from the request (`bridge.rules.propose_rule`: `git status -s` → allow the
read-only `git status` with any arguments; any other command exactly as written, `rm -rf build $`;
a file edit → allow edits inside that directory; a fetch → URLs under that path), written out as the `[[rules]]` entry it becomes in the settings file with the request as
its first `match` example. Under it the screen says what the rule covers beyond this request
(`bridge.rules.breadth`), loudest for a destructive program allowed with any arguments, and keeps
saying it as the rule is edited. Ctrl+S (or Save) validates it — its examples run — and dismisses with the
rule; the app saves it and approves the card. Esc cancels: nothing is saved, the card stays.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static, TextArea

from symposium_tui.screens.forms import FORM_KEYS


class PatternRuleScreen(ModalScreen[Any]):
    HOLDS_KEYS = True  # F1 opens over it; F2–F4 ask this first (SymposiumApp)
    LEAVE_QUESTION = "Leave the rule editor? The rule is not saved and the card stays pending."

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save and approve", priority=True),
        *FORM_KEYS,
    ]

    DEFAULT_CLASSES = "dialog"  # its look: app.tcss
    DEFAULT_CSS = """
    PatternRuleScreen TextArea {
        height: 12;
    }
    PatternRuleScreen #pattern-error {
        color: $error;
        height: auto;
    }
    PatternRuleScreen #pattern-breadth, PatternRuleScreen #pattern-still-asked {
        color: $warning;
        height: auto;
    }
    PatternRuleScreen .form-buttons {
        height: auto;
        align-horizontal: right;
    }
    """

    def __init__(self, rule: Any, scope: str, asked: str | None = None) -> None:
        super().__init__()
        self.rule = rule
        self.scope = scope
        # Why the rules asked about this request (`ApprovalInfo.why_asked`), when a deny or ask
        # rule did or what could not be known: an allow rule changes nothing for requests like it.
        self.asked = asked

    def compose(self) -> ComposeResult:
        from bridge.settings import rule_toml

        with Vertical():
            yield Label(f"New rule: {self.scope}", classes="form-title", id="pattern-scope")
            yield Static(
                "Edit it as it will be in the settings file. Deny and ask rules still beat it."
                + self._agent_note(),
                classes="settings-hint",
                id="pattern-hint",
            )
            yield TextArea(rule_toml(self.rule), language=None, id="pattern-rule")
            yield Static(self._breadth(self.rule), id="pattern-breadth")
            if self.asked:
                yield Static(self._still_asked(self.asked), id="pattern-still-asked")
            yield Static("", id="pattern-error")
            with Horizontal(classes="form-buttons"):
                yield Button("Save and approve (^S)", variant="primary", id="save", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
        yield Footer(compact=True)  # its own keys, not the card's underneath

    def _agent_note(self) -> str:
        """The rule names the agent by its id: say who that is."""
        from bridge.settings import agent_display_name

        agent = getattr(self.rule, "agent", None)
        if not agent:
            return ""
        name = agent_display_name(agent, getattr(self.app, "settings", None))
        return f' agent = "{agent}" is {name}.' if name != agent else ""

    @staticmethod
    def _still_asked(asked: str) -> str:
        """What the rule cannot change: the request was asked by a deny or ask rule, or for what
        no allow rule can vouch for (the card says it whole)."""
        import re

        found = re.search(r"rule \d+(?: \(line \d+\))?", asked)
        who = f"{found.group(0)} asks first" if found else "no allow rule can vouch for it"
        return (
            f"⚠ It does not stop the next card for a request like this one: {who} (see the card)."
        )

    @staticmethod
    def _breadth(rule: Any) -> str:
        from bridge.rules import breadth

        notes = breadth(rule)
        return (
            "\n".join(notes) if notes else "Narrow: it allows exactly this command, nothing more."
        )

    def on_mount(self) -> None:
        self.query_one("#pattern-rule", TextArea).focus()

    @on(TextArea.Changed, "#pattern-rule")
    def _edited(self, event: TextArea.Changed) -> None:
        """Say again what the rule covers, as it is now written (nothing when it cannot be read:
        Save says why)."""
        from bridge.settings import SettingsError, rule_from_toml

        try:
            rule = rule_from_toml(event.text_area.text)
        except (SettingsError, ValueError):
            return
        self.query_one("#pattern-breadth", Static).update(self._breadth(rule))

    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        # Ctrl+S is taken before any widget sees a key: typed in one read right behind an edit,
        # it would run before the editor has the keys ahead of it. Saved from the editor's own
        # queue, after them: what is saved is what the editor shows.
        self.query_one("#pattern-rule", TextArea).call_later(self._save)

    def _save(self) -> None:
        from bridge.settings import SettingsError, rule_from_toml

        if not self.is_attached or self.app.screen is not self:
            return  # closed meanwhile
        text = self.query_one("#pattern-rule", TextArea).text
        try:
            rule = rule_from_toml(text)
        except SettingsError as exc:
            error = self.query_one("#pattern-error", Static)
            error.update(str(exc).removeprefix("settings "))
            return
        self.dismiss(rule)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
