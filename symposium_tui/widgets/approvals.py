"""Approval cards and the queue that holds them.

A card is one pending permission request. Its keys are tied to the *kind* of answer, never to a
position (`a` approve once, `d` deny, `b` bypass the agent — only once a confirmation that says
what bypass covers is answered `y` —, `A`/`R` the agent's own allow-always and reject-always,
which the card says cover every later request of the session), and keys the agent did not offer
are hidden. A card of an agent on bypass (asked anyway, by an ask rule) says bypass is on. A card ignores its keys until it
has been on screen for the arming delay, and re-arms whenever focus moves to it by itself (it
arrived, or the card before it was answered), so a keystroke meant for something else never
answers it. The queue never takes focus from a widget outside it.

The queue does not know the broker: it asks an `Answerer` (the console's handle) and is told about
resolutions through `resolve()`.
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.message import Message
from textual.reactive import var
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, Static

#: A person's answer → the option kind the broker picks for it.
ANSWER_KIND = {
    "approve": "allow_once",
    "deny": "reject_once",
    "bypass": "allow_once",
    "allow_always": "allow_always",
    "reject_always": "reject_always",
}

INPUT_LINES = 8  # of the pretty-printed input, on a card (`v` shows everything)
INPUT_LINES_WITH_DIFF = 3  # the diff says it better
DIFF_LINES = 12


class Answerer(Protocol):
    def answer(self, approval_id: str, answer: str, reason: str | None = None) -> bool: ...

    def approve_all(self, connection: str, session_id: str) -> int: ...


@dataclass
class ApprovalInfo:
    """What one card shows: an `ApprovalRequested` event, or a broker's `PendingApproval`."""

    approval_id: str
    connection: str
    session_id: str
    agent: str
    tool_call: dict[str, Any]
    options: list[dict[str, Any]]
    received: float = field(default_factory=time.time)
    host: str | None = None  # the machine that asks, for a card from an attached host
    agent_name: str = ""  # the agent's name for a person; `agent` stays the id rules match
    agent_version: str | None = None  # the agent's own word for its version, when it gave one
    host_bypass: bool = False  # a card from an attached host: its agent is on bypass there

    @property
    def agent_display(self) -> str:
        """What a person reads: the agent's name ("Eliza (built in)"), never only its id."""
        if self.agent_name:
            return self.agent_name
        from bridge.settings import agent_display_name

        return agent_display_name(self.agent)

    @classmethod
    def from_event(cls, event: Any) -> ApprovalInfo:
        return cls(
            event.approval_id,
            event.connection,
            event.session_id,
            event.agent,
            dict(event.tool_call),
            list(event.options),
            event.ts,
            getattr(event, "host", None),
            agent_version=getattr(event, "agent_version", None),
            host_bypass=getattr(event, "bypass", False) is True,
        )

    @classmethod
    def from_pending(cls, pending: Any) -> ApprovalInfo:
        ctx = pending.ctx
        return cls(
            pending.id,
            ctx.connection,
            ctx.session_id,
            ctx.agent,
            dict(ctx.tool_call),
            list(ctx.options),
            pending.created,
            agent_version=ctx.agent_version,
        )

    @property
    def title(self) -> str:
        return (
            self.tool_call.get("title")
            or self.tool_call.get("toolCallId")
            or "(untitled tool call)"
        )

    @property
    def kind(self) -> str:
        return self.tool_call.get("kind") or "other"

    def option(self, kind: str) -> dict[str, Any] | None:
        return next((o for o in self.options if o.get("kind") == kind), None)

    def offers(self, answer: str) -> bool:
        return self.option(ANSWER_KIND[answer]) is not None

    def proposal(self) -> Any:
        """The rule "always for this pattern" would add (bridge.rules.propose_rule), or None."""
        if not hasattr(self, "_proposal"):
            from bridge.rules import Request, propose_rule

            try:
                self._proposal = propose_rule(Request.from_tool_call(self.agent, self.tool_call))
            except Exception:  # a request nothing sensible can be built from: no key
                self._proposal = None
        return self._proposal

    def pattern_scope(self) -> str | None:
        rule = self.proposal()
        if rule is None:
            return None
        from bridge.rules import scope_text

        return scope_text(rule, self.agent_display)

    def input_text(self) -> str | None:
        raw = self.tool_call.get("rawInput")
        return None if raw is None else pretty_input(raw)

    def diffs(self) -> list[tuple[str, str]]:
        """(path, unified diff) for every file edit the call carries."""
        out = []
        for item in self.tool_call.get("content") or ():
            if isinstance(item, dict) and item.get("type") == "diff":
                path = item.get("path") or "(file)"
                old = item.get("oldText") or ""
                new = item.get("newText") or ""
                lines = difflib.unified_diff(
                    old.splitlines(keepends=True),
                    new.splitlines(keepends=True),
                    fromfile="/dev/null" if item.get("oldText") is None else f"a/{path}",
                    tofile=f"b/{path}",
                    n=3,
                )
                out.append(
                    (path, "".join(line if line.endswith("\n") else line + "\n" for line in lines))
                )
        return out

    def paths(self) -> list[str]:
        return [
            loc["path"]
            for loc in self.tool_call.get("locations") or ()
            if isinstance(loc, dict) and loc.get("path")
        ]


