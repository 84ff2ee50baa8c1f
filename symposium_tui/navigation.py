"""Where the F-keys and Esc take the person, and back: the queue (F2) and back to where it was
called from, Settings (F4) and back to the tab and widget it was opened from, and a form that is
asked about before an F-key leaves it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.widget import Widget
from textual.widgets import TabbedContent, TabPane

if TYPE_CHECKING:
    from symposium_tui.app import SymposiumApp


class Navigator:
    """The console's ways between its tabs and screens, and the places to come back to."""

    def __init__(self, app: SymposiumApp) -> None:
        self.app = app
        self.return_to: tuple[str, Widget | None] | None = None  # where F2 came from
        self._settings_from: tuple[str, Widget | None] | None = None  # where F4 opened Settings

    def _tabs(self) -> TabbedContent:
        return self.app._main.query_one("#tabs", TabbedContent)

    def main_screen(self) -> None:
        while len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def show_tab(self, tab: str) -> None:
        self.main_screen()
        self._tabs().active = tab
        self.focus_tab(tab)

    def focus_tab(self, tab: str) -> None:
        """Focus where a tab just shown wants it: at once (not after a refresh), so keys typed
        right after the switch land there."""
        app = self.app
        if tab == "approvals":
            app.queue.focus_first()
        elif tab == "chat" and (chat := app.chat_pane()) is not None:
            chat.focus_input()
        elif not self._focus_within(app._main.query_one(f"#{tab}", TabPane)):
            # Nothing to focus yet (the pane comes with the bridge): the focus leaves the tab that
            # is no longer shown, so no key typed here reaches a widget out of sight.
            app._main.set_focus(None)

    def _focus_within(self, pane: Widget) -> bool:
        for widget in pane.query("*"):
            if widget.focusable:
                widget.focus()
                return True
        return False

    def focus_later(self, tab: str, focus: Callable[[], Any]) -> None:
        """Focus after the next refresh, unless the person has moved to another tab meanwhile
        (focusing a widget in a hidden tab would switch back to it)."""
        app = self.app

        def run() -> None:
            if app._active_tab() == tab and len(app.screen_stack) == 1:
                focus()

        app.call_after_refresh(run)

    def leave_form_first(self, then: Callable[[], object]) -> bool:
        """An F-key pressed over a form: ask whether to leave it (what was typed is not saved),
        and on yes close it and do what the key does. True when there was a form to ask about."""
        app = self.app
        form = app.screen
        question = getattr(form, "LEAVE_QUESTION", None)
        if not question:
            return False
        from symposium_tui.screens.confirm import Confirm

        def answered(leave: bool | None) -> None:
            if leave and app.screen is form:
                form.dismiss(None)
                app.call_after_refresh(then)

        app.push_screen(Confirm(question, "leave it", "stay in the form"), answered)
        return True

    def queue(self) -> None:
        """Jump to the oldest pending card; Escape (or answering the last card) comes back —
        to the Settings section it came from, too."""
        from symposium_tui.screens.settings import SettingsScreen

        app = self.app
        if self.leave_form_first(app.action_queue):
            return
        settings = next((s for s in app.screen_stack if isinstance(s, SettingsScreen)), None)
        section = settings.query_one("#settings-tabs", TabbedContent).active if settings else None
        popped = len(app.screen_stack) > 1
        self.main_screen()
        current = app._active_tab()
        if section:
            self.return_to = (f"settings:{section}", None)
        elif current != "approvals":
            self.return_to = (current, app.focused)
        self._tabs().active = "approvals"
        app.queue.focus_first()
        if popped:
            # the main screen, resumed, may put back the focus it had before: a card again
            app.call_after_refresh(app.queue.keep_card_focus)

    def go_back(self) -> None:
        """Esc in the queue: back to where F2 came from."""
        target, self.return_to = self.return_to, None
        app = self.app
        if target is None or app._active_tab() != "approvals":
            return
        tab, widget = target
        if tab.startswith("settings:"):
            from symposium_tui.screens.settings import SettingsScreen

            app.push_screen(SettingsScreen(tab.partition(":")[2]))
            return
        self._tabs().active = tab
        if widget is not None and widget.is_attached and widget.can_focus:
            widget.focus()
        elif tab == "chat" and app.chat_pane() is not None:
            app.chat.focus_input()

    def settings(self) -> None:
        """F4, from anywhere: Settings (open already: it comes back on top, as it was). Like every
        F-key it goes somewhere and never closes anything; Esc there returns to where F4 came from."""
        from symposium_tui.screens.settings import SettingsScreen

        app = self.app
        if self.leave_form_first(app.action_settings):
            return
        settings = next((s for s in app.screen_stack if isinstance(s, SettingsScreen)), None)
        if settings is not None:
            for _ in app.screen_stack[app.screen_stack.index(settings) + 1 :]:
                app.pop_screen()
            return
        self._settings_from = (app._active_tab(), app._main.focused)
        self.main_screen()
        app.push_screen(SettingsScreen())

    def close_settings(self, screen: Any) -> None:
        """Esc on Settings: back to the tab, and the widget, F4 came from (also after a visit to
        the queue with F2 in between)."""
        app = self.app
        if app.screen is not screen:
            return
        app.pop_screen()
        target, self._settings_from = self._settings_from, None
        if target is not None:
            app.call_after_refresh(self._back_to, *target)

    def _back_to(self, tab: str, widget: Widget | None) -> None:
        app = self.app
        if not app._alive() or len(app.screen_stack) > 1:
            return
        self._tabs().active = tab
        if widget is not None and widget.is_attached and widget.can_focus:
            widget.focus()
        elif tab == "chat" and app.chat_pane() is not None:
            app.chat.focus_input()
        elif tab == "approvals":
            app.queue.focus_first()

    def focus_step(self, step: int) -> None:
        """Tab / Shift+Tab: the next or previous widget, at once. A widget that takes Tab itself
        (a text area that indents with it) keeps it."""
        from textual.actions import SkipAction

        screen = self.app.screen
        if getattr(self.app.focused, "tab_behavior", "focus") == "indent":
            raise SkipAction()
        if step > 0:
            screen.focus_next()
        else:
            screen.focus_previous()

    def new_conversation(self) -> None:
        """The chat, starting over with its current agent."""
        self.show_tab("chat")
        chat = self.app.chat_pane()
        if chat is not None:
            chat.action_new_conversation()

    def talk_to(self, key: str) -> None:
        """The chat, with the agent `key` chosen."""
        self.show_tab("chat")
        chat = self.app.chat_pane()
        if chat is not None:
            chat.choose_agent(key)
