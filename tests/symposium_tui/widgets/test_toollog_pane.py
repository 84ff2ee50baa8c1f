"""The tool-call log, driven by keyboard alone in a tiny app (Pilot)."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Input, Select

from bridge import events as ev
from symposium_tui.state import ConsoleState
from symposium_tui.widgets.toollog import ToolLogPane, ToolLogView
from tests.support.panes import Conversation, demo, many_tool_calls, text_message, toollog_app


def screen_lines(app: App) -> list[str]:
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


def shown_titles(view: ToolLogView) -> list[str]:
    return [view.state.tools.get(seq).title for seq in view.index]


def add_calls(
    state: ConsoleState, start: int, n: int, session: str = "s1", status: str = "completed"
) -> None:
    for i in range(start, start + n):
        state.handle(
            ev.ToolCallSeen(
                connection="c",
                session_id=session,
                tool_call_id=f"t{i}",
                title=f"call {i}",
                kind="read",
                status=status,
                ts=1_700_000_000.0 + i,
            )
        )
    state.flush()


def one_call(state: ConsoleState, **fields) -> None:
    """One tool call seen, `fields` over an execute call of session c/s1."""
    event = {"connection": "c", "session_id": "s1", "tool_call_id": "t1", "kind": "execute"}
    state.handle(ev.ToolCallSeen(**{**event, "ts": 1_700_000_000.0, **fields}))


async def settle(pilot, state: ConsoleState | None = None) -> None:
    if state is not None:
        state.flush()
    await pilot.pause()
    await pilot.pause()


async def test_tool_calls_of_a_real_turn_appear_at_the_tail_and_the_log_follows(bridge):
    state = ConsoleState(bridge, coalesce=0.01)
    state.attach()
    app = toollog_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ToolLogView)
        assert view.has_focus, "the log, not a hidden filter, takes the focus"
        conv = Conversation(bridge)
        await conv.send([text_message("user", "ask permission to run the tests")])
        async with asyncio.timeout(30):  # the state's coalesced updates reach the view
            while len(shown_titles(view)) < 2:
                await settle(pilot, state)
        assert shown_titles(view) == ["run the tests", "run the tests"]
        assert view.follow and view.cursor == 1 and view.selected.source == "permission"

        def drawn() -> str:
            return "\n".join(screen_lines(app))

        async with asyncio.timeout(30):  # ... and the screen draws them (a frame may come later)
            while not all(word in drawn() for word in ("failed", "reject_once", "2 calls")):
                await settle(pilot, state)
        assert view.follow and view.cursor == 1  # still at the tail, following


async def test_moving_up_pauses_the_tail_and_end_follows_it_again():
    state = ConsoleState(None)
    add_calls(state, 0, 100)
    app = toollog_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ToolLogView)
        assert view.cursor == 99 and view.scroll_y == view.max_scroll_y > 0
        await pilot.press("up", "up", "pageup")
        assert (
            not view.follow
            and view.selected.title == f"call {97 - (view.scrollable_content_region.height - 1)}"
        )
        held, top = view.selected, view.scroll_y
        add_calls(state, 100, 50)
        await settle(pilot)
        assert view.selected is held and view.scroll_y == top, (
            "new calls do not move a reader who scrolled up"
        )
        assert "paused" in "\n".join(screen_lines(app))
        await pilot.press("end")
        assert view.follow and view.selected.title == "call 149"
        add_calls(state, 150, 5)
        await settle(pilot)
        assert view.selected.title == "call 154" and view.scroll_y == view.max_scroll_y
        await pilot.press("home")
        assert view.cursor == 0 and view.scroll_y == 0 and not view.follow
        await pilot.press("down", "pagedown")
        assert view.cursor > 1


async def test_a_status_change_redraws_the_line_in_place():
    state = ConsoleState(None)
    state.handle(
        ev.ToolCallSeen(
            connection="c",
            session_id="s1",
            tool_call_id="t",
            title="compile",
            kind="execute",
            status="in_progress",
            ts=1_700_000_000.0,
        )
    )
    app = toollog_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ToolLogView)
        assert any("in_progress" in line for line in screen_lines(app))
        state.handle(
            ev.ToolCallSeen(
                connection="c",
                session_id="s1",
                tool_call_id="t",
                status="completed",
                ts=1_700_000_002.5,
            )
        )
        await settle(pilot, state)
        assert len(view.index) == 1
        (line,) = [line for line in screen_lines(app) if "compile" in line]
        assert "completed" in line and "2.5s" in line


async def test_the_filter_bar_filters_by_session_kind_and_status_with_the_keyboard():
    state = ConsoleState(None)
    demo(state)
    app = toollog_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ToolLogView)
        assert len(view.index) == 5
        await pilot.press("f")
        assert app.query_one("#filter-search", Input).has_focus, "f: type to filter at once"
        await pilot.press("shift+tab", "shift+tab", "shift+tab")
        session = app.query_one("#filter-session", Select)
        assert session.has_focus
        await pilot.press("enter", "down", "enter")  # the first session of the list
        await settle(pilot)
        assert session.value == "vscodelm-1/s1"
        assert {view.state.tools.get(s).session_label for s in view.index} == {"vscodelm-1/s1"}
        await pilot.press("tab", "enter", "down", "down", "down", "enter")  # kind: permissions
        await settle(pilot)
        assert app.query_one("#filter-kind", Select).value == "permission"
        assert [view.state.tools.get(s).source for s in view.index] == ["permission"]
        await pilot.press("x")
        await settle(pilot)
        assert len(view.index) == 5 and view.has_focus
        await pilot.press("f", "shift+tab")
        status = app.query_one("#filter-status", Select)
        assert status.has_focus
        await pilot.press("enter", "down", "down", "enter")  # the second status seen: failed
        await settle(pilot)
        assert status.value == "failed" and shown_titles(view) == ["run the tests"]
        assert "status failed" in screen_lines(app)[0]


async def test_a_chosen_session_whose_calls_all_left_the_log_stays_chosen_and_shown():
    """The log keeps its last calls; once every call of the session the filter is on has been
    dropped, the filter still says that session (and shows nothing) — it used to say "all
    sessions" while the view went on filtering on the session that had left."""
    state = ConsoleState(None, tool_capacity=3)
    add_calls(state, 0, 2, session="s1")
    app = toollog_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ToolLogView)
        await pilot.press("f", "shift+tab", "shift+tab", "shift+tab")
        session = app.query_one("#filter-session", Select)
        assert session.has_focus
        await pilot.press("enter", "down", "enter")
        await settle(pilot)
        assert session.value == "c/s1" and len(view.index) == 2
        add_calls(state, 2, 3, session="s2")  # s1's two calls leave the log
        await settle(pilot, state)
        assert list(state.tool_sessions) == ["c/s2"]
        assert session.value == "c/s1"
        assert view.index == [] and "c/s1" in " ".join(screen_lines(app)[:3])
        await pilot.press("enter", "up", "enter")  # all sessions: the three calls of s2
        await settle(pilot)
        assert session.value == "" and len(view.index) == 3


