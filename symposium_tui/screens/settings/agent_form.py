"""The form that adds or edits one `[agents.<id>]` entry."""

from __future__ import annotations

import re
import shlex
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Footer, Input, Label, Static

from bridge.settings import AgentConfig
from symposium_tui.screens.forms import FormScreen, TickBox

AGENT_ID = re.compile(r"[A-Za-z0-9._-]+")


class AgentForm(FormScreen):
    """Add or edit one `[agents.<id>]` entry. Enter in any field saves; Esc cancels. Every field
    has its label; what cannot be saved (no command, an id with spaces or one already taken) is
    said under its field, and nothing is saved."""

    FIELDS = (
        ("id", "Id", "e.g. claude: rules, bypass and --agent use it"),
        ("name", "Name", "what the chat and the cards call it"),
        ("command", "Command", "the program to run, e.g. npx"),
        ("args", "Args", "its arguments, as in a shell"),
        ("description", "About", "a line on what it is (optional)"),
    )

    def __init__(self, agent: Any) -> None:
        super().__init__()
        self.agent = agent

    def compose(self) -> ComposeResult:
        a = self.agent
        values = {
            "id": a.id if a else "",
            "name": a.name if a else "",
            "command": (a.command or "") if a else "",
            "args": shlex.join(a.args) if a else "",
            "description": (a.description or "") if a else "",
        }
        with Vertical():
            yield Label(
                (f"Agent {a.id}" if a is not None else "New agent") + " · Enter saves, Esc cancels",
                classes="form-title",
            )
            for name, label, placeholder in self.FIELDS:
                with Horizontal(classes="form-row"):
                    yield Label(label, classes="form-label")
                    yield Input(
                        values[name],
                        placeholder=placeholder,
                        id=f"agent-{name}",
                        disabled=name == "id" and a is not None,
                        compact=True,
                    )
                yield Static("", id=f"agent-{name}-error", classes="form-error form-note")
            yield TickBox(
                "Bypass: always allow this agent",
                bool(a and a.bypass),
                id="agent-bypass",
                compact=True,
            )
            with Horizontal(classes="form-buttons"):
                yield Button("Save", variant="primary", id="save", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        for error in self.query(".form-error"):
            error.display = False
        self.query_one("#agent-name" if self.agent is not None else "#agent-id").focus()

    def _value(self, name: str) -> str:
        return self.query_one(f"#agent-{name}", Input).value.strip()

    def _problems(self) -> dict[str, str]:
        """What keeps this entry from being saved, by field."""
        from bridge.settings import BUILTIN_AGENT_IDS

        problems: dict[str, str] = {}
        agent_id = self._value("id")
        if self.agent is None:
            settings = getattr(self.app, "settings", None)
            taken = settings.agents if settings is not None else {}
            if not agent_id:
                problems["id"] = "An agent needs an id."
            elif not AGENT_ID.fullmatch(agent_id):
                problems["id"] = (
                    "Letters, digits, - _ and . only (no spaces): rules, bypass and "
                    "`acp --agent` name the agent by its id."
                )
            elif agent_id in BUILTIN_AGENT_IDS:
                problems["id"] = f"{agent_id} is the built-in Eliza's id: choose another."
            elif agent_id in taken:
                problems["id"] = f"There is an agent {agent_id} already: choose another id."
        # An entry that only carries settings (a bypass given on a card) may stay without one.
        needs_command = self.agent is None or bool(self.agent.command)
        if needs_command and not self._value("command"):
            problems["command"] = "An agent needs the program that runs it (e.g. npx)."
        try:
            shlex.split(self._value("args"))
        except ValueError as exc:
            problems["args"] = f"Not as in a shell: {exc}."
        return problems

    def _show_problems(self, problems: dict[str, str]) -> None:
        for name, _, _ in self.FIELDS:
            error = self.query_one(f"#agent-{name}-error", Static)
            error.update(problems.get(name, ""))
            error.display = name in problems
        first = next((name for name, _, _ in self.FIELDS if name in problems), None)
        if first is not None:
            self.query_one(f"#agent-{first}", Input).focus()

    def _save(self) -> None:
        problems = self._problems()
        self._show_problems(problems)
        if problems:
            return
        env = dict(self.agent.env) if self.agent is not None else {}
        agent_id = self._value("id")
        config = AgentConfig(
            id=agent_id,
            name=self._value("name") or agent_id,
            command=self._value("command") or None,
            args=shlex.split(self._value("args")),
            env=env,
            description=self._value("description") or None,
            bypass=self.query_one("#agent-bypass", Checkbox).value,
        )
        if not config.bypass or (self.agent is not None and self.agent.bypass):
            self.dismiss(config)
            return
        # Turning bypass on here is as deliberate as on a card: the same question first.
        from symposium_tui.screens.confirm import ConfirmBypass
        from symposium_tui.widgets.approvals import still_asked_by

        def answered(yes: bool | None) -> None:
            if yes:
                self.dismiss(config)

        still = still_asked_by(self.app, agent_id)
        self.app.push_screen(ConfirmBypass(config.name, still, approves=False), answered)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._save()

    @on(Button.Pressed, "#save")
    def _save_pressed(self) -> None:
        self._save()
