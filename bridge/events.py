"""Typed events and the bus that fans them out.

The core publishes; the console, the JSONL event log, the replay tool and tests subscribe. The core
never calls a widget. Publishing is synchronous and subscribers must be quick (the console posts a
message, the log appends a line). Building an event costs a few microseconds, so publishers hand
the bus a function that builds it, `bus.publish(lambda: SomeEvent(...))`: the bus calls it only
when someone listens.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bridge.redact import redact

log = logging.getLogger(__name__)


class Event(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: str
    ts: float = Field(default_factory=time.time)
    connection: str = ""


class RequestReceived(Event):
    """A chat request arrived at a front door (its wire params, as received)."""

    type: Literal["request_received"] = "request_received"
    request_id: Any
    agent: Any = None  # redacted (env values, secret-named keys): it is shown and logged

    @field_validator("agent", mode="after")
    @classmethod
    def _redacted(cls, value: Any) -> Any:
        return redact(value)

    messages: list[Any] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)


class HistoryDecided(Event):
    """The history tracker routed a request; `decision` is `Decision.to_json()`."""

    type: Literal["history_decision"] = "history_decision"
    request_id: Any
    decision: dict[str, Any]


class PartStreamed(Event):
    type: Literal["part_streamed"] = "part_streamed"
    request_id: Any
    session_id: str
    part: dict[str, Any]


class RequestFinished(Event):
    type: Literal["request_finished"] = "request_finished"
    request_id: Any
    session_id: str | None = None
    outcome: Literal["complete", "cancelled", "error"]
    error: str | None = None
    stop_reason: str | None = None  # an ACP turn's stop reason (the ACP front door)


class SessionStarted(Event):
    type: Literal["session_started"] = "session_started"
    session_id: str
    agent: str
    acp_session_id: str | None = None
    pid: int | None = None


class SessionEnded(Event):
    type: Literal["session_ended"] = "session_ended"
    session_id: str
    reason: str


class AgentStderr(Event):
    type: Literal["agent_stderr"] = "agent_stderr"
    session_id: str
    line: str


class ToolCallSeen(Event):
    """An agent-internal tool call started or changed (from ACP `tool_call` / `tool_call_update`)."""

    type: Literal["tool_call"] = "tool_call"
    session_id: str
    tool_call_id: str
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    raw_input: Any = None
    content: str | None = None


class ClientToolCall(Event):
    """A call of one of the client's own tools (the `vscode_tools` MCP server) and its result."""

    type: Literal["client_tool_call"] = "client_tool_call"
    session_id: str
    tool_call_id: str
    tool_name: str
    arguments: Any = None
    status: Literal["requested", "completed", "failed"] = "requested"
    result: str | None = None


class ApprovalRequested(Event):
    type: Literal["approval_requested"] = "approval_requested"
    approval_id: str
    session_id: str
    agent: str
    tool_call: dict[str, Any]
    options: list[dict[str, Any]]
    agent_version: str | None = None  # the agent's own word for its version, when it gave one
    ask_reason: str | None = None  # why the rules left it to a person, when they say why


class ApprovalResolved(Event):
    type: Literal["approval_resolved"] = "approval_resolved"
    approval_id: str
    session_id: str
    agent: str
    outcome: str  # the option kind chosen, or "cancelled"
    option_id: str | None = None
    resolver: str  # "policy", "console", "vscode", "default", "timeout"
    rule: str | None = None
    reason: str | None = None
    by: str | None = None  # the console that answered, when one did


class RunStarted(Event):
    """The first line a process writes to an event log: one file may hold several runs (each
    `--event-log` opening appends), and connection names and session ids start again in each, so
    `replay` starts afresh at each marker."""

    type: Literal["run_started"] = "run_started"
    pid: int = 0


AnyEvent = (
    RunStarted
    | RequestReceived
    | HistoryDecided
    | PartStreamed
    | RequestFinished
    | SessionStarted
    | SessionEnded
    | AgentStderr
    | ToolCallSeen
    | ClientToolCall
    | ApprovalRequested
    | ApprovalResolved
)

EVENT_TYPES: dict[str, type[Event]] = {
    cls.model_fields["type"].default: cls for cls in AnyEvent.__args__
}


def parse_event(data: dict[str, Any]) -> Event | None:
    cls = EVENT_TYPES.get(data.get("type", ""))
    return cls.model_validate(data) if cls else None


Subscriber = Callable[[Event], None]


class EventBus:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    @property
    def active(self) -> bool:
        """Someone listens. Publishers need not ask (`publish` does); this is for work beyond
        building the event that is only worth doing for a listener (parsing a line to observe it)."""
        return bool(self._subscribers)

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        self._subscribers.append(fn)

        def unsubscribe() -> None:
            if fn in self._subscribers:
                self._subscribers.remove(fn)

        return unsubscribe

    def publish(self, event: Event | Callable[[], Event]) -> None:
        """Give the event to every subscriber; with none, do nothing. `event` may be a function
        that builds it: it is called only when someone listens."""
        subscribers = self._subscribers
        if not subscribers:
            return
        if not isinstance(event, Event):
            event = event()
        for fn in tuple(subscribers):
            try:
                fn(event)
            except Exception:  # a broken subscriber must never break the bridge
                log.exception("event subscriber failed on %s", event.type)


class JsonlEventLog:
    """`--event-log FILE`: every event as one JSON line, flushed as written."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        from bridge.paths import open_private

        self._file: IO[str] = open_private(path)  # 0600 in a private dir: whole conversations
        self(RunStarted(pid=os.getpid()))  # where this run's events begin, for `replay`

    def __call__(self, event: Event) -> None:
        record = redact(event.model_dump(mode="json"))  # env values, *KEY*/*TOKEN*/… never logged
        self._file.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()
