"""The Textual console: approval queue, sessions, tool calls and a built-in chat around one bridge.

The bridge runs in this process, on the loop Textual runs. The app attaches to the approval broker
as a console (so a permission no policy decides waits for an answer here), turns the broker's
events into messages for the queue, and never calls into the bridge from a widget except through
the console handle and the chat's own connection.

Every action is reachable from the keyboard, listed in the footer or the help screen (F1), and in
the command palette (Ctrl+P).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane

from bridge.settings import (
    Preferences,
    Settings,
    SettingsError,
    SettingsStore,
)
from symposium_tui.alerts import TerminalAlerts
from symposium_tui.anywhere_keys import ANYWHERE_KEYS, ESC_HIDES, taken_first
from symposium_tui.approval_actions import ApprovalActions
from symposium_tui.bridge_attachment import CLOSED, BridgeAttachment, BridgeEvent
from symposium_tui.collector import resume_collection
from symposium_tui.commands import ConsoleCommands, console_commands
from symposium_tui.early_keys import STARTING, EarlyKeys
from symposium_tui.navigation import Navigator
from symposium_tui.pending import PendingDisplay, realign_tab_underline
from symposium_tui.themes import install_themes, variable_defaults
from symposium_tui.widgets.approvals import ApprovalCard, ApprovalQueue
from symposium_tui.widgets.chat import AgentChoice, ChatPane, agent_choice, eliza_choice
from symposium_tui.widgets.tabs import ConsoleTabs

if TYPE_CHECKING:  # the bridge loads after the first frame: its types only for the checker
    from bridge.approvals import ConsoleHandle
    from bridge.core import Bridge
    from symposium_tui.hosting.console_socket import ConsoleHost
    from symposium_tui.hosting.hosted import Hosted
    from symposium_tui.screens.help import HelpGroup
    from symposium_tui.state import ConsoleState
    from symposium_tui.wire.link_set import LinkSet

    Connect = Callable[[], Awaitable[tuple[Hosted, ConsoleHost | None]]]

TAB_TITLES = {
    "approvals": "Approvals",
    "sessions": "Sessions",
    "toolcalls": "Tool calls",
    "chat": "Chat",
}
APP_NAME = "Symposium"

__all__ = ["CLOSED", "SymposiumApp", "realign_tab_underline", "run_attached"]


class SymposiumApp(App[int]):
    """`symposium-tui`: approve agent tool calls, follow sessions and tool calls, chat."""

    COMMANDS = {ConsoleCommands}  # the command palette (symposium_tui/commands.py)
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses elsewhere find it too
    TITLE = APP_NAME
    BINDINGS = ANYWHERE_KEYS  # symposium_tui/anywhere_keys.py

    def __init__(
        self,
        hosted: Hosted | None = None,
        *,
        connect: Connect | None = None,
        state: ConsoleState | None = None,
        arm_delay: float = 0.5,
        linger: float = 2.0,
        clock: Callable[[float], str] | None = None,
        deterministic_eliza: bool = False,
        alert: bool = True,
        theme: str | None = None,
        host: ConsoleHost | None = None,
        links: LinkSet | None = None,
    ) -> None:
        super().__init__()
        if hosted is None and connect is None and links is None:
            raise ValueError("a hosted bridge, a way to connect one, or hosts to attach to")
        self.links = links  # the hosts this console attaches to
        self.hosted = hosted
        self._connect = connect
        self.settings_store: SettingsStore | None = None
        from symposium_tui.state.fatigue import FatigueStats

        self.fatigue = FatigueStats()  # approvals per pattern; suggests rules, never applies them
        self.settings_error: str | None = None
        self.settings: Settings | None = None
        self.console_state = state
        self.arm_delay = arm_delay
        self.linger = linger
        self.clock = clock
        self.deterministic_eliza = deterministic_eliza
        self.host = host
        self.openai_urls: list[str] = []  # the OpenAI-compatible API this console serves, if any
        self.alerts = TerminalAlerts(self, APP_NAME, enabled=alert)
        self.audit_warnings: list[str] = []  # audit logs found not to extend their recorded head
        self.attachment = BridgeAttachment(self)
        self.approvals = ApprovalActions(self)
        self.navigator = Navigator(self)
        self.pending = PendingDisplay(self, TAB_TITLES["approvals"])
        self.early_keys = EarlyKeys(self, holding=hosted is None and connect is not None)
        if hosted is not None:
            self._take_settings(hosted)
            preferences = self.settings.prefs if self.settings is not None else Preferences()
        else:
            # The bridge comes after the first frame; the theme is needed for that frame, and
            # reading the settings costs only the standard library.
            preferences = Settings.load_quietly().prefs
        loaded = install_themes(self, self._config_dir(), theme or preferences.theme)
        self.theme_errors = loaded.errors
        self.theme_sources = loaded.sources

    # --- settings --------------------------------------------------------------------------------------

    def _config_dir(self) -> Path:
        store = self.settings_store
        if store is not None:
            return store.path.parent
        from bridge.paths import config_dir

        return config_dir()

    @property
    def bridge(self) -> Bridge | None:
        """The bridge, once it is there (it loads after the first frame)."""
        return self.hosted.bridge if self.hosted is not None else None

    @property
    def handle(self) -> ConsoleHandle | None:
        """This console's handle on the bridge's approval broker, once attached."""
        return self.attachment.handle

    @property
    def pending_count(self) -> int:
        return self.pending.count

    def _take_settings(self, hosted: Hosted) -> None:
        self.settings_store = hosted.settings_store
        self.settings_error = hosted.settings_error
        self._load_settings()
        follower = hosted.bridge.approvals.follower
        if follower is not None:  # the file edited elsewhere: the screens follow the policy
            follower.on_change = functools.partial(_settings_followed, self)

    def _load_settings(self) -> None:
        if self.settings_store is None:
            self.settings_store = SettingsStore()
        try:
            self.settings = self.settings_store.load()
            self.settings_error = None
        except SettingsError as exc:
            self.settings = None
            self.settings_error = str(exc)

    def agent_choices(self) -> list[AgentChoice]:
        choices = [eliza_choice(deterministic=self.deterministic_eliza)]
        if self.settings is not None:
            for config in self.settings.runnable_agents().values():
                choices.append(agent_choice(config))
        return choices

    def settings_changed(self, settings: Settings) -> None:
        """The settings screen wrote the file: the live policy and the chat's agents follow."""
        self.settings = settings
        self.settings_error = None
        if self.bridge is not None:
            self.bridge.approvals.apply_settings(settings)
        if self._alive():
            self._update_pending(self.pending_count)  # the header and cards follow the bypass
        if self.bridge is None:
            return
        chat = self.chat_pane()
        if chat is not None:
            chat.set_agents(self.agent_choices())

    def bypassed_agents(self) -> set[str]:
        return self.pending.bypassed_agents()

    def set_theme(self, name: str, *, remember: bool = True) -> None:
        self.theme = name
        if remember:
            self.remember("theme", name)

    def remember(self, key: str, value: Any) -> None:
        if self.settings_store is None:
            return
        if self.settings_error:
            self.notify(
                f"Not saved: the settings file is broken ({self.settings_error})", severity="error"
            )
            return
        try:
            self.settings = self.settings_store.set_preference(key, value)
        except SettingsError as exc:
            self.settings_error = str(exc)
            self.notify(f"Not saved: {exc}", severity="error")

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return variable_defaults(self.current_theme)

    def format_title(self, title: str, sub_title: str) -> Content:
        """The header's title, then the sub-title in the theme's muted colour (Textual draws it
        dim, which some terminals make too faint to read)."""
        if not sub_title:
            return Content(title)
        muted = "$text-muted"
        return Content.assemble(Content(title), (" — ", muted), Content(sub_title).stylize(muted))

    # --- layout ------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="§")
        with ConsoleTabs(refocus=self.navigator.focus_tab, initial="approvals", id="tabs"):
            with TabPane(TAB_TITLES["approvals"], id="approvals"):
                yield ApprovalQueue(
                    None, arm_delay=self.arm_delay, linger=self.linger, clock=self.clock, id="queue"
                )
            for tab in ("sessions", "toolcalls", "chat"):
                with TabPane(TAB_TITLES[tab], id=tab):
                    if self.bridge is not None:
                        yield self.attachment.pane(tab)
                    elif self._connect is None:
                        yield Static(
                            "This console is attached to "
                            + ", ".join(self.links.labels() if self.links is not None else ())
                            + ": it answers their approvals. Their sessions, tool calls and "
                            "chat are in a console on each host.",
                            classes="placeholder",
                        )
                    else:
                        yield Static(STARTING, classes="placeholder starting")
        yield Footer(compact=True)

    @property
    def _main(self) -> Screen:
        """The console's own screen (a help or settings screen may be on top of it)."""
        return self.screen_stack[0] if self.screen_stack else self.screen

    def _alive(self) -> bool:
        """False once the console's screen is gone (a message arriving during shutdown)."""
        return bool(self.screen_stack) and bool(self.screen_stack[0].query("#tabs"))

    def _active_tab(self) -> str:
        return self._main.query_one("#tabs", TabbedContent).active

    @property
    def queue(self) -> ApprovalQueue:
        return self._main.query_one("#queue", ApprovalQueue)

    @property
    def chat(self) -> ChatPane:
        return self._main.query_one(ChatPane)

    def chat_pane(self) -> ChatPane | None:
        """The chat, once the bridge is there (it is mounted with it)."""
        if not self.screen_stack:
            return None
        panes = self.screen_stack[0].query(ChatPane)
        return panes.first() if panes else None

    def serving(self) -> list[str]:
        """What this console serves, as lines for the empty queue: its socket, the OpenAI API."""
        lines = []
        path = getattr(self.host, "path", None)
        if path is not None:
            lines.append(f"Console socket: {path}")
        lines.extend(f"OpenAI-compatible API: {url}" for url in self.openai_urls)
        return lines

    # --- start and stop ----------------------------------------------------------------------------

    def on_mount(self) -> None:
        self._main.screen_layout_refresh_signal.subscribe(self, self.pending.after_main_layout)
        self.attachment.start_links()
        if self.bridge is not None:
            self.attachment.attach_bridge()
        else:
            self._update_pending(0)
        self.navigator.focus_later("approvals", self.queue.focus_first)
        self.call_after_refresh(resume_collection)  # held from the process's start, if it was
        if self.bridge is None and self._connect is not None:
            # First frame first: the bridge (pydantic, the ACP SDK, the socket) comes right after it.
            self.call_after_refresh(self.early_keys.replay_screen_keys)
            self.call_after_refresh(
                lambda: self.run_worker(
                    self.attachment.start_bridge(), group="bridge", exit_on_error=False
                )
            )

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded and taken_first(self, event):
            return
        await super().on_event(event)

    def audit_warning(self, warning: str | None) -> None:
        """A host's audit log does not extend the head recorded last: said loudly, and kept."""
        if not warning:
            return
        self.audit_warnings.append(warning)
        self.notify(warning + ESC_HIDES, title="Audit log", severity="error", timeout=120)

    async def action_quit(self) -> None:
        """Ctrl+Q: leave, asking first when cards are pending (`BridgeAttachment.quit`)."""
        await self.attachment.quit()

    async def on_unmount(self) -> None:
        await self.shutdown()

    async def shutdown(self, reason: str | None = None) -> None:
        """Detach from the bridge and the hosts (`BridgeAttachment.shutdown`)."""
        await self.attachment.shutdown(reason)

    # --- approvals ---------------------------------------------------------------------------------

    @on(BridgeEvent)
    def _bridge_event(self, message: BridgeEvent) -> None:
        if self._alive():
            self.approvals.bridge_event(message.event)

    @on(ApprovalQueue.BypassAsked)
    def _bypass_asked(self, message: ApprovalQueue.BypassAsked) -> None:
        message.stop()
        self.approvals.confirm_bypass(message.approval_id)

    @on(ApprovalQueue.Changed)
    def _queue_changed(self, message: ApprovalQueue.Changed) -> None:
        if not self._alive():
            return
        self._update_pending(message.pending)
        if message.added is not None:
            self.approvals.alert(message.added)
        elif message.pending == 0 and self.navigator.return_to is not None:
            self.action_go_back()

    @on(ApprovalCard.Propose)
    def _propose_rule(self, message: ApprovalCard.Propose) -> None:
        self.approvals.propose_for(message.card.info)

    @on(ApprovalCard.View)
    def _view_card(self, message: ApprovalCard.View) -> None:
        from symposium_tui.screens.detail import ApprovalDetailScreen

        self.push_screen(ApprovalDetailScreen(message.card))

    def answer_current(self, answer: str) -> None:
        self.approvals.answer_current(answer)

    def approve_current_session(self) -> None:
        self.approvals.approve_current_session()

    def bypass_current_session(self) -> None:
        self.approvals.bypass_current_session()

    def confirm_bypass(self, approval_id: str) -> None:
        self.approvals.confirm_bypass(approval_id)

    def propose_current(self) -> None:
        self.approvals.propose_current()

    def propose_rule(self, rule: Any, scope: str, then: Callable[[str], Any] | None = None) -> None:
        self.approvals.propose_rule(rule, scope, then)

    def _update_pending(self, pending: int) -> None:
        self.pending.update(pending)

    @property
    def bells(self) -> int:
        """Bells rung for new cards (a headless app has no terminal to ring)."""
        return self.alerts.bells

    @property
    def terminal_title(self) -> str:
        return self.alerts.title

    # --- actions ---------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("help", "queue", "chat", "settings") and getattr(
            self.screen, "HOLDS_KEYS", False
        ):
            # A question is open: answer it (or Esc) first. A form: they ask to leave it.
            return bool(getattr(self.screen, "LEAVE_QUESTION", None))
        if action == "close_keys_panel":
            # Only while the panel is open: otherwise Esc (and the footer) stay the screen's.
            return bool(self.screen.query("HelpPanel"))
        return super().check_action(action, parameters)

    def action_show_tab(self, tab: str) -> None:
        self.navigator.show_tab(tab)

    def action_queue(self) -> None:
        self.navigator.queue()

    def action_go_back(self) -> None:
        self.navigator.go_back()

    def action_chat(self) -> None:
        if not self.navigator.leave_form_first(self.action_chat):
            self.action_show_tab("chat")

    def action_settings(self) -> None:
        self.navigator.settings()

    def close_settings(self, screen: Screen) -> None:
        self.navigator.close_settings(screen)

    def action_help(self) -> None:
        from symposium_tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.help_groups()))

    def help_groups(self) -> list[HelpGroup]:
        """Every key, grouped by where it works, read from the bindings themselves."""
        from symposium_tui.screens.help import console_help_groups

        return console_help_groups(list(self.BINDINGS))

    def action_focus_step(self, step: int) -> None:
        self.navigator.focus_step(step)

    def action_close_keys_panel(self) -> None:
        self.action_hide_help_panel()

    def action_approval_stats(self) -> None:
        from symposium_tui.screens.fatigue import ApprovalStatsScreen

        self.push_screen(ApprovalStatsScreen())

    def deliver_screenshot(
        self,
        filename: str | None = None,
        path: str | None = None,
        time_format: str | None = None,
    ) -> str | None:
        """The palette's Screenshot: into ~/Downloads when that exists, else the current directory
        (Textual's default is ~/Downloads, missing on many servers); Textual then says where."""
        if path is None and not self.is_web:
            downloads = Path("~/Downloads").expanduser()
            path = str(downloads if downloads.is_dir() else Path.cwd())
        return super().deliver_screenshot(filename, path, time_format)

    def search_themes(self) -> None:
        from symposium_tui.screens.themes import ThemePicker

        self.push_screen(ThemePicker())

    # --- the command palette ---------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The palette's commands (also what Textual's own provider would list)."""
        return console_commands(self, screen)


