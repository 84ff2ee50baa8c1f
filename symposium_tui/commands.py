"""The command palette (Ctrl+P): every console action by name, as a Textual command `Provider`.

The console's own commands come first in discovery order, then Textual's (keys, screenshot, …)
except its Quit and Theme, which the console has its own versions of.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.app import App, SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

if TYPE_CHECKING:
    from symposium_tui.app import SymposiumApp

__all__ = ["ConsoleCommands", "console_commands"]


def console_commands(app: SymposiumApp, screen: Screen) -> Iterable[SystemCommand]:
    """Every command the palette offers, in the order it lists them."""
    yield SystemCommand(
        "Approvals: go to the queue", "Jump to the oldest pending card (F2)", app.action_queue
    )
    yield SystemCommand(
        "Approvals: stats per pattern",
        "How often each pattern was asked and approved; rules suggested after a run",
        app.action_approval_stats,
    )
    yield SystemCommand(
        "Approvals: approve once",
        "Approve the current card (a)",
        partial(app.answer_current, "approve"),
    )
    yield SystemCommand(
        "Approvals: deny",
        "Deny the current card, with a reason (d)",
        partial(app.answer_current, "deny"),
    )
    yield SystemCommand(
        "Approvals: bypass the agent",
        "Approve, and all this agent asks from now on; saved in the settings (b)",
        partial(app.answer_current, "bypass"),
    )
    yield SystemCommand(
        "Approvals: agent's always allow",
        "The agent's own allow-always; it decides the scope, nothing saved (A)",
        partial(app.answer_current, "allow_always"),
    )
    yield SystemCommand(
        "Approvals: rule for requests like this one",
        "Edit the rule the current card proposes; saved, it approves the card (p)",
        app.propose_current,
    )
    yield SystemCommand(
        "Approvals: agent's always reject",
        "The agent's own reject-always option (R)",
        partial(app.answer_current, "reject_always"),
    )
    yield SystemCommand(
        "Approvals: approve all of this session",
        "Every pending card of the current card's session (s)",
        app.approve_current_session,
    )
    yield SystemCommand(
        "Approvals: bypass this session",
        "Allow everything the current session asks until it ends (not saved)",
        app.bypass_current_session,
    )
    yield SystemCommand(
        "Sessions: show",
        "Sessions and the history decisions behind them (2)",
        partial(app.action_show_tab, "sessions"),
    )
    yield SystemCommand(
        "Tool calls: show",
        "Every tool call, as it happens (3)",
        partial(app.action_show_tab, "toolcalls"),
    )
    yield SystemCommand("Chat: go to the chat", "Talk to an agent from here (F3)", app.action_chat)
    yield SystemCommand(
        "Chat: new conversation",
        "Start over with the current agent (Ctrl+N in the chat)",
        app._new_conversation,
    )
    chat = app.chat_pane()
    if chat is not None:
        yield SystemCommand(
            "Chat: stop the reply",
            "Cancel the agent's running turn (Esc in the chat)",
            chat.action_stop,
        )
        for choice in chat.agents:
            yield SystemCommand(
                f"Chat: talk to {choice.label}",
                f"Use {choice.label} in the built-in chat",
                partial(app._talk_to, choice.key),
            )
    yield SystemCommand(
        "Settings", "Agents, bypass, rules and preferences (F4)", app.action_settings
    )
    yield SystemCommand("Help", "Every key, by where it works (F1)", app.action_help)
    yield SystemCommand(
        "Theme: choose…",
        "Preview themes live; Enter keeps one, Esc goes back",
        app.search_themes,
    )
    from symposium_tui.themes import UNCHECKED, is_bundled

    for name in sorted(app.available_themes):
        if name in app.theme_sources:  # the bundled themes and the user's own files
            checked = "" if is_bundled(name, app.theme_sources) else f" (your file, {UNCHECKED})"
            yield SystemCommand(
                f"Theme: {name}",
                ("The theme in use" if name == app.theme else "Switch to this theme (remembered)")
                + checked,
                partial(app.set_theme, name),
                discover=False,
            )
    yield SystemCommand(
        "Quit",
        "Leave the console (Ctrl+Q); pending approvals it alone holds are denied",
        app.action_quit,
    )
    for command in App.get_system_commands(app, screen):
        if command.title not in ("Quit", "Theme"):
            yield command


class ConsoleCommands(Provider):
    """Finds the console's commands by fuzzy match (and lists the discoverable ones unasked)."""

    def _commands(self) -> list[SystemCommand]:
        return list(console_commands(cast("SymposiumApp", self.app), self.screen))

    async def discover(self) -> Hits:
        for name, help_text, callback, discover in sorted(self._commands(), key=lambda c: c[0]):
            if discover:
                yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback, *_ in self._commands():
            if (score := matcher.match(name)) > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
