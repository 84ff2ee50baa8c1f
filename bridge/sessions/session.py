"""`AgentSession`: one agent session answering a conversation's requests — the orchestration that
applies the session's decisions (`bridge.sessions.state`) to the agent (`bridge.sessions.agent`)
and the requests' streams (`bridge.sessions.stream`)."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

from bridge import events as ev
from bridge.history import Decision, DecisionKind
from bridge.protocol import ToolDefinition
from bridge.render import REPLAY_META
from bridge.sessions.agent import AcpClient, AgentLink
from bridge.sessions.roundtrips import ClientRoundTrips
from bridge.sessions.state import (
    PromptLedger,
    RequestOutcome,
    RoundTrip,
    SessionState,
)
from bridge.sessions.stream import ChatRequest, ResponseStream, SessionFailed
from bridge.sessions.turn import Turn, TurnOutput
from bridge.tasks import OwnerClosed, TaskSupervisor

if TYPE_CHECKING:
    from bridge.approvals import ApprovalBroker
    from bridge.config import BridgeConfig
    from bridge.history import HistoryTracker
    from bridge.sessions.ahead import PromptedAhead
    from bridge.tools import ClientToolServer

log = logging.getLogger(__package__)  # the package's one logger: `bridge.sessions`

__all__ = ["AgentSession", "SessionHost"]


class SessionHost(Protocol):
    """Everything an agent session needs from the connection it serves (`ConnectionCore` is one):
    the session is given this, never the connection itself or the process-wide bridge."""

    @property
    def name(self) -> str:
        """The connection's name: in logs, events and approvals."""
        ...

    @property
    def config(self) -> BridgeConfig: ...

    @property
    def bus(self) -> ev.EventBus: ...

    @property
    def approvals(self) -> ApprovalBroker: ...

    @property
    def tracker(self) -> HistoryTracker:
        """The connection's history: what was streamed, and when a reply is complete."""
        ...

    async def ensure_tool_server(self) -> ClientToolServer:
        """The `vscode_tools` MCP server (started the first time a session needs it)."""
        ...

    def session_active(self) -> None:
        """A request reached a session (the idle reaper runs while there are sessions)."""
        ...

    async def make_room_for_agent(self, starting: AgentSession) -> None:
        """Before `starting` starts its agent: stop an idle one if the limit is reached (raises
        SessionFailed when every running agent is busy)."""
        ...

    def request_finished(
        self, stream: ResponseStream, outcome: RequestOutcome, error: str | None = None
    ) -> None: ...

    async def session_died(self, session: AgentSession, reason: str) -> None:
        """The session cannot go on: forget it and close it."""
        ...


def _prompt_blocks(prompt: str, notices: list[str], context: str | None) -> list[Any]:
    """A turn's `session/prompt` content, as ACP text blocks: the replayed conversation (marked
    as such), what the rules denied since the last prompt, then the prompt itself."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": prompt}]
    if notices:
        blocks.insert(0, {"type": "text", "text": "\n".join(notices)})
    if context:
        blocks.insert(0, {"type": "text", "text": context, "_meta": REPLAY_META})
    return blocks


def _with_reported_usage(usage: dict[str, int] | None, response: Any) -> dict[str, int] | None:
    """A turn's usage with the token counts its prompt response reported, when it did."""
    reported = getattr(response, "usage", None)
    if reported is None:
        return usage
    return (usage or {}) | {
        "input_tokens": reported.input_tokens,
        "output_tokens": reported.output_tokens,
    }


def _log_failure(stream: ResponseStream, task: asyncio.Future[Any]) -> None:
    """A submission that went on after its request was answered (cancelled, or its session
    closed) has ended: a failure of its own is logged. Ending with the request's outcome — the
    very exception its stream was finished with, which the submission waits on last — is not one:
    the client already has that answer."""
    if task.cancelled():
        return
    exc = task.exception()
    if exc is None:
        return
    outcome = stream.finished
    if outcome.done() and not outcome.cancelled() and outcome.exception() is exc:
        return
    log.error("a request's submission failed after the request was answered", exc_info=exc)


