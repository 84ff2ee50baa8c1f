"""What the console does with approval cards beyond the queue's own keys: the palette's answers to
the current card, a session approved or bypassed, the bypass confirmation, a rule proposed from a
card, and the bridge's approval events (new cards announced, settled ones told to the chat and
counted for rule suggestions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bridge.settings import agent_display_name
from symposium_tui.state.approval import ApprovalInfo

if TYPE_CHECKING:
    from symposium_tui.app import SymposiumApp
    from symposium_tui.widgets.approvals import ApprovalCard


class ApprovalActions:
    """The console's approval flows, each asking the person what it must before it answers."""

    def __init__(self, app: SymposiumApp) -> None:
        self.app = app

    def _current(self) -> ApprovalCard | None:
        card = self.app.queue.current_card()
        if card is None:
            self.app.notify("No approval is pending.")
        return card

    def answer_current(self, answer: str) -> None:
        """Answer the current card (from the command palette: a deliberate choice, no arming)."""
        app = self.app
        card = self._current()
        if card is None:
            return
        if not card.info.offers(answer):
            app.notify(f"{card.info.agent_display} did not offer that answer.", severity="warning")
            return
        if answer == "deny":
            app.action_queue()
            card.focus()
            card.call_later(card.action_deny)
            return
        if answer == "bypass":
            self.confirm_bypass(card.info.approval_id)
            return
        app.queue.answer(card.info.approval_id, answer)

    def approve_current_session(self) -> None:
        card = self._current()
        if card is None:
            return
        n = self.app.queue.approve_session(card.info.connection, card.info.session_id)
        self.app.notify(f"Approved {n} request{'s' * (n != 1)} of session {card.info.session_id}.")

    def bypass_current_session(self) -> None:
        """Allow everything this session asks from now on, without saving it anywhere."""
        app = self.app
        card = self._current()
        if card is None:
            return
        info = card.info
        if app.bridge is None or info.host is not None:
            app.notify(
                "Bypass for a session is kept by the bridge that runs it: "
                + (f"open a console on {info.host}." if info.host else "no bridge here."),
                severity="warning",
            )
            return
        from symposium_tui.screens.confirm import Confirm
        from symposium_tui.widgets.approvals import still_asked_by

        rules = "; ".join(still_asked_by(app, info.agent)) or "none is set now"
        question = (
            f"Bypass session {info.session_id} of {info.agent_display}?\n\n"
            "• Every later request of this session is approved without a card (this session "
            "only; its agent's other sessions are still asked).\n"
            "• Not saved: it ends with the session.\n"
            f"• Deny and ask rules still apply to it: {rules}.\n"
            "• Its pending requests are approved now."
        )

        def answered(yes: bool | None) -> None:
            if not yes or app.bridge is None:
                return
            app.bridge.approvals.policy.session_bypass.add((info.connection, info.session_id))
            n = app.queue.approve_session(info.connection, info.session_id)
            app._update_pending(len(app.queue.pending))
            app.notify(
                f"Session {info.session_id} of {info.agent_display} is allowed everything until "
                f"it ends (not saved); approved {n} pending."
            )

        app.push_screen(Confirm(question, "bypass this session", "keep asking"), answered)

    def confirm_bypass(self, approval_id: str) -> None:
        """Bypass answers a card only once the person confirms it, in a modal that says what it
        covers (this agent, saved, until turned off, still under deny and ask rules)."""
        app = self.app
        question = app.queue.bypass_question(approval_id)
        if question is None:
            return
        from symposium_tui.screens.confirm import ConfirmBypass

        agent, still = question

        def answered(yes: bool | None) -> None:
            if yes:
                app.queue.answer(approval_id, "bypass")

        app.push_screen(ConfirmBypass(agent, still, approves=True), answered)

    def propose_current(self) -> None:
        """The palette's `p`: the rule the current card proposes."""
        card = self.app.queue.current_card()
        if card is None:
            self.app.notify("No approval is pending.")
        elif card.info.guarded:
            self.app.notify(
                "This request touches what governs the agents: it is asked each time, and no "
                "rule can allow it.",
                severity="warning",
            )
        elif card.info.proposal() is None or not card.info.offers("approve"):
            self.app.notify("No rule can be proposed for this request.", severity="warning")
        else:
            self.propose_for(card.info)

    def propose_for(self, info: ApprovalInfo) -> None:
        """The card's "a rule for requests like this one": edit it; saved, it approves."""
        rule = info.proposal()
        if rule is not None:
            self.propose_rule(
                rule,
                info.pattern_scope() or "",
                # the audit line says which rule the person wrote as they approved
                lambda saved: self.app.queue.answer(info.approval_id, "approve", saved),
                asked=info.why_asked(),
            )

    def propose_rule(
        self,
        rule: Any,
        scope: str,
        then: Callable[[str], Any] | None = None,
        *,
        asked: str | None = None,
    ) -> None:
        """Show a proposed rule for editing; save it when the person does (then run `then`,
        given what was saved: "saved rule 3: …")."""
        from symposium_tui.screens.pattern import PatternRuleScreen

        app = self.app

        def saved(edited: Any) -> None:
            if edited is None:
                return
            if app.settings_store is None or app.settings_error:
                app.notify("Not saved: the settings file cannot be written.", severity="error")
                return
            from bridge.settings import SettingsError

            try:
                settings = app.settings_store.add_rule(edited)
            except (SettingsError, ValueError) as exc:
                app.notify(f"Not saved: {exc}", severity="error", timeout=8)
                return
            app.settings_changed(settings)
            said = f"saved rule {len(settings.rules)}: {edited.describe()}"
            app.notify(said[0].upper() + said[1:] + ".")
            if then is not None:
                then(said)

        app.push_screen(PatternRuleScreen(rule, scope, asked), saved)

    # --- the bridge's events ---------------------------------------------------------------------

    def bridge_event(self, event: Any) -> None:
        """An approval asked or settled, an audit head, a host's link up or down."""
        app = self.app
        if event.type == "approval_requested":
            app.queue.add(ApprovalInfo.from_event(event))
            app.fatigue.requested(
                event.approval_id,
                event.agent,
                event.tool_call,
                event.ts,
                agent_display_name(event.agent, app.settings),
            )
        elif event.type == "approval_resolved":
            self._resolved(event)
        elif event.type == "audit_head":
            app.audit_warning(event.warning)
        elif event.type == "link_state":
            if event.state == "up":
                app.notify(f"Attached to {event.host}.", timeout=3)
            else:
                app.notify(
                    f"Link to {event.host} down: {event.detail}. Reconnecting…",
                    severity="warning",
                    timeout=6,
                )

    def _resolved(self, event: Any) -> None:
        app = self.app
        app.queue.resolve(event)
        chat = app.chat_pane()
        if chat is not None:
            chat.approval_resolved(event)
        if event.resolver == "link":
            return  # not settled: only out of reach for now (an attached host's link dropped)
        worth = app.fatigue.resolved(event.approval_id, event.outcome, event.resolver, event.ts)
        if worth is not None:
            app.notify(
                f"Approved {worth.in_a_row} times in a row: {worth.key}. A rule could answer "
                "these: Approval stats (command palette) proposes one for you to edit.",
                title="Rule suggested",
                timeout=10,
            )

    def alert(self, info: ApprovalInfo) -> None:
        """A new card: a notice on screen wherever the person is (unless the queue or the chat's
        own banner shows it already), the bell and a flashing terminal title."""
        app = self.app
        if not self._card_in_view(info):
            app.notify(
                f"{info.agent_display} asks permission: {info.title} · F2 to answer",
                title="Approval",
                severity="warning",
                timeout=8,
            )
        app.alerts.new_card(info.agent_display, info.title)

    def _card_in_view(self, info: ApprovalInfo) -> bool:
        app = self.app
        if len(app.screen_stack) > 1:
            return False
        tab = app._active_tab()
        if tab == "approvals":
            return True
        chat = app.chat_pane()
        return tab == "chat" and chat is not None and chat.connection == info.connection
