"""The sessions and history inspector, driven by keyboard alone in a tiny app (Pilot), over a real
in-process bridge talking to the built-in Eliza."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Input, Static

from bridge.events import JsonlEventLog
from symposium_tui.state import ConsoleState
from symposium_tui.widgets.sessions import SessionsPane
from tests.support.panes import Conversation, new_commit_cancel, sessions_app, text_message


def content(app: App, selector: str) -> Text:
    value = app.query_one(selector, Static).content
    return value if isinstance(value, Text) else Text(str(value))


def plain(app: App, selector: str) -> str:
    return content(app, selector).plain


async def settle(pilot, state: ConsoleState) -> None:
    state.flush()
    await pilot.pause()
    await pilot.pause()


def italic_text(text: Text) -> str:
    """The characters of `text` drawn in italics."""
    out = []
    for span in text.spans:
        style = span.style
        if not isinstance(style, str) and style.italic:
            out.append(text.plain[span.start : span.end])
    return "".join(out)


async def test_every_session_of_every_connection_is_listed_and_its_row_updated_in_place(bridge):
    state = ConsoleState(bridge)
    state.attach()
    app = sessions_app(state, bridge)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one("#sessions-table", DataTable)
        assert table.has_focus, "the session list, not the hidden path input, takes the focus"
        vscode = Conversation(bridge, "vscodelm")
        chat = Conversation(bridge, "chat")
        u1 = text_message("user", "hello")
        r1 = vscode.reply(await vscode.send([u1]))
        await chat.send([text_message("user", "a different conversation")])
        await settle(pilot, state)
        assert table.row_count == 2
        keys_before = list(table.rows)
        first_row = table.get_row_at(0)
        assert (
            first_row[0] == f"{vscode.name}/s1"
            and first_row[1] == "Eliza (built in)"
            and first_row[2].plain == "idle"
        )
        await vscode.send([u1, r1, text_message("user", "more")])
        await settle(pilot, state)
        assert list(table.rows) == keys_before, "rows are updated by key, not rebuilt"
        row = table.get_row_at(0)
        assert (row[3], row[4], row[5].plain) == ("2", "2", "commit")


async def test_the_selected_sessions_history_sets_the_provisional_exchange_apart(bridge):
    state = ConsoleState(bridge)
    state.attach()
    app = sessions_app(state, bridge)
    async with app.run_test(size=(80, 24)) as pilot:
        conv = Conversation(bridge)
        u1 = text_message("user", "hello")
        r1 = conv.reply(await conv.send([u1]))
        r2 = conv.reply(
            await conv.send([u1, r1, text_message("user", "I am worried about my exams")])
        )
        await settle(pilot, state)
        history = content(app, "#sessions-history")
        committed_part, provisional_part = history.plain.split(
            "Provisional · 2 messages · not yet confirmed by the client"
        )
        assert "Committed · 2 messages" in committed_part and "hello" in committed_part
        assert "I am worried about my exams" in provisional_part
        # Provisional messages are drawn in italics (and with their own gutter), committed ones are not.
        slanted = italic_text(history)
        assert (
            "I am worried about my exams" in slanted and r2.content[0].value.split()[0] in slanted
        )
        assert "hello" not in slanted
        assert "┊" in provisional_part and "┊" not in committed_part


async def test_a_cancel_shows_the_first_mismatching_message_of_each_side_side_by_side(bridge):
    state = ConsoleState(bridge)
    state.attach()
    app = sessions_app(state, bridge)
    async with app.run_test(size=(100, 40)) as pilot:
        said = await new_commit_cancel(Conversation(bridge))
        await settle(pilot, state)
        assert app.query_one("#sessions-evidence").has_class("-cancel")
        expected = app.query_one("#evidence-expected")
        received = app.query_one("#evidence-received")
        assert said["r2"].content[-1].value in plain(app, "#evidence-expected")
        assert "I ran them all, everything passed." in plain(app, "#evidence-received")
        assert (
            expected.region.y == received.region.y and expected.region.right <= received.region.x
        ), "two columns"
        assert "CANCEL" in plain(app, "#sessions-decision") and "message 3 differs" in plain(
            app, "#sessions-reason"
        )
        assert "◀ first mismatch" in plain(app, "#sessions-history")


async def test_scrubbing_back_shows_the_history_as_it_was_at_each_decision_and_end_follows_again(
    bridge,
):
    state = ConsoleState(bridge)
    state.attach()
    app = sessions_app(state, bridge)
    async with app.run_test(size=(80, 24)) as pilot:
        conv = Conversation(bridge)
        await new_commit_cancel(conv)
        await settle(pilot, state)
        decisions = app.query_one("#decisions-table", DataTable)
        assert decisions.row_count == 3 and decisions.cursor_row == 2
        await pilot.press("left_square_bracket", "left_square_bracket")
        await settle(pilot, state)
        assert "decision 1/3 (scrubbed back)" in plain(app, "#sessions-detail-title")
        assert "NEW SESSION" in plain(app, "#sessions-decision")
        assert "Committed · 0 messages" in plain(app, "#sessions-history")
        assert not app.query_one("#sessions-evidence").has_class("-cancel")
        await pilot.press("right_square_bracket")
        await settle(pilot, state)
        assert "decision 2/3" in plain(app, "#sessions-detail-title")
        assert "Committed · 2 messages" in plain(app, "#sessions-history")
        # A new decision does not pull a reader who scrubbed back.
        view = conv.core.tracker.session("s1")
        await conv.send([*view.committed, *view.provisional, text_message("user", "and then?")])
        await settle(pilot, state)
        assert decisions.row_count == 4 and "decision 2/4 (scrubbed back)" in plain(
            app, "#sessions-detail-title"
        )
        await pilot.press("right_square_bracket", "right_square_bracket", "right_square_bracket")
        await settle(pilot, state)
        assert "decision 4/4" in plain(app, "#sessions-detail-title")
        await conv.send(
            [
                *view.committed,
                *view.provisional,
                text_message("user", "and then?"),
                *conv.core.tracker.session("s1").provisional[1:],
                text_message("user", "go on"),
            ]
        )
        await settle(pilot, state)
        assert decisions.cursor_row == 4 and "decision 5/5" in plain(app, "#sessions-detail-title")


async def test_the_timeline_of_all_sessions_leads_to_each_decisions_session(bridge):
    state = ConsoleState(bridge)
    state.attach()
    app = sessions_app(state, bridge)
    async with app.run_test(size=(80, 24)) as pilot:
        one, two = Conversation(bridge, "vscodelm"), Conversation(bridge, "chat")
        await one.send([text_message("user", "first window")])
        await two.send([text_message("user", "second window")])
        await one.send([text_message("user", "first window, second chat")])
        await settle(pilot, state)
        decisions = app.query_one("#decisions-table", DataTable)
        assert decisions.row_count == 1, "the selected session's decisions"
        await pilot.press("a")
        await settle(pilot, state)
        assert (
            decisions.row_count == 3
            and [c.label.plain for c in decisions.columns.values()][1] == "Session"
        )
        assert decisions.cursor_row == 0, "the timeline opens on the selected session's decision"
        await pilot.press("tab")
        assert decisions.has_focus
        await pilot.press("down")
        await settle(pilot, state)
        sessions = app.query_one("#sessions-table", DataTable)
        assert sessions.get_row_at(sessions.cursor_row)[0] == f"{two.name}/s1"
        assert "second window" in plain(app, "#sessions-history")
        await pilot.press("a")
        await settle(pilot, state)
        assert decisions.row_count == 1 and "Decisions · " + f"{two.name}/s1" in plain(
            app, "#sessions-timeline-title"
        )


async def test_enter_walks_from_the_session_list_to_its_decisions_and_then_its_history(bridge):
    state = ConsoleState(bridge)
    state.attach()
    app = sessions_app(state, bridge)
    async with app.run_test(size=(80, 24)) as pilot:
        await Conversation(bridge).send([text_message("user", "hello")])
        await settle(pilot, state)
        await pilot.press("enter")
        assert app.query_one("#decisions-table").has_focus
        await pilot.press("enter")
        assert app.query_one("#sessions-detail").has_focus


async def test_an_opened_event_log_is_inspected_like_the_live_bridge_and_c_returns_to_live(
    bridge, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # the path typed is relative to the console's directory
    path = tmp_path / "events.jsonl"
    log = JsonlEventLog(path)
    unsubscribe = bridge.bus.subscribe(log)
    await new_commit_cancel(Conversation(bridge))
    unsubscribe()
    log.close()
    live = ConsoleState(bridge)
    live.attach()
    app = sessions_app(live, bridge)
    async with app.run_test(size=(80, 24)) as pilot:
        await Conversation(bridge).send([text_message("user", "live only")])
        await settle(pilot, live)
        pane = app.query_one(SessionsPane)
        await pilot.press("o")
        path_input = app.query_one("#sessions-open-path", Input)
        assert path_input.has_focus
        await pilot.press(*"events.jsonl", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        assert pane.state is not live and pane.state.name == str(path)
        assert "Replay events.jsonl" in plain(app, "#sessions-source")
        decisions = app.query_one("#decisions-table", DataTable)
        assert decisions.has_focus and decisions.row_count == 3
        assert "CANCEL" in plain(app, "#sessions-decision") and app.query_one(
            "#sessions-evidence"
        ).has_class("-cancel")
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert "COMMIT" in plain(app, "#sessions-decision")
        await pilot.press("c")
        await pilot.pause()
        assert pane.state is live and "Live bridge" in plain(app, "#sessions-source")
        assert app.query_one("#sessions-table", DataTable).row_count == 2


async def test_a_file_that_cannot_be_opened_is_reported_and_the_live_view_stays(
    bridge, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    state = ConsoleState(bridge)
    state.attach()
    app = sessions_app(state, bridge)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(SessionsPane)
        await pilot.press("o", *"nope.log", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert pane.state is state
        assert any("Cannot open" in n.message for n in app._notifications)
        assert app.query_one("#sessions-open").has_class("-open"), "the path stays to be corrected"


async def test_escape_closes_the_open_bar_and_is_otherwise_the_apps(bridge):
    state = ConsoleState(bridge)
    escapes = []

    class Host(App[None]):
        BINDINGS = [Binding("escape", "app_escape", "Back")]

        def compose(self) -> ComposeResult:
            yield SessionsPane(state, bridge)

        def action_app_escape(self) -> None:
            escapes.append(True)

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("o")
        assert app.query_one("#sessions-open").has_class("-open")
        await pilot.press("escape")
        assert not app.query_one("#sessions-open").has_class("-open") and escapes == []
        assert app.query_one("#sessions-table").has_focus
        await pilot.press("c")  # nothing replayed: c is not the pane's
        await pilot.press("escape")
        assert escapes == [True]


async def test_a_theme_change_redraws_the_tables_and_history_in_the_new_colours():
    from tests.support.panes import demo

    state = ConsoleState(None)
    demo(state)
    app = sessions_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(SessionsPane)
        before = pane.styles_map["commit"]
        app.theme = "textual-light"
        await pilot.pause()
        await pilot.pause()
        assert pane.styles_map["commit"] != before
        decisions = app.query_one("#decisions-table", DataTable)
        assert decisions.get_row_at(1)[1].style == pane.styles_map["commit"], (
            "cells redrawn with the new theme"
        )


async def test_the_tables_keep_only_what_they_drew_since_their_rows_last_changed(bridge):
    """A DataTable keys what it drew by its update count, which every changed cell moves on; what
    was drawn before is never read again. Updated ten times a second, a table must not hold it
    until its caches' own bounds (10,000 cells) push it out."""
    state = ConsoleState(bridge)
    state.attach()
    app = sessions_app(state, bridge)
    async with app.run_test(size=(80, 24)) as pilot:
        conv = Conversation(bridge)  # the first session: the one selected
        history = [text_message("user", "hello")]
        other = Conversation(bridge, "vscodelm")
        turns = 24
        for i in range(turns):
            history += [conv.reply(await conv.send(history)), text_message("user", f"and {i}")]
            if i == 0:
                await other.send([text_message("user", "a second session in the list")])
            await settle(pilot, state)  # each update drawn before the next
        sessions = app.query_one("#sessions-table", DataTable)
        decisions = app.query_one("#decisions-table", DataTable)
        assert decisions.row_count == turns, "every turn's decision was shown"
        for table in (sessions, decisions):
            # What a frame draws: each line on screen, cell by cell (twice: with and without the
            # cursor). DataTable has no public view of its caches.
            one_frame = 2 * table.size.height * len(table.columns)
            held = {
                "cells": len(table._cell_render_cache),
                "row lines": len(table._row_render_cache),
                "screen lines": len(table._line_cache),
            }
            assert max(held.values()) <= one_frame, (table.id, held, one_frame)
