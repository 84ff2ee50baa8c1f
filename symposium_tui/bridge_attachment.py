"""How the console is joined to a bridge and to attached hosts: the bridge started after the first
frame, the console's handle on the approval broker, the bus events turned into app messages, the
audit head checked, and everything let go again on the way out.

`ConsoleAnswerer` is the queue's way to answer: this console's handle on the broker, and the links
to the hosts it is attached to (`symposium_tui.wire`), each answering the cards that came from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from textual.message import Message
from textual.widget import Widget
from textual.widgets import TabPane

from symposium_tui.state.approval import ApprovalInfo
from symposium_tui.widgets.chat import ChatPane
from symposium_tui.wire.transport import console_name

if TYPE_CHECKING:
    from bridge import events as ev
    from bridge.approvals import Answer, ApprovalBroker, ConsoleHandle
    from symposium_tui.app import SymposiumApp
    from symposium_tui.state import ConsoleState
    from symposium_tui.wire.link_set import LinkSet

CLOSED = "the console was closed"  # what the agent and the client hear about cards left pending


class BridgeEvent(Message):
    """An approval event from the bridge's bus, delivered on the app's message queue."""

    def __init__(self, event: ev.ApprovalRequested | ev.ApprovalResolved) -> None:
        super().__init__()
        self.event = event


class ConsoleAnswerer:
    """Answers a card through the link it came from, else through this console's handle."""

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


class BridgeAttachment:
    """The app's bridge and hosts: joined once they are there, let go once on the way out."""

    def __init__(self, app: SymposiumApp) -> None:
        self.app = app
        self.handle: ConsoleHandle | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._shut_down = False
        self._quit_confirmed = False
        self.chat: ChatPane | None = None  # kept for shutdown: the DOM may be gone by then

    def pane(self, tab: str) -> Widget:
        """The pane of `tab` that comes with the bridge: sessions, tool calls, or the chat."""
        app = self.app
        bridge = app.bridge
        assert bridge is not None, "the panes come with the bridge"
        if tab == "sessions":
            from symposium_tui.widgets.sessions import SessionsPane

            return SessionsPane(self.state(), bridge)
        if tab == "toolcalls":
            from symposium_tui.widgets.toollog import ToolLogPane

            return ToolLogPane(self.state())
        self.chat = ChatPane(bridge, app.agent_choices(), id="chat-pane")
        return self.chat

    def state(self) -> ConsoleState:
        """What the panes read, folded from the bridge's events (made once, when first asked)."""
        app = self.app
        if app.console_state is None:
            from symposium_tui.state import ConsoleState

            app.console_state = ConsoleState(app.bridge)
        return app.console_state

    def start_links(self) -> None:
        links = self.app.links
        if links is not None:
            links.post = self._post_link_event
            self.app.queue.answerer = ConsoleAnswerer(links=links)
            links.start()

    def _post_link_event(self, event: Any) -> None:
        self.app.post_message(BridgeEvent(event))

    async def start_bridge(self) -> None:
        """The bridge, after the first frame: its panes replace the "starting" notes."""
        app = self.app
        assert app._connect is not None
        try:
            hosted, app.host = await app._connect()
        except Exception as exc:  # another console already runs, a socket that cannot be made, ...
            app.exit(return_code=1, message=f"symposium-tui: {exc}")
            return
        app.hosted = hosted
        app._take_settings(hosted)
        for tab in ("sessions", "toolcalls", "chat"):
            pane = app._main.query_one(f"#{tab}", TabPane)
            await pane.query(".starting").remove()
            await pane.mount(self.pane(tab))
        self.attach_bridge()
        early = app.host.early_handle if app.host is not None else None
        if early is not None:
            early.detach()  # what it held is offered to this console's own handle now
        if app._active_tab() == "chat":
            app.chat.focus_input()
        app.call_after_refresh(app.early_keys.replay)

    def attach_bridge(self) -> None:
        app = self.app
        bridge = app.bridge
        assert bridge is not None
        broker = bridge.approvals
        self.handle = broker.attach(console_name())
        app.queue.answerer = ConsoleAnswerer(broker, self.handle, app.links)
        self._unsubscribe = bridge.bus.subscribe(self._on_bus_event)
        state = self.state()
        if not state.attached:
            state.attach()
        app.queue.show_serving(app.serving())
        for pending in list(broker.pending.values()):
            app.queue.add(ApprovalInfo.from_pending(pending))
        app._update_pending(len(app.queue.pending))
        app.run_worker(self.check_own_audit(), group="audit", exit_on_error=False)
        if app.settings_error:
            app.notify(f"Settings not loaded: {app.settings_error}", severity="error", timeout=10)
        for error in app.theme_errors:
            app.notify(f"Theme skipped: {error}", severity="warning", timeout=10)

    def _on_bus_event(self, event: ev.Event) -> None:
        # Called synchronously by the bridge; hand the event to the app's own queue.
        from bridge import events as ev

        if isinstance(event, (ev.ApprovalRequested, ev.ApprovalResolved)):
            self.app.post_message(BridgeEvent(event))

    async def check_own_audit(self) -> None:
        """This console's own bridge: its audit head, recorded (or found not to extend the one
        recorded last) like an attached host's."""
        import asyncio

        from bridge.approvals import host_name
        from bridge.audit import head_report
        from symposium_tui import audit_heads

        bridge = self.app.bridge
        audit = bridge.approvals.audit if bridge is not None else None
        if audit is None:
            return
        host = host_name()
        try:
            report = await asyncio.to_thread(head_report, audit.path, audit_heads.seen(host))
            warning = audit_heads.observe(host, report)
        except (OSError, ValueError) as exc:
            warning = f"audit heads not checked: {exc}"
        self.app.audit_warning(warning)

    async def quit(self) -> None:
        """Ctrl+Q. With cards pending, ask first, saying what leaving does to them: this console's
        own are denied, an attached host's stay with that host."""
        app = self.app
        cards = app.queue.pending if app._alive() else []
        if cards and not self._quit_confirmed:
            from symposium_tui.screens.confirm import ConfirmQuit

            own = sum(1 for c in cards if c.info.host is None)
            held: dict[str, int] = {}
            for card in cards:
                if card.info.host is not None:
                    held[card.info.host] = held.get(card.info.host, 0) + 1
            if not isinstance(app.screen, ConfirmQuit):
                app.push_screen(ConfirmQuit(own, held), self._quit_answered)
            return
        # While the screen is still up, so the chat can let its agent finish.
        await app.shutdown(reason=CLOSED)
        app.exit()

    async def _quit_answered(self, leave: bool | None) -> None:
        if leave:
            self._quit_confirmed = True
            await self.quit()

    async def shutdown(self, reason: str | None = None) -> None:
        """Leave the bridge as we found it: the console detaches (pending approvals it alone held are
        denied, failing closed, with `reason`) and the chat's connection closes once its agent has
        finished."""
        if self._shut_down:
            return
        self._shut_down = True
        app = self.app
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self.handle is not None:
            handle, self.handle = self.handle, None
            handle.detach(reason)
        if app.links is not None:
            await app.links.stop()
        state = app.console_state
        if state is not None and state.attached:
            state.detach()
        chat = app.chat_pane() or self.chat
        if chat is not None:
            await chat.close()
        app.alerts.restore()  # the terminal's own title back, where it can
