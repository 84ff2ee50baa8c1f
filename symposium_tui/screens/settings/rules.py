"""Settings › Rules: the standing approval rules, in the order they are tried."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from symposium_tui.screens.settings.messages import SettingsChange, broken_settings
from symposium_tui.screens.settings.rule_form import RuleForm
from symposium_tui.typed_app import console_app
from symposium_tui.widgets.fit import set_columns

MOVE = Binding.Group("Move")  # K and J share one footer entry


class RulesPanel(Vertical):
    """The rules table: add, edit, move or remove a rule. Changes are asked of the screen
    (`SettingsChange`), never written here."""

    app = console_app()

    BINDINGS = [
        Binding("n", "new_rule", "New rule", tooltip="Add a rule (at the end of the list)"),
        Binding("e", "edit_rule", "Edit", tooltip="Edit the selected rule (Enter does too)"),
        Binding(
            "K,shift+up",
            "move_rule(-1)",
            "Move up",
            tooltip="Move the selected rule up: within one action the first matching rule decides",
            group=MOVE,
        ),
        Binding(
            "J,shift+down",
            "move_rule(1)",
            "Move down",
            tooltip="Move the selected rule down",
            group=MOVE,
        ),
        Binding(
            "x,delete", "remove_rule", "Remove", tooltip="Remove the selected rule (asks first)"
        ),
    ]

    def compose(self) -> ComposeResult:
        yield Static(
            "Standing decisions, tried in this order before a card is shown; every field a rule "
            "gives must match. Across actions deny > ask > an agent's bypass > allow, whatever the "
            "order; within one action the first matching rule decides, and its reason is what the "
            "agent is told. A command rule checks every part of a shell command; a path rule, the "
            "files after resolving symlinks.",
            classes="settings-hint",
        )
        table: DataTable[Any] = DataTable(cursor_type="row", id="rules-table", zebra_stripes=True)
        yield table
        yield Static(
            "No rules yet: every request an agent makes is asked on a card. Press n to add the "
            "first rule here, or p on a card for a rule that decides requests like that one.",
            id="rules-empty",
            classes="settings-hint",
        )

    COLUMNS = (
        ("#", "number"),
        ("Action", "action"),
        ("Agent", "agent"),
        ("Kind", "kind"),
        ("Title", "title"),
        ("Path", "path"),
        ("Command / URL", "command"),
    )
    FLOORS = (2, 6, 5, 4, 5, 4, 10)

    def on_resize(self) -> None:
        self.call_after_refresh(self.refresh_rows)  # once the table has its new width

    def refresh_rows(self) -> None:
        table = self.query_one("#rules-table", DataTable)
        row = table.cursor_row
        rules = self._rules()
        rows = [
            (
                str(i - 1),
                (
                    str(i),
                    rule.action,
                    rule.agent or "any",
                    rule.kind or "any",
                    rule.title or (f"/{rule.title_regex}/" if rule.title_regex else "any"),
                    rule.path or "any",
                    " or ".join(rule.command) if rule.command else (rule.url or "any"),
                ),
            )
            for i, rule in enumerate(rules, 1)
        ]
        set_columns(table, self.COLUMNS, rows, self.FLOORS)
        self.query_one("#rules-empty").display = not rules
        table.set_class(not rules, "-empty")  # the hint right under the header
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1))
        self.refresh_bindings()

    def _rules(self) -> list[Any]:
        settings = self.app.settings
        return list(settings.rules) if settings is not None else []

    def _selected(self) -> tuple[int, Any] | None:
        table = self.query_one("#rules-table", DataTable)
        rules = self._rules()
        if not table.row_count or not 0 <= table.cursor_row < len(rules):
            return None
        return table.cursor_row, rules[table.cursor_row]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("edit_rule", "remove_rule", "move_rule"):
            return bool(self._rules())  # nothing to select: only "New rule" is offered
        return True

    @on(DataTable.RowSelected, "#rules-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_edit_rule()

    def action_new_rule(self) -> None:
        if broken_settings(self):
            return
        self.app.push_screen(RuleForm(), self._save_rule)

    def _save_rule(self, rule: Any) -> None:
        if rule is not None:
            self.post_message(
                SettingsChange(
                    self,
                    lambda store: store.add_rule(rule),
                    lambda settings: f"Added rule {len(settings.rules)}: {rule.describe()}.",
                    select=-1,  # the rule added
                )
            )

    def action_edit_rule(self) -> None:
        selected = self._selected()
        if selected is None or broken_settings(self):
            return
        index, old = selected

        def save(rule: Any) -> None:
            if rule is not None:
                self.post_message(
                    SettingsChange(
                        self,
                        lambda store: store.replace_rule(index, rule, expect=old),
                        f"Saved rule {index + 1}: {rule.describe()}.",
                    )
                )

        self.app.push_screen(RuleForm(old, index + 1), save)

    def action_move_rule(self, step: int) -> None:
        selected = self._selected()
        if selected is None:
            return
        index, rule = selected
        to = index + step
        if not 0 <= to < len(self._rules()):
            self.notify(f"Rule {index + 1} is already {'first' if step < 0 else 'last'}.")
            return
        self.post_message(
            SettingsChange(
                self,
                lambda store: store.move_rule(index, to, expect=rule),
                f"Rule {index + 1} is now rule {to + 1}: {rule.describe()}.",
                select=to,
            )
        )

    def action_remove_rule(self) -> None:
        from symposium_tui.screens.confirm import Confirm

        selected = self._selected()
        if selected is None:
            return
        index, rule = selected

        def answered(yes: bool | None) -> None:
            if yes:
                self.post_message(
                    SettingsChange(
                        self,
                        lambda store: store.remove_rule(index, expect=rule),
                        f"Removed rule {index + 1}: {rule.describe()}.",
                    )
                )

        self.app.push_screen(
            Confirm(f"Remove rule {index + 1}: {rule.describe()}?", "remove it"), answered
        )
