"""Approval cards and the queue that holds them: one module each (`card`, `queue`), the card's
keys in one table (`keys`), and how a settled request is told (`resolution`). What one request
carries is `symposium_tui.state.approval.ApprovalInfo`, model apart from view."""

from symposium_tui.state.approval import ANSWER_KIND, ApprovalInfo, pretty_input
from symposium_tui.widgets.approvals.card import ApprovalCard
from symposium_tui.widgets.approvals.keys import CARD_KEYS, CardKey
from symposium_tui.widgets.approvals.queue import EMPTY_QUEUE, Answerer, ApprovalQueue
from symposium_tui.widgets.approvals.resolution import describe_resolution, still_asked_by

__all__ = [
    "ANSWER_KIND",
    "CARD_KEYS",
    "EMPTY_QUEUE",
    "Answerer",
    "ApprovalCard",
    "ApprovalInfo",
    "ApprovalQueue",
    "CardKey",
    "describe_resolution",
    "pretty_input",
    "still_asked_by",
]
