"""The Textual console: approval queue, sessions, tool calls and a built-in chat around one bridge.

The bridge runs in this process, on the loop Textual runs. The app attaches to the approval broker
as a console (so a permission no policy decides waits for an answer here), turns the broker's
events into messages for the queue, and never calls into the bridge from a widget except through
the console handle and the chat's own connection.

Every action is reachable from the keyboard, listed in the footer or the help screen (F1), and in
the command palette (Ctrl+P).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Header, Static, Tab, TabbedContent, TabPane

from bridge.settings import (
    Preferences,
    Settings,
    SettingsError,
    SettingsStore,
    agent_display_name,
)
from symposium_tui.alerts import TerminalAlerts
from symposium_tui.commands import ConsoleCommands, console_commands
from symposium_tui.themes import DEFAULT_THEME, load_themes, variable_defaults
from symposium_tui.widgets.approvals import ApprovalCard, ApprovalInfo, ApprovalQueue
from symposium_tui.widgets.chat import AgentChoice, ChatPane, agent_choice, eliza_choice
from symposium_tui.wire.transport import console_name

if TYPE_CHECKING:  # the bridge loads after the first frame: its types only for the checker
    from bridge import events as ev
    from bridge.approvals import Answer, ApprovalBroker, ConsoleHandle
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
CLOSED = "the console was closed"  # what the agent and the client hear about cards left pending


class BridgeEvent(Message):
    """An approval event from the bridge's bus, delivered on the app's message queue."""

    def __init__(self, event: ev.ApprovalRequested | ev.ApprovalResolved) -> None:
        super().__init__()
        self.event = event


class _ConsoleAnswerer:
    """The queue's way to answer: this console's handle on the broker, and the links to the hosts
    it is attached to (`symposium_tui.links`), each answering the cards that came from it."""

    def __init__(
        self,
        broker: ApprovalBroker | None = None,
        handle: ConsoleHandle | None = None,
        links: LinkSet | None = None,
    ) -> None:
        self.broker = broker
        self.handle = handle
        self.links = links

    def answer(self, approval_id: str, answer: str, reason: str | None = None) -> bool:
        if self.links is not None and self.links.owns(approval_id):
            return self.links.answer(approval_id, answer, reason)
        if self.handle is None:
            return False
        # The card offers only the answers the broker knows (ApprovalInfo.offers).
        return self.handle.answer(approval_id, cast("Answer", answer), reason)

    def approve_all(self, connection: str, session_id: str) -> int:
        n = 0
        if self.links is not None:
            n += self.links.approve_all(connection, session_id)
        if self.handle is not None and self.broker is not None:
            n += self.broker.approve_all(connection, session_id, who=self.handle.name)
        return n


def realign_tab_underline(tab: Tab) -> None:
    """Move the underline of `tab`'s tab bar to under its active tab as the bar is laid out now.

    Textual has no call for this; it moves the underline when a tab is relabelled (that is what
    `Tab.label` is for), so the tab is given its own label again. The move waits for the next
    refresh and reads where the active tab is then. Tested in tests/symposium_tui/test_approvals.py
    (a wrong underline put right by this alone), which fails if Textual stops doing so."""
    tab.label = tab.label


class SymposiumApp(App[int]):
    """`symposium-tui`: approve agent tool calls, follow sessions and tool calls, chat."""

    COMMANDS = {ConsoleCommands}  # the command palette (symposium_tui/commands.py)
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses elsewhere find it too
    TITLE = APP_NAME
    BINDINGS = [
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
        self.handle: ConsoleHandle | None = None
        self.pending_count = 0
        # The Approvals tab's label changed and the underline has not been put right since.
        self._relabelled = False
        self.alerts = TerminalAlerts(self, APP_NAME, enabled=alert)
        self.audit_warnings: list[str] = []  # audit logs found not to extend their recorded head
        self._unsubscribe: Callable[[], None] | None = None
        self._return_to: tuple[str, Widget | None] | None = None
        self._settings_from: tuple[str, Widget | None] | None = None  # where F4 opened Settings
        self._shut_down = False
        self._quit_confirmed = False
        self._chat: ChatPane | None = None  # kept for shutdown: the DOM may be gone by then
        # Keys that came before what they are for: before the console's screen is up, or for a
        # tab whose pane comes with the bridge while it is still starting. Kept in order and
        # handed on once it is there (`_hold_early_key`, `_replay_early_keys`).
        self._early_keys: list[tuple[str, str | None]] | None = (
            [] if hosted is None and connect is not None else None
        )
        if hosted is not None:
            self._take_settings(hosted)
            preferences = self.settings.prefs if self.settings is not None else Preferences()
        else:
            # The bridge comes after the first frame; the theme is needed for that frame, and
            # reading the settings costs only the standard library.
            preferences = Settings.load_quietly().prefs
        loaded = load_themes(self._config_dir())
        self.theme_errors = loaded.errors
        self.theme_sources = loaded.sources
        for t in loaded.themes.values():
            self.register_theme(t)
        wanted = theme or preferences.theme
        self.theme = (
            wanted if isinstance(wanted, str) and wanted in self.available_themes else DEFAULT_THEME
        )

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

    def _take_settings(self, hosted: Hosted) -> None:
        self.settings_store = hosted.settings_store
        self.settings_error = hosted.settings_error
        self._load_settings()

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
        with TabbedContent(initial="approvals", id="tabs"):
            with TabPane(TAB_TITLES["approvals"], id="approvals"):
                yield ApprovalQueue(
                    None, arm_delay=self.arm_delay, linger=self.linger, clock=self.clock, id="queue"
                )
            for tab in ("sessions", "toolcalls", "chat"):
                with TabPane(TAB_TITLES[tab], id=tab):
                    if self.bridge is not None:
                        yield self._pane(tab)
                    elif self._connect is None:
                        yield Static(
                            "This console is attached to "
                            + ", ".join(self.links.labels() if self.links is not None else ())
                            + ": it answers their approvals. Their sessions, tool calls and "
                            "chat are in a console on each host.",
                            classes="placeholder",
                        )
                    else:
                        yield Static(
                            "Starting the bridge… what you type here now is kept for it.",
                            classes="placeholder starting",
                        )
        yield Footer(compact=True)

    def _pane(self, tab: str) -> Widget:
        bridge = self.bridge
        assert bridge is not None, "the panes come with the bridge"
        if tab == "sessions":
            from symposium_tui.widgets.sessions import SessionsPane

            return SessionsPane(self._state(), bridge)
        if tab == "toolcalls":
            from symposium_tui.widgets.toollog import ToolLogPane

            return ToolLogPane(self._state())
        self._chat = ChatPane(bridge, self.agent_choices(), id="chat-pane")
        return self._chat

    def _state(self) -> ConsoleState:
        if self.console_state is None:
            from symposium_tui.state import ConsoleState

            self.console_state = ConsoleState(self.bridge)
        return self.console_state

    @property
    def _main(self) -> Screen:
        """The console's own screen (a help or settings screen may be on top of it)."""
        return self.screen_stack[0] if self.screen_stack else self.screen

    def _alive(self) -> bool:
        """False once the console's screen is gone (a message arriving during shutdown)."""
        return bool(self.screen_stack) and bool(self.screen_stack[0].query("#tabs"))

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

    def on_mount(self) -> None:
        self._main.screen_layout_refresh_signal.subscribe(self, self._after_main_layout)
        if self.links is not None:
            self.links.post = self._post_link_event
            self.queue.answerer = _ConsoleAnswerer(links=self.links)
            self.links.start()
        if self.bridge is None and self._connect is None:
            self._update_pending(0)
            self._focus_later("approvals", self.queue.focus_first)
        elif self.bridge is not None:
            self._attach_bridge()
            self._focus_later("approvals", self.queue.focus_first)
        else:
            # First frame first: the bridge (pydantic, the ACP SDK, the socket) comes right after it.
            self._update_pending(0)
            self._focus_later("approvals", self.queue.focus_first)
            self.call_after_refresh(self._replay_screen_keys)
            self.call_after_refresh(
                lambda: self.run_worker(self._start_bridge(), group="bridge", exit_on_error=False)
            )

    async def _start_bridge(self) -> None:
        assert self._connect is not None
        try:
            hosted, self.host = await self._connect()
        except Exception as exc:  # another console already runs, a socket that cannot be made, ...
            self.exit(return_code=1, message=f"symposium-tui: {exc}")
            return
        self.hosted = hosted
        self._take_settings(hosted)
        for tab in ("sessions", "toolcalls", "chat"):
            pane = self._main.query_one(f"#{tab}", TabPane)
            await pane.query(".starting").remove()
            await pane.mount(self._pane(tab))
        self._attach_bridge()
        early = self.host.early_handle if self.host is not None else None
        if early is not None:
            early.detach()  # what it held is offered to this console's own handle now
        if self._active_tab() == "chat":
            self.chat.focus_input()
        self.call_after_refresh(self._replay_early_keys)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded and self._hold_early_key(event):
            return
        await super().on_event(event)

    def _hold_early_key(self, key: events.Key) -> bool:
        """Keep a key that came too early: before the console's screen is up (any key), or, while
        the bridge starts, one typed in a tab whose pane comes with it (not the F-keys and other
        keys that work anywhere). Under load the bridge can take seconds to come; a person who
        pressed F3 and started typing loses nothing."""
        early = self._early_keys
        if early is None:
            return False
        alive = self._alive()
        if alive and (
            len(self.screen_stack) > 1
            or self._active_tab() == "approvals"
            or key.key in self._anywhere_keys()
        ):
            return False
        early.append((key.key, key.character))
        if alive:
            typed = "".join(c or "" for _, c in early if c and c.isprintable())
            for note in self._main.query(".starting").results(Static):
                note.update(
                    "Starting the bridge… what you type here now is kept for it."
                    + (f"\nKept: {typed}" if typed else "")
                )
        return True

    def _anywhere_keys(self) -> set[str]:
        return {
            key
            for binding in self.BINDINGS
            if isinstance(binding, Binding) and binding.priority
            for key in binding.key.split(",")
        }

    def _replay_screen_keys(self) -> None:
        """The screen is up: keys that came before it go on now; those for a pane still to come
        stay kept until the bridge brings it."""
        early = self._early_keys or []
        self._early_keys = None
        for key, character in early:
            self.post_message(events.Key(key, character))
        if self.bridge is None:
            self._early_keys = []

    def _replay_early_keys(self) -> None:
        """Hand the keys kept so far on, in order, to what has the focus now."""
        early, self._early_keys = self._early_keys or [], None
        for key, character in early:
            self.post_message(events.Key(key, character))

    def serving(self) -> list[str]:
        """What this console serves, as lines for the empty queue: its socket, the OpenAI API."""
        lines = []
        path = getattr(self.host, "path", None)
        if path is not None:
            lines.append(f"Console socket: {path}")
        lines.extend(f"OpenAI-compatible API: {url}" for url in self.openai_urls)
        return lines

    def _post_link_event(self, event: Any) -> None:
        self.post_message(BridgeEvent(event))

    def _attach_bridge(self) -> None:
        bridge = self.bridge
        assert bridge is not None
        broker = bridge.approvals
        self.handle = broker.attach(console_name())
        self.queue.answerer = _ConsoleAnswerer(broker, self.handle, self.links)
        self._unsubscribe = bridge.bus.subscribe(self._on_bus_event)
        state = self._state()
        if not state.attached:
            state.attach()
        self.queue.show_serving(self.serving())
        for pending in list(broker.pending.values()):
            self.queue.add(ApprovalInfo.from_pending(pending))
        self._update_pending(len(self.queue.pending))
        self.run_worker(self._check_own_audit(), group="audit", exit_on_error=False)
        if self.settings_error:
            self.notify(f"Settings not loaded: {self.settings_error}", severity="error", timeout=10)
        for error in self.theme_errors:
            self.notify(f"Theme skipped: {error}", severity="warning", timeout=10)

    def audit_warning(self, warning: str | None) -> None:
        """A host's audit log does not extend the head recorded last: said loudly, and kept."""
        if not warning:
            return
        self.audit_warnings.append(warning)
        self.notify(warning, title="Audit log", severity="error", timeout=120)

    async def _check_own_audit(self) -> None:
        """This console's own bridge: its audit head, recorded (or found not to extend the one
        recorded last) like an attached host's."""
        import asyncio

        from bridge.approvals import host_name
        from bridge.audit import head_report
        from symposium_tui import audit_heads

        bridge = self.bridge
        audit = bridge.approvals.audit if bridge is not None else None
        if audit is None:
            return
        host = host_name()
        try:
            report = await asyncio.to_thread(head_report, audit.path, audit_heads.seen(host))
            warning = audit_heads.observe(host, report)
        except (OSError, ValueError) as exc:
            warning = f"audit heads not checked: {exc}"
        self.audit_warning(warning)

    def _focus_later(self, tab: str, focus: Callable[[], Any]) -> None:
        """Focus after the next refresh, unless the person has moved to another tab meanwhile
        (focusing a widget in a hidden tab would switch back to it)."""

        def run() -> None:
            if self._active_tab() == tab and len(self.screen_stack) == 1:
                focus()

        self.call_after_refresh(run)

    def _on_bus_event(self, event: ev.Event) -> None:
        # Called synchronously by the bridge; hand the event to the app's own queue.
        from bridge import events as ev

        if isinstance(event, (ev.ApprovalRequested, ev.ApprovalResolved)):
            self.post_message(BridgeEvent(event))

    async def action_quit(self) -> None:
        """Ctrl+Q. With cards pending, ask first, saying what leaving does to them: this console's
        own are denied, an attached host's stay with that host."""
        cards = self.queue.pending if self._alive() else []
        if cards and not self._quit_confirmed:
            from symposium_tui.screens.confirm import ConfirmQuit

            own = sum(1 for c in cards if c.info.host is None)
            held: dict[str, int] = {}
            for card in cards:
                if card.info.host is not None:
                    held[card.info.host] = held.get(card.info.host, 0) + 1
            if not isinstance(self.screen, ConfirmQuit):
                self.push_screen(ConfirmQuit(own, held), self._quit_answered)
            return
        # While the screen is still up, so the chat can let its agent finish.
        await self.shutdown(reason=CLOSED)
        self.exit()

    async def _quit_answered(self, leave: bool | None) -> None:
        if leave:
            self._quit_confirmed = True
            await self.action_quit()

    async def on_unmount(self) -> None:
        await self.shutdown()

    async def shutdown(self, reason: str | None = None) -> None:
        """Leave the bridge as we found it: the console detaches (pending approvals it alone held are
        denied, failing closed, with `reason`) and the chat's connection closes once its agent has
        finished."""
        if self._shut_down:
            return
        self._shut_down = True
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self.handle is not None:
            handle, self.handle = self.handle, None
            handle.detach(reason)
        if self.links is not None:
            await self.links.stop()
        state = self.console_state
        if state is not None and state.attached:
            state.detach()
        chat = self.chat_pane() or self._chat
        if chat is not None:
            await chat.close()
        self.alerts.restore()  # the terminal's own title back, where it can

    # --- bridge events ---------------------------------------------------------------------------------

    @on(BridgeEvent)
    def _bridge_event(self, message: BridgeEvent) -> None:
        event = message.event
        if not self._alive():
            return
        if event.type == "approval_requested":
            self.queue.add(ApprovalInfo.from_event(event))
            self.fatigue.requested(
                event.approval_id,
                event.agent,
                event.tool_call,
                event.ts,
                agent_display_name(event.agent, self.settings),
            )
        elif event.type == "approval_resolved":
            self.queue.resolve(event)
            chat = self.chat_pane()
            if chat is not None:
                chat.approval_resolved(event)
            if event.resolver == "link":
                return  # not settled: only out of reach for now (an attached host's link dropped)
            worth = self.fatigue.resolved(
                event.approval_id, event.outcome, event.resolver, event.ts
            )
            if worth is not None:
                self.notify(
                    f"Approved {worth.in_a_row} times in a row: {worth.key}. A rule could answer "
                    "these: Approval stats (command palette) proposes one for you to edit.",
                    title="Rule suggested",
                    timeout=10,
                )
        elif event.type == "audit_head":
            self.audit_warning(event.warning)
        elif event.type == "link_state":
            if event.state == "up":
                self.notify(f"Attached to {event.host}.", timeout=3)
            else:
                self.notify(
                    f"Link to {event.host} down: {event.detail}. Reconnecting…",
                    severity="warning",
                    timeout=6,
                )

    @on(ApprovalQueue.BypassAsked)
    def _bypass_asked(self, message: ApprovalQueue.BypassAsked) -> None:
        message.stop()
        self.confirm_bypass(message.approval_id)

    def confirm_bypass(self, approval_id: str) -> None:
        """Bypass answers a card only once the person confirms it, in a modal that says what it
        covers (this agent, saved, until turned off, still under deny and ask rules)."""
        question = self.queue.bypass_question(approval_id)
        if question is None:
            return
        from symposium_tui.screens.confirm import ConfirmBypass

        agent, still = question

        def answered(yes: bool | None) -> None:
            if yes:
                self.queue.answer(approval_id, "bypass")

        self.push_screen(ConfirmBypass(agent, still, approves=True), answered)

    @on(ApprovalQueue.Changed)
    def _queue_changed(self, message: ApprovalQueue.Changed) -> None:
        if not self._alive():
            return
        self._update_pending(message.pending)
        if message.added is not None:
            self._alert(message.added)
        elif message.pending == 0 and self._return_to is not None:
            self.action_go_back()

    @on(ApprovalCard.Propose)
    def _propose_rule(self, message: ApprovalCard.Propose) -> None:
        self._propose_for(message.card.info)

    def propose_current(self) -> None:
        """The palette's `p`: the rule the current card proposes."""
        card = self.queue.current_card()
        if card is None:
            self.notify("No approval is pending.")
        elif card.info.proposal() is None or not card.info.offers("approve"):
            self.notify("No rule can be proposed for this request.", severity="warning")
        else:
            self._propose_for(card.info)

    def _propose_for(self, info: ApprovalInfo) -> None:
        """The card's "a rule for requests like this one": edit it; saved, it approves."""
        rule = info.proposal()
        if rule is not None:
            self.propose_rule(
                rule,
                info.pattern_scope() or "",
                lambda: self.queue.answer(info.approval_id, "approve"),
            )

    def propose_rule(self, rule: Any, scope: str, then: Callable[[], Any] | None = None) -> None:
        """Show a proposed rule for editing; save it when the person does (then run `then`)."""
        from symposium_tui.screens.pattern import PatternRuleScreen

        def saved(edited: Any) -> None:
            if edited is None:
                return
            if self.settings_store is None or self.settings_error:
                self.notify("Not saved: the settings file cannot be written.", severity="error")
                return
            from bridge.settings import SettingsError

            try:
                settings = self.settings_store.add_rule(edited)
            except (SettingsError, ValueError) as exc:
                self.notify(f"Not saved: {exc}", severity="error", timeout=8)
                return
            self.settings_changed(settings)
            self.notify(f"Saved rule {len(settings.rules)}: {edited.describe()}.")
            if then is not None:
                then()

        self.push_screen(PatternRuleScreen(rule, scope), saved)

    def action_approval_stats(self) -> None:
        from symposium_tui.screens.fatigue import ApprovalStatsScreen

        self.push_screen(ApprovalStatsScreen())

    @on(ApprovalCard.View)
    def _view_card(self, message: ApprovalCard.View) -> None:
        from symposium_tui.screens.detail import ApprovalDetailScreen

        self.push_screen(ApprovalDetailScreen(message.card))

    def _update_pending(self, pending: int) -> None:
        self.pending_count = pending
        label = f"{TAB_TITLES['approvals']} ({pending})" if pending else TAB_TITLES["approvals"]
        tabs = self._main.query_one("#tabs", TabbedContent)
        tab = tabs.get_tab("approvals")
        if tab.label.plain != label:
            tab.label = label
            self._relabelled = True
        tab.set_class(pending > 0, "-pending")
        self.sub_title = (
            f"{pending} pending approval{'s' * (pending != 1)}"
            if pending
            else "no pending approvals"
        ) + self._bypass_note()
        chat = self.chat_pane()
        if chat is not None:
            chat.show_pending([c.info for c in self.queue.pending])
        self.alerts.set_pending(pending)

    def bypassed_agents(self) -> set[str]:
        """The agents on bypass now: the live policy's (a card's Bypass, the settings), else the
        settings file's."""
        bridge = self.bridge
        if bridge is not None:
            return set(bridge.approvals.policy.bypass_agents)
        if self.links is not None and self._connect is None:
            return set()  # a console with no bridge of its own: its hosts' cards say it
        return set(self.settings.bypass_agents()) if self.settings is not None else set()

    def _bypass_note(self) -> str:
        """For the header, while any agent is on bypass (and the cards of those agents say so)."""
        agents = self.bypassed_agents()
        names = {agent_display_name(a, self.settings) for a in agents}
        sessions = set(self.bridge.approvals.policy.session_bypass) if self.bridge else set()
        names.update(f"session {session}" for _, session in sessions)
        if self._alive():
            self.queue.set_bypass(agents, sessions)
            # an attached host's: known from its cards (asked anyway, by a rule there)
            names.update(
                f"{c.info.agent_display} on {c.info.host}"
                for c in self.queue.pending
                if c.info.host is not None and c.info.host_bypass
            )
        return f" · ⚠ bypass on: {', '.join(sorted(names))}" if names else ""

    def _after_main_layout(self, screen: Screen) -> None:
        """After the console's screen is laid out: once that layout has the relabelled Approvals
        tab at its new width, move the tab bar's underline to the shown tab again.

        Textual moves the underline when a tab is relabelled, but the tab gets its new width in a
        later layout (the tab asks for it from its own message queue) and the move can come first:
        the underline then stays under the old span (also under the tabs after it, which the new
        width shifted), and nothing moves it again. Layouts that came before the tab's own still
        have the old width and are let pass."""
        if not self._relabelled or not self._alive():
            return
        tab = self._main.query_one("#tabs", TabbedContent).get_tab("approvals")
        if tab.virtual_region.shrink(tab.styles.gutter).width != tab.label.cell_length:
            return
        self._relabelled = False
        realign_tab_underline(tab)

    def _alert(self, info: ApprovalInfo) -> None:
        """A new card: a notice on screen wherever the person is (unless the queue or the chat's
        own banner shows it already), the bell and a flashing terminal title."""
        if not self._card_in_view(info):
            self.notify(
                f"{info.agent_display} asks permission: {info.title} · F2 to answer",
                title="Approval",
                severity="warning",
                timeout=8,
            )
        self.alerts.new_card(info.agent_display, info.title)

    @property
    def bells(self) -> int:
        """Bells rung for new cards (a headless app has no terminal to ring)."""
        return self.alerts.bells

    @property
    def terminal_title(self) -> str:
        return self.alerts.title

    # --- actions ---------------------------------------------------------------------------------------

    def _card_in_view(self, info: ApprovalInfo) -> bool:
        if len(self.screen_stack) > 1:
            return False
        tab = self._active_tab()
        if tab == "approvals":
            return True
        chat = self.chat_pane()
        return tab == "chat" and chat is not None and chat.connection == info.connection

    def _main_screen(self) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()

    def _active_tab(self) -> str:
        return self._main.query_one("#tabs", TabbedContent).active

    def action_show_tab(self, tab: str) -> None:
        self._main_screen()
        self._main.query_one("#tabs", TabbedContent).active = tab
        # Focus at once (not after a refresh), so keys typed right after the switch land there.
        if tab == "approvals":
            self.queue.focus_first()
        elif tab == "chat":
            chat = self.chat_pane()
            if chat is not None:
                chat.focus_input()
        else:
            self._focus_within(self._main.query_one(f"#{tab}", TabPane))

    def _focus_within(self, pane: Widget) -> None:
        for widget in pane.query("*"):
            if widget.focusable:
                widget.focus()
                return

    def _leave_form_first(self, then: Callable[[], object]) -> bool:
        """An F-key pressed over a form: ask whether to leave it (what was typed is not saved),
        and on yes close it and do what the key does. True when there was a form to ask about."""
        form = self.screen
        question = getattr(form, "LEAVE_QUESTION", None)
        if not question:
            return False
        from symposium_tui.screens.confirm import Confirm

        def answered(leave: bool | None) -> None:
            if leave and self.screen is form:
                form.dismiss(None)
                self.call_after_refresh(then)

        self.push_screen(Confirm(question, "leave it", "stay in the form"), answered)
        return True

    def action_queue(self) -> None:
        """Jump to the oldest pending card; Escape (or answering the last card) comes back —
        to the Settings section it came from, too."""
        from symposium_tui.screens.settings import SettingsScreen

        if self._leave_form_first(self.action_queue):
            return

        settings = next((s for s in self.screen_stack if isinstance(s, SettingsScreen)), None)
        section = settings.query_one("#settings-tabs", TabbedContent).active if settings else None
        self._main_screen()
        current = self._active_tab()
        if section:
            self._return_to = (f"settings:{section}", None)
        elif current != "approvals":
            self._return_to = (current, self.focused)
        self._main.query_one("#tabs", TabbedContent).active = "approvals"
        self.queue.focus_first()

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

    def action_focus_step(self, step: int) -> None:
        """Tab / Shift+Tab: the next or previous widget, at once. A widget that takes Tab itself
        (a text area that indents with it) keeps it."""
        from textual.actions import SkipAction

        focused = self.focused
        if getattr(focused, "tab_behavior", "focus") == "indent":
            raise SkipAction()
        if step > 0:
            self.screen.focus_next()
        else:
            self.screen.focus_previous()

    def action_close_keys_panel(self) -> None:
        self.action_hide_help_panel()

    def action_go_back(self) -> None:
        target, self._return_to = self._return_to, None
        if target is None or self._active_tab() != "approvals":
            return
        tab, widget = target
        if tab.startswith("settings:"):
            from symposium_tui.screens.settings import SettingsScreen

            self.push_screen(SettingsScreen(tab.partition(":")[2]))
            return
        self._main.query_one("#tabs", TabbedContent).active = tab
        if widget is not None and widget.is_attached and widget.can_focus:
            widget.focus()
        elif tab == "chat" and self.chat_pane() is not None:
            self.chat.focus_input()

    def action_chat(self) -> None:
        if not self._leave_form_first(self.action_chat):
            self.action_show_tab("chat")

    def action_help(self) -> None:
        from symposium_tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.help_groups()))

    def help_groups(self) -> list[HelpGroup]:
        """Every key, grouped by where it works, read from the bindings themselves."""
        from symposium_tui.screens.settings import AgentsPanel, RulesPanel, SettingsScreen
        from symposium_tui.widgets.sessions import SessionsPane
        from symposium_tui.widgets.toollog import ToolLogPane, ToolLogView

        return [
            (
                "Anywhere",
                list(self.BINDINGS),
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

    def action_settings(self) -> None:
        """F4, from anywhere: Settings (open already: it comes back on top, as it was). Like every
        F-key it goes somewhere and never closes anything; Esc there returns to where F4 came from."""
        from symposium_tui.screens.settings import SettingsScreen

        if self._leave_form_first(self.action_settings):
            return
        settings = next((s for s in self.screen_stack if isinstance(s, SettingsScreen)), None)
        if settings is not None:
            for _ in self.screen_stack[self.screen_stack.index(settings) + 1 :]:
                self.pop_screen()
            return
        self._settings_from = (self._active_tab(), self._main.focused)
        self._main_screen()
        self.push_screen(SettingsScreen())

    def close_settings(self, screen: Screen) -> None:
        """Esc on Settings: back to the tab, and the widget, F4 came from (also after a visit to
        the queue with F2 in between)."""
        if self.screen is not screen:
            return
        self.pop_screen()
        target, self._settings_from = self._settings_from, None
        if target is not None:
            self.call_after_refresh(self._back_to, *target)

    def _back_to(self, tab: str, widget: Widget | None) -> None:
        if not self._alive() or len(self.screen_stack) > 1:
            return
        self._main.query_one("#tabs", TabbedContent).active = tab
        if widget is not None and widget.is_attached and widget.can_focus:
            widget.focus()
        elif tab == "chat" and self.chat_pane() is not None:
            self.chat.focus_input()
        elif tab == "approvals":
            self.queue.focus_first()

    def answer_current(self, answer: str) -> None:
        """Answer the current card (from the command palette: a deliberate choice, no arming)."""
        card = self.queue.current_card()
        if card is None:
            self.notify("No approval is pending.")
            return
        if not card.info.offers(answer):
            self.notify(f"{card.info.agent_display} did not offer that answer.", severity="warning")
            return
        if answer == "deny":
            self.action_queue()
            card.focus()
            card.action_deny()
            return
        if answer == "bypass":
            self.confirm_bypass(card.info.approval_id)
            return
        self.queue.answer(card.info.approval_id, answer)

    def approve_current_session(self) -> None:
        card = self.queue.current_card()
        if card is None:
            self.notify("No approval is pending.")
            return
        n = self.queue.approve_session(card.info.connection, card.info.session_id)
        self.notify(f"Approved {n} request{'s' * (n != 1)} of session {card.info.session_id}.")

    def bypass_current_session(self) -> None:
        """Allow everything this session asks from now on, without saving it anywhere."""
        card = self.queue.current_card()
        if card is None:
            self.notify("No approval is pending.")
            return
        info = card.info
        if self.bridge is None or info.host is not None:
            self.notify(
                "Bypass for a session is kept by the bridge that runs it: "
                + (f"open a console on {info.host}." if info.host else "no bridge here."),
                severity="warning",
            )
            return
        from symposium_tui.screens.confirm import Confirm
        from symposium_tui.widgets.approvals import still_asked_by

        rules = "; ".join(still_asked_by(self, info.agent)) or "none is set now"
        question = (
            f"Bypass session {info.session_id} of {info.agent_display}?\n\n"
            "• Every later request of this session is approved without a card (this session "
            "only; its agent's other sessions are still asked).\n"
            "• Not saved: it ends with the session.\n"
            f"• Deny and ask rules still apply to it: {rules}.\n"
            "• Its pending requests are approved now."
        )

        def answered(yes: bool | None) -> None:
            if not yes or self.bridge is None:
                return
            self.bridge.approvals.policy.session_bypass.add((info.connection, info.session_id))
            n = self.queue.approve_session(info.connection, info.session_id)
            self._update_pending(len(self.queue.pending))
            self.notify(
                f"Session {info.session_id} of {info.agent_display} is allowed everything until "
                f"it ends (not saved); approved {n} pending."
            )

        self.push_screen(Confirm(question, "bypass this session", "keep asking"), answered)

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

    def search_themes(self) -> None:
        from symposium_tui.screens.themes import ThemePicker

        self.push_screen(ThemePicker())

    # --- the command palette ---------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The palette's commands (also what Textual's own provider would list)."""
        return console_commands(self, screen)

    def _new_conversation(self) -> None:
        self.action_show_tab("chat")
        chat = self.chat_pane()
        if chat is not None:
            chat.action_new_conversation()

    def _talk_to(self, key: str) -> None:
        self.action_show_tab("chat")
        chat = self.chat_pane()
        if chat is not None:
            chat.choose_agent(key)


def run_attached(targets: list[Any], *, mouse: bool = True) -> int:
    """`symposium-tui attach HOST …`: a console with no bridge of its own, answering the approvals
    of the bridges it attaches to (`symposium_tui.links`)."""
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
