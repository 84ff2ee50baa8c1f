"""The console in a real terminal, as a person uses it: `symposium-tui console --no-mouse` in tmux
at 80×24, a chat with the built-in Eliza, the approval card in the captured pane, and `a`, `d`
and `b` pressed on it — the agent carries on each time, and the bypass survives a restart.

tmux is the terminal here: keys go in with `send-keys`, the screen comes back with
`capture-pane`, the title the console sets is tmux's pane title, and a bell in a background
window raises that window's bell flag.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.support.tmux import SCRIPT, TMUX, Terminal

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


@pytest.fixture
def terminal(tmp_path):
    term = Terminal(tmp_path)
    yield term
    term.close()


def ask(term: Terminal, what: str) -> str:
    """Type a request for permission into the chat and wait for the card's notice."""
    term.type(f"ask permission to {what}")
    term.keys("Enter")
    return term.wait_for(f"Eliza (built in) asks permission: {what}")


def open_card(term: Terminal, what: str) -> str:
    term.keys("F2")
    term.wait_for(f"⚠ {what}")
    return term.wait_until_gone("(arming…)")  # the card ignores keys for its arming delay


def test_a_person_approves_denies_and_bypasses_from_a_real_terminal(terminal):
    term = terminal
    term.start("console", "--no-mouse")
    # Ready once the bridge is attached (its socket is shown): keys typed into a console
    # still starting up on a loaded machine can be lost before they reach it.
    term.wait_for_all("no pending approvals", "Console socket:")
    assert term.show("#{mouse_any_flag}") == "0", (
        "--no-mouse: the console must not capture the mouse"
    )

    # Chat with Eliza; the console sits in window 0 while the person looks at another window.
    term.keys("F3")
    term.wait_for("Message Eliza")
    term.tmux("new-window", "-d", "-t", "console:1", "sleep 600")
    term.tmux("select-window", "-t", "console:1")
    titles_file = term.record_titles()
    ask(term, "run the tests")
    term.wait_for_all("Approvals (1)", "1 pending approval")
    flags = term.tmux("list-windows", "-t", "console", "-F", "#{window_index}:#{window_bell_flag}")
    assert "0:1" in flags.split(), f"no bell from the console window: {flags!r}"
    # The title flashes what is asked, for a moment (every title is recorded, so a loaded
    # machine's late look at the screen cannot miss it).
    term.wait_for_title(titles_file, "⚠ Eliza (built in) asks: run the tests")
    term.tmux("select-window", "-t", "console:0")

    # `a`: approve once — the card shows every answer, then the agent continues.
    screen = open_card(term, "run the tests")
    for label in (
        "a  Approve once",
        "d  Deny…",
        "b  Bypass: allow all Eliza (built in) asks (saved)",
    ):
        assert label in screen, label
    term.keys("a")
    # Back in the chat with nothing pending (the title and the chat can update separately).
    term.wait_for_all(
        "Permission granted (allow_once). I ran the tests.", "no pending approvals", "Message Eliza"
    )

    # `d` with a reason.
    ask(term, "drop the database")
    open_card(term, "drop the database")
    term.keys("d")
    term.wait_for("Reason (optional)")
    term.type("not on a Friday")
    term.keys("Enter")
    term.wait_for("Permission denied (reject_once). I did not run drop the database.")
    audit = (term.config / "audit.jsonl").read_text()
    assert '"reason":"not on a Friday"' in audit

    # `b`: bypass — approved, and saved for the agent.
    ask(term, "deploy")
    open_card(term, "deploy")
    term.keys("b")
    term.wait_for("Turn bypass on for Eliza (built in)?")
    term.keys("y")
    term.wait_for("Permission granted (allow_once). I ran deploy.")
    settings = (term.config / "settings.toml").read_text()
    assert "[agents.eliza]" in settings and "bypass = true" in settings

    # Quit, start again: the bypass holds, no card is shown, the agent just goes on.
    term.keys("C-q")
    screen = term.wait_for("CONSOLE-EXITED 0")
    assert "Traceback" not in screen
    term.start("console", "--no-mouse")
    # Ready once the bridge is attached (its socket is shown): keys typed into a console
    # still starting up on a loaded machine can be lost before they reach it.
    term.wait_for_all("no pending approvals", "Console socket:")
    term.keys("F3")
    term.wait_for("Message Eliza")
    term.type("ask permission to deploy again")
    term.keys("Enter")
    screen = term.wait_for("Permission granted (allow_once). I ran deploy again.")
    assert "Approvals (1)" not in screen
    term.keys("C-q")
    screen = term.wait_for("CONSOLE-EXITED 0")
    assert "Traceback" not in screen and "Error" not in screen


def test_without_no_mouse_the_console_captures_the_mouse_and_a_second_console_is_refused(terminal):
    term = terminal
    term.start("console")
    # Ready once the bridge is attached (its socket is shown): keys typed into a console
    # still starting up on a loaded machine can be lost before they reach it.
    term.wait_for_all("no pending approvals", "Console socket:")
    assert term.show("#{mouse_any_flag}") == "1"
    second = subprocess.run(
        [SCRIPT, "console"],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "SYMPOSIUM_CONFIG_DIR": str(term.config),
            "SYMPOSIUM_RUNTIME_DIR": str(term.runtime),
        },
    )
    assert second.returncode == 1 and "already running" in second.stderr

    # Killed (or its SSH session closed) with a card pending: it leaves as Ctrl+Q would.
    term.keys("F3")
    term.wait_for("Message Eliza")
    ask(term, "run the tests")
    pid = term.show("#{pane_pid}")
    console_pid = subprocess.run(
        ["pgrep", "-P", pid, "-f", "symposium-tui"], capture_output=True, text=True
    ).stdout.split()
    assert console_pid, "the console process"
    os.kill(int(console_pid[0]), signal.SIGTERM)
    screen = term.wait_for("CONSOLE-EXITED 0")
    assert "Traceback" not in screen
    assert not (term.runtime / "console.sock").exists()
    audit = (term.config / "audit.jsonl").read_text()
    assert '"outcome":"reject_once"' in audit and "went away" in audit


