"""SVG snapshots of every screen and every card state at 80×24 (pytest-textual-snapshot).

Update after an intended change with `pytest tests/symposium_tui/test_snapshots.py --snapshot-update`
and look at the report. Everything time-dependent is frozen: card times come from a fixed clock,
bridge events are stamped by the demo clock, cursors do not blink, animations are off.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from symposium_tui import demo
from symposium_tui.app import SymposiumApp
from symposium_tui.widgets.approvals import ApprovalCard
from tests.support.console import (
    ONCE_OPTIONS,
    edit_call,
    make_hosted,
    run_call,
    underlines_caught_up,
    wait_for,
)

SIZE = (80, 24)


@pytest.fixture(autouse=True)
def _config_dir_shown_the_same_everywhere(tmp_path, monkeypatch):
    """Screens that show the settings file's path show `config/settings.toml`, on every machine."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", "config")


def fixed_clock(ts: float) -> str:
    return "10:42:00"


class SnapshotApp(SymposiumApp):
    """The console with frozen clocks, and a clean bridge shutdown when the screenshot is taken."""

    def __init__(self, **options: Any) -> None:
        config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
        hosted = make_hosted(config, "/home/you/project")
        bridge = hosted.bridge
        clock = demo.DemoClock()
        bridge.bus.subscribe(clock.stamp)
        options.setdefault("arm_delay", 0.0)
        options.setdefault("linger", 3600.0)
        options.setdefault("deterministic_eliza", True)
        options.setdefault("alert", False)
        options.setdefault("clock", fixed_clock)
        super().__init__(hosted, **options)
        self.animation_level = "none"
        self.asks: list[asyncio.Future[Any]] = []

    def ask(
        self,
        tool_call: dict[str, Any],
        *,
        agent: str = "claude-code",
        session: str = "s1",
        connection: str = "vscodelm-1",
        options: list[dict[str, Any]] | None = None,
    ) -> None:
        from bridge.approvals import ApprovalContext
        from tests.support.console import ELIZA_OPTIONS

        ctx = ApprovalContext(connection, session, agent, tool_call, options or ELIZA_OPTIONS)
        self.asks.append(asyncio.ensure_future(self.bridge.approvals.request(ctx)))

    async def shutdown(self) -> None:
        await demo.shutdown(self)
        await asyncio.gather(*self.asks, return_exceptions=True)
        await super().shutdown()


async def settle(pilot: Any, until: Any = None) -> None:
    """Wait for `until()` (a state, never a time: this fails rather than shoot a screen that is
    not there yet), then let the app process what that state queued."""
    if until is not None:
        await wait_for(pilot, until, timeout=60.0)
    await wait_for(pilot, lambda: underlines_caught_up(pilot.app), timeout=60.0)
    for screen in pilot.app.screen_stack:
        for widget in screen.query(Input):
            widget.cursor_blink = False
    await pilot.pause()
    await pilot.pause()


def queue_with(*asks: dict[str, Any], **options: Any):
    """An app whose queue holds the given requests, and a run_before that waits for their cards."""
    app = SnapshotApp(**options)

    async def run_before(pilot: Any) -> None:
        for ask in asks:
            app.ask(**ask)
        await settle(pilot, lambda: len(app.queue.pending) == len(asks))

    return app, run_before


# --- the approval queue ----------------------------------------------------------------------------


def test_empty_queue(snap_compare):
    """The console at start: an empty queue that says what will appear there."""
    app = SnapshotApp()
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


def test_card_with_a_diff(snap_compare):
    """A file edit: who asks, the input, the diff, and every answer the agent offered."""
    app, run_before = queue_with({"tool_call": edit_call("src/calc.py")})
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_card_arming(snap_compare):
    """A card that just arrived: its keys are dimmed and it says it is arming."""
    app, run_before = queue_with({"tool_call": run_call("make deploy")}, arm_delay=3600)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_card_with_only_once_options(snap_compare):
    """The agent offered only allow-once and reject-once: A and R are not shown."""
    app, run_before = queue_with({"tool_call": run_call("pytest -x"), "options": ONCE_OPTIONS})
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_two_cards_the_second_folded(snap_compare):
    """Two requests: the current card is open, the next one shows its title only."""
    app, run_before = queue_with(
        {"tool_call": run_call("npm test"), "session": "s1"},
        {"tool_call": edit_call("README.md", "c9"), "session": "s2", "agent": "gemini"},
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_card_deny_reason(snap_compare):
    """`d`: the reason input, Enter denies (with it), Esc goes back to the card."""
    app, run_before = queue_with({"tool_call": run_call("rm -rf build")})
    assert snap_compare(
        app, terminal_size=SIZE, run_before=run_before, press=["d", *"use make clean"]
    )


def test_card_approved(snap_compare):
    """After `a`: the card says what was decided before it leaves."""
    app, run_before = queue_with({"tool_call": run_call("npm test")})
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before, press=["a"])


def test_bypass_confirmation(snap_compare):
    """`b`: before anything is turned on, what bypass covers is spelled out."""
    app, run_before = queue_with({"tool_call": run_call("npm test")})
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before, press=["b"])


def test_card_bypassed(snap_compare):
    """After `b` and `y`: the card says what was decided, the header that bypass is on."""
    app, run_before = queue_with({"tool_call": run_call("npm test")})
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before, press=["b", "y"])


def test_card_denied_with_reason(snap_compare):
    """After `d`, a reason and Enter."""
    app, run_before = queue_with({"tool_call": run_call("rm -rf build")})
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before, press=["d", *"no", "enter"])


