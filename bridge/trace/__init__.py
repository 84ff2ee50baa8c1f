"""Wire traces and event logs: record them (`--trace-dir`), replay them through the history
tracker offline.

A trace is upstream's format (architecture decision 2), one wire line per record:

    [<RFC3339 UTC time>] <recv|send|stderr>: <line>

so traces written by upstream's Rust server replay here too. Replay re-runs the recorded chat
requests through a fresh `HistoryTracker` and answers "why was my conversation cancelled?" for
each: the decision, the session, the committed length and, for a cancel, the first message that
differed and both versions of it. The JSONL event log (`bridge.events`) carries the same facts and
replays the same way.

The package, by concern: `files.py` (recording and reading traces), `replay.py` (re-running the
requests of a trace or an event log), `present.py` (the steps as text or JSON, `replay`).
"""

from bridge.trace.files import (
    AUDIT_NOT_REPLAYED,
    CHAT_METHOD,
    TraceReader,
    TraceRecord,
    TraceWriter,
    read_trace,
    sniff_file,
)
from bridge.trace.present import format_step, main_replay, step_to_json
from bridge.trace.replay import (
    ReplayStep,
    read_event_log,
    replay_event_log,
    replay_trace,
    run_connection,
)

__all__ = [
    "AUDIT_NOT_REPLAYED",
    "CHAT_METHOD",
    "ReplayStep",
    "TraceReader",
    "TraceRecord",
    "TraceWriter",
    "format_step",
    "main_replay",
    "read_event_log",
    "read_trace",
    "replay_event_log",
    "replay_trace",
    "run_connection",
    "sniff_file",
    "step_to_json",
]