class AgentSession:
    """One conversation's agent session: answers the requests routed to it, one turn at a time,
    starting its agent when a request first needs it."""

    def __init__(self, host: SessionHost, session_id: str, request: ChatRequest) -> None:
        self.host = host
        self.id = session_id
        self.spec = request.agent
        self.agent_label = request.agent_label
        self.state: SessionState = "new"
        self.agent = AgentLink(host, session_id, request.agent, request.agent_label)
        self.turn: Turn | None = None
        # Its submissions, turns, cancel notifications and client round trips: they end with it.
        self._tasks = TaskSupervisor(f"session {host.name}/{session_id}")
        self._turn_ids = 0
        self._lock = asyncio.Lock()
        self.tools: list[ToolDefinition] = request.client_tools
        self.tool_names = {t.name for t in self.tools}
        self.prompts = PromptLedger()
        self._stream: ResponseStream | None = None
        self._tools_changed = False  # the client's tool list changed since the last prompt
        self._restart_for_tools = False
        self.last_active = time.monotonic()
        self.output = TurnOutput(host, session_id)
        # permissions and client-tool calls: the round trips through the client
        self.client = ClientRoundTrips(self, self.output, self._tasks)
        self.deny_notices: list[str] = []  # denials with a reason, told at the next prompt
        # A turn a front door prompted as its request was read, before the request was routed
        # here (`bridge.vscodelm.fastlane`): its text chunks go to it until the session adopts it.
        self.fast: PromptedAhead | None = None

    # what other parts of the bridge read of the agent
    @property
    def conn(self) -> Any:
        return self.agent.conn

    @property
    def process(self) -> Any:
        return self.agent.process

    @property
    def acp_session_id(self) -> str | None:
        return self.agent.acp_session_id

    @property
    def waiting(self) -> list[RoundTrip]:
        """The round trips the turn waits on through the client."""
        return self.client.trips.waiting

    @property
    def is_idle(self) -> bool:
        """No request is being answered (a turn may still wait on the client)."""
        return (self._stream is None or self._stream.done) and self.fast is None

    def settle_fast(self) -> None:
        """A turn a front door prompted ahead becomes this session's own now (it is adopted):
        before anything but its text is taken from the agent."""
        fast = self.fast
        if fast is not None:
            fast.catch_up()

    def answering(self, request_id: Any) -> ResponseStream | None:
        """The stream of the request with this id, while this session is answering it."""
        stream = self._stream
        if stream is not None and stream.request_id == request_id and not stream.done:
            return stream
        return None

    # --- requests --------------------------------------------------------------------------------

    async def answer(
        self, decision: Decision, request: ChatRequest, stream: ResponseStream
    ) -> None:
        """Answer one request routed to this session; returns when `stream` is finished (raising
        RequestCancelled or SessionFailed when it did not complete).

        A cancel answers at once, even while the agent is still starting: the submission carries
        on as this session's task (the agent comes up for the next request) but is not waited for.
        """
        # The stream is this session's at once, before anything is awaited: a cancel read right
        # behind its request (`ConnectionCore.cancel`) finds it even before `submit` has started.
        stream.session = self
        previous = self._stream
        self._stream = stream
        if previous is not None and not previous.done:
            self.cancel_stream(previous, "Request cancelled: superseded by a newer request")
        self._take_request(request)
        if self._can_prompt_now(stream):
            # Nothing to wait for (the agent is up and idle): the turn starts in this step, and no
            # task is started to submit it.
            self._prompt_now(decision, request, stream)
            await stream.wait()
            return
        try:
            submitting = self._tasks.start(
                self.submit(decision, request, stream),
                name=f"submit {stream.request_id!r}",
                log_failure=False,
            )
        except OwnerClosed:
            stream.fail("agent session is closed")
            await stream.finished
            return
        try:
            await asyncio.wait({submitting, stream.finished}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            submitting.cancel()
            raise
        if not submitting.done():
            submitting.add_done_callback(functools.partial(_log_failure, stream))
        elif submitting.cancelled():  # the session closed before it took the request
            stream.fail("agent session is closed")
        else:
            submitting.result()
        await stream.finished

    async def submit(
        self, decision: Decision, request: ChatRequest, stream: ResponseStream
    ) -> None:
        """Answer one request routed to this session (`answer` made `stream` the session's);
        returns when `stream` is finished."""
        if self.waiting:
            # A request cancelled before this took a step delivers nothing: the waiting turn is
            # given up, as when the cancel comes after its results were delivered.
            if (
                not stream.done
                and decision.kind in (DecisionKind.COMMIT, DecisionKind.CONTINUE)
                and self.client.resolve(decision, request, stream)
            ):
                await asyncio.shield(stream.finished)
                return
            self.client.abandon()

        async with self._lock:
            prompted = await self._prompt_for(decision, request, stream)
        if prompted:
            await asyncio.shield(stream.finished)

    async def _prompt_for(
        self, decision: Decision, request: ChatRequest, stream: ResponseStream
    ) -> bool:
        """Start the turn that answers `stream` (the agent started first, if it is not running):
        False when the request ended before its prompt went out."""
        # A request cancelled before its turn came (read right behind its cancel, or
        # superseded while waiting here) still has its prompt worked out below: the agent
        # never got it, and the next request's prompt carries it (`PromptLedger.not_delivered`).
        if not stream.done:
            await self._end_running_turn()
        if self._restart_for_tools and not stream.done:
            self._restart_for_tools = False
            await self._stop_agent("the client offered tools")
            self.prompts.needs_replay = True
        context, prompt = self.prompts.plan(decision, request.messages, request.prompt_suffix)
        if stream.done:
            self.prompts.not_delivered(prompt, context)
            return False
        try:
            await self._ensure_started(request)
        except SessionFailed as exc:
            stream.fail(str(exc))
            await self.host.session_died(self, str(exc))
            return False
        if stream.done:
            self.prompts.not_delivered(prompt, context)
            return False
        if self._tools_changed and self.agent.has_tool_server:
            # The agent meets the new tool list in the prompt that brought it: the prompt waits
            # until the agent has listed the tools again.
            self._tools_changed = False
            await self.agent.wait_relisted()
            if stream.done:
                self.prompts.not_delivered(prompt, context)
                return False
        self._start_turn(prompt, stream, request, context=context)
        return True

    def _take_request(self, request: ChatRequest) -> None:
        self.last_active = time.monotonic()
        self.host.session_active()
        self._update_tools(request)

    def _can_prompt_now(self, stream: ResponseStream) -> bool:
        """`submit` would reach the prompt without waiting for anything: no turn to end or wait
        for, no agent to start or restart, no tool list for it to take in first."""
        return not stream.done and self._can_prompt_now_idle()

    def _can_prompt_now_idle(self) -> bool:
        turn = self.turn
        return (
            self.state == "ready"
            and not self.waiting
            and not self._lock.locked()
            and (turn is None or turn.done.is_set())
            and not self._restart_for_tools
            and not (self._tools_changed and self.agent.has_tool_server)
        )

    def _prompt_now(self, decision: Decision, request: ChatRequest, stream: ResponseStream) -> None:
        context, prompt = self.prompts.plan(decision, request.messages, request.prompt_suffix)
        self._start_turn(prompt, stream, request, context=context)

    def _update_tools(self, request: ChatRequest) -> None:
        tools = request.client_tools
        if tools is self.tools and (not tools or self.agent.has_tool_server):
            # The very list the last request offered (`OfferedTools`): the agent has it already
            # (or it is empty: nothing to offer, nothing to restart for).
            return
        self.tools = tools
        self.tool_names = {t.name for t in tools}
        if self.agent.has_tool_server:
            if self.agent.set_tools(tools):
                self._tools_changed = True
        elif tools and self.state == "ready":
            # The agent was started without the client-tool server (its first request had no
            # tools) and ACP cannot add one to a live session: start it again, with the server,
            # replaying the conversation, before the next prompt.
            self._restart_for_tools = True

    def cancel_stream(self, stream: ResponseStream, reason: str = "Request cancelled") -> None:
        """`lm/cancel`, a superseded request or a vanished client: answer it, stop the agent's turn."""
        stream.cancel(reason)
        self.host.request_finished(stream, "cancelled", reason)
        turn = self.turn
        if turn is not None and turn.stream is stream and not turn.cancelled:
            self.cancel_turn(turn)

    def complete(self, stream: ResponseStream) -> None:
        self.last_active = time.monotonic()
        if stream.done:
            return
        self.host.tracker.complete(self.id)
        stream.complete()
        self.host.request_finished(stream, "complete")

    # --- turns -------------------------------------------------------------------------------------

    def _start_turn(
        self, prompt: str, stream: ResponseStream, request: ChatRequest, context: str | None
    ) -> Turn:
        turn = self._new_turn(stream, request)
        # The prompt is written in this step: the turn's task only waits for its answer.
        sent = self._send_prompt(turn, prompt, context)
        self._tasks.start(self._run_turn(turn, sent), name=f"turn {turn.id}")
        return turn

    def _new_turn(self, stream: ResponseStream, request: ChatRequest) -> Turn:
        self.prompts.needs_replay = False
        self._turn_ids += 1
        turn = Turn(id=self._turn_ids, stream=stream, has_agent_action=request.has_agent_action)
        self.turn = turn
        self.client.trips.start_turn(one_call=not request.parallel_tool_calls)
        return turn

    async def _run_turn(self, turn: Turn, sent: asyncio.Future[Any]) -> None:
        error: str | None = None
        while True:
            error = await self._prompt(turn, sent)
            if error or turn.cancelled or not turn.followups:
                break
            # The request that approved a tool also carried the user's words: prompt them now.
            sent = self._send_prompt(turn, "\n".join(turn.followups), None)
            turn.followups.clear()
            turn.tracker.clear()
        turn.done.set()
        self.client.drop()
        if turn.handoff is not None:
            turn.handoff.cancel()
        if turn.cancelled:
            return
        stream = turn.stream
        if error is not None:
            if stream is not None:
                stream.fail(error)
                self.host.request_finished(stream, "error", error)
            await self.host.session_died(self, error)
            return
        if stream is not None:
            self.output.flush(turn, stream)
            stream.usage = turn.usage
            self.complete(stream)

    def _send_prompt(self, turn: Turn, prompt: str, context: str | None) -> asyncio.Future[Any]:
        """Write one ACP `session/prompt` of the turn now; `_prompt` waits for its answer."""
        notices, self.deny_notices = self.deny_notices, []
        log.debug(
            "%s/%s: turn %d prompts %d characters", self.host.name, self.id, turn.id, len(prompt)
        )
        self.prompts.prompted = True
        return self.agent.send_prompt(_prompt_blocks(prompt, notices, context))

    async def _prompt(self, turn: Turn, sent: asyncio.Future[Any]) -> str | None:
        """Until the agent answers a prompt of the turn: the error that ended the session, if
        one did."""
        try:
            response = await self.agent.call(sent)
        except SessionFailed as exc:
            return str(exc)
        except Exception as exc:  # the SDK's RequestError, ConnectionError, ...
            return await self.agent.describe_failure(exc)
        turn.usage = _with_reported_usage(turn.usage, response)
        log.debug(
            "%s/%s: turn %d ended: %s",
            self.host.name,
            self.id,
            turn.id,
            getattr(response, "stop_reason", None),
        )
        return None

    def cancel_turn(self, turn: Turn) -> None:
        turn.cancelled = True
        turn.stream = None
        if turn.handoff is not None:
            turn.handoff.cancel()
        self.client.drop()  # ACP: a cancelled turn's pending permissions answer `cancelled`
        for approval_id in turn.approvals:
            self.host.approvals.withdraw(approval_id, "the turn was cancelled")
        if self.agent.conn is not None and self.agent.acp_session_id is not None:
            if not turn.done.is_set():
                self._tasks.start(self.agent.send_cancel(), name=f"cancel turn {turn.id}")

    async def _end_running_turn(self) -> None:
        """Cancel the running turn, if any, and wait until the agent has answered its prompt."""
        turn = self.turn
        if turn is None or turn.done.is_set():
            return
        if not turn.cancelled:
            self.cancel_turn(turn)
        try:
            await asyncio.wait_for(turn.done.wait(), self.host.config.drain_timeout)
        except TimeoutError:
            log.warning(
                "session %s: the agent did not end a cancelled turn; restarting it", self.id
            )
            await self._stop_agent("did not end a cancelled turn")
            self.prompts.needs_replay = True

    # --- what the agent sends ------------------------------------------------------------------

    def on_update(self, update: Any) -> None:
        fast = self.fast
        if fast is not None:
            if type(update) is dict:  # a text chunk, taken as it was read: the fast turn's
                fast.on_text(update)
                return
            fast.catch_up()  # anything else is the session's to handle, the turn adopted first
        self.output.take(self.turn, update)

    # --- agent lifecycle ---------------------------------------------------------------------------

    async def _ensure_started(self, request: ChatRequest) -> None:
        if self.state == "ready":
            return
        if self.state == "dead":
            raise SessionFailed("agent session is closed")
        self.state = "starting"
        try:
            await self.host.make_room_for_agent(self)
            await self.agent.start(
                request,
                AcpClient(self),
                self.on_update,
                lambda: self.output.write_now(self.turn),
                self.client.call_tool,
                self.tools,
            )
        except SessionFailed:
            self.state = "dead"
            await self._stop_agent("failed to start")
            raise
        except Exception as exc:
            self.state = "dead"
            message = await self.agent.describe_start_failure(exc)
            await self._stop_agent("failed to start")
            raise SessionFailed(message) from exc
        self.state = "ready"

    async def _stop_agent(self, reason: str) -> None:
        self.prompts.agent_stopped()
        if self.state != "dead":
            self.state = "new"
        await self.agent.stop()

    async def close(self, reason: str = "closed") -> None:
        turn = self.turn
        if self._stream is not None and not self._stream.done:
            self._stream.fail(f"agent session closed: {reason}")
            self.host.request_finished(self._stream, "error", reason)
        if turn is not None and not turn.done.is_set():
            turn.cancelled = True
            turn.done.set()
        self.client.drop()
        self.state = "dead"
        await self._stop_agent(reason)
        # Whatever still runs for it ends now (a submission still starting the agent, a turn, a
        # round trip); an agent such a submission had started meanwhile is stopped too.
        await self._tasks.close()
        if self.agent.is_up:
            await self._stop_agent(reason)
