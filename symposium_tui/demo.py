"""A deterministic demo of the console, and the command that renders its screenshots.

    python -m symposium_tui.demo                              # play the demo in this terminal
    python -m symposium_tui.demo --screenshots screenshots/   # write an SVG of each main screen

The scenario runs the real bridge with the built-in Eliza (seeded, so its replies never change):
a conversation in the built-in chat that asks permission to run the tests, an editor's
conversation on a second connection, and a file edit from a "claude-code" agent whose card carries
a diff. Every event is stamped by a demo clock (one second apart from a fixed start) and the
settings live in a throwaway directory, so the screenshots come out the same on every machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SIZE = (80, 24)
START = time.mktime((2025, 6, 3, 10, 42, 0, 0, 0, -1))
CWD = "/home/you/project"

PARSER_OLD = """def parse(line):
    key, value = line.split("=")
    return key, value
"""
PARSER_NEW = '''def parse(line):
    """`key = value`; the value may itself contain '='."""
    key, _, value = line.partition("=")
    return key.strip(), value.strip()
'''

SHOTS = {
    "approvals": "The approval queue: a file edit with its diff, and a request from the chat",
    "deny-reason": "Denying with a reason",
    "chat": "The built-in chat, waiting for an approval",
    "sessions": "Sessions and the history decisions behind them",
    "toolcalls": "Every tool call",
    "settings": "Settings: agents and their bypass",
    "help": "Help: every key",
    "palette": "The command palette",
    "light": "The light theme",
    "high-contrast": "The high-contrast theme",
    "terminal": "The terminal's own palette (ANSI colours)",
}


class DemoClock:
    """Stamps every bridge event one second after the previous one, from a fixed start."""

    def __init__(self, start: float = START) -> None:
        self.now = start

    def stamp(self, event: Any) -> None:
        self.now += 1.0
        event.ts = self.now

    @staticmethod
    def format(ts: float) -> str:
        return time.strftime("%H:%M:%S", time.localtime(ts))


def build_demo_app(config_dir: str | None = None, **app_options: Any) -> Any:
    """The console around a fresh bridge, with demo settings and the demo clock."""
    from bridge import events as ev
    from bridge.approvals import ApprovalBroker
    from bridge.config import BridgeConfig
    from bridge.core import Bridge
    from bridge.rules import Rule
    from bridge.settings import AgentConfig, SettingsStore
    from symposium_tui.app import SymposiumApp
    from symposium_tui.hosting.hosted import Hosted

    config = Path(config_dir or tempfile.mkdtemp(prefix="symposium-demo-"))
    store = SettingsStore(config / "settings.toml")
    store.upsert_agent(
        AgentConfig(
            id="claude-code",
            name="Claude Code",
            command="npx",
            args=["-y", "@zed-industries/claude-agent-acp"],
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
    store.add_rule(Rule(action="allow", kind="read", path=CWD))
    store.add_rule(Rule(action="deny", title="rm -rf *"))
    settings = store.load()
    bus = ev.EventBus()
    clock = DemoClock()
    bus.subscribe(clock.stamp)  # first subscriber: everyone else sees the demo time

    def persist_bypass(agent: str) -> None:
        store.set_agent_bypass(agent, True)

    broker = ApprovalBroker(bus, policy=settings.policy(), persist_bypass=persist_bypass)
    bridge = Bridge(BridgeConfig(cwd=CWD, idle_timeout=None), bus=bus, approvals=broker)
    options: dict[str, Any] = {
        "arm_delay": 0.0,
        "linger": 3600.0,
        "deterministic_eliza": True,
        "alert": False,
        "clock": DemoClock.format,
    }
    options.update(app_options)
    app = SymposiumApp(Hosted(bridge, store), **options)
    app.demo_clock = clock  # type: ignore[attr-defined]  # the demo's own clock, read by its scenes
    return app


async def _until(condition: Callable[[], bool], pilot: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the demo scenario did not reach the expected state")
        await pilot.pause(0.02)


EDIT_SESSION = ("vscodelm-9", "s1")  # the "claude-code" session (connection, session id)


async def play(pilot: Any) -> None:
    """The scenario: an editor's conversation, a file edit to review, and a chat asking permission."""
    app = pilot.app
    await _editor_conversation(app.bridge)
    edit = _claude_code_session(app.bridge.bus)
    await _claude_code_asks(pilot, edit)
    # The built-in chat: a hello, then a request that needs permission.
    chat = app.chat
    chat.send("Hello")
    await _until(lambda: not chat.busy, pilot)
    chat.send("ask permission to run the test suite")
    await _until(lambda: len(app.queue.pending) == 2, pilot)
    await pilot.pause()


