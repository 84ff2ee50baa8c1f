"""Yes/no questions before something that cannot be undone from here: removing a rule or an
agent, or (Ctrl+Q with approvals pending) leaving, which denies this console's own and leaves an
attached host's with that host."""

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

    DEFAULT_CLASSES = "dialog"  # its look: app.tcss

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
    """Ctrl+Q with approvals pending: the console says what leaving does to each card and asks
    first (Ctrl+Q again answers yes). A card of this console's own bridge is denied; a card from
    an attached host stays with that host, which holds it for another console until its approval
    timeout denies it."""

    BINDINGS = [
        Binding("y,ctrl+q", "yes", "Quit"),
        Binding("n,escape", "no", "Stay"),
    ]

    def __init__(self, own: int, held: dict[str, int] | None = None) -> None:
        """`own`: cards of this console's own bridge; `held`: cards per attached host."""
        held = {host: n for host, n in (held or {}).items() if n}
        total = own + sum(held.values())
        lines = [f"{_approvals(total)} waiting for an answer."]
        if own and not held:
            lines[0] += (
                f" Quitting denies {'it' if own == 1 else 'them'}; the agent and the client are "
                "told the console was closed."
            )
        elif own:
            lines.append(
                f"{_these(own, held)} this console's bridge: quitting denies "
                f"{'it' if own == 1 else 'them'}; the agent and the client are told the console "
                "was closed."
            )
        for host, n in held.items():
            lines.append(
                f"{_these(n, own or len(held) > 1)} {host}: "
                f"{'it stays' if n == 1 else 'they stay'} with that host when you quit. Another "
                f"console attached there may answer {'it' if n == 1 else 'them'}; otherwise the "
                f"host's approval timeout denies {'it' if n == 1 else 'them'}."
            )
        super().__init__(
            "\n".join(lines), "quit and deny" if own else "quit (the host keeps them)", "stay"
        )
        self.pending = total


def _approvals(n: int) -> str:
    return "1 approval is" if n == 1 else f"{n} approvals are"


def _these(n: int, others: object) -> str:
    """How a line names its cards: "It is from" alone, "The 2 from" beside other lines."""
    if not others:
        return "It is from" if n == 1 else "They are from"
    return f"The {n} from" if n > 1 else "The one from"


class ConfirmBypass(Confirm):
    """Turning bypass on for an agent: what it covers, said before it happens (`y` turns it on;
    `n` or Esc leaves everything as it was)."""

    BINDINGS = [
        Binding("y", "yes", "Turn bypass on"),
        Binding("n,escape", "no", "Keep asking"),
    ]

    def __init__(self, agent: str, still_asked_by: list[str], *, approves: bool) -> None:
        rules = (
            "; ".join(still_asked_by)
            if still_asked_by
            else "none is set now, so nothing of this agent would be asked"
        )
        super().__init__(
            f"Turn bypass on for {agent}?\n\n"
            f"• Every later request of {agent} is approved without a card, in every session "
            "(this agent only; other agents are still asked).\n"
            "• Saved in the settings file: it stays on after this console closes, until you turn "
            "it off (F4 → Agents → b).\n"
            f"• Deny and ask rules still apply to it: {rules}."
            + ("\n• This request is approved now." if approves else ""),
            "turn bypass on",
            "keep asking",
        )
        self.agent = agent
