"""The request side of a session: one front-door request being answered (`ResponseStream`), the
request itself (`ChatRequest`), and how a request fails (`RequestCancelled`, `SessionFailed`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bridge.protocol import Message, ToolDefinition
from bridge.render import AGENT_ACTION_TOOL

if TYPE_CHECKING:
    from bridge.sessions.session import AgentSession


class RequestCancelled(Exception):
    pass


class SessionFailed(Exception):
    pass


class ResponseStream:
    """One front-door request being answered: parts go out through `write_part`; `finished`
    resolves when the request is complete, or raises RequestCancelled / SessionFailed."""

    def __init__(self, request_id: Any, write_part: Callable[[dict[str, Any]], None]) -> None:
        self.request_id = request_id
        self._write_part = write_part
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.session: AgentSession | None = None
        self.parts = 0
        # Called with each tool call the agent starts itself (its own tools) while this request runs.
        self.on_agent_tool_call: Callable[[Any], None] | None = None
        # Token usage the agent reported for the turn that answered this request, when it did:
        # `input_tokens` / `output_tokens` (the prompt response's usage), `context_tokens` (the
        # last `usage_update`).
        self.usage: dict[str, int] | None = None
        # Called as the request completes (not when it fails or is cancelled): a front door
        # answers there, and its answer goes out with the last parts in one write.
        self.on_complete: Callable[[], None] | None = None
        # Writes the parts emitted so far at once, when the front door holds its writes until the
        # loop's next turn (the session calls it once it has read all the agent sent so far).
        self.flush: Callable[[], None] | None = None
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def done(self) -> bool:
        return self.finished.done()

    async def wait(self) -> None:
        """Until the request is finished (raising as `finished` does). Cancelling the waiting
        task leaves `finished` as it is, as `asyncio.shield(finished)` would, without the extra
        turn of the loop a shield costs: the waiter is woken by the very call that finishes."""
        if not self.finished.done():
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self.finished.result()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def emit(self, part: dict[str, Any]) -> None:
        if not self.finished.done():
            self.parts += 1
            self._write_part(part)

    def complete(self) -> None:
        if not self.finished.done():
            self.finished.set_result(None)
            self._wake()
            if self.on_complete is not None:
                self.on_complete()

    def cancel(self, reason: str = "Request cancelled") -> None:
        if not self.finished.done():
            self.finished.set_exception(RequestCancelled(reason))
            self.finished.exception()  # mark retrieved: nobody may be waiting yet
            self._wake()

    def fail(self, message: str) -> None:
        if not self.finished.done():
            self.finished.set_exception(SessionFailed(message))
            self.finished.exception()
            self._wake()


@dataclass(frozen=True, slots=True)
class OfferedTools:
    """What a request's tool list comes to for a session: the client's own tools (the list less
    the agent-action tool) and whether the agent-action tool is offered. Worked out once per list
    (`of`): a door that hands over the very list of an earlier request — the vscodelm door does
    when a request repeats the tool list byte for byte, VS Code's ~100 KB of schemas — gets the
    very `client_tools` list back, which a session recognises without looking inside it.
    Nothing writes to a request's tool list once it is validated."""

    source: list[ToolDefinition]
    client_tools: list[ToolDefinition]
    has_agent_action: bool

    @classmethod
    def of(cls, tools: list[ToolDefinition], last: OfferedTools | None = None) -> OfferedTools:
        if last is not None and last.source is tools:
            return last
        client = [t for t in tools if t.name != AGENT_ACTION_TOOL]
        return cls(tools, client, len(client) != len(tools))


@dataclass
class ChatRequest:
    request_id: Any
    agent: Any  # an AgentSpec
    agent_key: str
    agent_label: str
    messages: list[Message]
    tools: list[ToolDefinition]
    # The agent's own MCP servers (ACP McpServer dicts: stdio, http or sse), given at session/new.
    mcp_servers: list[dict[str, Any]] = field(default_factory=list)
    # Appended to this request's prompt only; not part of the history (e.g. "a tool call is required").
    prompt_suffix: str = ""
    # False: at most one client-tool call per response; the agent's other calls wait, each for a
    # later request (OpenAI's `parallel_tool_calls: false`).
    parallel_tool_calls: bool = True
    # (earlier, k): `messages[:k]` are the very objects `earlier[:k]`, the messages of an earlier
    # request of this connection (the vscodelm door's prefix cache reused them); the history
    # tracker then takes their normalization over without comparing them one by one.
    reuses: tuple[list[Message], int] | None = None
    # `tools` worked out (`OfferedTools.of`); made on first use when the door did not give it.
    offered: OfferedTools | None = None

    def _offered(self) -> OfferedTools:
        offered = self.offered
        if offered is None or offered.source is not self.tools:
            offered = self.offered = OfferedTools.of(self.tools)
        return offered

    @property
    def has_agent_action(self) -> bool:
        return self._offered().has_agent_action

    @property
    def client_tools(self) -> list[ToolDefinition]:
        return self._offered().client_tools
