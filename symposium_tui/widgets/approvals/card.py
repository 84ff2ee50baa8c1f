"""One approval card: a pending permission request, its keys, and how it was settled.

Its keys (the table in `keys.py`) are tied to the *kind* of answer, never to a position, and keys
the agent did not offer are hidden. A card of an agent on bypass (asked anyway, by an ask rule)
says bypass is on. A card ignores its keys until it has been on screen for the arming delay, and
re-arms whenever focus moves to it by itself (it arrived, or the card before it was answered), so a
keystroke meant for something else never answers it.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.markup import escape
from textual.message import Message
from textual.reactive import var
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, Static

from symposium_tui.state.approval import ApprovalInfo
from symposium_tui.widgets.approvals.keys import DENY_KEYS, card_bindings, legend, needed_answer

INPUT_LINES = 8  # of the pretty-printed input, on a card (`v` shows everything)
INPUT_LINES_WITH_DIFF = 3  # the diff says it better
DIFF_LINES = 12


def _clip(text: str, limit: int) -> tuple[str, int]:
    lines = text.splitlines()
    if len(lines) <= limit:
        return text.rstrip("\n"), 0
    return "\n".join(lines[:limit]), len(lines) - limit


class ApprovalCard(Widget, can_focus=True):
    """One pending approval."""

    BINDINGS = card_bindings()  # the table in keys.py: also the legend and the palette

    COMPONENT_CLASSES = {
        "approval-card--diff-added",
        "approval-card--diff-removed",
        "approval-card--diff-hunk",
        "approval-card--diff-header",
        "approval-card--key",
    }

    state: var[str] = var("pending", init=False, bindings=True)
    """pending → reason (typing a deny reason) → resolved; the keys and the footer follow it."""

    armed: var[bool] = var(True, init=False, bindings=True)
    """False for the arming delay: the keys are shown dimmed and ignored."""

    outcome_text: var[str] = var("", init=False)
    """How the request was settled, once it was (the card's status line)."""

    bypass: var[bool] = var(False, init=False)
    """The card's agent is on bypass (this card was asked anyway): said on the card's border."""

    class Decided(Message):
        """The person answered this card."""

        def __init__(self, card: ApprovalCard, answer: str, reason: str | None = None) -> None:
            super().__init__()
            self.card = card
            self.answer = answer
            self.reason = reason

    class ApproveSession(Message):
        def __init__(self, card: ApprovalCard) -> None:
            super().__init__()
            self.card = card

    class View(Message):
        def __init__(self, card: ApprovalCard) -> None:
            super().__init__()
            self.card = card

    class Step(Message):
        """Move focus to the card `step` places away in the queue (j/k, ↓/↑)."""

        def __init__(self, card: ApprovalCard, step: int) -> None:
            super().__init__()
            self.card = card
            self.step = step

    class Propose(Message):
        """ "Always for this pattern": the app shows the proposed rule for editing."""

        def __init__(self, card: ApprovalCard) -> None:
            super().__init__()
            self.card = card

    def __init__(
        self,
        info: ApprovalInfo,
        *,
        arm_delay: float = 0.5,
        clock: Callable[[float], str] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.info = info
        self.arm_delay = arm_delay
        self.set_reactive(ApprovalCard.armed, arm_delay <= 0)  # drawn by on_mount
        self._arm_timer: Timer | None = None
        self._clock = clock or (lambda ts: time.strftime("%H:%M:%S", time.localtime(ts)))
        # known from the start, so that a card in the queue says who asks before it has mounted
        self.border_title = escape(self._head())

    # --- composition -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(self._title(), classes="card-title")
        yield Static(classes="card-keys")
        yield Static(classes="card-status")
        with Widget(classes="card-details"):
            why = self.info.why_asked()
            if why:
                yield Static(Text(why, style="italic"), classes="card-why")
            if self.info.paths():
                yield Static(
                    Text("files: " + ", ".join(self.info.paths()), style="italic"),
                    classes="card-files",
                )
            text = self.info.input_text()
            if text is not None:
                clipped, more = _clip(
                    text, INPUT_LINES_WITH_DIFF if self.info.diffs() else INPUT_LINES
                )
                body = Text(clipped)
                if more:
                    body.append(
                        f"\n… {more} more line{'s' * (more != 1)} (v views all)", style="italic"
                    )
                yield Static(body, classes="card-input")
            yield Static(classes="card-diff")

    def on_mount(self) -> None:
        if self._part(".card-keys") is None:
            return  # removed before it mounted (settled in the tick it came): Textual composed none
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        self._render_diff()
        self._render_keys()
        self._render_status()
        if not self.armed:
            self.rearm()

    def _head(self) -> str:
        i = self.info
        where = f"{i.host} · " if i.host else ""
        from symposium_tui.state.formatting import LONG_SESSION_ID, session_name

        if len(i.session_id) > LONG_SESSION_ID:  # an ACP session's UUID: in the detail view (v)
            session = session_name(i.connection, i.session_id)
        else:
            session = f"{i.session_id} ({i.connection})"
        version = f" {i.agent_version}" if i.agent_version else ""
        return f"{where}{i.agent_display}{version} · {session} · {self._clock(i.received)}"

    def _title(self) -> Text:
        return Text.assemble(
            ("⚠ ", "bold"), (self.info.title, "bold"), "  ", (f"[{self.info.kind}]", "italic")
        )

    def on_resize(self) -> None:
        self._render_keys()

    def watch_state(self, state: str) -> None:
        self.set_class(state == "resolved", "-resolved")
        if self.is_mounted:
            self._render_keys()

    def watch_armed(self) -> None:
        if self.is_mounted:
            self._render_keys()

    def watch_outcome_text(self) -> None:
        if self.is_mounted:
            self._render_status()

    def watch_bypass(self, on: bool) -> None:
        self.set_class(on, "-bypass")
        anyway = "what governs the agents is asked" if self.info.guarded else "a rule asks"
        self.border_subtitle = (
            f"⚠ bypass on for {escape(self.info.agent_display)}: {anyway} anyway" if on else ""
        )  # (or for its session)

    def _theme_changed(self, theme: Any) -> None:
        # The diff and key colours are Rich styles read from the theme's CSS: read them again.
        self._render_diff()
        self._render_keys()

    def _part(self, selector: str) -> Static | None:
        """One of the card's parts, or None on a card being removed: its parts leave before it
        does, and a card removed before it mounted never had any."""
        return next(self.query(selector).results(Static), None)

    def _render_diff(self, limit: int | None = DIFF_LINES) -> None:
        widget = self._part(".card-diff")
        if widget is None:
            return
        diffs = self.info.diffs()
        widget.display = bool(diffs)
        if diffs:
            widget.update(self.render_diffs(diffs, limit))

    def render_diffs(self, diffs: list[tuple[str, str]], limit: int | None) -> Text:
        styles = {
            "+": self.get_component_rich_style("approval-card--diff-added", partial=True),
            "-": self.get_component_rich_style("approval-card--diff-removed", partial=True),
            "@": self.get_component_rich_style("approval-card--diff-hunk", partial=True),
        }
        header = self.get_component_rich_style("approval-card--diff-header", partial=True)
        out = Text()
        lines = [line for _, diff in diffs for line in diff.splitlines()]
        shown = lines if limit is None else lines[:limit]
        for n, line in enumerate(shown):
            if n:
                out.append("\n")
            if line.startswith(("+++", "---")):
                out.append(line, header)
            else:
                out.append(line, styles.get(line[:1]))
        if limit is not None and len(lines) > limit:
            more = len(lines) - limit
            out.append(f"\n… {more} more diff line{'s' * (more != 1)} (v views all)", "italic")
        return out

    def _render_keys(self) -> None:
        widget = self._part(".card-keys")
        if widget is None:
            return
        widget.set_class(self.state != "pending", "-hidden")
        if self.state != "pending":
            return
        key = self.get_component_rich_style("approval-card--key", partial=True)
        items = legend(self.info)
        # Pack whole items into lines: an item never breaks between its key and its label.
        width = max(20, self.content_region.width or 76)
        text = Text()
        used = 0
        for k, label in items:
            size = cell_len(k) + 2 + 1 + cell_len(label)
            if used and used + 2 + size > width:
                text.append("\n")
                used = 0
            elif used:
                text.append("  ")
                used += 2
            text.append(f" {k} ", key)
            indent = cell_len(k) + 3
            if size > width:  # longer than a line alone: wrapped under its label, not its key
                lines = textwrap.wrap(label, max(8, width - indent)) or [label]
                text.append(" " + ("\n" + " " * indent).join(lines))
                used = width  # the next item starts a line of its own
                continue
            text.append(f" {label}")
            used += size
        if not self.armed:
            text.append("  (arming…)", "italic")
        widget.update(text)
        self.set_class(not self.armed, "-unarmed")

    def _render_status(self) -> None:
        widget = self._part(".card-status")
        if widget is None:
            return
        widget.display = bool(self.outcome_text)
        widget.update(self.outcome_text)
        widget.set_class(self.outcome_text.startswith("✓"), "-allowed")
        widget.set_class(self.outcome_text.startswith("✗"), "-denied")

    # --- arming ------------------------------------------------------------------------------------

    def rearm(self) -> None:
        """Ignore keys for the arming delay, starting now."""
        if self._arm_timer is not None:
            self._arm_timer.stop()
            self._arm_timer = None
        if self.arm_delay <= 0:
            self.armed = True
            return
        self.armed = False
        self._arm_timer = self.set_timer(self.arm_delay, self._arm)

    def _arm(self) -> None:
        self.armed = True

    # --- keys ----------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        answer = needed_answer(action, parameters)
        if action == "propose" and self.info.proposal() is None:
            return False
        if answer is None:
            return True
        if not self.info.offers(str(answer)):
            return False  # the agent did not offer it: hidden
        if action == "back_to_card":
            return self.state == "reason"
        if self.state != "pending":
            return False
        return True if self.armed else None  # None: shown, dimmed, ignored until armed

    def action_answer(self, answer: str) -> None:
        self.post_message(self.Decided(self, answer))

    async def action_deny(self) -> None:
        status = self._part(".card-status")
        if status is None:
            return  # a card on its way out takes no reason
        reason = Input(
            placeholder="Reason (optional) · Enter denies · Esc back to the card",
            id="deny-reason",
            classes="card-reason",
            compact=True,
        )
        self.state = "reason"
        # Focus once it is mounted: Textual drops focus given to a widget that has no screen yet.
        await self.mount(reason, before=status)
        if self.state == "reason":
            reason.focus()

    async def on_key(self, event: events.Key) -> None:
        """A terminal hands over keys typed quickly in one read, and the card sees them all before
        its deny binding would run: so the deny key is taken here (the next keys wait until the
        reason field is there), and keys that reach the card before the field has focus are the
        reason's — Enter denies with what was typed."""
        if self.state == "pending" and event.key in DENY_KEYS:
            if self.check_action("deny", ()) is True:
                event.stop()
                event.prevent_default()
                await self.action_deny()
            return
        if self.state != "reason" or not self.has_focus:
            return
        field = self._reason_field()
        if field is None:
            return
        if event.key == "enter":
            self.post_message(self.Decided(self, "deny", field.value.strip() or None))
        elif event.key == "backspace":
            field.action_delete_left()
        elif event.is_printable and event.character:
            field.insert_text_at_cursor(event.character)
        else:
            return  # Esc and the rest: the card's bindings
        event.stop()
        event.prevent_default()

    def _reason_field(self) -> Input | None:
        return next(self.query(".card-reason").results(Input), None)

    def on_focus(self) -> None:
        # Focus given back to a card that is taking a reason goes on to the field: after the
        # palette's deny switches tabs, a late Hide event can blur the field to nothing, and the
        # queue then gives focus back to the card.
        if self.state == "reason":
            field = self._reason_field()
            if field is not None:
                field.focus()

    def cancel_reason(self) -> None:
        """Back out of typing a deny reason without answering."""
        if self.state != "reason":
            return
        for reason in self.query(".card-reason"):
            reason.remove()
        self.state = "pending"
        self.focus()

    def action_back_to_card(self) -> None:
        """Esc while typing a reason: nothing is answered, the card is as it was."""
        self.cancel_reason()

    @on(Input.Submitted, "#deny-reason")
    def _reason_given(self, event: Input.Submitted) -> None:
        event.stop()
        reason = event.value.strip() or None
        self.post_message(self.Decided(self, "deny", reason))

    def action_approve_session(self) -> None:
        self.post_message(self.ApproveSession(self))

    def action_view(self) -> None:
        self.post_message(self.View(self))

    def action_propose(self) -> None:
        self.post_message(self.Propose(self))

    def action_focus_card(self, step: int) -> None:
        self.post_message(self.Step(self, step))

    # --- resolution ----------------------------------------------------------------------------------

    def mark_resolved(self, text: str) -> None:
        self.can_focus = False
        for reason in self.query(".card-reason"):
            reason.remove()
        if self._arm_timer is not None:
            self._arm_timer.stop()
        self.outcome_text = text
        self.state = "resolved"
        self.bypass = False  # settled: nothing is asked of this card any more
