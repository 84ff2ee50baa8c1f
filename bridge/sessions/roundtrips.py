"""What the agent asks of the client while a turn runs, and the round trips that carry it.

A permission for one of the agent's own tools goes to the approval broker (rules, the console, a
person), which may ask the client itself (the `symposium-agent-action` round trip); a call of one
of the client's tools, through the `vscode_tools` MCP server, always goes to the client. Either
way the request is completed with a `tool_call` part and the turn waits for the next request to
carry the result; which parts show when, and which answer each round trip gets, is decided by
`RoundTrips` (pure state), and applied here.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from bridge import events as ev
from bridge.history import Decision
from bridge.render import AGENT_ACTION_TOOL
from bridge.sessions.state import (
    ClientReply,
    RoundTrip,
    RoundTrips,
    announced_client_calls,
    hand_off_now,
)
from bridge.sessions.stream import ChatRequest, ResponseStream
from bridge.tool_results import tool_result_text

if TYPE_CHECKING:
    from bridge.sessions.session import AgentSession
    from bridge.sessions.turn import Turn, TurnOutput
    from bridge.tasks import TaskSupervisor

log = logging.getLogger(__package__)  # the package's one logger: `bridge.sessions`


class ClientRoundTrips:
    """One session's permissions and client-tool calls, and the turn's round trips through the
    client."""

    def __init__(self, session: AgentSession, output: TurnOutput, tasks: TaskSupervisor) -> None:
        self.session = session
        self.host = session.host
        self.output = output
        self._tasks = tasks
        self.trips = RoundTrips()
        self._answers: dict[RoundTrip, asyncio.Future[Any]] = {}
        self._call_ids: dict[str, int] = {}
        # MCP tool calls this session's tool server received and is handling, by the agent's own
        # id for them (from the call's `_meta`): the only way a permission request is recognised
        # as one for the client's own tools (never by its title, which the agent chooses).
        self.client_calls: dict[str, str] = {}

    async def on_permission(self, tool_call: Any, options: list[Any]) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        from bridge.approvals import ApprovalContext

        turn = self.session.turn
        if turn is None or not turn.running:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        ctx = ApprovalContext(
            connection=self.host.name,
            session_id=self.session.id,
            agent=self.session.agent_label,
            tool_call=tool_call.model_dump(mode="json", by_alias=True, exclude_none=True),
            options=[o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in options],
            client_tool=str(tool_call.tool_call_id) in self.client_calls,
            cwd=self.host.config.cwd,
            agent_version=self.session.agent.version,
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
            self.session.id,
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
        self.session.deny_notices.append(notice)
        self.output.emit(turn, {"type": "text", "value": f"\n\n> {notice}\n\n"})
        return {
            "symposium": {
                "denied": True,
                "reason": resolution.reason,
                "decidedBy": resolution.rule or resolution.resolver,
                "message": notice,
            }
        }

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

    async def call_tool(self, name: str, arguments: Any) -> Any:
        """The agent called one of the client's tools through the `vscode_tools` MCP server."""
        from bridge.tools import CALL_META, ToolResult, agent_call_id

        self.session.settle_fast()  # a turn the front door prompted ahead is the session's now
        turn = self.session.turn
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
                    session_id=self.session.id,
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
        self.output.emit(turn, rt.part)
        if turn.handoff is not None:
            turn.handoff.cancel()
        turn.handoff = asyncio.get_running_loop().call_later(
            self.host.config.tool_batch_window, self._hand_off, turn
        )

    def _answer(self, rt: RoundTrip, value: Any) -> None:
        answer = self._answers.get(rt)
        if answer is not None and not answer.done():
            answer.set_result(value)

    def drop(self) -> None:
        for rt in self.trips.drop():
            self._answer(rt, None)

    def _hand_off(self, turn: Turn) -> None:
        turn.handoff = None
        if not turn.running or not self.trips.waiting:
            return
        loop = asyncio.get_running_loop()
        if turn.handoff_started is None:
            turn.handoff_started = loop.time()
        announced = announced_client_calls(turn.tracker.calls.values(), self.session.tool_names)
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
            self.session.complete(stream)

    def resolve(self, decision: Decision, request: ChatRequest, stream: ResponseStream) -> bool:
        """Does this request carry the results the turn waits for? If so, deliver them."""
        reply = ClientReply.read(decision.new_messages)
        if not self.trips.carries(reply):
            return False
        turn = self.session.turn
        if turn is None or not turn.running:
            return False
        delivery = self.trips.deliver(reply, one_call=not request.parallel_tool_calls)
        for rt, value in delivery.answers:
            self._answer(rt, value)
        turn.followups.extend(reply.texts)
        turn.has_agent_action = request.has_agent_action
        turn.stream = stream
        self.output.flush(turn, stream)
        for rt in delivery.show:
            self._show(turn, rt)
        return True

    def abandon(self) -> None:
        """The client moved on without the results: the waiting turn is cancelled."""
        turn = self.session.turn
        if turn is not None and turn.running:
            self.session.cancel_turn(turn)
        self.drop()