def run_attached(targets: list[Any], *, mouse: bool = True) -> int:
    """`symposium-tui attach HOST …`: a console with no bridge of its own, answering the approvals
    of the bridges it attaches to (`symposium_tui.wire`)."""
    import asyncio

    from symposium_tui.wire.link_set import LinkSet

    preferences = Settings.load_quietly().prefs
    if not preferences.mouse:
        mouse = False

    async def main() -> int:
        import signal

        links = LinkSet(targets, post=lambda event: None)
        app = SymposiumApp(links=links, arm_delay=preferences.arm_delay)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, app.exit)
        try:
            await app.run_async(mouse=mouse)
        finally:
            for sig in (signal.SIGTERM, signal.SIGHUP):
                loop.remove_signal_handler(sig)
            await links.stop()
        return app.return_code or 0

    return asyncio.run(main())


def _settings_followed(app: SymposiumApp, settings: Settings | None, error: str | None) -> None:
    """The bridge re-read the settings file before a decision (it changed)."""
    if settings is not None:
        app.settings_changed(settings)
        return
    was_broken, app.settings_error = app.settings_error, error
    if was_broken != error and app._alive():
        app.notify(
            f"{error}\nUntil it is fixed, its deny and ask rules stay; its allow rules and "
            "bypasses are off: what they allowed is asked.",
            title="The settings file no longer reads",
            severity="error",
            timeout=30,
        )