def pretty_input(raw: Any) -> str:
    """A tool's input for a person: `key: value` lines, multi-line strings as indented blocks
    (so code reads as code, not as one line of escaped newlines), anything nested as JSON."""
    if not isinstance(raw, dict):
        return (
            raw
            if isinstance(raw, str)
            else json.dumps(raw, indent=2, ensure_ascii=False, default=str)
        )
    lines: list[str] = []
    for key, value in raw.items():
        if isinstance(value, str) and "\n" in value.rstrip("\n"):
            lines.append(f"{key}: |")
            lines.extend("  " + line for line in value.rstrip("\n").split("\n"))
        elif isinstance(value, str):
            lines.append(f"{key}: {value}")
        else:
            dumped = json.dumps(value, indent=2, ensure_ascii=False, default=str).split("\n")
            lines.append(f"{key}: {dumped[0]}")
            lines.extend("  " + line for line in dumped[1:])
    return "\n".join(lines)


def _clip(text: str, limit: int) -> tuple[str, int]:
    lines = text.splitlines()
    if len(lines) <= limit:
        return text.rstrip("\n"), 0
    return "\n".join(lines[:limit]), len(lines) - limit


class ApprovalCard(Widget, can_focus=True):
    """One pending approval."""

    BINDINGS = [
        Binding(
            "a",
            "answer('approve')",
            "Approve",
            tooltip="Approve once (the agent's allow-once option)",
        ),
        Binding(
            "d",
            "deny",
            "Deny…",
            tooltip="Deny; type an optional reason, Enter denies (with or without one), "
            "Esc goes back to the card",
        ),
        Binding(
            "b",
            "answer('bypass')",
            "Bypass",
            tooltip="Bypass the agent, after a confirmation (y): approve, and every later request of "
            "this agent too, without a card (saved in the settings; deny and ask rules still "
            "apply; F4 turns it off)",
        ),
        Binding(
            "A",
            "answer('allow_always')",
            "Agent's always",
            tooltip="The agent's own “always allow”, when it offers one: the agent keeps it and "
            "runs every later request of this session it covers without asking (each one is "
            "audited here); nothing is saved here",
        ),
        Binding(
            "R",
            "answer('reject_always')",
            "Agent's never",
            show=False,
            tooltip="The agent's own “always reject”, when it offers one (the agent keeps it)",
        ),
        Binding(
            "s",
            "approve_session",
            "Session",
            show=False,
            tooltip="Approve every pending card of this card's session",
        ),
        Binding(
            "p",
            "propose",
            "Rule…",
            tooltip="A rule for requests like this one (the card says which, e.g. commands "
            "starting `git status`): shown for editing, saved in the settings with this request "
            "as its first example, then this request is approved",
        ),
        Binding("v", "view", "View", show=False, tooltip="The whole request, full screen"),
        Binding("escape", "back_to_card", "Back to the card"),
        Binding("up,k", "focus_card(-1)", "Previous", show=False, tooltip="Previous card"),
        Binding("down,j", "focus_card(1)", "Next", show=False, tooltip="Next card"),
    ]

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

    # --- composition -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(self._title(), classes="card-title")
        yield Static(classes="card-keys")
        yield Static(classes="card-status")
        with Widget(classes="card-details"):
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
        self.border_title = escape(self._head())
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
        self.border_subtitle = (
            f"⚠ bypass on for {escape(self.info.agent_display)}: a rule asks anyway" if on else ""
        )  # (or for its session)

    def _theme_changed(self, theme: Any) -> None:
        # The diff and key colours are Rich styles read from the theme's CSS: read them again.
        self._render_diff()
        self._render_keys()

    def _render_diff(self, limit: int | None = DIFF_LINES) -> None:
        widget = self.query_one(".card-diff", Static)
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
        widget = self.query_one(".card-keys", Static)
        widget.set_class(self.state != "pending", "-hidden")
        if self.state != "pending":
            return
        key = self.get_component_rich_style("approval-card--key", partial=True)
        i = self.info
        items: list[tuple[str, str]] = []
        if i.offers("approve"):
            items.append(("a", "Approve once"))
        if i.offers("deny"):
            items.append(("d", "Deny…"))
        if i.offers("bypass"):
            items.append(("b", f"Bypass: allow all {i.agent_display} asks (saved)…"))
        for answer, key_name, default in (
            ("allow_always", "A", "Always allow"),
            ("reject_always", "R", "Always reject"),
        ):
            option = i.option(ANSWER_KIND[answer])
            if option is not None:
                name = option.get("name") or default
                items.append(
                    (key_name, f"{name}: every later request of this session (agent keeps it)")
                )
        if i.offers("approve"):
            items.append(("s", "Approve session"))
        scope = i.pattern_scope()
        if scope is not None and i.offers("approve"):
            items.append(("p", f"Rule: {scope}…"))
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
            text.append(f" {label}")
            used += size
        if not self.armed:
            text.append("  (arming…)", "italic")
        widget.update(text)
        self.set_class(not self.armed, "-unarmed")

    def _render_status(self) -> None:
        widget = self.query_one(".card-status", Static)
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
        answer = {
            "answer": parameters[0] if parameters else None,
            "deny": "deny",
            "back_to_card": "deny",
            "approve_session": "approve",
            "propose": "approve",
        }.get(action)
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

    def action_deny(self) -> None:
        reason = Input(
            placeholder="Reason (optional) · Enter denies · Esc back to the card",
            id="deny-reason",
            classes="card-reason",
            compact=True,
        )
        self.mount(reason, before=self.query_one(".card-status"))
        self.state = "reason"
        reason.focus()

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


