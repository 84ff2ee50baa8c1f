"""Small console behaviours: the keys panel, the screenshot, checkboxes, rules order, names."""

from __future__ import annotations

from tests.console.helpers import wait_for

SIZE = (80, 24)


async def started(pilot):
    await pilot.pause()
    await pilot.pause()


async def test_escape_closes_the_keys_panel_wherever_focus_is(make_app):
    from textual.widgets import HelpPanel

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        for key in ("1", "f3"):  # the approvals queue, then the chat input
            await pilot.press(key)
            tab = app.query_one("#tabs").active
            app.action_show_help_panel()
            await wait_for(pilot, lambda: bool(app.screen.query(HelpPanel)))
            await pilot.press("escape")
            await wait_for(pilot, lambda: not app.screen.query(HelpPanel))
            assert app.query_one("#tabs").active == tab  # Esc did nothing else