async def test_search_keeps_the_calls_whose_text_matches():
    state = ConsoleState(None)
    demo(state)
    app = toollog_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ToolLogView)
        await pilot.press("slash")
        assert app.query_one("#filter-search", Input).has_focus
        await pilot.press(*"readme", "enter")
        await settle(pilot)
        assert shown_titles(view) == ["read README.md"]
        assert view.has_focus, "enter returns to the log"
        # The search looks into inputs and outputs too.
        await pilot.press("slash", *"app.py", "enter")  # the new search replaces the old
        await settle(pilot)
        assert shown_titles(view) == ["Glob **/*.py", "vscode_readFile"]
        await pilot.press(
            "escape"
        )  # the filter is active: escape leaves the bar open and does nothing else
        await pilot.press("x")
        await settle(pilot)
        assert len(view.index) == 5


def test_the_details_name_the_rule_that_decided_and_tell_it_from_a_person():
    from symposium_tui.state import ToolEntry
    from symposium_tui.widgets.toollog import describe_entry

    entry = ToolEntry(0.0, "c", "s1", "permission", "t", "rm -rf build", "execute", "reject_once")
    entry.detail = {"resolver": "policy", "rule": "rule 2 (line 9): deny command=rm"}
    assert "decided by rule 2 (line 9): deny command=rm" in describe_entry(entry).plain
    entry.detail = {"resolver": "console", "rule": "answered by you@host"}
    assert "decided by a person (you@host)" in describe_entry(entry).plain


def test_search_matches_words_and_a_commands_program_and_star_matches_inside_words():
    from symposium_tui.state import ToolEntry
    from symposium_tui.widgets.toollog import ToolFilter

    def entry(title: str, command: str) -> ToolEntry:
        return ToolEntry(
            0.0, "c", "s1", "agent", "t", title, "execute", "completed", {"command": command}
        )

    run_tests = entry("run the tests", "pytest -q")
    rm_build = entry("Remove the build", "/usr/bin/rm -rf build")
    rmdir = entry("Tidy", "rmdir empty")
    farm = entry("farm report", "cat farm.txt")

    def found(search: str) -> list[str]:
        flt = ToolFilter(search=search)
        return [e.title for e in (run_tests, rm_build, rmdir, farm) if flt.matches(e)]

    assert found("rm") == ["Remove the build"]  # the program of /usr/bin/rm; not "run", "farm"
    assert found("RM -rf") == ["Remove the build"]  # a phrase, in any case
    assert found("rm*") == ["Remove the build", "Tidy"]  # rm, rmdir
    assert found("*rm*") == ["Remove the build", "Tidy", "farm report"]  # anywhere in a word
    assert found("test") == []  # "tests" is another word
    assert found("test*") == ["run the tests"]


async def test_updates_that_stop_matching_leave_the_filtered_view_and_new_matches_join_it():
    state = ConsoleState(None)
    add_calls(state, 0, 3, status="in_progress")
    app = toollog_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ToolLogView)
        await pilot.press("f", "shift+tab", "enter", "down", "enter")
        await settle(pilot)
        assert (
            app.query_one("#filter-status", Select).value == "in_progress" and len(view.index) == 3
        )
        state.handle(
            ev.ToolCallSeen(connection="c", session_id="s1", tool_call_id="t1", status="completed")
        )
        add_calls(state, 10, 1, status="in_progress")
        await settle(pilot, state)
        assert shown_titles(view) == ["call 0", "call 2", "call 10"]


