"""The console in a real terminal: a tmux server of its own, keys in with `send-keys`, the screen
back with `capture-pane`."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

TMUX = shutil.which("tmux")
SCRIPT = str(Path(sys.executable).parent / "symposium-tui")


class Terminal:
    """One tmux server (its own socket) running the console in window 0."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.socket = f"symposium-test-{uuid.uuid4().hex[:8]}"
        self.config = home / "config"
        self.runtime = home / "run"
        self.target = "console:0"

    def tmux(self, *args: str) -> str:
        out = subprocess.run(
            [TMUX, "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=30,
        )
        return out.stdout

    def start(self, *console_args: str, width: int = 80, height: int = 24) -> None:
        """Run the console in window 0 (again, after it exited), in a terminal of
        `width`×`height`. Textual draws on the terminal through stderr, so nothing is redirected:
        whatever it prints after exiting stays visible."""
        env = {
            "SYMPOSIUM_CONFIG_DIR": str(self.config),
            "SYMPOSIUM_RUNTIME_DIR": str(self.runtime),
            "TERM": "xterm-256color",
            "COLORTERM": "",
        }
        words = [shlex.quote(SCRIPT), *console_args]
        self._run_in_window(env, words, "CONSOLE-EXITED", width, height)

    def launch(
        self, argv: Sequence[str], env: Mapping[str, str], *, width: int = 80, height: int = 24
    ) -> None:
        """Run any program in window 0 (instead of the console) with exactly `env`, in a terminal
        of `width`×`height`."""
        words = [*map(shlex.quote, argv)]
        self._run_in_window(env, words, "PROGRAM-EXITED", width, height, clean_env=True)

    def _run_in_window(
        self,
        env: Mapping[str, str],
        words: list[str],
        exited: str,
        width: int,
        height: int,
        *,
        clean_env: bool = False,
    ) -> None:
        """`words` (already quoted) under `env` in window 0, then `exited` and its status on the
        screen, the window kept open: in the session's window again if it exists, else in a new
        session of `width`×`height`."""
        command = " ".join(
            [
                "env",
                *(["-i"] if clean_env else []),
                *(f"{k}={shlex.quote(v)}" for k, v in env.items()),
                *words,
                ";",
                "echo",
                exited,
                "$?",
                ";",
                "sleep",
                "600",
            ]
        )
        if self._has_session():
            self.tmux("respawn-window", "-k", "-t", self.target, command)
            return
        self.tmux(
            "new-session",
            "-d",
            "-x",
            str(width),
            "-y",
            str(height),
            "-s",
            "console",
            "-c",
            str(self.home),
            command,
        )

    def record_titles(self) -> Path:
        """Every title the console's pane is given from now on, a line each in the returned
        file (tmux's `pane-title-changed` hook), so a title shown for a moment is not missed."""
        path = self.home / "titles.txt"
        path.touch()
        hook = f"run-shell 'echo #{{q:pane_title}} >> {shlex.quote(str(path))}'"
        self.tmux("set-hook", "-g", "pane-title-changed", hook)
        return path

    def wait_for_title(self, path: Path, text: str, timeout: float = 20.0) -> list[str]:
        """The titles recorded until one containing `text` (see `record_titles`)."""
        deadline = time.monotonic() + timeout
        titles: list[str] = []
        while time.monotonic() < deadline:
            titles = path.read_text(encoding="utf-8").splitlines()
            if any(text in title for title in titles):
                return titles
            time.sleep(0.1)
        raise AssertionError(f"no title with {text!r}; the titles were: {titles!r}")

    def _has_session(self) -> bool:
        return (
            subprocess.run(
                [TMUX, "-L", self.socket, "has-session", "-t", "console"], capture_output=True
            ).returncode
            == 0
        )

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.tmux("send-keys", "-t", self.target, key)
            time.sleep(0.15)  # a person's pace: one key at a time

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.target, "-l", text)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.target)

    def show(self, fmt: str, target: str | None = None) -> str:
        return self.tmux("display-message", "-p", "-t", target or self.target, fmt).strip()

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared on the screen:\n{screen}")

    def wait_for_all(self, *texts: str, timeout: float = 20.0) -> str:
        """The first screen showing every one of `texts` (parts of a screen can change in
        separate updates, so each is waited for on the same screen)."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if all(text in screen for text in texts):
                return screen
            time.sleep(0.1)
        missing = [text for text in texts if text not in screen]
        raise AssertionError(f"{missing!r} never appeared on the screen:\n{screen}")

    def wait_until_gone(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text not in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} stayed on the screen:\n{screen}")

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True)
