"""Toad (PyPI `batrachian-toad`, a terminal ACP client nobody here wrote) with `symposium-tui acp`
as its agent, each in a real terminal: a person types in Toad, the built-in Eliza's reply streams
back into Toad, and when Eliza asks permission the card is raised in the console running in the
other terminal, answered there, and the answer reaches Toad.

Toad runs on CPython 3.14, unpacked from Debian unstable by tests/agents/install.py (`toad`). It
is started the way its own command line starts any ACP agent, `toad acp "<command>" <project>`,
and keeps every JSON-RPC line it receives in the file named by its `TOAD_LOG`: the tests read
what reached Toad there and what Toad shows on its screen.
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from tests.agents import install as agents
from tests.support.tmux import SCRIPT, TMUX, Terminal

pytestmark = [
    pytest.mark.agents,
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed"),
]

PROXY = [SCRIPT, "acp", "--agent", "elizacp"]
#: Generous: a cold Toad and a cold proxy on a loaded 2-core machine. Nothing is timed.
START_TIMEOUT = 120.0
TURN_TIMEOUT = 60.0


class ToadLog:
    """What Toad received from its agent: the `[agent] {json}` lines of its `TOAD_LOG`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def messages(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [
            json.loads(line.removeprefix("[agent] "))
            for line in self.path.read_text(encoding="utf-8").splitlines()
            if line.startswith("[agent] {")
        ]

    def methods(self) -> list[str]:
        return [m["method"] for m in self.messages() if "method" in m]

    def turns(self) -> list[tuple[list[str], str]]:
        """Each finished prompt turn: the agent message chunks streamed in it, its stop reason."""
        turns: list[tuple[list[str], str]] = []
        chunks: list[str] = []
        for message in self.messages():
            update = message.get("params", {}).get("update", {})
            if message.get("method") == "session/update" and (
                update.get("sessionUpdate") == "agent_message_chunk"
            ):
                chunks.append(update["content"]["text"])
            elif isinstance(message.get("result"), dict) and "stopReason" in message["result"]:
                turns.append((chunks, message["result"]["stopReason"]))
                chunks = []
        return turns

    def wait(self, condition: Any, what: str, timeout: float = TURN_TIMEOUT) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if value := condition(self):
                return value
            time.sleep(0.1)
        text = self.path.read_text(encoding="utf-8") if self.path.exists() else "(no log)"
        raise AssertionError(f"Toad never received {what}; its log:\n{text[-4000:]}")


def decisions(config: Path) -> list[dict[str, Any]]:
    path = config / "audit.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [line for line in lines if line.get("type", "decision") == "decision"]


@pytest.fixture
def console(tmp_path: Path):
    term = Terminal(tmp_path / "console")
    term.home.mkdir()
    yield term
    term.close()


@pytest.fixture
def toad_terminal(tmp_path: Path):
    term = Terminal(tmp_path / "toad")
    term.home.mkdir()
    yield term
    term.close()


def start_toad(term: Terminal, console: Terminal, tmp_path: Path) -> ToadLog:
    """Toad in its own terminal, its agent `symposium-tui acp --agent elizacp` sharing the
    console's config and runtime dirs (so the proxy finds that console); returns its log once
    its session is open."""
    launch = agents.toad(tmp_path / "toad-home")
    project = tmp_path / "project"
    project.mkdir()
    log = ToadLog(tmp_path / "toad.log")
    env = {
        **launch.env,
        "SYMPOSIUM_CONFIG_DIR": str(console.config),
        "SYMPOSIUM_RUNTIME_DIR": str(console.runtime),
        "TOAD_LOG": str(log.path),
    }
    argv = [launch.command, "acp", "--title", "Symposium", shlex.join(PROXY), str(project)]
    term.launch(argv, env, width=160, height=40)
    # Typed keys are only safe once Toad has its session (an answer with a sessionId).
    log.wait(
        lambda log: any("sessionId" in (m.get("result") or {}) for m in log.messages()),
        "a session/new answer",
        START_TIMEOUT,
    )
    term.wait_for(EMPTY_PROMPT)
    return log


#: Toad's prompt box (`▊ ❯ …`; its placeholder when empty) and a sent message in its
#: conversation (`▌ ❯ …`).
PROMPT = "▊ ❯ "
EMPTY_PROMPT = PROMPT + "How can I help you today?"
SENT = "▌ ❯ "


def say(term: Terminal, text: str) -> None:
    """Type `text` into Toad's prompt and send it, as a person does: into an empty prompt, Enter
    once the whole text is in the box (Toad handles an Enter that overtakes the typed characters
    before them), and done once the message shows in the conversation."""
    term.wait_for(EMPTY_PROMPT, TURN_TIMEOUT)
    term.type(text)
    term.wait_for(PROMPT + text)
    term.keys("Enter")
    term.wait_for(SENT + text)


def open_card(console: Terminal, title: str) -> str:
    console.wait_for(f"⚠ {title}", TURN_TIMEOUT)
    return console.wait_until_gone("(arming…)")  # the card ignores keys for its arming delay


def test_toad_chats_through_the_proxy_and_the_console_answers_for_it(
    toad_ready: None, console: Terminal, toad_terminal: Terminal, tmp_path: Path
) -> None:
    # 120 columns: the card's "(arming…)" must fit on screen to be waited for.
    console.start("console", "--no-mouse", width=120, height=30)
    console.wait_for_all("no pending approvals", "Console socket:", timeout=START_TIMEOUT)
    toad = toad_terminal
    log = start_toad(toad, console, tmp_path)

    # A prompt typed in Toad: Eliza's reply streams back in several chunks, Toad shows it whole.
    say(toad, "Hello, I feel sad")
    ((chunks, stop),) = log.wait(lambda log: log.turns(), "the first turn's end")
    assert stop == "end_turn"
    assert len(chunks) >= 2, f"the reply was not streamed: {chunks!r}"
    reply = "".join(chunks).strip()
    toad.wait_for(reply)

    # Eliza asks permission: the card is raised in the console, not in Toad; `a` approves it
    # there and Toad shows the agent carrying on.
    say(toad, "ask permission to run the tests")
    card = open_card(console, "run the tests")
    assert "a  Approve once" in card
    toad.wait_for("🔧 run the tests")  # Toad shows the tool call, waiting
    console.keys("a")
    toad.wait_for("Permission granted (allow_once). I ran the tests.", TURN_TIMEOUT)
    console.wait_for("no pending approvals")

    # Denied in the console, with a reason: Toad shows the refusal.
    say(toad, "ask permission to delete the logs")
    open_card(console, "delete the logs")
    console.keys("d")
    console.wait_for("Reason (optional)")
    console.type("not on a Friday")
    console.keys("Enter")
    toad.wait_for("Permission denied (reject_once). I did not run delete the logs.", TURN_TIMEOUT)

    turns = log.wait(lambda log: len(log.turns()) == 3 and log.turns(), "the third turn's end")
    assert [stop for _, stop in turns] == ["end_turn"] * 3
    # The console answered both asks: none was forwarded to Toad's own permission UI.
    assert "session/request_permission" not in log.methods()
    # Each decision audited once, by the console, under Toad's one connection name.
    audited = decisions(console.config)
    assert [(d["title"], d["outcome"], d["resolver"]) for d in audited] == [
        ("run the tests", "allow_once", "console"),
        ("delete the logs", "reject_once", "console"),
    ]
    assert audited[1]["reason"] == "not on a Friday"
    (connection,) = {d["connection"] for d in audited}
    assert connection.startswith("toad-")  # named after Toad's clientInfo


def test_without_a_console_toads_own_permission_ui_answers(
    toad_ready: None, console: Terminal, toad_terminal: Terminal, tmp_path: Path
) -> None:
    # No console runs (its dirs are only shared): the ask goes to Toad's own permission UI, and
    # the person's answer there reaches the agent.
    toad = toad_terminal
    log = start_toad(toad, console, tmp_path)
    say(toad, "ask permission to run the tests")
    toad.wait_for_all("a Allow once", "r Reject", timeout=TURN_TIMEOUT)
    assert "session/request_permission" in log.methods()
    toad.keys("a")
    toad.wait_for("Permission granted (allow_once). I ran the tests.", TURN_TIMEOUT)
    ((_, stop),) = log.wait(lambda log: log.turns(), "the turn's end")
    assert stop == "end_turn"
    (decision,) = decisions(console.config)
    assert (decision["title"], decision["outcome"], decision["resolver"]) == (
        "run the tests",
        "allow_once",
        "client",
    )
    assert decision["connection"].startswith("toad-")  # named after Toad's clientInfo
