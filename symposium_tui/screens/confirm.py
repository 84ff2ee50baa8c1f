"""Ctrl+Q with approvals pending: leaving denies them, so the console asks first."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static


class ConfirmQuit(ModalScreen[bool]):
    HOLDS_KEYS = True  # F1–F4 wait until it is answered or cancelled

    BINDINGS = [
        Binding("y,ctrl+q", "leave", "Quit and deny them"),
        Binding("n,escape", "stay", "Stay"),
    ]

    DEFAULT_CSS = """
    ConfirmQuit { align: center middle; }
    ConfirmQuit > Vertical {
        width: 60;
        height: auto;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, pending: int) -> None:
        super().__init__()
        self.pending = pending

    def compose(self) -> ComposeResult:
        cards = "1 approval is" if self.pending == 1 else f"{self.pending} approvals are"
        with Vertical():
            yield Static(
                f"{cards} waiting for an answer. Quitting denies "
                f"{'it' if self.pending == 1 else 'them'}; the agent and the client are told "
                "the console was closed.\n\ny quit and deny · n or Esc stay",
                id="confirm-quit-text",
            )
        yield Footer()

    def action_leave(self) -> None:
        self.dismiss(True)

    def action_stay(self) -> None:
        self.dismiss(False)


class Confirm(ModalScreen[bool]):
    """A yes/no question before something that cannot be undone from here (removing a rule)."""

    HOLDS_KEYS = True  # F1–F4 wait until it is answered or cancelled

    BINDINGS = [
        Binding("y", "yes", "Yes"),
        Binding("n,escape", "no", "No"),
    ]

    DEFAULT_CSS = """
    Confirm { align: center middle; }
    Confirm > Vertical {
        width: 64;
        max-width: 100%;
        height: auto;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, question: str, yes: str) -> None:
        super().__init__()
        self.question = question
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"{self.question}\n\ny {self.yes} · n or Esc keep it", id="confirm-text")
        yield Footer()

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)
