"""An ACP session at 80×24: its card's title names it as the README does (`acpx-2 …`, after the
client) with the time whole, the whole session id is in the detail view (v), and the Sessions
tab's columns give way with an ellipsis instead of pushing "Prov." and "Last decision" off
screen. The session comes as the ACP front door publishes it (a real bridge's bus and broker)."""

from __future__ import annotations

from bridge import events as ev
from symposium_tui.screens.detail import ApprovalDetailScreen
from tests.support.console import run_call, wait_for

SIZE = (80, 24)
ACP_SESSION = "0199a3c4-7d2e-7b61-9e4f-3c2a1b0d9f2c"  # what an ACP agent names a session
CLOCK = "19:31:05"


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_an_acp_session_fits_80_by_24(make_app, bridge, asker):
    app = make_app(clock=lambda ts: CLOCK)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat_pane() is not None)
        bridge.bus.publish(
            ev.SessionStarted(connection="acpx-2", session_id=ACP_SESSION, agent="elizacp")
        )
        asker.ask(
            run_call("run the tests"), agent="elizacp", connection="acpx-2", session=ACP_SESSION
        )
        await pilot.press("f2")
        await wait_for(pilot, lambda: "⚠ run the tests" in screen_text(app))
        title = next(line for line in screen_text(app).splitlines() if "acpx-2" in line)
        assert f"acpx-2 …9f2c · {CLOCK}" in title, title  # the short name, the time whole
        assert ACP_SESSION not in screen_text(app)

        await wait_for(pilot, lambda: app.queue.current_card() is not None)
        app.queue.current_card().focus()
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalDetailScreen))
        await wait_for(pilot, lambda: ACP_SESSION in screen_text(app))
        await pilot.press("escape")

        await pilot.press("2")
        await wait_for(pilot, lambda: "Last decision" in screen_text(app))
        text = screen_text(app)
        header = next(line for line in text.splitlines() if "Session" in line and "Agent" in line)
        assert "Prov." in header and "Last decision" in header, header
        row = next(line for line in text.splitlines() if "acpx-2" in line and "Eliza" in line)
        assert "acpx-2 …9f2c" in row, row
        assert row.rstrip().endswith("—"), row  # the last column is on screen


async def test_a_long_session_name_is_cut_with_an_ellipsis(make_app, bridge):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat_pane() is not None)
        connection = "a-client-with-a-very-long-name-7"
        bridge.bus.publish(
            ev.SessionStarted(connection=connection, session_id=ACP_SESSION, agent="elizacp")
        )
        await pilot.press("2")
        await wait_for(pilot, lambda: "a-client" in screen_text(app))
        row = next(line for line in screen_text(app).splitlines() if "a-client" in line)
        assert "…" in row and "Last decision" in screen_text(app), row
