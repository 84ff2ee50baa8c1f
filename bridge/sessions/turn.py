"""A turn — one ACP `session/prompt` — and what it streams (`TurnOutput`): each part goes to the
request the turn is answering, or waits in the turn's backlog while no request is (the turn
waits on the client), and reaches the connection's history and event bus as it goes out."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bridge import events as ev
from bridge.acp_updates import ToolCallTracker, read_update, record_tool
from bridge.protocol import TextPart, ToolCallPart
from bridge.sessions.stream import ResponseStream

if TYPE_CHECKING:
    from bridge.sessions.session import SessionHost


@dataclass
class Turn:
    """One ACP `session/prompt`: output is attributed to the turn that is current when it
    arrives; a cancelled turn's is dropped."""

    id: int
    stream: ResponseStream | None
    tracker: ToolCallTracker = field(default_factory=ToolCallTracker)
    cancelled: bool = False
    backlog: list[dict[str, Any]] = field(default_factory=list)
    followups: list[str] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    has_agent_action: bool = False
    handoff: asyncio.TimerHandle | None = None
    approvals: list[str] = field(default_factory=list)  # ids of approvals pending with the broker
    handoff_started: float | None = None
    usage: dict[str, int] | None = None  # what the agent reported (ACP usage_update, prompt usage)

    @property
    def running(self) -> bool:
        return not self.cancelled and not self.done.is_set()


class TurnOutput:
    """Where one session's turns stream their parts."""

    def __init__(self, host: SessionHost, session_id: str) -> None:
        self.host = host
        self.session_id = session_id

    def take(self, turn: Turn | None, update: Any) -> None:
        """One update of the agent's (an SDK model or its JSON object), for the running turn."""
        if turn is None or not turn.running:
            return  # a cancelled or finished turn's tail: dropped (R1/R2)
        reading = read_update(update, turn.tracker)
        if reading is None:
            return
        if reading.kind == "agent_message_chunk":
            if reading.text:
                self.emit(turn, {"type": "text", "value": reading.text})
        elif reading.kind == "usage_update":
            if reading.context_tokens is not None:
                turn.usage = (turn.usage or {}) | {"context_tokens": reading.context_tokens}
        elif reading.tool is not None:
            host = self.host
            record_tool(
                reading,
                connection=host.name,
                session_id=self.session_id,
                bus=host.bus,
                approvals=host.approvals,
            )
            if reading.kind == "tool_call":
                if turn.stream is not None and turn.stream.on_agent_tool_call is not None:
                    turn.stream.on_agent_tool_call(update)
            self.emit(turn, {"type": "text", "value": reading.rendered})

    def emit(self, turn: Turn, part: dict[str, Any]) -> None:
        stream = turn.stream
        if stream is None or stream.done:
            turn.backlog.append(part)
            return
        self.send(stream, part)

    def send(self, stream: ResponseStream, part: dict[str, Any]) -> None:
        self._history(part)
        stream.emit(part)
        self._published(stream, part)

    def record(self, stream: ResponseStream, part: dict[str, Any]) -> None:
        """A part of `stream` the front door wrote ahead of the turn (`bridge.vscodelm.fastlane`):
        into the history and the console's events as `send` puts it, without writing it again."""
        self._history(part)
        stream.parts += 1
        self._published(stream, part)

    def _history(self, part: dict[str, Any]) -> None:
        kind = part["type"]
        model = (
            TextPart(value=part["value"]) if kind == "text" else ToolCallPart.model_validate(part)
        )
        self.host.tracker.record_part(self.session_id, model)

    def _published(self, stream: ResponseStream, part: dict[str, Any]) -> None:
        host = self.host
        host.bus.publish(
            lambda: ev.PartStreamed(
                connection=host.name,
                request_id=stream.request_id,
                session_id=self.session_id,
                part=part,
            )
        )

    def write_now(self, turn: Turn | None) -> None:
        """The parts `turn` streamed so far go to its client now, not at the loop's next turn."""
        stream = turn.stream if turn is not None else None
        if stream is not None and stream.flush is not None:
            stream.flush()

    def flush(self, turn: Turn, stream: ResponseStream) -> None:
        """The parts that waited in the backlog go to `stream`, the request now answered."""
        backlog, turn.backlog = turn.backlog, []
        for part in backlog:
            self.send(stream, part)
