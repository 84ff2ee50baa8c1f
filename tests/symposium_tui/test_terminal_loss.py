"""A console whose terminal stops taking output (a stalled SSH connection: nobody reads the pty)
is killed (SIGTERM) while it holds a relayed VS Code request's card. Textual's shutdown would
block forever writing to that terminal; the console must still leave: the socket removed, the
card denied in the audit log, the relayed client answered (-32000), and the next request served
headless. (`test_tmux.py` has the same with `tmux kill-session`, the terminal really closing.)"""

from __future__ import annotations

import asyncio
import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

from tests.support.lmclient import LmClient, user

SCRIPT = str(Path(sys.executable).parent / "symposium-tui")


def _take_terminal() -> None:  # in the child: the pty becomes its controlling terminal
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


async def test_a_console_on_a_stalled_terminal_still_leaves_when_killed(tmp_path):
    config, runtime = tmp_path / "config", tmp_path / "run"
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {
        **os.environ,
        "SYMPOSIUM_CONFIG_DIR": str(config),
        "SYMPOSIUM_RUNTIME_DIR": str(runtime),
        "TERM": "xterm-256color",
    }
    proc = subprocess.Popen(
        [SCRIPT, "console", "--no-mouse", "--event-log", str(tmp_path / "events.jsonl")],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        preexec_fn=_take_terminal,
    )
    os.close(slave)
    client = None
    try:
        # Read the screen until the console listens; from then on nobody reads the terminal.
        async with asyncio.timeout(30):
            while not (runtime / "console.sock").exists():
                if select.select([master], [], [], 0)[0]:
                    os.read(master, 65536)
                await asyncio.sleep(0.02)
        client = await LmClient.start(
            "--cwd",
            str(tmp_path),
            env={"SYMPOSIUM_CONFIG_DIR": str(config), "SYMPOSIUM_RUNTIME_DIR": str(runtime)},
        )
        held = client.chat_start([user("ask permission to drop the table")])
        events = tmp_path / "events.jsonl"
        async with asyncio.timeout(30):  # the card is pending in the console
            while not (events.exists() and b'"approval_requested"' in events.read_bytes()):
                await asyncio.sleep(0.02)
        # Make it draw a lot, into a terminal nobody reads.
        for i in range(150):
            fcntl.ioctl(
                master, termios.TIOCSWINSZ, struct.pack("HHHH", 24 + i % 5, 80 + i % 7, 0, 0)
            )
            proc.send_signal(signal.SIGWINCH)
            await asyncio.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(asyncio.to_thread(proc.wait), 30)
        assert code == 0
        assert not (runtime / "console.sock").exists()
        answer = await asyncio.wait_for(held, 20)
        assert answer.error is not None and answer.error["code"] == -32000, answer
        audit = (config / "audit.jsonl").read_text()
        assert '"outcome":"reject_once"' in audit and "went away" in audit, audit
        nxt = await client.chat([user("Hello")])  # no console now: served headless
        assert nxt.error is None and nxt.text
    finally:
        if client is not None:
            await client.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


async def test_a_terminal_that_hangs_up_without_a_signal_ends_the_console(tmp_path):
    """The console's terminal closes but no SIGHUP comes (the pty is not its controlling
    terminal, as under some multiplexers and `script` set-ups): the hang-up on stdin itself is
    noticed, and the console leaves, removing its socket."""
    config, runtime = tmp_path / "config", tmp_path / "run"
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {
        **os.environ,
        "SYMPOSIUM_CONFIG_DIR": str(config),
        "SYMPOSIUM_RUNTIME_DIR": str(runtime),
        "TERM": "xterm-256color",
    }
    proc = subprocess.Popen(
        [SCRIPT, "console", "--no-mouse"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,  # a session of its own, with no controlling terminal
    )
    os.close(slave)
    try:
        async with asyncio.timeout(30):
            while not (runtime / "console.sock").exists():
                if select.select([master], [], [], 0)[0]:
                    os.read(master, 65536)
                await asyncio.sleep(0.02)
        os.close(master)  # the terminal goes away
        master = -1
        await asyncio.wait_for(asyncio.to_thread(proc.wait), 30)
        assert not (runtime / "console.sock").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if master >= 0:
            os.close(master)


LIFELINE = """
import os, signal, threading
from symposium_tui.hosting.lifeline import Lifeline

class Loop:
    def call_soon_threadsafe(self, fn, *args):
        print("asked the loop to leave:", *args, flush=True)

lifeline = Lifeline(Loop(), lambda why: None, lambda: None, socket_path=lambda: None,
                    kill_agents=lambda: print("agents killed", flush=True), deadline=0.2)
lifeline.install()
"""


def assert_the_lifeline_ends_the_process(scenario: str) -> None:
    """Run `scenario` after installing a lifeline (its loop a stub): the SIGTERM it sends must
    ask the loop to leave, kill the agents at the deadline and end the process."""
    done = subprocess.run(
        [sys.executable, "-c", LIFELINE + scenario + '\nprint("not ended", flush=True)\n'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "asked the loop to leave: SIGTERM" in done.stdout
    assert "agents killed" in done.stdout and "not ended" not in done.stdout


def test_a_signal_while_the_main_thread_holds_a_threading_lock_still_ends_the_console():
    """The lifeline's signal handler takes no lock and starts no thread: the kill is acted on
    (the loop asked to leave, then the forced exit at the deadline) whatever the main thread
    was doing when the signal came."""
    # The signal arrives while the main thread holds threading's own lock (as while it starts a
    # thread): a handler that started a thread itself would wait for that lock forever.
    assert_the_lifeline_ends_the_process(
        "with threading._active_limbo_lock:\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    threading.Event().wait(60)\n"
    )


def test_a_kill_taken_by_another_thread_ends_a_console_whose_main_thread_is_stuck():
    """The kernel may hand the SIGTERM to any thread; the main thread, stuck writing to a stalled
    terminal, never runs a Python-level handler. The lifeline still ends the process."""
    # the main thread sits in a system call nothing interrupts (as a write to a terminal nobody
    # reads) while another thread takes the signal
    assert_the_lifeline_ends_the_process(
        "blocked, _ = os.pipe()\n"
        "worker = threading.Thread(target=threading.Event().wait, args=(60,), daemon=True)\n"
        "worker.start()\n"
        "threading.Timer(0.3, signal.pthread_kill, (worker.ident, signal.SIGTERM)).start()\n"
        "os.read(blocked, 1)\n"
    )
