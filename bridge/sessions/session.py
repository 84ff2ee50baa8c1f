"""`AgentSession`: one agent session answering a conversation's requests — the orchestration that
applies the session's decisions (`bridge.sessions.state`) to the agent (`bridge.sessions.agent`)
and the requests' streams (`bridge.sessions.stream`)."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from bridge import events as ev
from bridge.acp_updates import ToolCallTracker, read_update, record_tool
from bridge.history import Decision, DecisionKind
from bridge.protocol import TextPart, ToolCallPart, ToolDefinition
from bridge.render import AGENT_ACTION_TOOL, REPLAY_META
from bridge.sessions.agent import AcpClient, AgentLink
from bridge.sessions.state import (
    ClientReply,
    PromptLedger,
    RequestOutcome,
    RoundTrip,
    RoundTrips,
    SessionState,
    announced_client_calls,
    hand_off_now,
)
from bridge.sessions.stream import ChatRequest, ResponseStream, SessionFailed
from bridge.tasks import OwnerClosed, TaskSupervisor
from bridge.tool_results import tool_result_text

if TYPE_CHECKING:
    from bridge.approvals import ApprovalBroker
    from bridge.config import BridgeConfig
    from bridge.history import HistoryTracker
    from bridge.tools import ClientToolServer

log = logging.getLogger(__package__)  # the package's one logger: `bridge.sessions`

__all__ = ["AgentSession", "SessionHost", "Turn"]


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


@dataclass
class Turn:
    """One ACP `session/prompt` and what it streams: output is attributed to the turn that is
    current when it arrives; a cancelled turn's is dropped."""

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
        self.trips = RoundTrips()
        self._answers: dict[RoundTrip, asyncio.Future[Any]] = {}
        self._turn_ids = 0
        self._lock = asyncio.Lock()
        self.tools: list[ToolDefinition] = request.client_tools
        self.tool_names = {t.name for t in self.tools}
        self.prompts = PromptLedger()
        self._stream: ResponseStream | None = None
        self._tools_changed = False  # the client's tool list changed since the last prompt
        self._restart_for_tools = False
        self.last_active = time.monotonic()
        self._call_ids: dict[str, int] = {}
        # MCP tool calls this session's tool server received and is handling, by the agent's own
        # id for them (from the call's `_meta`): the only way a permission request is recognised
        # as one for the client's own tools (never by its title, which the agent chooses).
        self.client_calls: dict[str, str] = {}
        self.deny_notices: list[str] = []  # denials with a reason, told at the next prompt

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
        return self.trips.waiting

    @property
    def is_idle(self) -> bool:
        """No request is being answered (a turn may still wait on the client)."""
        return self._stream is None or self._stream.done

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
        self.last_active = time.monotonic()
        self.host.session_active()
        self._update_tools(request)

        if self.waiting:
            # A request cancelled before this took a step delivers nothing: the waiting turn is
            # given up, as when the cancel comes after its results were delivered.
            if (
                not stream.done
                and decision.kind in (DecisionKind.COMMIT, DecisionKind.CONTINUE)
                and self._resolve_waiting(decision, request, stream)
            ):
                await asyncio.shield(stream.finished)
                return
            self._abandon_waiting()

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
        self.prompts.needs_replay = False
        self._start_turn(prompt, stream, request, context=context)
        return True

    def _update_tools(self, request: ChatRequest) -> None:
        tools = request.client_tools
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
            self._cancel_turn(turn)

    def _finish(self, stream: ResponseStream) -> None:
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
        self._turn_ids += 1
        turn = Turn(id=self._turn_ids, stream=stream, has_agent_action=request.has_agent_action)
        self.turn = turn
        self.trips.start_turn(one_call=not request.parallel_tool_calls)
        self._tasks.start(self._run_turn(turn, prompt, context), name=f"turn {turn.id}")
        return turn

    async def _run_turn(self, turn: Turn, prompt: str, context: str | None = None) -> None:
        error: str | None = None
        while True:
            error = await self._prompt(turn, prompt, context)
            context = None
            if error or turn.cancelled or not turn.followups:
                break
            # The request that approved a tool also carried the user's words: prompt them now.
            prompt = "\n".join(turn.followups)
            turn.followups.clear()
            turn.tracker.clear()
        turn.done.set()
        self._drop_round_trips()
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
            self._flush_backlog(turn, stream)
            stream.usage = turn.usage
            self._finish(stream)

    async def _prompt(self, turn: Turn, prompt: str, context: str | None) -> str | None:
        """One ACP `session/prompt` of the turn, until the agent answers it: the error that
        ended the session, if one did."""
        from acp.schema import TextContentBlock

        blocks = [TextContentBlock(type="text", text=prompt)]
        if self.deny_notices:
            notices, self.deny_notices = self.deny_notices, []
            blocks.insert(0, TextContentBlock(type="text", text="\n".join(notices)))
        if context:
            blocks.insert(0, TextContentBlock(type="text", text=context, field_meta=REPLAY_META))
        log.debug(
            "%s/%s: turn %d prompts %d characters", self.host.name, self.id, turn.id, len(prompt)
        )
        self.prompts.prompted = True
        try:
            response = await self.agent.call(
                self.agent.conn.prompt(session_id=self.agent.acp_session_id, prompt=blocks)
            )
        except SessionFailed as exc:
            return str(exc)
        except Exception as exc:  # the SDK's RequestError, ConnectionError, ...
            return await self.agent.describe_failure(exc)
        reported = getattr(response, "usage", None)
        if reported is not None:
            turn.usage = (turn.usage or {}) | {
                "input_tokens": reported.input_tokens,
                "output_tokens": reported.output_tokens,
            }
        log.debug(
            "%s/%s: turn %d ended: %s",
            self.host.name,
            self.id,
            turn.id,
            getattr(response, "stop_reason", None),
        )
        return None

    def _cancel_turn(self, turn: Turn) -> None:
        turn.cancelled = True
        turn.stream = None
        if turn.handoff is not None:
            turn.handoff.cancel()
        self._drop_round_trips()  # ACP: a cancelled turn's pending permissions answer `cancelled`
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
            self._cancel_turn(turn)
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
        turn = self.turn
        if turn is None or not turn.running:
            return  # a cancelled or finished turn's tail: dropped (R1/R2)
        reading = read_update(update, turn.tracker)
        if reading is None:
            return
        if reading.kind == "agent_message_chunk":
            if reading.text:
                self._emit(turn, {"type": "text", "value": reading.text})
        elif reading.kind == "usage_update":
            if reading.context_tokens is not None:
                turn.usage = (turn.usage or {}) | {"context_tokens": reading.context_tokens}
        elif reading.tool is not None:
            record_tool(
                reading,
                connection=self.host.name,
                session_id=self.id,
                bus=self.host.bus,
                approvals=self.host.approvals,
            )
            if reading.kind == "tool_call":
                if turn.stream is not None and turn.stream.on_agent_tool_call is not None:
                    turn.stream.on_agent_tool_call(update)
            self._emit(turn, {"type": "text", "value": reading.rendered})

    def _take_chunk(self, message: dict[str, Any]) -> bool:
        """A `session/update` of this session streaming text (`agent_message_chunk` of a text
        block), read as the JSON object it came in: no task, model or tracing span of the SDK's
        per chunk. It is read from a loop callback, where the SDK would have started the task that
        calls `AcpClient.session_update`, so it keeps its place among the agent's messages (the
        prompt's response is read after it). Anything else goes to the SDK."""
        params = message.get("params")
        if message.get("method") != "session/update" or "id" in message:
            return False
        acp_session_id = self.agent.acp_session_id
        if acp_session_id is None or not isinstance(params, dict):
            return False
        if params.get("sessionId") != acp_session_id:
            return False
        update = params.get("update")
        if not isinstance(update, dict) or update.get("sessionUpdate") != "agent_message_chunk":
            return False
        content = update.get("content")
        if (
            not isinstance(content, dict)
            or content.get("type") != "text"
            or not isinstance(content.get("text"), str)
        ):
            return False
        asyncio.get_running_loop().call_soon(self.on_update, update)
        return True

    def _emit(self, turn: Turn, part: dict[str, Any]) -> None:
        stream = turn.stream
        if stream is None or stream.done:
            turn.backlog.append(part)
            return
        self._send(stream, part)

    def _send(self, stream: ResponseStream, part: dict[str, Any]) -> None:
        kind = part["type"]
        model = (
            TextPart(value=part["value"]) if kind == "text" else ToolCallPart.model_validate(part)
        )
        self.host.tracker.record_part(self.id, model)
        stream.emit(part)
        self.host.bus.publish(
            lambda: ev.PartStreamed(
                connection=self.host.name,
                request_id=stream.request_id,
                session_id=self.id,
                part=part,
            )
        )

    def _flush_backlog(self, turn: Turn, stream: ResponseStream) -> None:
        backlog, turn.backlog = turn.backlog, []
        for part in backlog:
            self._send(stream, part)

    async def on_permission(self, tool_call: Any, options: list[Any]) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        from bridge.approvals import ApprovalContext

        turn = self.turn
        if turn is None or not turn.running:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        ctx = ApprovalContext(
            connection=self.host.name,
            session_id=self.id,
            agent=self.agent_label,
            tool_call=tool_call.model_dump(mode="json", by_alias=True, exclude_none=True),
            options=[o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in options],
            client_tool=str(tool_call.tool_call_id) in self.client_calls,
            cwd=self.host.config.cwd,
        )
        ask_client = None
        if turn.has_agent_action:
            ask_client = lambda: self._ask_client(turn, tool_call)  # noqa: E731
        resolution = await self.host.approvals.request(
            ctx, ask_client=ask_client, on_pending=turn.approvals.append, tasks=self._tasks
        )
        log.info(
            "%s/%s: permission for %r → %s (%s%s)",
            self.host.name,
            self.id,
            ctx.title,
            resolution.outcome,
            resolution.resolver,
            f", {resolution.rule}" if resolution.rule else "",
        )
        meta = self._deny_notice(turn, ctx, resolution)
        if resolution.option_id is None:
            return RequestPermissionResponse(
                outcome=DeniedOutcome(outcome="cancelled"), field_meta=meta
            )
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=resolution.option_id),
            field_meta=meta,
        )

    def _deny_notice(self, turn: Turn, ctx: Any, resolution: Any) -> dict[str, Any] | None:
        """A denial with a reason reaches the agent three ways: the response's `_meta`, user text
        at the start of this session's next prompt (agents ignore unknown `_meta`), and a line in
        the client's streamed reply."""
        from bridge.approvals import denial_notice

        # a rule's reason, or the one a person typed (not the bridge's own fail-closed wording)
        notice = denial_notice(ctx, resolution)
        if notice is None:
            return None
        self.deny_notices.append(notice)
        self._emit(turn, {"type": "text", "value": f"\n\n> {notice}\n\n"})
        return {
            "symposium": {
                "denied": True,
                "reason": resolution.reason,
                "decidedBy": resolution.rule or resolution.resolver,
                "message": notice,
            }
        }

    # --- round trips through the client ------------------------------------------------------------

    async def _ask_client(self, turn: Turn, tool_call: Any) -> tuple[bool, str] | bool | None:
        """The `symposium-agent-action` round trip (docs/protocol.md): the request ends with a
        tool call the client confirms; its result in the next request approves."""
        if not turn.running:
            return None
        call_id = self._unique_call_id(str(tool_call.tool_call_id))
        parameters = {
            k: v
            for k, v in (
                ("kind", getattr(tool_call.kind, "value", tool_call.kind)),
                ("title", tool_call.title),
                ("raw_input", tool_call.raw_input),
            )
            if v is not None  # no nulls against the tool's declared schema
        }
        part = {
            "type": "tool_call",
            "toolCallId": call_id,
            "toolName": AGENT_ACTION_TOOL,
            "parameters": parameters,
        }
        answer: tuple[bool, str] | bool | None = await self._await_client(
            turn, RoundTrip("permission", call_id, part)
        )
        return answer

    def _unique_call_id(self, agent_id: str) -> str:
        """The agent's id for the call, unless this session used it already (fast-agent says
        "pending" every time): the client matches results by this id."""
        n = self._call_ids.get(agent_id, 0)
        self._call_ids[agent_id] = n + 1
        return agent_id if n == 0 else f"{agent_id}-{n + 1}"

    async def call_client_tool(self, name: str, arguments: Any) -> Any:
        """The agent called one of the client's tools through the `vscode_tools` MCP server."""
        from bridge.tools import CALL_META, ToolResult, agent_call_id

        turn = self.turn
        if turn is None or not turn.running:
            return ToolResult(text="tool call arrived outside a running turn", is_error=True)
        call_id = f"call_{uuid.uuid4().hex}"
        agent_id = agent_call_id(CALL_META.get({}))
        if agent_id is not None:
            self.client_calls[agent_id] = call_id
        try:
            return await self._call_client_tool(turn, call_id, name, arguments)
        finally:
            if agent_id is not None and self.client_calls.get(agent_id) == call_id:
                del self.client_calls[agent_id]

    async def _call_client_tool(self, turn: Turn, call_id: str, name: str, arguments: Any) -> Any:
        from bridge.tools import ToolResult

        def publish(**outcome: Any) -> None:  # the call, then (with `outcome`) how it ended
            self.host.bus.publish(
                lambda: ev.ClientToolCall(
                    connection=self.host.name,
                    session_id=self.id,
                    tool_call_id=call_id,
                    tool_name=name,
                    arguments=arguments,
                    **outcome,
                )
            )

        publish()
        part = {
            "type": "tool_call",
            "toolCallId": call_id,
            "toolName": name,
            "parameters": arguments if arguments is not None else {},
        }
        result = await self._await_client(turn, RoundTrip("tool", call_id, part, tool_name=name))
        if result is None:
            outcome = ToolResult(
                text="tool call cancelled: the client did not return a result", is_error=True
            )
        else:
            outcome = ToolResult(text=tool_result_text(result))
        publish(status="failed" if outcome.is_error else "completed", result=outcome.text)
        return outcome

    async def _await_client(self, turn: Turn, rt: RoundTrip) -> Any:
        """Hand the request back to the client with `rt`'s part (or, one call per response, in
        a later one) and wait for the answer the next request brings."""
        answer = asyncio.get_running_loop().create_future()
        self._answers[rt] = answer
        if self.trips.ask(rt):
            self._show(turn, rt)
        try:
            return await answer
        except asyncio.CancelledError:
            # A client-tool call given up no longer waits; a permission the console decided
            # first still does: the client was shown it, and its result continues the turn.
            if rt.kind == "tool":
                self.trips.forget(rt)
            raise
        finally:
            self._answers.pop(rt, None)

    def _show(self, turn: Turn, rt: RoundTrip) -> None:
        """Put `rt`'s part in the response; the response is handed back to the client after a
        short settle window, so that tool calls the agent makes at the same moment land in it."""
        self._emit(turn, rt.part)
        if turn.handoff is not None:
            turn.handoff.cancel()
        turn.handoff = asyncio.get_running_loop().call_later(
            self.host.config.tool_batch_window, self._hand_off, turn
        )

    def _answer(self, rt: RoundTrip, value: Any) -> None:
        answer = self._answers.get(rt)
        if answer is not None and not answer.done():
            answer.set_result(value)

    def _drop_round_trips(self) -> None:
        for rt in self.trips.drop():
            self._answer(rt, None)

    def _hand_off(self, turn: Turn) -> None:
        turn.handoff = None
        if not turn.running or not self.waiting:
            return
        loop = asyncio.get_running_loop()
        if turn.handoff_started is None:
            turn.handoff_started = loop.time()
        announced = announced_client_calls(turn.tracker.calls.values(), self.tool_names)
        if not hand_off_now(
            announced,
            self.trips.arrived(),
            loop.time() - turn.handoff_started,
            self.host.config.tool_batch_limit,
        ):
            turn.handoff = loop.call_later(self.host.config.tool_batch_window, self._hand_off, turn)
            return
        turn.handoff_started = None
        stream = turn.stream
        turn.stream = None
        if stream is not None:
            self._finish(stream)

    def _resolve_waiting(
        self, decision: Decision, request: ChatRequest, stream: ResponseStream
    ) -> bool:
        """Does this request carry the results the turn waits for? If so, deliver them."""
        reply = ClientReply.read(decision.new_messages)
        if not self.trips.carries(reply):
            return False
        turn = self.turn
        if turn is None or not turn.running:
            return False
        delivery = self.trips.deliver(reply, one_call=not request.parallel_tool_calls)
        for rt, value in delivery.answers:
            self._answer(rt, value)
        turn.followups.extend(reply.texts)
        turn.has_agent_action = request.has_agent_action
        turn.stream = stream
        self._flush_backlog(turn, stream)
        for rt in delivery.show:
            self._show(turn, rt)
        return True

    def _abandon_waiting(self) -> None:
        """The client moved on without the results: the waiting turn is cancelled."""
        turn = self.turn
        if turn is not None and turn.running:
            self._cancel_turn(turn)
        self._drop_round_trips()

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
                request, AcpClient(self), self._take_chunk, self.call_client_tool, self.tools
            )
        except SessionFailed:
            self.state = "dead"
            await self._stop_agent("failed to start")
            raise
        except Exception as exc:
            from bridge.redact import redact_free_text

            self.state = "dead"
            message = await self.agent.describe_failure(exc)
            process = self.agent.process
            if process is None or not process.exited.is_set():
                message = f"agent failed to start: {type(exc).__name__}: {exc}"
            message = redact_free_text(message, self.agent.secrets)
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
        self._drop_round_trips()
        self.state = "dead"
        await self._stop_agent(reason)
        # Whatever still runs for it ends now (a submission still starting the agent, a turn, a
        # round trip); an agent such a submission had started meanwhile is stopped too.
        await self._tasks.close()
        if self.agent.is_up:
            await self._stop_agent(reason)
