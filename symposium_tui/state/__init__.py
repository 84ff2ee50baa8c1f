"""What the console knows about the bridge: sessions, history decisions and tool calls.

Pure Python, no Textual. One module per reason to change:

- `console_state`: `ConsoleState` subscribes to the bridge's event bus and folds the events into
  the stores the panes read — the sessions of every connection (keyed by `(connection,
  session_id)`), the timeline of history decisions (each with its request's outcome and a snapshot
  of the session's history at that decision, so the inspector can scrub back through them), and a
  bounded log of tool calls (agent-internal ones, client-tool round trips and permission outcomes).
- `records`: the records it keeps (`SessionRecord`, `DecisionRecord`, `ToolEntry`).
- `tool_log`: tool-call, client-tool and permission events folded into the tool log's entries.
- `approval`: one approval request as a card shows it (`ApprovalInfo`).
- `toolstore`: the tool-call log's ring buffer with its change journal.
- `notify`: how the panes hear that a topic changed (coalesced; `ConsoleState.add_listener`).
- `messages`: history messages read in either of their shapes (model objects, wire dicts).
- `formatting`: times, durations and session names as the panes print them.
- `replay`: `state_from_file(path)` — the same stores from a wire trace or a JSONL event log,
  replayed through a fresh history tracker, so a file is inspected exactly like a live bridge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from symposium_tui.state.console_state import ConsoleState
    from symposium_tui.state.formatting import format_clock, format_duration, session_name
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

# Each name is imported from its module when first asked for, so a module of this package that
# the console's first frame needs (`fatigue`) does not bring `console_state` and, through the
# bridge's events, pydantic.
_MODULES = {
    "ConsoleState": "console_state",
    "format_clock": "formatting",
    "format_duration": "formatting",
    "session_name": "formatting",
    "agent_name": "messages",
    "message_parts": "messages",
    "message_text": "messages",
    "TOPICS": "notify",
    "AGENT_SOURCE": "records",
    "CLIENT_SOURCE": "records",
    "FINISHED_STATUSES": "records",
    "PERMISSION_SOURCE": "records",
    "DecisionRecord": "records",
    "SessionRecord": "records",
    "ToolEntry": "records",
    "ToolCallStore": "toolstore",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


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
    "session_name",
]
