"""`v` on a card: the whole request — every line of its input and of its diff — full screen.
The card's own keys keep working here, so a long edit can be reviewed and answered in one place."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from symposium_tui.widgets.approvals import ApprovalCard
from symposium_tui.widgets.approvals.keys import detail_bindings


class ApprovalDetailScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,v", "dismiss", "Back"), *detail_bindings()]

    DEFAULT_CLASSES = "dialog"  # its look: app.tcss
    DEFAULT_CSS = """
    ApprovalDetailScreen .detail-section {
        text-style: bold;
        margin-top: 1;
    }
    """

    def __init__(self, card: ApprovalCard) -> None:
        super().__init__()
        self.card = card

    def compose(self) -> ComposeResult:
        info = self.card.info
        with VerticalScroll(id="detail"):
            yield Static(
                Text.assemble(
                    (info.agent_display, "bold"),
                    f" · session {info.session_id} ({info.connection})",
                )
            )
            yield Static(Text.assemble(("⚠ " + info.title, "bold"), f"  [{info.kind}]"))
            why = info.why_asked()
            if why:
                yield Static(Text(why, style="italic"))
            if info.paths():
                yield Static("files: " + ", ".join(info.paths()))
            text = info.input_text()
            if text is not None:
                yield Static("Input", classes="detail-section")
                yield Static(Text(text))
            diffs = info.diffs()
            if diffs:
                yield Static("Diff", classes="detail-section")
                yield Static(self.card.render_diffs(diffs, None))
            yield Static("Options the agent offered", classes="detail-section")
            yield Static(
                "\n".join(f"• {o.get('name')} ({o.get('kind')})" for o in info.options) or "none"
            )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#detail").focus()
        # The card's keys work here too: this footer follows its arming and its state.
        self.watch(self.card, "armed", self._card_changed, init=False)
        self.watch(self.card, "state", self._card_changed, init=False)

    def _card_changed(self) -> None:
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer":
            return self.card.check_action("answer", parameters)
        if action == "deny":
            return self.card.check_action("deny", ())
        return True

    def action_answer(self, answer: str) -> None:
        self.dismiss()
        self.card.action_answer(answer)

    def action_deny(self) -> None:
        self.dismiss()
        self.card.focus()
        self.card.call_later(self.card.action_deny)
