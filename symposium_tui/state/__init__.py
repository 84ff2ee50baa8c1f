"""What the console knows about the bridge: sessions, history decisions and tool calls.

Pure Python, no Textual. One module per reason to change:

- `console_state`: `ConsoleState` subscribes to the bridge's event bus and folds the events into
  the stores the panes read — the sessions of every connection (keyed by `(connection,
  session_id)`), the timeline of history decisions (each with its request's outcome and a snapshot
  of the session's history at that decision, so the inspector can scrub back through them), and a
  bounded log of tool calls (agent-internal ones, client-tool round trips and permission outcomes).
- `records`: the records it keeps (`SessionRecord`, `DecisionRecord`, `ToolEntry`).
- `toolstore`: the tool-call log's ring buffer with its change journal.
- `notify`: how the panes hear that a topic changed (coalesced; `ConsoleState.add_listener`).
- `messages`: history messages read in either of their shapes (model objects, wire dicts).
- `formatting`: times and durations as the panes print them.
- `replay`: `state_from_file(path)` — the same stores from a wire trace or a JSONL event log,
  replayed through a fresh history tracker, so a file is inspected exactly like a live bridge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from symposium_tui.state.formatting import format_clock, format_duration
from symposium_tui.state.messages import agent_name, message_parts, message_text
from symposium_tui.state.notify import TOPICS
from symposium_tui.state.records import (
    AGENT_SOURCE,
    CLIENT_SOURCE,
    FINISHED_STATUSES,
    PERMISSION_SOURCE,
    DecisionRecord,
    SessionRecord,
    ToolEntry,
)
from symposium_tui.state.toolstore import ToolCallStore

if TYPE_CHECKING:
    from symposium_tui.state.console_state import ConsoleState


def __getattr__(name: str) -> Any:
    # `ConsoleState` reads the bridge's events (pydantic models): it loads when first asked for,
    # so a light module of this package (`fatigue`, which the console builds before its first
    # frame) does not bring pydantic with it.
    if name == "ConsoleState":
        from symposium_tui.state.console_state import ConsoleState

        return ConsoleState
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AGENT_SOURCE",
    "CLIENT_SOURCE",
    "FINISHED_STATUSES",
    "PERMISSION_SOURCE",
    "TOPICS",
    "ConsoleState",
    "DecisionRecord",
    "SessionRecord",
    "ToolCallStore",
    "ToolEntry",
    "agent_name",
    "format_clock",
    "format_duration",
    "message_parts",
    "message_text",
]