async def _editor_conversation(bridge: Any) -> None:
    """An editor (VS Code) talking to Eliza on its own connection: a real session, real decisions."""
    from bridge.protocol import Message
    from bridge.sessions import ResponseStream

    editor = bridge.open_connection("vscodelm")
    history: list[Any] = []
    for n, text in enumerate(
        ("I need help with my parser", "It breaks on values with an equals sign"), 1
    ):
        history.append(
            Message.model_validate({"role": "user", "content": [{"type": "text", "value": text}]})
        )
        parts: list[dict[str, Any]] = []
        stream = ResponseStream(f"req-{n}", parts.append)
        await editor.chat(
            editor.make_request(f"req-{n}", {"eliza": {"deterministic": True}}, list(history), []),
            stream,
        )
        history.append(Message.model_validate({"role": "assistant", "content": parts}))


def _claude_code_session(bus: Any) -> dict[str, Any]:
    """A "claude-code" session editing a file: a read done, and the edit's tool call (returned)."""
    from bridge import events as ev

    conn, sid = EDIT_SESSION
    bus.publish(
        ev.SessionStarted(
            connection=conn, session_id=sid, agent="claude-code", acp_session_id="demo", pid=4242
        )
    )
    bus.publish(
        ev.ToolCallSeen(
            connection=conn,
            session_id=sid,
            tool_call_id="toolu_01",
            title="Read src/parser.py",
            kind="read",
            status="completed",
            raw_input={"file_path": f"{CWD}/src/parser.py"},
            content=PARSER_OLD,
        )
    )
    edit: dict[str, Any] = {
        "toolCallId": "toolu_02",
        "title": "Edit src/parser.py",
        "kind": "edit",
        "status": "pending",
        "rawInput": {
            "file_path": f"{CWD}/src/parser.py",
            "old_string": PARSER_OLD,
            "new_string": PARSER_NEW,
        },
        "content": [
            {"type": "diff", "path": "src/parser.py", "oldText": PARSER_OLD, "newText": PARSER_NEW}
        ],
        "locations": [{"path": f"{CWD}/src/parser.py"}],
    }
    bus.publish(
        ev.ToolCallSeen(
            connection=conn,
            session_id=sid,
            tool_call_id="toolu_02",
            title=edit["title"],
            kind="edit",
            status="pending",
            raw_input=edit["rawInput"],
        )
    )
    return edit


async def _claude_code_asks(pilot: Any, edit: dict[str, Any]) -> None:
    """The session asks for its read (a rule allows it) and its edit (a card, to review)."""
    from bridge.approvals import ApprovalContext

    app = pilot.app
    bridge = app.bridge
    conn, sid = EDIT_SESSION
    options = [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "allow_always", "name": "Always allow edits", "kind": "allow_always"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ]
    broker = bridge.approvals
    read = ApprovalContext(
        conn,
        sid,
        "claude-code",
        {
            "toolCallId": "toolu_01",
            "title": "Read src/parser.py",
            "kind": "read",
            "locations": [{"path": f"{CWD}/src/parser.py"}],
        },
        options,
    )
    await broker.request(read)  # settled by the "allow read inside the project" rule
    app.run_worker(  # the app's: it ends with the app at the latest
        broker.request(ApprovalContext(conn, sid, "claude-code", edit, options)),
        name="the edit's approval",
        group="demo",
        exit_on_error=False,
    )
    await _until(lambda: len(app.queue.pending) == 1, pilot)


