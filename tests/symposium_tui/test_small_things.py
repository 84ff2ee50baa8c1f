"""Small console behaviours: the keys panel, the screenshot, checkboxes, rules order, names."""

from __future__ import annotations

from tests.support.console import wait_for

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


async def test_the_palettes_screenshot_is_saved_where_it_says_without_a_downloads_folder(
    make_app, tmp_path, monkeypatch
):
    from textual.command import CommandPalette

    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))  # no ~/Downloads here
    monkeypatch.chdir(work)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"screenshot")
        await wait_for(pilot, lambda: app.screen.query_one("CommandList").option_count)
        await pilot.press("enter")
        notes = await wait_for(
            pilot,
            lambda: [n.message for n in app._notifications if n.title == "Screenshot"],
            what="a Screenshot notice",
        )
    saved = list(work.glob("*.svg"))
    assert len(saved) == 1 and "<svg" in saved[0].read_text(encoding="utf-8")
    assert "Saved screenshot to" in notes[0] and str(saved[0]) in notes[0], notes


async def test_a_checkbox_on_and_off_differ_in_shape_not_only_colour(make_app, monkeypatch):
    from textual.widgets import Checkbox

    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("f4")
        box = await wait_for(pilot, lambda: app.screen.query("#pref-mouse").first(Checkbox))
        box.value = False
        await pilot.pause()
        off = box.render().plain
        box.value = True
        await pilot.pause()
        on = box.render().plain
    assert off != on, (off, on)
    assert off.replace("X", " ") == off and "X" in on


async def test_the_terminal_theme_shows_the_row_cursor_of_an_unfocused_table(make_app, store):
    from textual.widgets import DataTable

    from bridge.settings import AgentConfig

    store.upsert_agent(AgentConfig(id="claude-code", command="npx", args=["claude-code-acp"]))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        app.theme = "symposium-terminal"
        await pilot.press("f4")
        table = app.screen.query_one("#agents-table", DataTable)
        await wait_for(pilot, lambda: app.focused is table and table.row_count >= 2)
        table.move_cursor(row=0)
        table.blur()
        await wait_for(pilot, lambda: app.focused is not table)
        await pilot.pause()
        header = 1 if table.show_header else 0

        def styles(row: int) -> set:
            return {
                (s.bgcolor, s.reverse, s.underline, s.bold)
                for seg in table.render_line(header + row)
                if (s := seg.style) is not None
            }

        assert styles(0) != styles(1), "the unfocused cursor row looks like any other row"


def test_the_empty_queue_shows_the_socket_and_the_openai_address_it_serves(tmp_path):
    import pytest

    from tests.support.openai_server import free_port
    from tests.support.tmux import TMUX, Terminal

    if TMUX is None:
        pytest.skip("tmux is not installed")
    port = free_port()
    term = Terminal(tmp_path)
    try:
        term.start("console", "--no-mouse", "--openai", f"127.0.0.1:{port}")
        term.wait_for(f"OpenAI-compatible API: http://127.0.0.1:{port}/v1")
        screen = term.wait_for("Console socket:")
        # The test's runtime dir; a long path wraps anywhere, so it is read with the wraps undone.
        shown = screen.split("Console socket:", 1)[1].split("OpenAI-compatible API:", 1)[0]
        assert "".join(shown.split()) == str(term.runtime / "console.sock")
    finally:
        term.close()
