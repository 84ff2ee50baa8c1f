"""How many cards wait, said where the person looks: the Approvals tab's label (its underline put
right after the relabel), the header's sub-title with any bypass in force, the chat's banner and
the terminal's title."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen
from textual.widgets import Tab, TabbedContent

from bridge.settings import agent_display_name

if TYPE_CHECKING:
    from symposium_tui.app import SymposiumApp


def realign_tab_underline(tab: Tab) -> None:
    """Move the underline of `tab`'s tab bar to under its active tab as the bar is laid out now.

    Textual has no call for this; it moves the underline when a tab is relabelled (that is what
    `Tab.label` is for), so the tab is given its own label again. The move waits for the next
    refresh and reads where the active tab is then. Tested in tests/symposium_tui/test_approvals.py
    (a wrong underline put right by this alone), which fails if Textual stops doing so."""
    tab.label = tab.label


class PendingDisplay:
    """Says the number of pending cards, and what is on bypass, wherever it shows."""

    def __init__(self, app: SymposiumApp, title: str) -> None:
        self.app = app
        self.title = title  # the Approvals tab's, shown with the count when there is one
        self.count = 0
        # The Approvals tab's label changed and the underline has not been put right since.
        self._relabelled = False

    def _tab(self) -> Tab:
        return self.app._main.query_one("#tabs", TabbedContent).get_tab("approvals")

    def update(self, pending: int) -> None:
        app = self.app
        self.count = pending
        label = f"{self.title} ({pending})" if pending else self.title
        tab = self._tab()
        if tab.label.plain != label:
            tab.label = label
            self._relabelled = True
        tab.set_class(pending > 0, "-pending")
        app.sub_title = (
            f"{pending} pending approval{'s' * (pending != 1)}"
            if pending
            else "no pending approvals"
        ) + self._bypass_note()
        chat = app.chat_pane()
        if chat is not None:
            chat.show_pending([c.info for c in app.queue.pending])
        app.alerts.set_pending(pending)

    def bypassed_agents(self) -> set[str]:
        """The agents on bypass now: the live policy's (a card's Bypass, the settings), else the
        settings file's."""
        app = self.app
        bridge = app.bridge
        if bridge is not None:
            return set(bridge.approvals.policy.bypass_agents)
        if app.links is not None and app._connect is None:
            return set()  # a console with no bridge of its own: its hosts' cards say it
        return set(app.settings.bypass_agents()) if app.settings is not None else set()

    def _bypass_note(self) -> str:
        """For the header, while any agent is on bypass (and the cards of those agents say so)."""
        app = self.app
        agents = self.bypassed_agents()
        names = {agent_display_name(a, app.settings) for a in agents}
        sessions = set(app.bridge.approvals.policy.session_bypass) if app.bridge else set()
        names.update(f"session {session}" for _, session in sessions)
        if app._alive():
            app.queue.set_bypass(agents, sessions)
            # an attached host's: known from its cards (asked anyway, by a rule there)
            names.update(
                f"{c.info.agent_display} on {c.info.host}"
                for c in app.queue.pending
                if c.info.host is not None and c.info.host_bypass
            )
        return f" · ⚠ bypass on: {', '.join(sorted(names))}" if names else ""

    def after_main_layout(self, screen: Screen) -> None:
        """After the console's screen is laid out: once that layout has the relabelled Approvals
        tab at its new width, move the tab bar's underline to the shown tab again.

        Textual moves the underline when a tab is relabelled, but the tab gets its new width in a
        later layout (the tab asks for it from its own message queue) and the move can come first:
        the underline then stays under the old span (also under the tabs after it, which the new
        width shifted), and nothing moves it again. Layouts that came before the tab's own still
        have the old width and are let pass."""
        if not self._relabelled or not self.app._alive():
            return
        tab = self._tab()
        if tab.virtual_region.shrink(tab.styles.gutter).width != tab.label.cell_length:
            return
        self._relabelled = False
        realign_tab_underline(tab)
