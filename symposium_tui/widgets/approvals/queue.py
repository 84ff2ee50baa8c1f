"""The queue of approval cards, oldest first.

The queue never takes focus from a widget outside it. It does not know the broker: it asks an
`Answerer` (the console's handle) and is told about resolutions through `resolve()`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Static

from symposium_tui.state.approval import ApprovalInfo
from symposium_tui.widgets.approvals.card import ApprovalCard
from symposium_tui.widgets.approvals.resolution import describe_resolution, still_asked_by


class Answerer(Protocol):
    def answer(self, approval_id: str, answer: str, reason: str | None = None) -> bool: ...

    def approve_all(self, connection: str, session_id: str) -> int: ...


EMPTY_QUEUE = (
    "No pending approvals.\n\n"
    "When an agent asks permission for a tool call, its card appears here, the bell rings and "
    "the terminal title flashes; F2 brings you here from anywhere.\n\n"
    "F3 talks to an agent in the built-in chat · F1 lists every key · Ctrl+P finds any action · "
    "Ctrl+Q quits."
)


class ApprovalQueue(VerticalScroll):
    """The cards, oldest first. Posts `Changed` whenever the number of pending cards changes."""

    BINDINGS = [
        Binding("home", "focus_edge(0)", "First card", show=False),
        Binding("end", "focus_edge(-1)", "Last card", show=False),
    ]

    class Changed(Message):
        def __init__(
            self, queue: ApprovalQueue, pending: int, added: ApprovalInfo | None = None
        ) -> None:
            super().__init__()
            self.queue = queue
            self.pending = pending
            self.added = added

    class Emptied(Message):
        """The last card left."""

    class BypassAsked(Message):
        """The bypass key on a card: the app asks the person to confirm it before it answers
        (`ApprovalQueue.bypass_question` says what the question is)."""

        def __init__(self, approval_id: str) -> None:
            super().__init__()
            self.approval_id = approval_id

    current: var[ApprovalCard | None] = var(None, init=False)
    """The card the queue is on (marked `-current`: its details and keys are shown)."""

    def __init__(
        self,
        answerer: Answerer | None = None,
        *,
        arm_delay: float = 0.5,
        linger: float = 2.0,
        clock: Callable[[float], str] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.answerer = answerer
        self.arm_delay = arm_delay
        self.linger = linger
        self.clock = clock
        self._cards: dict[str, ApprovalCard] = {}
        self._mine: dict[str, str] = {}  # approval id → the answer this console gave
        self._generation = 0  # distinguishes a card that came back from the one it replaces

    def compose(self) -> ComposeResult:
        yield Static(EMPTY_QUEUE, id="queue-empty")

    def show_serving(self, lines: list[str]) -> None:
        """Under the empty queue's text: the socket and addresses this console serves."""
        text = EMPTY_QUEUE + "".join(
            f"\n\n{line}" if i == 0 else f"\n{line}" for i, line in enumerate(lines)
        )
        self.query_one("#queue-empty", Static).update(text)

    # --- what is in it -----------------------------------------------------------------------------

    @property
    def pending(self) -> list[ApprovalCard]:
        return [c for c in self._cards.values() if c.state != "resolved"]

    def card(self, approval_id: str) -> ApprovalCard | None:
        return self._cards.get(approval_id)

    def add(self, info: ApprovalInfo) -> ApprovalCard | None:
        old = self._cards.get(info.approval_id)
        if old is not None:
            if old.state != "resolved":
                return None
            self._drop(old)  # back again (a host's link reconnected): the settled card leaves now
            self._generation += 1
        if not info.agent_name:
            from bridge.settings import agent_display_name

            info.agent_name = agent_display_name(info.agent, getattr(self.app, "settings", None))
        suffix = f"-{self._generation}" if self._generation else ""
        card = ApprovalCard(
            info,
            arm_delay=self.arm_delay,
            clock=self.clock,
            id=f"card-{info.approval_id}{suffix}",
        )
        self._cards[info.approval_id] = card
        self.query_one("#queue-empty").display = False
        self.mount(card)
        if self.current is None or self.current.state == "resolved":
            self.current = card
        if self._may_take_focus():
            # the current card, not this one: two cards arriving in one refresh both get here
            # before focus lands, and the oldest must keep it
            self.call_after_refresh(self._focus_current_if_allowed)
        self.post_message(self.Changed(self, len(self.pending), info))
        return card

    def _may_take_focus(self) -> bool:
        """Only when the queue is on screen and nothing else has focus: never from the chat input
        or any widget outside the queue (and focusing a hidden queue would switch tabs)."""
        focused = self.app.focused
        return self.is_visible_in_app and (focused is None or focused is self)

    @property
    def is_visible_in_app(self) -> bool:
        try:
            return self.screen is self.app.screen and self.region.area > 0
        except Exception:
            return False

    def resolve(self, event: Any) -> None:
        """The broker settled one approval (whoever answered): the card says so, then leaves."""
        card = self._cards.get(event.approval_id)
        if card is None or card.state == "resolved":
            return
        had_focus = card.has_focus or card.has_focus_within
        card.mark_resolved(
            describe_resolution(
                event,
                mine=self._mine.pop(event.approval_id, None),
                agent=card.info.agent_display,
            )
        )
        self.post_message(self.Changed(self, len(self.pending)))
        if had_focus:
            following = self._next_pending(card)
            if following is not None:
                self._focus_card(following)
            else:
                self.focus()
        elif self.current is card:
            following = self._next_pending(card)
            if following is not None:
                self.current = following
        if self.linger > 0:
            self.set_timer(self.linger, lambda: self._drop(card))
        else:
            self._drop(card)

    def _drop(self, card: ApprovalCard) -> None:
        if self._cards.get(card.info.approval_id) is card:
            del self._cards[card.info.approval_id]
        if self.current is card:
            self.current = None
            remaining = self.pending
            if remaining:
                self.current = remaining[0]
        card.remove()
        if not self._cards:
            self.query_one("#queue-empty").display = True
            self.post_message(self.Emptied())

    def _next_pending(self, after: ApprovalCard) -> ApprovalCard | None:
        cards = list(self._cards.values())
        index = cards.index(after) if after in cards else -1
        for card in cards[index + 1 :] + cards[:index]:
            if card.state != "resolved":
                return card
        return None

    # --- focus ---------------------------------------------------------------------------------------

    def watch_current(self, old: ApprovalCard | None, new: ApprovalCard | None) -> None:
        if old is not None:
            old.remove_class("-current")
        if new is not None:
            new.add_class("-current")

    def _focus_current_if_allowed(self) -> None:
        if self.current is not None and self._may_take_focus():
            self._focus_card(self.current)

    def _focus_card(self, card: ApprovalCard) -> None:
        """Focus moved to a card by itself: it re-arms."""
        if card.state == "resolved" or not card.is_attached:
            return
        card.rearm()
        card.focus()
        self.current = card
        card.scroll_visible(animate=False)

    def keep_card_focus(self) -> None:
        """Focus the oldest pending card unless a pending card (or something in it) has focus."""
        focused = self.app.focused
        if any(
            focused is c or (focused is not None and c in focused.ancestors) for c in self.pending
        ):
            return
        self.focus_first()

    def focus_first(self) -> bool:
        """Focus the oldest pending card (a person asked for it: no re-arming)."""
        pending = self.pending
        if not pending:
            self.focus()
            return False
        first = pending[0]
        self.current = first
        if not first.is_mounted:
            # Added a moment ago and still mounting: Textual drops focus given to a widget that
            # has no screen yet, so this is done again once it is there.
            self.call_after_refresh(self.focus_first)
            return True
        first.focus()
        first.scroll_visible(animate=False)
        return True

    def focus_neighbour(self, card: ApprovalCard, step: int) -> None:
        pending = self.pending
        if card not in pending:
            return
        index = pending.index(card) + step
        if 0 <= index < len(pending):
            pending[index].focus()
            pending[index].scroll_visible(animate=False)

    def action_focus_edge(self, index: int) -> None:
        pending = self.pending
        if pending:
            pending[index].focus()
            pending[index].scroll_visible(animate=False)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # However a card got focus (a key, a click, Tab), it is the current one.
        if isinstance(event.widget, ApprovalCard):
            self.current = event.widget

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        # A card that loses focus to nothing while the queue is shown gets it back, so the keys
        # typed next still answer it: Textual blurs a widget a Hide event reaches, and one queued
        # while the queue was covered (F2 from Settings as a card arrived) can arrive after the
        # card was focused, when the card is not yet in the focus chain.
        # The same for the reason field of a card being denied (the card hands focus on to it).
        if isinstance(event.widget, ApprovalCard) or event.widget.has_class("card-reason"):
            self.call_after_refresh(self._refocus_if_lost)

    def on_show(self) -> None:
        # ... or when the queue is shown again after that.
        self._refocus_if_lost()

    def _refocus_if_lost(self) -> None:
        # Shown as far as the widget tree says (its layout may still be on its way).
        shown = self.screen is self.app.screen and all(
            node.display for node in self.ancestors_with_self if isinstance(node, Widget)
        )
        if self.app.focused is None and shown and self.pending:
            self.focus_first()

    @on(ApprovalCard.Step)
    def _step(self, message: ApprovalCard.Step) -> None:
        message.stop()
        self.focus_neighbour(message.card, message.step)

    def on_focus(self) -> None:
        # Focus arriving at the queue goes to its current card.
        if self.current is not None and self.current.state != "resolved":
            self.current.focus()

    # --- answers ---------------------------------------------------------------------------------------

    @on(ApprovalCard.Decided)
    def _decided(self, message: ApprovalCard.Decided) -> None:
        message.stop()
        if message.answer == "bypass":  # only once confirmed (the app asks)
            self.post_message(self.BypassAsked(message.card.info.approval_id))
            return
        self.answer(message.card.info.approval_id, message.answer, message.reason)

    def bypass_question(self, approval_id: str) -> tuple[str, list[str]] | None:
        """For a pending card: its agent as shown, and the deny and ask rules that would still
        stop it on bypass (None: no such card)."""
        card = self._cards.get(approval_id)
        if card is None or card.state == "resolved":
            return None
        return card.info.agent_display, still_asked_by(self.app, card.info.agent)

    def set_bypass(
        self,
        agents: set[str],
        sessions: set[tuple[str, str]] | frozenset[tuple[str, str]] = frozenset(),
    ) -> None:
        """Which agents (and sessions: connection, session id) are on bypass now: their cards say
        so."""
        for card in self._cards.values():
            i = card.info
            on = (
                i.host_bypass
                if i.host is not None
                else i.agent in agents or (i.connection, i.session_id) in sessions
            )
            card.bypass = card.state != "resolved" and on

    def answer(self, approval_id: str, answer: str, reason: str | None = None) -> bool:
        card = self._cards.get(approval_id)
        if card is None or card.state == "resolved" or self.answerer is None:
            return False
        self._mine[approval_id] = answer
        if not self.answerer.answer(approval_id, answer, reason):
            self._mine.pop(approval_id, None)
            if card.state != "resolved":
                card.mark_resolved("This request was already settled elsewhere.")
                self.set_timer(max(self.linger, 0.01), lambda: self._drop(card))
                self.post_message(self.Changed(self, len(self.pending)))
            return False
        return True

    @on(ApprovalCard.ApproveSession)
    def _approve_session(self, message: ApprovalCard.ApproveSession) -> None:
        message.stop()
        self.approve_session(message.card.info.connection, message.card.info.session_id)

    def approve_session(self, connection: str, session_id: str) -> int:
        if self.answerer is None:
            return 0
        for card in self.pending:
            if card.info.connection == connection and card.info.session_id == session_id:
                self._mine[card.info.approval_id] = "approve"
        return self.answerer.approve_all(connection, session_id)

    def current_card(self) -> ApprovalCard | None:
        focused = self.app.focused
        for card in self.pending:
            if focused is card or (focused is not None and card in focused.ancestors):
                return card
        if self.current is not None and self.current.state != "resolved":
            return self.current
        pending = self.pending
        return pending[0] if pending else None