def test_p_on_a_card_saves_a_rule_for_the_pattern_and_the_next_request_needs_no_card(terminal):
    term = terminal
    term.start("console", "--no-mouse")
    # Ready once the bridge is attached (its socket is shown): keys typed into a console
    # still starting up on a loaded machine can be lost before they reach it.
    term.wait_for_all("no pending approvals", "Console socket:")
    term.keys("F3")
    term.wait_for("Message Eliza")
    ask(term, "git status -s")
    screen = open_card(term, "git status -s")
    # the scope is on the card before the key is pressed
    assert "p  Rule: always allow commands starting `git status` by Eliza (built in)" in screen
    term.keys("p")
    screen = term.wait_for("New rule: always allow commands starting `git status` by Eliza")
    assert 'command = "git status"' in screen
    term.keys("C-s")
    term.wait_for("Permission granted (allow_once). I ran git status -s.")
    settings = (term.config / "settings.toml").read_text()
    assert 'command = "git status"' in settings
    assert '{agent = "eliza", kind = "execute", command = "git status -s"}' in settings

    # The rule answers from now on: no card, the agent just goes on.
    term.type("ask permission to git status --short")
    term.keys("Enter")
    screen = term.wait_for("Permission granted (allow_once). I ran git status --short.")
    assert "Approvals (1)" not in screen
    audit = (term.config / "audit.jsonl").read_text()
    assert '"rule":"rule 1 (line 4): allow agent=eliza command=git status"' in audit
    term.keys("C-q")
    screen = term.wait_for("CONSOLE-EXITED 0")
    assert "Traceback" not in screen


def _console_pid(term: Terminal) -> int:
    pane = term.show("#{pane_pid}")
    found = subprocess.run(
        ["pgrep", "-P", pane, "-f", "symposium-tui"], capture_output=True, text=True
    ).stdout.split()
    assert found, "the console process"
    return int(found[0])


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


async def test_a_console_whose_terminal_goes_away_denies_removes_its_socket_and_exits(terminal):
    """An SSH session that drops, played by `tmux kill-session`: after the console has served a
    relayed VS Code request and a person answered its card, its terminal disappears while it
    holds another card. It must deny what it holds, remove its socket and exit (it used to stay
    forever, blocked writing to a terminal that no longer exists); the relayed client gets its
    -32000 and the next request is served headless."""
    import asyncio

    from tests.support.lmclient import LmClient, user

    term = terminal
    term.start("console", "--no-mouse")
    # Ready once the bridge is attached (its socket is shown): keys typed into a console
    # still starting up on a loaded machine can be lost before they reach it.
    term.wait_for_all("no pending approvals", "Console socket:")
    pid = _console_pid(term)
    deadline = time.monotonic() + 30
    while not (term.runtime / "console.sock").exists():  # it listens right after its first frame
        assert time.monotonic() < deadline, "the console never listened"
        time.sleep(0.02)
    env = {"SYMPOSIUM_CONFIG_DIR": str(term.config), "SYMPOSIUM_RUNTIME_DIR": str(term.runtime)}
    client = await LmClient.start("--cwd", str(term.home), env=env)
    try:
        # (the terminal is watched from a thread: the client's pipes need the event loop)
        first = client.chat_start([user("ask permission to deploy")])
        await asyncio.to_thread(term.wait_for, "⚠ deploy")
        await asyncio.to_thread(term.wait_until_gone, "(arming…)")
        term.keys("a")
        resp = await asyncio.wait_for(first, 30)
        assert resp.text.endswith("Permission granted (allow_once). I ran deploy.")

        held = client.chat_start([user("ask permission to drop the table")])
        await asyncio.to_thread(term.wait_for, "⚠ drop the table")
        started = time.monotonic()
        term.tmux("kill-session", "-t", "console")
        while not _gone(pid):
            assert time.monotonic() - started < 30, "the console is still running"
            await asyncio.sleep(0.02)
        took = time.monotonic() - started
        print(f"[console] gone {took:.2f} s after its terminal")
        assert not (term.runtime / "console.sock").exists()
        answer = await asyncio.wait_for(held, 20)
        assert answer.error is not None and answer.error["code"] == -32000
        audit = (term.config / "audit.jsonl").read_text()
        assert '"outcome":"reject_once"' in audit and "went away" in audit
        nxt = await client.chat([user("Hello")])  # nobody to relay to: served headless
        assert nxt.error is None and nxt.text
    finally:
        await client.close()
        if not _gone(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def cpu_hog():
    """A process that spins on a core for the whole test: the console starts on a loaded
    machine, where its bridge comes seconds after its first frame."""
    import sys

    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield hog
    hog.kill()
    hog.wait()


def test_keys_typed_from_the_first_frame_reach_the_chat_under_load(terminal, cpu_hog):
    term = terminal
    term.start("console", "--no-mouse")
    # The first frame, and no waiting for the bridge: F3 and a message typed at once.
    term.wait_for("no pending approvals", timeout=60)
    term.keys("F3")
    term.type("ask permission to run the tests")
    term.keys("Enter")
    screen = term.wait_for("Eliza (built in) asks permission: run the tests", timeout=60)
    assert "Traceback" not in screen
    term.keys("C-q")
    term.wait_for("approval is waiting")  # quitting with the card pending asks first
    term.keys("y")
    screen = term.wait_for("CONSOLE-EXITED 0")
    assert "Traceback" not in screen
