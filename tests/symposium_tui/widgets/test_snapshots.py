"""SVG snapshots of every screen state of the two panes, at 80×24, from deterministic events.

Regenerate after an intended change with `pytest tests/symposium_tui/widgets/test_snapshots.py --snapshot-update`
and look at the report before committing.
"""

from __future__ import annotations

import time

import pytest

from symposium_tui.state import ConsoleState
from symposium_tui.state.replay import state_from_file
from symposium_tui.widgets.sessions import SessionsPane
from tests.support.console import wait_for
from tests.support.panes import (
    demo,
    many_tool_calls,
    sessions_app,
    toollog_app,
    write_demo_trace,
)

SIZE = (80, 24)


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    """Times are drawn in local time: pin it."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def settled(app) -> bool:
    """Every table has worked out its size (a DataTable does that when it is idle, which a loaded
    machine reaches late) and the sessions pane has redrawn the history it scheduled."""
    from textual.widgets import DataTable

    panes = app.query(SessionsPane)
    return not any(t._require_update_dimensions for t in app.query(DataTable)) and not any(
        p._detail_scheduled for p in panes
    )


def pressing(*keys: str):
    """A `run_before` that presses `keys`, then waits for what they changed to be drawn in full:
    the screenshot is of the state the keys lead to, not of one on the way there."""

    async def run_before(pilot) -> None:
        await pilot.press(*keys)
        await wait_for(pilot, lambda: settled(pilot.app), timeout=60.0, what="a settled pane")

    return run_before


def demo_state() -> ConsoleState:
    state = ConsoleState(None)
    demo(state)
    return state


# --- sessions and history ------------------------------------------------------------------------


def test_sessions_before_any_request(snap_compare):
    """No session yet: empty tables and a hint."""
    assert snap_compare(sessions_app(ConsoleState(None)), terminal_size=SIZE)


def test_sessions_latest_decision_is_a_cancel_with_its_evidence_side_by_side(snap_compare):
    """The first session is selected; its latest decision, a cancel, shows expected | received."""
    assert snap_compare(sessions_app(demo_state()), terminal_size=SIZE)


def test_sessions_history_of_a_cancel_scrolled_to_the_provisional_exchange(snap_compare):
    """The history under the evidence: committed messages, then the provisional exchange in italics."""
    assert snap_compare(
        sessions_app(demo_state()), run_before=pressing("tab", "tab", "end"), terminal_size=SIZE
    )


def test_sessions_scrubbed_back_to_the_first_decision(snap_compare):
    """`[` twice: the history as it was when the session started."""
    assert snap_compare(
        sessions_app(demo_state()),
        run_before=pressing("left_square_bracket", "left_square_bracket"),
        terminal_size=SIZE,
    )


def test_sessions_an_ended_session(snap_compare):
    """The second session, whose agent was stopped."""
    assert snap_compare(sessions_app(demo_state()), run_before=pressing("down"), terminal_size=SIZE)


def test_sessions_a_session_mid_turn_with_a_provisional_answer_streaming(snap_compare):
    """The OpenAI client's session, its answer still streaming into the provisional exchange."""
    assert snap_compare(
        sessions_app(demo_state()), run_before=pressing("down", "down"), terminal_size=SIZE
    )


def test_sessions_the_timeline_of_all_sessions(snap_compare):
    """`a`: every decision of every connection, with its session."""
    assert snap_compare(sessions_app(demo_state()), run_before=pressing("a"), terminal_size=SIZE)


def test_sessions_asking_for_a_file_to_open(snap_compare):
    """`o`: the path input above the inspector, focused, its cursor shown (not blinking: a loaded
    machine would otherwise shoot it half a second later, in the off phase)."""
    from textual.widgets import Input

    async def open_the_file_bar(pilot):
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(pilot.app.focused, Input), timeout=60.0)
        pilot.app.focused.cursor_blink = False
        await pilot.pause()

    assert snap_compare(
        sessions_app(demo_state()), run_before=open_the_file_bar, terminal_size=SIZE
    )


def test_sessions_a_replayed_trace(snap_compare, tmp_path):
    """A wire trace replayed through the tracker, shown like the live bridge."""
    trace = tmp_path / "vscodelm-20231114-221320.log"
    write_demo_trace(trace)

    async def open_trace(pilot):
        pilot.app.query_one(SessionsPane).show_state(state_from_file(trace))
        await pilot.pause()

    assert snap_compare(sessions_app(ConsoleState(None)), run_before=open_trace, terminal_size=SIZE)


def test_sessions_without_colour(snap_compare, monkeypatch):
    """NO_COLOR: kinds, states and the provisional exchange still read (words, italics, gutters)."""
    monkeypatch.setenv("NO_COLOR", "1")
    assert snap_compare(sessions_app(demo_state()), run_before=pressing("tab"), terminal_size=SIZE)


# --- tool-call log -------------------------------------------------------------------------------


def test_toollog_empty(snap_compare):
    """No tool call yet."""
    assert snap_compare(toollog_app(ConsoleState(None)), terminal_size=SIZE)


def test_toollog_following_the_newest_call(snap_compare):
    """Agent calls, a permission outcome and a client tool round trip; the cursor on the newest."""
    assert snap_compare(toollog_app(demo_state()), terminal_size=SIZE)


def test_toollog_details_of_a_selected_call(snap_compare):
    """Up twice, enter: the log is paused and the call's input and output are shown."""
    assert snap_compare(
        toollog_app(demo_state()), run_before=pressing("up", "up", "enter"), terminal_size=SIZE
    )


def test_toollog_filtered_by_status(snap_compare):
    """The filter bar with the status filter set to failed."""
    assert snap_compare(
        toollog_app(demo_state()),
        run_before=pressing("f", "tab", "tab", "enter", "down", "down", "enter"),
        terminal_size=SIZE,
    )


def test_toollog_searched(snap_compare):
    """`/` then a search: only the calls whose text matches."""
    assert snap_compare(
        toollog_app(demo_state()),
        run_before=pressing("slash", *"app.py", "enter"),
        terminal_size=SIZE,
    )


def test_toollog_one_hundred_thousand_calls(snap_compare):
    """100,000 calls: home, then a page down."""
    state = ConsoleState(None)
    many_tool_calls(state, 100_000)
    assert snap_compare(
        toollog_app(state), run_before=pressing("home", "pagedown"), terminal_size=SIZE
    )


def test_toollog_without_colour(snap_compare, monkeypatch):
    """NO_COLOR: the cursor is reversed and statuses are words."""
    monkeypatch.setenv("NO_COLOR", "1")
    assert snap_compare(toollog_app(demo_state()), run_before=pressing("up"), terminal_size=SIZE)
