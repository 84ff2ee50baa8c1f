"""The form that adds or edits one approval rule."""

from __future__ import annotations

import shlex
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Footer, Input, Label, Select, Static

from symposium_tui.screens.forms import FormScreen

TOOL_KINDS = (
    "read",
    "edit",
    "delete",
    "move",
    "search",
    "execute",
    "think",
    "fetch",
    "switch_mode",
    "other",
)


def _commands_text(commands: tuple[str, ...] | None) -> str:
    return "; ".join(commands or ())


def _split_commands(text: str) -> tuple[str, ...]:
    """`git status; git log -1` → ("git status", "git log -1"): prefixes apart at an unquoted `;`."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";")
    lexer.whitespace_split = True
    prefixes: list[str] = []
    words: list[str] = []
    for token in [*lexer, ";"]:  # ValueError on an unbalanced quote
        if token and set(token) == {";"}:
            if words:
                prefixes.append(shlex.join(words))
            words = []
        else:
            words.append(token)
    return tuple(prefixes)


class RuleForm(FormScreen):
    """A new approval rule, or one to edit: every field a rule has (leave one empty to match
    anything). A rule's examples (`match`, `not_match`) are kept and run when it is saved."""

    def __init__(self, rule: Any = None, number: int | None = None) -> None:
        super().__init__()
        self.rule = rule
        self.number = number

    def compose(self) -> ComposeResult:
        r = self.rule
        kinds = list(TOOL_KINDS)
        if r is not None and r.kind and r.kind not in kinds:
            kinds.append(r.kind)
        with Vertical():
            yield Label(
                (f"Rule {self.number}" if r is not None else "New rule")
                + " · empty fields match anything · Enter saves, Esc cancels",
                classes="form-title",
            )
            with Horizontal(classes="form-row"):
                yield Label("Action", classes="form-label")
                yield Select(
                    [("allow", "allow"), ("ask", "ask"), ("deny", "deny")],
                    value=r.action if r is not None else "allow",
                    allow_blank=False,
                    id="rule-action",
                    compact=True,
                )
            with Horizontal(classes="form-row"):
                yield Label("Agent", classes="form-label")
                yield Input(
                    (r.agent or "") if r else "",
                    placeholder="agent id (a pattern, e.g. claude*)",
                    id="rule-agent",
                    compact=True,
                )
            yield Static(self._agent_ids(), id="rule-agent-ids", classes="settings-hint form-note")
            with Horizontal(classes="form-row"):
                yield Label("Kind", classes="form-label")
                yield Select(
                    [(k, k) for k in kinds],
                    value=r.kind if r is not None and r.kind else Select.NULL,
                    prompt="any",
                    id="rule-kind",
                    compact=True,
                )
            for name, label, value, placeholder in (
                ("title", "Title", r and r.title, "a pattern, e.g. read *"),
                (
                    "title-regex",
                    "Title re",
                    r and r.title_regex,
                    "a regular expression, e.g. ^git ",
                ),
                ("path", "Path", r and r.path, "a directory the call's files must lie in"),
                (
                    "command",
                    "Commands",
                    r and _commands_text(r.command),
                    "prefixes, ; between them (e.g. git status; git diff)",
                ),
                ("url", "URL", r and r.url, "a prefix, e.g. https://docs.rs/"),
                ("reason", "Reason", r and r.reason, "told to the agent when it denies"),
            ):
                with Horizontal(classes="form-row"):
                    yield Label(label, classes="form-label")
                    yield Input(
                        value or "", placeholder=placeholder, id=f"rule-{name}", compact=True
                    )
            if r is not None and (r.match or r.not_match):
                yield Static(
                    f"Examples kept: {len(r.match)} it must match, {len(r.not_match)} it must not; "
                    "they run when you save (edit them in the settings file).",
                    classes="settings-hint",
                )
            # Why the rule was not saved: in the form, beside what to change (a toast would
            # cover the buttons at 80x24, and be gone before it is read).
            yield Static("", id="rule-error", classes="form-error")
            with Horizontal(classes="form-buttons"):
                yield Button(
                    "Save" if r is not None else "Add", variant="primary", id="save", compact=True
                )
                yield Button("Cancel", id="cancel", compact=True)
        yield Footer(compact=True)

    def _agent_ids(self) -> str:
        """The ids a rule's agent is matched against, each with the name a person knows it by."""
        from bridge.settings import agent_display_name

        settings = getattr(self.app, "settings", None)
        ids = ["eliza", *(settings.agents if settings is not None else ())]
        named = [
            f"{agent_id} = {agent_display_name(agent_id, settings)}"
            if agent_display_name(agent_id, settings) != agent_id
            else agent_id
            for agent_id in dict.fromkeys(ids)
        ]
        return "Agent ids: " + ", ".join(named)

    def on_mount(self) -> None:
        self.query_one("#rule-error").display = False
        self.query_one("#rule-action").focus()

    def _not_saved(self, why: str, field: str | None = None) -> None:
        """Say why the rule was not saved, under the fields, and go to the field to change."""
        error = self.query_one("#rule-error", Static)
        error.update("Not saved: " + why)
        error.display = True
        name = (field or "").replace("_", "-")
        if name and self.query(f"#rule-{name}"):
            self.query_one(f"#rule-{name}").focus()

    def _save(self) -> None:
        from bridge.rules import Rule, RuleError

        def text(name: str) -> str | None:
            return self.query_one(f"#rule-{name}", Input).value.strip() or None

        kind = self.query_one("#rule-kind", Select).value
        action = self.query_one("#rule-action", Select).value
        old = self.rule
        command_text = text("command") or ""
        try:
            if old is not None and command_text == _commands_text(old.command):
                commands = old.command  # as written in the file
            else:
                commands = _split_commands(command_text) or None
        except ValueError as exc:
            self._not_saved(f"commands: {exc}", "command")
            return
        try:
            rule = Rule(
                action=str(action),  # type: ignore[arg-type]  # a bad action raises RuleError, shown below
                kind=kind if isinstance(kind, str) else None,
                title=text("title"),
                title_regex=text("title-regex"),
                agent=text("agent"),
                path=text("path"),
                command=commands,
                url=text("url"),
                reason=text("reason"),
                match=list(old.match) if old is not None else [],
                not_match=list(old.not_match) if old is not None else [],
            )
        except RuleError as exc:
            self._not_saved(f"{exc.field or 'rule'}: {exc.reason}", exc.field)
            return
        problems = rule.check_examples()
        if problems:
            self._not_saved(
                "the rule " + "; ".join(problems) + ". Change the rule, or its examples in the "
                "settings file."
            )
            return
        self.dismiss(rule)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._save()

    @on(Button.Pressed, "#save")
    def _save_pressed(self) -> None:
        self._save()
