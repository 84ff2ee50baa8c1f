"""Every key F1 lists does something where F1 says it works: one app, each listed key pressed on
its screen or pane, each with an effect a person would see (a screen, a tab, the focus, a
cursor, a bar)."""

from __future__ import annotations

from textual.binding import Binding
from textual.command import CommandPalette
from textual.widgets import DataTable

from symposium_tui.screens.confirm import ConfirmQuit
from symposium_tui.screens.help import HelpScreen
from symposium_tui.screens.settings import SettingsScreen
from tests.console.helpers import run_call, wait_for
from tests.console_panes.conftest import Conversation, text_message

SIZE = (80, 24)
WALKED = ("Anywhere", "Sessions (2)", "Tool calls (3)", "In the chat")


def listed_keys(app) -> dict[str, set[str]]:
    """What the help screen lists, group by group, as the keys Textual sees."""
    out: dict[str, set[str]] = {}
    for title, bindings, extra in app.help_groups():
        keys = out.setdefault(title, set())
        for binding in bindings:
            if isinstance(binding, Binding) and binding.description:
                keys.update(k.strip() for k in binding.key.split(","))
        keys.update(k for k, _ in extra)
    return out


async def test_every_key_the_help_lists_does_something_where_the_help_says(make_app, bridge, asker):
    app = make_app()
    walked: dict[str, set[str]] = {title: set() for title in WALKED}
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat_pane() is not None)
        tabs = app.query_one("#tabs")

        async def press(group: str, key: str) -> None:
            walked[group].add(key)
            await pilot.press(key)

        def focused_in(selector: str) -> bool:
            node = app.query_one(selector)
            return app.focused is not None and node in app.focused.ancestors_with_self

        # --- Anywhere ---------------------------------------------------------------------------
        for key, tab in (("2", "sessions"), ("1", "approvals"), ("3", "toolcalls"), ("4", "chat")):
            if focused_in("#chat-input"):  # the number keys are "not while typing"
                await pilot.press("f2")
                await wait_for(pilot, lambda: tabs.active == "approvals")
            await press("Anywhere", key)
            await wait_for(pilot, lambda tab=tab: tabs.active == tab, what=key)
        await pilot.press("f2")  # out of the chat input: ? types there
        await wait_for(pilot, lambda: not focused_in("#chat-input"))
        for key in ("f1", "question_mark"):
            await press("Anywhere", key)
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what=key)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))
        await press("Anywhere", "ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette))
        before = app.focused
        await press("Anywhere", "tab")
        await wait_for(pilot, lambda: app.focused is not before, what="tab")
        await press("Anywhere", "shift+tab")
        await wait_for(pilot, lambda: app.focused is before, what="shift+tab")
        await press("Anywhere", "f4")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        await press("Anywhere", "f3")
        await wait_for(pilot, lambda: tabs.active == "chat" and focused_in("#chat-input"))
        await pilot.press("escape")  # the chat's: stop a reply (none); the input keeps focus
        await pilot.press("shift+tab")
        await press("Anywhere", "2")
        await wait_for(pilot, lambda: tabs.active == "sessions")
        asker.ask(run_call("first request", "c1"))
        await wait_for(pilot, lambda: app.queue.pending)
        await press("Anywhere", "f2")
        await wait_for(pilot, lambda: tabs.active == "approvals")
        await press("Anywhere", "escape")  # back to where F2 came from
        await wait_for(pilot, lambda: tabs.active == "sessions")
        await press("Anywhere", "ctrl+q")  # a card is pending: asks first
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmQuit))
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmQuit))

        # --- Sessions ---------------------------------------------------------------------------
        conv = Conversation(bridge, "vscodelm")  # a new session, a commit, a cancel
        u1 = text_message("user", "hello")
        r1 = conv.reply(await conv.send([u1]))
        u2 = text_message("user", "I feel tired")
        await conv.send([u1, r1, u2])
        await conv.send([u1, text_message("assistant", "edited"), u2])
        decisions = app.query_one("#decisions-table", DataTable)
        await wait_for(pilot, lambda: decisions.row_count >= 2, what="two decisions")
        end = decisions.row_count - 1
        await wait_for(pilot, lambda: decisions.cursor_row == end)
        await press("Sessions (2)", "left_square_bracket")
        await wait_for(pilot, lambda: decisions.cursor_row == end - 1, what="[")
        await press("Sessions (2)", "right_square_bracket")
        await wait_for(pilot, lambda: decisions.cursor_row == end, what="]")
        sessions = app.query_one("SessionsPane")
        await press("Sessions (2)", "a")
        await wait_for(pilot, lambda: sessions.all_sessions, what="a")
        await pilot.press("a")
        await wait_for(pilot, lambda: not sessions.all_sessions)
        await press("Sessions (2)", "o")
        await wait_for(pilot, lambda: focused_in("#sessions-open-path"), what="o")
        await press("Sessions (2)", "escape")
        await wait_for(
            pilot, lambda: not app.query_one("#sessions-open").has_class("-open"), what="escape"
        )
        # c goes back to the live bridge from a replayed file (opening one: test_sessions_pane.py)
        from symposium_tui.state import ConsoleState

        live = sessions.state
        sessions.show_state(ConsoleState(None, name="replayed"))
        await pilot.pause()
        await press("Sessions (2)", "c")
        await wait_for(pilot, lambda: sessions.state is live, what="c")

        # --- Tool calls -------------------------------------------------------------------------
        asker.ask(run_call("second request", "c2"))
        asker.ask(run_call("third request", "c3"))
        await pilot.press("3")
        await wait_for(pilot, lambda: tabs.active == "toolcalls")
        view = app.query_one("ToolLogView")
        await wait_for(pilot, lambda: len(view.index) >= 3, what="three tool calls")
        if not view.has_focus:
            view.focus()
        await press("Tool calls (3)", "end")
        last = len(view.index) - 1
        await wait_for(pilot, lambda: view.cursor == last, what="end")
        for key, expected in (
            ("up", last - 1),
            ("down", last),
            ("k", last - 1),
            ("j", last),
            ("home", 0),
            ("G", last),
            ("g", 0),
            ("pagedown", last),
            ("pageup", 0),
        ):
            await press("Tool calls (3)", key)
            await wait_for(pilot, lambda e=expected: view.cursor == e, what=key)
        details = app.query_one("#toollog-details")
        await press("Tool calls (3)", "enter")
        await wait_for(pilot, lambda: details.has_class("-open"), what="enter")
        await press("Tool calls (3)", "escape")
        await wait_for(pilot, lambda: not details.has_class("-open"), what="escape")
        bar = app.query_one("#toollog-filters")
        for key in ("f", "slash"):
            await press("Tool calls (3)", key)
            await wait_for(pilot, lambda: focused_in("#filter-search"), what=key)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not bar.has_class("-open"))
            view.focus()
        await pilot.press("slash", *"third")
        await wait_for(pilot, lambda: view.filter.active)
        view.focus()
        await press("Tool calls (3)", "x")
        await wait_for(pilot, lambda: not view.filter.active and not bar.has_class("-open"))

        # --- In the chat ------------------------------------------------------------------------
        for approval_id in list(bridge.approvals.pending):
            bridge.approvals.withdraw(approval_id, "next part of the walk")
        await pilot.press("f3")
        chat = app.chat
        await wait_for(pilot, lambda: focused_in("#chat-input"))
        await press("In the chat", "ctrl+e")
        await wait_for(pilot, lambda: app.query_one("#chat-agent").expanded, what="ctrl+e")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.query_one("#chat-agent").expanded)
        chat.focus_input()
        await pilot.press(*"ask permission to run the tests")
        await press("In the chat", "enter")
        await wait_for(pilot, lambda: app.queue.pending, what="enter sends")
        await press("In the chat", "escape")  # stops the reply: its card goes away
        await wait_for(pilot, lambda: not app.queue.pending, what="escape")
        log = app.query_one("#chat-log")
        for n in range(12):
            await pilot.press(*f"line {n}", "enter")
        await wait_for(pilot, lambda: log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y)
        await press("In the chat", "pageup")
        await wait_for(pilot, lambda: log.scroll_y < log.max_scroll_y, what="pageup")
        await press("In the chat", "pagedown")
        await wait_for(pilot, lambda: log.scroll_y == log.max_scroll_y, what="pagedown")
        await press("In the chat", "ctrl+n")
        await wait_for(pilot, lambda: not chat.messages, what="ctrl+n")

    listed = listed_keys(app)
    for title in WALKED:
        assert listed[title] <= walked[title], (title, listed[title] - walked[title])
