"""The card's keys come from one table (`symposium_tui.widgets.approvals.keys.CARD_KEYS`): the
card's bindings (and the full-screen view's), the legend drawn on a card and the command palette's
card commands are all made from it, so a key changed in the table changes all of them."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from symposium_tui.state.approval import ApprovalInfo
from symposium_tui.widgets.approvals import ApprovalCard
from symposium_tui.widgets.approvals.keys import (
    CARD_KEYS,
    card_bindings,
    detail_bindings,
    legend,
    palette_commands,
)

OPTIONS = [
    {"optionId": "once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def info() -> ApprovalInfo:
    return ApprovalInfo(
        "ap-1",
        "conn",
        "s1",
        "eliza",
        {"toolCallId": "t1", "title": "Read notes.txt", "kind": "read"},
        OPTIONS,
        agent_name="Eliza (built in)",
    )


def palette_app() -> SimpleNamespace:
    """What the palette's card commands call on the app (recorded, not run)."""
    return SimpleNamespace(
        answer_current=lambda answer: ("answer", answer),
        approve_current_session=lambda: ("session",),
        propose_current=lambda: ("propose",),
    )


def test_the_card_its_legend_and_the_palette_use_the_table_as_it_is():
    assert [(b.key, b.action) for b in ApprovalCard.BINDINGS] == [
        (k.key, k.action) for k in CARD_KEYS
    ]
    assert legend(info())[:2] == [("a", "Approve once"), ("d", "Deny…")]
    titles = {c.help: c.callback() for c in palette_commands(palette_app())}  # type: ignore[arg-type]
    assert titles["Approve the current card (a)"] == ("answer", "approve")
    assert titles["Every pending card of the current card's session (s)"] == ("session",)


def test_a_key_changed_in_the_table_changes_the_bindings_the_legend_and_the_palette():
    table = tuple(
        dataclasses.replace(k, key="y", legend=lambda i: "Yes, once") if k.key == "a" else k
        for k in CARD_KEYS
    )

    bindings = {b.action: b.key for b in card_bindings(table)}
    assert bindings["answer('approve')"] == "y"
    assert "a" not in bindings.values()

    assert ("y", "answer('approve')") in [(b.key, b.action) for b in detail_bindings(table)]

    items = legend(info(), table)
    assert items[0] == ("y", "Yes, once")
    assert "a" not in dict(items)

    helps = [c.help for c in palette_commands(palette_app(), table)]  # type: ignore[arg-type]
    assert "Approve the current card (y)" in helps
    assert "Approve the current card (a)" not in helps


def test_a_key_the_agent_did_not_offer_is_left_out_of_the_legend():
    keys = dict(legend(info()))
    assert keys["A"] == "Always allow: every later request of this session (agent keeps it)"
    assert keys["b"] == "Bypass: allow all Eliza (built in) asks (saved)…"
    assert "R" not in keys  # the agent offered no reject-always option