def describe_resolution(event: Any, *, mine: str | None, agent: str) -> str:
    """One line saying how a request was settled (for the card that leaves the queue)."""
    outcome = event.outcome
    reason = f": {event.reason}" if getattr(event, "reason", None) else ""
    if mine is not None:
        said = {
            "approve": "Approved once",
            "deny": "Denied",
            "bypass": f"Approved; bypass on: {agent} is always allowed from now on",
            "allow_always": f"Always allowed ({agent}'s own rule): every later request of this "
            "session runs without a card, each one audited",
            "reject_always": f"Always rejected ({agent}'s own rule): every later request of this "
            "session is refused without a card",
        }.get(mine, mine)
        if outcome == "cancelled":
            return f"✗ The agent did not offer that answer: cancelled{reason}"
        return f"✓ {said}{reason}" if outcome.startswith("allow") else f"✗ {said}{reason}"
    if event.resolver == "default" and outcome == "cancelled":
        return f"↶ Withdrawn{reason or ': the request was cancelled'}"
    if event.resolver == "default":
        return f"✗ Denied{reason}"
    if event.resolver == "vscode":
        return f"Answered in VS Code: {outcome}{reason}"
    if event.resolver == "console":
        who = getattr(event, "by", None) or "another console"
        return f"Answered by {who}: {outcome}{reason}"
    if event.resolver == "timeout":
        return f"✗ Denied: timed out{reason}"
    if event.resolver == "link":
        return f"⚠ Link lost{reason}"
    if event.resolver == "policy":
        rule = f" ({event.rule})" if getattr(event, "rule", None) else ""
        return f"Decided by policy{rule}: {outcome}{reason}"
    return f"{event.resolver}: {outcome}{reason}"


def still_asked_by(app: Any, agent: str) -> list[str]:
    """The deny and ask rules that still stop `agent` on bypass (the live policy's, else the
    settings file's)."""
    bridge = getattr(app, "bridge", None)
    if bridge is not None:
        return list(bridge.approvals.policy.shadowing_denies(agent))
    settings = getattr(app, "settings", None)
    if settings is None:
        return []
    from bridge.approvals import Policy

    return Policy(rules=list(settings.rules)).shadowing_denies(agent)


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
        if self.current is None:
            self.current = card
        if self._may_take_focus():
            self.call_after_refresh(self._focus_if_allowed, card)
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

    def _focus_if_allowed(self, card: ApprovalCard) -> None:
        if self._may_take_focus():
            self._focus_card(card)

    def _focus_card(self, card: ApprovalCard) -> None:
        """Focus moved to a card by itself: it re-arms."""
        if card.state == "resolved" or not card.is_attached:
            return
        card.rearm()
        card.focus()
        self.current = card
        card.scroll_visible(animate=False)

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
