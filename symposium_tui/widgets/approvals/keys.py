"""The card's keys, in one table: it makes the card's bindings (and so the footer and F1's list),
the key legend drawn on each card, and the command palette's "Approvals: …" commands.

A key is tied to the *kind* of answer, never to a position, and needs the agent to have offered
that answer (`CardKey.needs`): the card hides the binding, leaves it out of the legend, and the
palette's command says the agent did not offer it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from textual.binding import Binding, BindingType

from symposium_tui.state.approval import ANSWER_KIND, ApprovalInfo

if TYPE_CHECKING:
    from textual.app import SystemCommand

    from symposium_tui.app import SymposiumApp

#: The palette's way to run a key on the current card, given the app.
PaletteRun = Callable[["SymposiumApp"], Callable[[], object]]


@dataclass(frozen=True)
class CardKey:
    """One key of a card: its binding, its line in the card's legend, its palette command."""

    key: str
    action: str
    footer: str  # the footer's (and F1's) short name
    tooltip: str
    show: bool = True  # in the footer
    needs: str | None = None  # the answer the agent must offer (ApprovalInfo.offers)
    legend: Callable[[ApprovalInfo], str | None] | None = None  # None: not in the legend
    command: tuple[str, str, PaletteRun] | None = None  # palette title, help, what it runs
    detail: bool = False  # also a key of the card's full-screen view (v)

    def binding(self) -> Binding:
        return Binding(self.key, self.action, self.footer, show=self.show, tooltip=self.tooltip)


def _answer(answer: str) -> PaletteRun:
    return lambda app: partial(app.answer_current, answer)


def _always(answer: str, default: str) -> Callable[[ApprovalInfo], str | None]:
    """The agent's own allow-always / reject-always, named as the agent names it."""

    def label(info: ApprovalInfo) -> str | None:
        option = info.option(ANSWER_KIND[answer])
        if option is None:
            return None
        name = option.get("name") or default
        return f"{name}: every later request of this session (agent keeps it)"

    return label


def _rule(info: ApprovalInfo) -> str | None:
    scope = info.pattern_scope()
    return None if scope is None else f"Rule: {scope}…"


CARD_KEYS: tuple[CardKey, ...] = (
    CardKey(
        "a",
        "answer('approve')",
        "Approve",
        "Approve once (the agent's allow-once option)",
        detail=True,
        needs="approve",
        legend=lambda info: "Approve once",
        command=("Approvals: approve once", "Approve the current card", _answer("approve")),
    ),
    CardKey(
        "d",
        "deny",
        "Deny…",
        "Deny; type an optional reason, Enter denies (with or without one), "
        "Esc goes back to the card",
        detail=True,
        needs="deny",
        legend=lambda info: "Deny…",
        command=("Approvals: deny", "Deny the current card, with a reason", _answer("deny")),
    ),
    CardKey(
        "b",
        "answer('bypass')",
        "Bypass",
        "Bypass the agent, after a confirmation (y): approve, and every later request of "
        "this agent too, without a card (saved in the settings; deny and ask rules still "
        "apply; F4 turns it off)",
        detail=True,
        needs="bypass",
        legend=lambda info: f"Bypass: allow all {info.agent_display} asks (saved)…",
        command=(
            "Approvals: bypass the agent",
            "Approve, and all this agent asks from now on; saved in the settings",
            _answer("bypass"),
        ),
    ),
    CardKey(
        "A",
        "answer('allow_always')",
        "Agent's always",
        "The agent's own “always allow”, when it offers one: the agent keeps it and "
        "runs every later request of this session it covers without asking (each one is "
        "audited here); nothing is saved here",
        needs="allow_always",
        legend=_always("allow_always", "Always allow"),
        command=(
            "Approvals: agent's always allow",
            "The agent's own allow-always; it decides the scope, nothing saved",
            _answer("allow_always"),
        ),
    ),
    CardKey(
        "R",
        "answer('reject_always')",
        "Agent's never",
        "The agent's own “always reject”, when it offers one (the agent keeps it)",
        show=False,
        needs="reject_always",
        legend=_always("reject_always", "Always reject"),
        command=(
            "Approvals: agent's always reject",
            "The agent's own reject-always option",
            _answer("reject_always"),
        ),
    ),
    CardKey(
        "s",
        "approve_session",
        "Session",
        "Approve every pending card of this card's session",
        show=False,
        needs="approve",
        # its pending cards, not what the session asks later (that is A, or b)
        legend=lambda info: "Approve session's pending",
        command=(
            "Approvals: approve every pending card of this session",
            "Every pending card of the current card's session",
            lambda app: app.approve_current_session,
        ),
    ),
    CardKey(
        "p",
        "propose",
        "Rule…",
        "A rule for requests like this one (the card says which, e.g. commands "
        "starting `git status`): shown for editing, saved in the settings with this request "
        "as its first example, then this request is approved",
        needs="approve",
        legend=_rule,
        command=(
            "Approvals: rule for requests like this one",
            "Edit the rule the current card proposes; saved, it approves the card",
            lambda app: app.propose_current,
        ),
    ),
    CardKey("v", "view", "View", "The whole request, full screen", show=False),
    CardKey("escape", "back_to_card", "Back to the card", "", needs="deny"),
    CardKey("up,k", "focus_card(-1)", "Previous", "Previous card", show=False),
    CardKey("down,j", "focus_card(1)", "Next", "Next card", show=False),
)


# The keys that start a denial (the card takes them itself: see `ApprovalCard.on_key`).
DENY_KEYS = frozenset(k for key in CARD_KEYS if key.action == "deny" for k in key.key.split(","))


def card_bindings(table: Iterable[CardKey] = CARD_KEYS) -> list[BindingType]:
    return [key.binding() for key in table]


def detail_bindings(table: Iterable[CardKey] = CARD_KEYS) -> list[BindingType]:
    """The card keys that also answer from the card's full-screen view."""
    return [key.binding() for key in table if key.detail]


def legend(info: ApprovalInfo, table: Iterable[CardKey] = CARD_KEYS) -> list[tuple[str, str]]:
    """(key, label) for each key this card's agent offered, in the table's order."""
    items = []
    for key in table:
        if key.legend is None or (key.needs is not None and not info.offers(key.needs)):
            continue
        label = key.legend(info)
        if label is not None:
            items.append((key.key, label))
    return items


def needed_answer(action: str, parameters: tuple[object, ...]) -> str | None:
    """The answer a card action needs the agent to have offered (None: it needs none)."""
    if action == "answer":
        return str(parameters[0]) if parameters else None
    return next((k.needs for k in CARD_KEYS if k.action == action), None)


def palette_commands(
    app: SymposiumApp, table: Iterable[CardKey] = CARD_KEYS
) -> Iterable[SystemCommand]:
    """The palette's command for each card key that has one: it acts on the current card."""
    from textual.app import SystemCommand

    for key in table:
        if key.command is not None:
            title, help_text, run = key.command
            yield SystemCommand(title, f"{help_text} ({key.key})", run(app))
