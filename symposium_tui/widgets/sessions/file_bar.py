"""Where the sessions pane's decisions come from: the line that names the source (the live bridge
or a replayed file), and the bar that opens a wire trace or JSONL event log — a path, then Enter;
the file is replayed in a thread and the pane shows what it decided (`FileBar.Loaded`)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static

from symposium_tui.state import ConsoleState
from symposium_tui.widgets.sessions.common import set_text


class SourceLine(Static):
    """`Live bridge · 2 sessions · 5 decisions`, or `Replay events.jsonl · …` with its notes."""

    def show(self, state: ConsoleState, *, live: bool) -> None:
        counts = (
            f"{len(state.sessions)} session{'s' if len(state.sessions) != 1 else ''} · "
            f"{len(state.decisions)} decision{'s' if len(state.decisions) != 1 else ''}"
        )
        if live:
            line = Text.assemble(("Live bridge", "bold"), " · ", counts)
        else:
            notes = f" · {'; '.join(state.notes)}" if state.notes else ""
            line = Text.assemble(
                ("Replay ", "bold"),
                (os.path.basename(state.name), "bold italic"),
                " · ",
                counts,
                notes,
            )
        set_text(self, line, layout=False)


class FileBar(Horizontal):
    """`Open trace or event log: [path]` — the pane shows it (`o`) and closes it (Esc, or a file
    that opened)."""

    DEFAULT_CSS = """
    FileBar {
        height: 1;
        display: none;
        &.-open { display: block; }
        #sessions-open-path { width: 1fr; }
        & > Static { width: auto; padding: 0 1; background: $panel; }
    }
    """

    @dataclass
    class Loaded(Message):
        """A file was replayed: `state` holds its sessions and decisions."""

        state: ConsoleState

    def compose(self) -> ComposeResult:
        yield Static("Open trace or event log:")
        yield Input(
            placeholder="path, then enter (escape cancels)",
            compact=True,
            id="sessions-open-path",
        )

    @on(Input.Submitted, "#sessions-open-path")
    def _path_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        raw = event.value.strip()
        if not raw:
            return
        self._load_file(os.path.abspath(os.path.expanduser(raw)))

    @work(thread=True, exclusive=True, group="sessions-replay")
    def _load_file(self, path: str) -> None:
        from symposium_tui.state.replay import state_from_file  # the tracker: only for a file

        try:
            state = state_from_file(path)
        except (OSError, ValueError) as exc:
            message = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.app.call_from_thread(self._load_failed, path, message)
            return
        self.post_message(self.Loaded(state))

    def _load_failed(self, path: str, message: str) -> None:
        self.notify(f"Cannot open {path}: {message}", title="Replay", severity="error")
