"""The selected decision: its headline, its evidence (for a cancel, the first mismatching message
of each side, side by side) and the session's history as it was at that decision."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from symposium_tui.state import ConsoleState, DecisionRecord, SessionRecord, format_clock
from symposium_tui.state.formatting import LONG_SESSION_ID
from symposium_tui.widgets.sessions.common import KIND_WORDS, json_id, kind_style, set_text
from symposium_tui.widgets.sessions.history import render_evidence_side, render_history


class DecisionDetail(VerticalScroll, can_focus=True):
    """The decision shown (the latest of the session, or the one scrubbed back to) and its history."""

    DEFAULT_CSS = """
    DecisionDetail {
        #sessions-evidence { height: auto; display: none; }
        #sessions-evidence.-cancel { display: block; }
        #sessions-evidence Static { width: 1fr; height: auto; border: round $error; padding: 0 1; }
        #sessions-history { height: auto; margin-top: 1; }
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="sessions-decision")
        with Horizontal(id="sessions-evidence"):
            yield Static(id="evidence-expected")
            yield Static(id="evidence-received")
        yield Static(id="sessions-reason")
        yield Static(id="sessions-history")

    def _static(self, selector: str) -> Static:
        return self.query_one(selector, Static)

    def show_nothing(self, styles: dict[str, Style]) -> None:
        """No session yet: say where they come from."""
        set_text(
            self._static("#sessions-decision"),
            Text(
                "No sessions yet. They appear here as requests arrive.",
                style=styles.get("muted", Style()),
            ),
        )
        self.query_one("#sessions-evidence").remove_class("-cancel")
        set_text(self._static("#sessions-reason"), Text())
        set_text(self._static("#sessions-history"), Text())

    def show(
        self,
        state: ConsoleState,
        key: tuple[str, str],
        rec: SessionRecord | None,
        shown: DecisionRecord | None,
        styles: dict[str, Style],
    ) -> None:
        """Show decision `shown` of session `key` (None, or one of another session: its history
        now), with a cancel's two sides when it is one."""
        session_decisions = state.session_decisions(key)
        own = shown if shown is not None and shown in session_decisions else None
        head, rest = describe_decision(state, rec, own, styles)
        set_text(self._static("#sessions-decision"), head)
        set_text(self._static("#sessions-reason"), rest)
        cancel = own if own is not None and own.kind == "cancel" else None
        if cancel is not None:
            d = cancel.decision
            mismatch = d.get("mismatch_index")
            set_text(
                self._static("#evidence-expected"),
                render_evidence_side(
                    f"expected #{mismatch} (provisional)",
                    d.get("expected"),
                    d.get("received"),
                    styles,
                ),
            )
            set_text(
                self._static("#evidence-received"),
                render_evidence_side(
                    f"received #{mismatch} (request)", d.get("received"), d.get("expected"), styles
                ),
            )
        self.query_one("#sessions-evidence").set_class(cancel is not None, "-cancel")
        committed, provisional = state.history_at(key, own)
        mark = (
            shown.decision.get("mismatch_index")
            if shown is not None and shown.kind == "cancel"
            else None
        )
        set_text(
            self._static("#sessions-history"),
            render_history(committed, provisional, styles, mark_index=mark),
        )


def describe_decision(
    state: ConsoleState,
    rec: SessionRecord | None,
    record: DecisionRecord | None,
    styles: dict[str, Style],
) -> tuple[Text, Text]:
    """The decision's headline, and the rest of its evidence (shown under a cancel's two sides)."""
    muted = styles.get("muted", Style())
    head, rest = Text(), Text()
    if rec is not None and len(rec.session_id) > LONG_SESSION_ID:
        # Its name (`zed-3 …9f2c`) is short: the whole id, as the client and the logs say it.
        head.append(f"session {rec.session_id} of {rec.connection}\n", style=muted)
    if rec is not None and rec.end_reason:
        head.append(f"session ended: {rec.end_reason}\n", style=muted)
    if record is None:
        head.append("No decision recorded for this session.", style=muted)
        return head, rest
    head.append(
        f" {KIND_WORDS.get(record.kind, record.kind).upper()} ",
        style=kind_style(record.kind, styles) + Style(bold=True),
    )
    head.append(
        f" #{record.index} · request {json_id(record.request_id)} · {format_clock(record.ts)} · "
        f"{record.outcome or 'in flight'}"
    )
    if record.stop_reason:
        head.append(f" · stop reason {record.stop_reason}")
    if record.kind == "turn":  # a stateful ACP session: nothing was routed or replayed
        rest.append(
            f"turn {record.decision.get('seq', '?')} · {len(record.provisional)} message(s)\n"
        )
        rest.append(record.reason, style=muted)
        if record.error:
            rest.append(f"\nerror: {record.error}", style=styles.get("error", Style()))
        return head, rest
    return head, _routing_evidence(state, record, styles)


def _routing_evidence(
    state: ConsoleState, record: DecisionRecord, styles: dict[str, Style]
) -> Text:
    """What a routing decision (new session, continue, commit, cancel) was based on."""
    muted = styles.get("muted", Style())
    d = record.decision
    rest = Text()
    rest.append(
        f"committed {record.committed_len} · provisional {len(record.provisional)} · "
        f"{d.get('candidates', 0)} matching"
    )
    if d.get("prompt_start"):
        rest.append(f" · {d['prompt_start']} already sent to the agent")
    rest.append("\n")
    rest.append(record.reason, style=muted)
    if record.error and record.kind != "error":
        rest.append(f"\nerror: {record.error}", style=styles.get("error", Style()))
    if record.recorded_kind:
        rest.append(
            f"\n* the live bridge decided {KIND_WORDS.get(record.recorded_kind, record.recorded_kind)} here",
            style=styles.get("error", Style(bold=True)),
        )
    if record.kind == "cancel":
        discarded = state.previous_provisional(record)
        if discarded is not None:
            rest.append(f"\ndiscarded a provisional exchange of {len(discarded)} message(s)")
    return rest