def test_card_withdrawn(snap_compare):
    """The agent's turn was cancelled: the card says it was withdrawn."""
    app, ready = queue_with({"tool_call": run_call("npm test")})

    async def run_before(pilot: Any) -> None:
        await ready(pilot)
        broker = app.bridge.approvals
        broker.withdraw(next(iter(broker.pending)), "the turn was cancelled")
        await settle(pilot, lambda: not app.queue.pending)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_card_answered_elsewhere(snap_compare):
    """Another console (or VS Code) answered first: this card says so."""
    app, ready = queue_with({"tool_call": run_call("npm test")})

    async def run_before(pilot: Any) -> None:
        other = app.bridge.approvals.attach("laptop")
        await ready(pilot)
        other.answer(next(iter(app.bridge.approvals.pending)), "approve")

        def shown() -> bool:  # the card says who answered, and the title and tab have caught up
            return (
                not app.queue.pending
                and app.sub_title == "no pending approvals"
                and any(
                    "Answered by laptop" in card.outcome_text for card in app.query(ApprovalCard)
                )
            )

        await settle(pilot, shown)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_card_full_view(snap_compare):
    """`v`: the whole request, full screen, still answerable."""
    app, run_before = queue_with({"tool_call": edit_call("src/calc.py")})
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before, press=["v"])


# --- the other screens -----------------------------------------------------------------------------


def test_chat_waiting_for_an_approval(snap_compare):
    """The built-in chat after a hello, asking permission: the notice points to F2."""
    app = SnapshotApp()

    async def run_before(pilot: Any) -> None:
        await pilot.press("f3")
        app.chat.send("Hello")
        await settle(pilot, lambda: not app.chat.busy)
        app.chat.send("ask permission to run the tests")
        log = app.query_one("#chat-log")

        def shown() -> bool:  # the card, the banner, and the log scrolled to its end
            return bool(
                app.queue.pending
                and app.query_one("#chat-banner").display
                and log.scroll_y == log.max_scroll_y
            )

        await settle(pilot, shown)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help(snap_compare):
    """F1: every key, grouped by where it works."""
    app = SnapshotApp()
    assert snap_compare(app, terminal_size=SIZE, run_before=settle, press=["f1"])


def test_command_palette(snap_compare):
    """Ctrl+P: the console's actions by name."""
    app = SnapshotApp()
    assert snap_compare(app, terminal_size=SIZE, run_before=settle, press=["ctrl+p", *"chat"])


def test_theme_picker(snap_compare):
    """Choosing a theme with a live preview."""
    app = SnapshotApp()

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        app.search_themes()
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def open_settings(*keys: str):
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("f4", *keys)
        await settle(pilot)

    return run_before


def _seed_settings() -> None:
    from bridge.approvals import Rule
    from bridge.settings import AgentConfig, SettingsStore

    store = SettingsStore(Path(os.environ["SYMPOSIUM_CONFIG_DIR"]) / "settings.toml")
    store.upsert_agent(
        AgentConfig(
            id="claude-code", name="Claude Code", command="npx", args=["-y", "claude-code-acp"]
        )
    )
    store.upsert_agent(
        AgentConfig(
            id="gemini",
            name="Gemini CLI",
            command="gemini",
            args=["--experimental-acp"],
            bypass=True,
        )
    )
    store.add_rule(Rule(action="allow", kind="read", path="/home/you/project"))
    store.add_rule(Rule(action="deny", title="rm -rf *"))


def test_settings_agents(snap_compare):
    """F4: the agents and their bypass."""
    _seed_settings()
    app = SnapshotApp()
    assert snap_compare(app, terminal_size=SIZE, run_before=open_settings())


def test_settings_rules(snap_compare):
    """F4, ]: the approval rules in order."""
    _seed_settings()
    app = SnapshotApp()
    assert snap_compare(app, terminal_size=SIZE, run_before=open_settings("right_square_bracket"))


def test_settings_preferences(snap_compare):
    """F4, [: theme and mouse."""
    _seed_settings()
    app = SnapshotApp()
    assert snap_compare(app, terminal_size=SIZE, run_before=open_settings("left_square_bracket"))


def test_settings_broken_file(snap_compare):
    """A settings file that does not parse: shown with its line, never written."""
    path = Path(os.environ["SYMPOSIUM_CONFIG_DIR"]) / "settings.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[agents.claude]\ncommand = \n")
    app = SnapshotApp()

    async def run_before(pilot: Any) -> None:
        await pilot.press("f4")
        await settle(pilot)
        app.clear_notifications()
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def _demo_tab(tab: str, **options: Any):
    _seed_settings()  # the demo's rules: its file read is allowed by one
    app = SnapshotApp(**options)

    async def run_before(pilot: Any) -> None:
        await demo.play(pilot)
        app.action_show_tab(tab)
        await settle(pilot)

    return app, run_before


def test_sessions_tab(snap_compare):
    """The demo scenario's sessions and the history decisions behind them."""
    app, run_before = _demo_tab("sessions")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_tool_calls_tab(snap_compare):
    """The demo scenario's tool calls."""
    app, run_before = _demo_tab("toolcalls")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_light_theme(snap_compare):
    """The demo queue in the light theme."""
    app, run_before = _demo_tab("approvals", theme="symposium-light")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_high_contrast_theme(snap_compare):
    """The demo queue in the high-contrast theme."""
    app, run_before = _demo_tab("approvals", theme="symposium-high-contrast")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_terminal_palette_theme(snap_compare):
    """The demo queue in the terminal's own ANSI palette."""
    app, run_before = _demo_tab("approvals", theme="symposium-terminal")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