def _freeze(app: Any) -> None:
    """No blinking cursors in a screenshot."""
    from textual.widgets import Input

    for screen in app.screen_stack:
        for widget in screen.query(Input):
            widget.cursor_blink = False


async def _visit(pilot: Any, directory: Path) -> list[Path]:
    app = pilot.app
    written: list[Path] = []

    async def shot(name: str) -> None:
        _freeze(app)
        for _ in range(3):  # a theme switch repaints on the next turns of the loop
            await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        path = directory / f"{name}.svg"
        path.write_text(app.export_screenshot(title=f"Symposium — {SHOTS[name]}"), encoding="utf-8")
        written.append(path)

    await pilot.press("f2")
    await shot("approvals")
    card = app.queue.current_card()
    await card.action_deny()
    await pilot.pause()
    await pilot.press(*"Add a test first")
    await shot("deny-reason")
    card.cancel_reason()  # back out without answering: the rest of the tour shows the card pending
    await pilot.press("f3")
    await shot("chat")
    app.action_show_tab("sessions")
    await shot("sessions")
    app.action_show_tab("toolcalls")
    await shot("toolcalls")
    await pilot.press("f4")
    await shot("settings")
    await pilot.press("escape", "f1")
    await shot("help")
    await pilot.press("escape")
    await pilot.press("f2")
    await pilot.press("ctrl+p")
    await pilot.press(*"approv")
    await shot("palette")
    await pilot.press("escape")
    await pilot.pause()
    app.theme = "symposium-light"
    await shot("light")
    app.theme = "symposium-high-contrast"
    await shot("high-contrast")
    app.theme = "symposium-terminal"
    await shot("terminal")
    app.theme = "symposium-dark"
    return written


def render_screenshots(
    directory: str | os.PathLike[str], size: tuple[int, int] = SIZE
) -> list[Path]:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="symposium-demo-") as config:
        os.environ["SYMPOSIUM_CONFIG_DIR"] = config
        app = build_demo_app(config)
        app.animation_level = "none"
        written: list[Path] = []

        async def auto_pilot(pilot: Any) -> None:
            try:
                await play(pilot)
                written.extend(await _visit(pilot, out))
            finally:
                await shutdown(app)
                app.exit()

        app.run(headless=True, size=size, auto_pilot=auto_pilot)
    return written


async def shutdown(app: Any) -> None:
    """End the scenario cleanly: withdraw what is still pending, then close the bridge."""
    broker = app.bridge.approvals
    for approval_id in list(broker.pending):
        broker.withdraw(approval_id, "the demo ended")
    for worker in list(app.workers):
        if worker.group == "demo":
            with contextlib.suppress(Exception):  # withdrawn just above: nothing to report
                await worker.wait()
    deadline = time.monotonic() + 5
    while (
        _chat_busy(app) and time.monotonic() < deadline
    ):  # Eliza answers "cancelled" and ends its turn
        await asyncio.sleep(0.02)
    await app.bridge.close()


def _chat_busy(app: Any) -> bool:
    try:
        return bool(app.chat.busy)
    except Exception:  # the console's screen is already gone
        return False


def run_demo(*, mouse: bool = True) -> int:
    with tempfile.TemporaryDirectory(prefix="symposium-demo-") as config:
        os.environ["SYMPOSIUM_CONFIG_DIR"] = config
        app = build_demo_app(config, arm_delay=0.5, linger=2.0, alert=True)

        async def auto_pilot(pilot: Any) -> None:
            await play(pilot)

        async def run() -> None:
            try:
                await app.run_async(mouse=mouse, auto_pilot=auto_pilot)
            finally:
                await shutdown(app)

        asyncio.run(run())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m symposium_tui.demo", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--screenshots", metavar="DIR", help="write an SVG of each main screen to DIR and exit"
    )
    parser.add_argument("--no-mouse", action="store_true", help="do not capture the mouse")
    args = parser.parse_args(argv)
    if args.screenshots:
        for path in render_screenshots(args.screenshots):
            print(path)
        return 0
    return run_demo(mouse=not args.no_mouse)


if __name__ == "__main__":
    sys.exit(main())