async def test_enter_shows_the_selected_calls_input_and_output_and_escape_closes_it():
    state = ConsoleState(None)
    demo(state)
    escapes = []

    class Host(App[None]):
        BINDINGS = [Binding("escape", "app_escape", "Back")]

        def compose(self) -> ComposeResult:
            yield ToolLogPane(state)

        def action_app_escape(self) -> None:
            escapes.append(True)

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        details = app.query_one("#toollog-details")
        await pilot.press("up", "up", "enter")
        await settle(pilot)
        assert details.has_class("-open")
        body = str(app.query_one("#toollog-detail-text").content)
        assert "read README.md" in body and '"path": "README.md"' in body and "# Symposium" in body
        await pilot.press("up")  # the details follow the cursor
        await settle(pilot)
        body = str(app.query_one("#toollog-detail-text").content)
        assert "reject_once by a person: not now" in body
        assert "decided by a person" in body and "resolver" not in body
        await pilot.press("escape")
        assert not details.has_class("-open") and escapes == []
        await pilot.press("escape")
        assert escapes == [True], "with nothing to close, escape belongs to the app"


async def test_the_oldest_calls_leave_the_view_when_the_store_is_full():
    state = ConsoleState(None, tool_capacity=50)
    add_calls(state, 0, 50)
    app = toollog_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ToolLogView)
        await pilot.press("home", "down", "down")
        held = view.selected
        assert held.title == "call 2"
        add_calls(state, 50, 1)
        await settle(pilot)
        assert shown_titles(view)[0] == "call 1" and view.selected is held and len(view.index) == 50


async def test_a_log_of_100000_calls_is_browsed_and_searched_by_keyboard():
    state = ConsoleState(None)
    many_tool_calls(state, 100_000)
    assert len(state.tools) == 100_000
    app = toollog_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ToolLogView)
        assert len(view.index) == 100_000 and view.virtual_size.height == 100_000
        assert any("tool call 99999" in line for line in screen_lines(app))
        await pilot.press("home", "pagedown", "pagedown")
        assert view.cursor == 2 * (view.scrollable_content_region.height - 1)
        assert any(f"tool call {view.cursor}" in line for line in screen_lines(app))
        await pilot.press("slash", *"call 4242*", "enter")  # * for the digits after it
        await settle(pilot)
        assert (
            shown_titles(view)[:2] == ["tool call 4242", "tool call 42420"]
            and len(view.index) == 11
        )
        assert view.selected.title == "tool call 42429"


async def test_a_theme_change_redraws_the_log_in_the_new_colours():
    state = ConsoleState(None)
    demo(state)
    app = toollog_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(ToolLogView)
        before = view._style("ok")
        app.theme = "textual-light"
        await pilot.pause()
        await pilot.pause()
        assert view._style("ok") != before, "status colours follow the theme"


async def test_every_status_is_shown_whole_at_80_columns():
    statuses = ["allow_always", "reject_always", "allow_once", "reject_once", "in_progress"]
    state = ConsoleState(None)
    for i, status in enumerate(statuses):
        one_call(
            state, tool_call_id=f"t{i}", title=f"call {i}", status=status, ts=1_700_000_000.0 + i
        )
    app = toollog_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, state)
        lines = screen_lines(app)
        for i, status in enumerate(statuses):
            (line,) = [line for line in lines if f"call {i}" in line]
            assert f" {status} " in line, line


async def test_an_acp_session_is_named_after_its_client_and_a_long_title_ends_in_an_ellipsis():
    state = ConsoleState(None)
    one_call(
        state,
        connection="acpx-2",
        session_id="4649bb89-9f7f-4690-95da-a4971afbe99c",
        title="delete the database and every backup of it, then the logs",
        status="completed",
    )
    app = toollog_app(state)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, state)
        (line,) = [line for line in screen_lines(app) if "delete the" in line]
        assert "acpx-2 …e99c" in line, line
        assert line.rstrip().endswith("…"), line
        assert "Tool calls 1 call · no filter" in screen_lines(app)[0]


async def test_on_a_narrow_pane_other_columns_give_way_to_the_title_and_the_status_stays():
    state = ConsoleState(None)
    one_call(state, title="rm -rf build/ and caches", status="reject_once")
    app = toollog_app(state)
    async with app.run_test(size=(60, 24)) as pilot:
        await settle(pilot, state)
        (line,) = [line for line in screen_lines(app) if "reject_once" in line]
        assert "rm -rf build/ a…" in line, line  # its first 16 cells at least
        assert "execute" in line, line  # the kind still fits beside it at 60 columns
    app = toollog_app(state)
    async with app.run_test(size=(40, 24)) as pilot:
        await settle(pilot, state)
        (line,) = [line for line in screen_lines(app) if "reject_once" in line]
        assert "rm -rf build/ a" in line, line
