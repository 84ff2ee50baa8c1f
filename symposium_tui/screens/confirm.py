"""Yes/no questions before something that cannot be undone from here: removing a rule or an
agent, or (Ctrl+Q with approvals pending) leaving, which denies them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static


class Confirm(ModalScreen[bool]):
    """A yes/no question; dismissed with True for yes."""

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

    def __init__(self, question: str, yes: str, no: str = "keep it") -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"{self.question}\n\ny {self.yes} · n or Esc {self.no}", id="confirm-text")
        yield Footer()

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)


class ConfirmQuit(Confirm):
    """Ctrl+Q with approvals pending: leaving denies them, so the console asks first (Ctrl+Q
    again answers yes)."""

    BINDINGS = [
        Binding("y,ctrl+q", "yes", "Quit and deny them"),
        Binding("n,escape", "no", "Stay"),
    ]

    DEFAULT_CSS = """
    ConfirmQuit > Vertical { width: 60; }
    """

    def __init__(self, pending: int) -> None:
        cards = "1 approval is" if pending == 1 else f"{pending} approvals are"
        super().__init__(
            f"{cards} waiting for an answer. Quitting denies "
            f"{'it' if pending == 1 else 'them'}; the agent and the client are told "
            "the console was closed.",
            "quit and deny",
            "stay",
        )
        self.pending = pending
