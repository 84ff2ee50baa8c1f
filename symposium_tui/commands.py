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
    yield from approval_commands(app)
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
    yield from chat_commands(app)
    yield SystemCommand(
        "Settings", "Agents, bypass, rules and preferences (F4)", app.action_settings
    )
    yield SystemCommand("Help", "Every key, by where it works (F1)", app.action_help)
    yield from theme_commands(app)
    yield SystemCommand(
        "Quit",
        "Leave the console (Ctrl+Q); pending approvals it alone holds are denied",
        app.action_quit,
    )
    for command in App.get_system_commands(app, screen):
        if command.title not in ("Quit", "Theme"):
            yield command


def approval_commands(app: SymposiumApp) -> Iterable[SystemCommand]:
    """The queue, its stats, and each card key on the current card (the card's key table)."""
    from symposium_tui.widgets.approvals.keys import palette_commands

    yield SystemCommand(
        "Approvals: go to the queue", "Jump to the oldest pending card (F2)", app.action_queue
    )
    yield SystemCommand(
        "Approvals: stats per pattern",
        "How often each pattern was asked and approved; rules suggested after a run",
        app.action_approval_stats,
    )
    yield from palette_commands(app)
    yield SystemCommand(
        "Approvals: bypass this session",
        "Allow everything the current session asks until it ends (not saved)",
        app.bypass_current_session,
    )


def chat_commands(app: SymposiumApp) -> Iterable[SystemCommand]:
    yield SystemCommand("Chat: go to the chat", "Talk to an agent from here (F3)", app.action_chat)
    yield SystemCommand(
        "Chat: new chat",  # as the footer says it
        "A new conversation with the current agent (Ctrl+N in the chat)",
        app.navigator.new_conversation,
    )
    chat = app.chat_pane()
    if chat is None:
        return
    yield SystemCommand(
        "Chat: stop the reply",
        "Cancel the agent's running turn (Esc in the chat)",
        chat.action_stop,
    )
    for choice in chat.agents:
        yield SystemCommand(
            f"Chat: talk to {choice.label}",
            f"Use {choice.label} in the built-in chat",
            partial(app.navigator.talk_to, choice.key),
        )


def theme_commands(app: SymposiumApp) -> Iterable[SystemCommand]:
    """The theme picker, then one (undiscovered) command per bundled or user theme."""
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
