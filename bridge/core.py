"""The bridge core every front door shares: history, agent sessions, events, the tool server.

`Bridge` is process-wide; a `ConnectionCore` is one client connection's conversation space (one
VS Code window's stdio process, one console-socket connection, the OpenAI front door), with its own
history tracker and agent sessions. Front doors translate their wire format into `chat()` calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from bridge import events as ev
from bridge.config import BridgeConfig
from bridge.history import Decision, HistoryTracker, MatchPolicy
from bridge.protocol import (
    AgentSpec,
    Message,
    ToolDefinition,
    agent_key,
    agent_label,
    parse_agent,
)
from bridge.sessions import (
    AgentSession,
    ChatRequest,
    OfferedTools,
    RequestOutcome,
    ResponseStream,
)
from bridge.sessions.ahead import adopt
from bridge.tasks import TaskSupervisor

if TYPE_CHECKING:
    from bridge.sessions.ahead import PromptedAhead
    from bridge.tools import ClientToolServer

log = logging.getLogger(__name__)
_AGENTS = 8  # agents a connection remembers parsing (see ConnectionCore.make_request)


def settle_heap() -> None:
    """Import what the first agent session needs, then keep everything alive so far out of the
    garbage collector's full passes: a long-running host streams many small objects, and full
    collections over a heap of long-lived modules stall a streaming reply now and then."""
    import gc

    import acp  # noqa: F401

    import bridge.agents.eliza  # noqa: F401

    gc.freeze()


class Bridge:
    def __init__(
        self,
        config: BridgeConfig | None = None,
        *,
        bus: ev.EventBus | None = None,
        approvals: Any = None,
    ) -> None:
        self.config = config or BridgeConfig()
        self.bus = bus or ev.EventBus()
        if approvals is None:
            from bridge.approvals import ApprovalBroker

            approvals = ApprovalBroker(self.bus)
        self.approvals = approvals
        self.connections: dict[str, ConnectionCore] = {}
        self._ids = itertools.count(1)
        self.tool_server: ClientToolServer | None = None
        self._tool_server_lock = asyncio.Lock()
        self._tasks = TaskSupervisor("bridge")  # the idle reaper
        self._reaper: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()

    def all_sessions(self) -> list[AgentSession]:
        return [s for _, s in self._sessions()]

    def _sessions(self) -> list[tuple[ConnectionCore, AgentSession]]:
        """Every session with the connection it belongs to."""
        return [(c, s) for c in self.connections.values() for s in c.sessions.values()]

    def running_agents(self) -> list[AgentSession]:
        return [s for s in self.all_sessions() if s.state in ("starting", "ready")]

    async def make_room_for_agent(self, starting: AgentSession) -> None:
        """Keep at most `max_agents` agents running: stop the least recently used idle one."""
        max_agents = self.config.max_agents
        if max_agents is None:
            return
        running = [
            (c, s)
            for c, s in self._sessions()
            if s.state in ("starting", "ready") and s is not starting
        ]
        if len(running) < max_agents:
            return
        idle = sorted((cs for cs in running if cs[1].is_idle), key=lambda cs: cs[1].last_active)
        if not idle:
            from bridge.sessions import SessionFailed

            raise SessionFailed(
                f"too many agent sessions are busy (the limit is {max_agents}); try again when one finishes"
            )
        core, victim = idle[0]
        await core.session_died(
            victim, f"stopped to make room for a new agent (limit {max_agents})"
        )

    def session_activity(self) -> None:
        if self.config.idle_timeout is not None and self._reaper is None and not self._tasks.closed:
            self._reaper = self._tasks.start(self._reap_idle(), name="idle reaper")

    async def _reap_idle(self) -> None:
        """Stop the agents idle for `idle_timeout`, looking every `period`, until the bridge
        closes (a pass under way ends first: no session is left half closed)."""
        idle_timeout = self.config.idle_timeout
        assert idle_timeout is not None
        period = max(0.05, min(idle_timeout / 4, 30.0))
        import time

        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), period)
            if self._closing.is_set():
                return
            now = time.monotonic()
            for core, session in self._sessions():
                if session.is_idle and now - session.last_active >= idle_timeout:
                    log.info(
                        "session %s idle for %.0f s: stopping its agent",
                        session.id,
                        now - session.last_active,
                    )
                    await core.session_died(session, f"idle for {now - session.last_active:.0f} s")

    def connection_name(self, kind: str) -> str:
        """A name no other connection of this process has: `<kind>-<n>`."""
        return f"{kind}-{next(self._ids)}"

    def open_connection(
        self, kind: str = "vscodelm", policy: MatchPolicy = MatchPolicy.SUPERSEDE
    ) -> ConnectionCore:
        """A new conversation space; `policy` is how its requests are matched to sessions
        (SUPERSEDE for an editor's chat, EXTEND for the stateless OpenAI API)."""
        name = self.connection_name(kind)
        conn = ConnectionCore(self, name, policy)
        self.connections[name] = conn
        return conn

    async def ensure_tool_server(self) -> ClientToolServer:
        async with self._tool_server_lock:
            if self.tool_server is None:
                from bridge.tools import ClientToolServer

                server = ClientToolServer()
                await server.start()
                self.tool_server = server
            return self.tool_server

    async def close(self) -> None:
        self._closing.set()
        if self._reaper is not None:
            await asyncio.wait({self._reaper})
        await self._tasks.close()
        await asyncio.gather(
            *(c.close() for c in list(self.connections.values())), return_exceptions=True
        )
        if self.tool_server is not None:
            await self.tool_server.stop()
            self.tool_server = None


class ConnectionCore:
    """One client connection's conversations; the `SessionHost` of each of its agent sessions."""

    def __init__(
        self, bridge: Bridge, name: str, policy: MatchPolicy = MatchPolicy.SUPERSEDE
    ) -> None:
        self.bridge = bridge
        self.name = name
        self.policy = policy
        self.tracker = HistoryTracker(policy)
        self.sessions: dict[str, AgentSession] = {}
        # shared with every connection of the bridge, and given to its sessions
        self.config = bridge.config
        self.bus = bridge.bus
        self.approvals = bridge.approvals
        # The agents this connection's requests named, by their exact JSON: each request names
        # its agent again, and parsing and keying it costs about 0.1 ms.
        self._agents: OrderedDict[str, tuple[AgentSpec, str, str]] = OrderedDict()
        # The agent value the last request named and what it came to (`make_request`).
        self._last_agent: tuple[Any, tuple[AgentSpec, str, str]] | None = None
        # The last request's tool list worked out: the next one often carries the very list.
        self._offered: OfferedTools | None = None
        # A front door's turn prompted ahead of its routing (the vscodelm door's fast lane):
        # whatever looks at or changes the sessions has it adopted first (`settle`).
        self.ahead: PromptedAhead | None = None

    # what its sessions need of the process-wide bridge (SessionHost)
    async def ensure_tool_server(self) -> ClientToolServer:
        return await self.bridge.ensure_tool_server()

    def session_active(self) -> None:
        self.bridge.session_activity()

    async def make_room_for_agent(self, starting: AgentSession) -> None:
        await self.bridge.make_room_for_agent(starting)

    def make_request(
        self,
        request_id: Any,
        agent: Any,
        messages: list[Message],
        tools: list[ToolDefinition],
        reuses: tuple[list[Message], int] | None = None,
        unchanged: bool = False,
    ) -> ChatRequest:
        """Validate a front door's chat request (raises ValueError naming the bad field).

        `unchanged`: the caller vouches that the values it hands over are never written to once
        decoded (the vscodelm door: a repeated tail's values are the very objects of the request
        before): an `agent` that is the very object the last request named is that agent again,
        known without serializing it."""
        last = self._last_agent
        if unchanged and last is not None and last[0] is agent:
            known = last[1]  # (its text is the newest in `_agents` already)
        else:
            known = self._agent_of(agent)
        spec, key, label = known
        self._offered = offered = OfferedTools.of(tools, self._offered)
        return ChatRequest(
            request_id=request_id,
            agent=spec,
            agent_key=key,
            agent_label=label,
            messages=messages,
            tools=tools,
            reuses=reuses,
            offered=offered,
        )

    def _agent_of(self, agent: Any) -> tuple[AgentSpec, str, str]:
        """The agent a request names, parsed and keyed: once per distinct JSON text."""
        try:
            # The same text is the same JSON value, types included (`1`, `1.0` and `true` differ).
            text: str | None = json.dumps(agent)
        except (TypeError, ValueError):  # not a wire value (an AgentSpec handed over in-process)
            text = None
        known = self._agents.get(text) if text is not None else None
        if known is None:
            spec = parse_agent(agent)
            known = (spec, agent_key(spec), agent_label(spec))
            if text is not None:
                self._agents[text] = known
                if len(self._agents) > _AGENTS:
                    self._agents.popitem(last=False)
        elif text is not None:
            self._agents.move_to_end(text)
        # Only a wire value is known again by being the very same object (an AgentSpec may be
        # changed in place by whoever handed it over).
        self._last_agent = (agent, known) if text is not None else None
        return known

    def settle(self) -> None:
        """A turn prompted ahead of its routing is routed and adopted now."""
        ahead = self.ahead
        if ahead is not None:
            ahead.catch_up()

    async def chat(self, request: ChatRequest, stream: ResponseStream) -> None:
        """Route the request and let its session answer it; returns when `stream` is finished
        (raising RequestCancelled or SessionFailed when it did not complete)."""
        session, decision = self._route(request)
        await session.answer(decision, request, stream)

    def adopt(self, request: ChatRequest, stream: ResponseStream, ahead: PromptedAhead) -> bool:
        """Route a request whose turn was prompted ahead (`ahead`, which must not be `self.ahead`
        any more) and have its session adopt that turn: False when the routing or its prompt is
        not what was prompted (the caller then ends that session: its agent was told otherwise)."""
        session, decision = self._route(request)
        return adopt(session, decision, request, stream, ahead)

    def _route(self, request: ChatRequest) -> tuple[AgentSession, Decision]:
        decision = self.tracker.route(
            request.agent_key, request.messages, self._busy, request.reuses
        )
        if log.isEnabledFor(logging.DEBUG):  # (its arguments are not worked out otherwise)
            log.debug(
                "%s: request %r → %s %s: %s",
                self.name,
                request.request_id,
                decision.kind.value,
                decision.session_id,
                decision.reason,
            )
        self.bus.publish(
            lambda: ev.HistoryDecided(
                connection=self.name, request_id=request.request_id, decision=decision.to_json()
            )
        )
        session = self.sessions.get(decision.session_id)
        if session is None:
            session = AgentSession(self, decision.session_id, request)
            self.sessions[decision.session_id] = session
        return session, decision

    def _busy(self, session_id: str) -> bool:
        session = self.sessions.get(session_id)
        return session is not None and not session.is_idle

    def find_stream(self, request_id: Any) -> ResponseStream | None:
        self.settle()
        for session in self.sessions.values():
            stream = session.answering(request_id)
            if stream is not None:
                return stream
        return None

    def cancel(self, request_id: Any, reason: str = "Request cancelled") -> bool:
        stream = self.find_stream(request_id)
        if stream is None or stream.session is None:
            return False
        stream.session.cancel_stream(stream, reason)
        return True

    def request_finished(
        self, stream: ResponseStream, outcome: RequestOutcome, error: str | None = None
    ) -> None:
        self.bus.publish(
            lambda: ev.RequestFinished(
                connection=self.name,
                request_id=stream.request_id,
                session_id=stream.session.id if stream.session else None,
                outcome=outcome,
                error=error,
            )
        )

    async def session_died(self, session: AgentSession, reason: str) -> None:
        """A dead session is forgotten: its conversation's next request starts a fresh one."""
        self.settle()
        if self.sessions.get(session.id) is session:
            del self.sessions[session.id]
        self.tracker.remove(session.id)
        self._session_ended(session.id, reason)
        await session.close(reason)

    def _session_ended(self, session_id: str, reason: str) -> None:
        self.bus.publish(
            lambda: ev.SessionEnded(connection=self.name, session_id=session_id, reason=reason)
        )

    async def reset(self, reason: str) -> None:
        """Forget every session (their agents are stopped); the connection stays open."""
        self.settle()
        sessions = list(self.sessions.values())
        self.sessions.clear()
        self.tracker = HistoryTracker(self.policy)
        await asyncio.gather(*(s.close(reason) for s in sessions), return_exceptions=True)
        for s in sessions:
            self._session_ended(s.id, reason)

    async def close(self) -> None:
        self.settle()
        sessions = list(self.sessions.values())
        self.sessions.clear()
        await asyncio.gather(
            *(s.close("connection closed") for s in sessions), return_exceptions=True
        )
        for s in sessions:
            self._session_ended(s.id, "connection closed")
        self.bridge.connections.pop(self.name, None)
