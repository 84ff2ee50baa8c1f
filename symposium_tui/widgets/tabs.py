"""The console's tabs: the tab a person asked for stays shown when a focus given earlier lands late."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets import TabbedContent, TabPane


class ConsoleTabs(TabbedContent):
    """Textual shows the tab of a pane whose widget was focused from code. The console always shows
    a tab first and focuses in it after, so a focus that lands in a pane not shown is one given
    before the person asked for another tab: under load the focus (a message of its own, then two
    more) can land after the key that switched (the queue focused at start, then F3 a moment
    later). Such a focus does not bring its tab back: the shown tab keeps the screen, and the focus
    goes back to it (`refocus`, given the shown tab's id)."""

    def __init__(self, *, refocus: Callable[[str], object], initial: str, id: str) -> None:
        super().__init__(initial=initial, id=id)
        self._refocus = refocus

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        if event.tab_pane.id == self.active:
            return  # TabbedContent's own handler follows (the tab is already shown)
        event.prevent_default()
        event.stop()
        focused = self.app.focused
        if focused is not None and event.tab_pane in focused.ancestors:
            self._refocus(self.active)

    def _on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A pane shown again catches up on what changed while its tab was hidden. (Found by its
        class: the first tab is shown before the first frame, which does not import the panes.)"""
        for pane in event.pane.query(".state-pane"):
            pane.catch_up()  # type: ignore[attr-defined]  # a StatePane
