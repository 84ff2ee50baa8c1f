"""A pane in a hidden tab catches up when its tab is shown, whatever was focused or scrolled
before (a person's walk through the tabs with the keyboard)."""

from __future__ import annotations

from tests.support.console import wait_for

SIZE = (80, 24)


async def test_a_chats_tool_call_is_listed_when_the_tool_calls_tab_is_first_shown(make_app, bridge):
    # the walk a person took: a chat asks, F2, approve, then Sessions, its history pane paged,
    # then Tool calls — which said "0 calls" until something else happened
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        tabs = app.query_one("#tabs")
        await wait_for(pilot, lambda: app.chat_pane() is not None)
        await pilot.press("f3")
        app.chat.focus_input()
        await pilot.press(*"ask permission to run the tests", "enter")
        await wait_for(pilot, lambda: app.queue.pending, what="the card")
        await pilot.press("f2")
        await wait_for(pilot, lambda: tabs.active == "approvals")
        await wait_for(pilot, lambda: app.focused is app.queue.pending[0])
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.queue.pending, what="approved")
        await pilot.press("shift+tab", "2")
        await wait_for(pilot, lambda: tabs.active == "sessions")
        await pilot.press("tab", "tab", "pagedown", "pagedown", "3")
        await wait_for(pilot, lambda: tabs.active == "toolcalls")
        pane = app.query_one("ToolLogPane")
        await wait_for(pilot, lambda: len(pane.view.index) >= 1, what="the chat's tool call")
        status = str(app.query_one("#toollog-status").render())
        assert "0 calls" not in status, status
