"""One ACP agent session per conversation: turns, streaming, cancellation and client round trips.

A *turn* is one ACP `session/prompt`. Everything the agent streams is attributed to the turn that
is current when it arrives; a cancelled turn's output is dropped, and a cancelled turn is drained
(its `session/prompt` answered) before the next prompt is sent — so nothing from an older turn
reaches a newer request (upstream's races R1 and R2, docs/upstream.md).

A turn may outlive the request that started it: when the agent needs the client — a permission
for one of its own tools (the `symposium-agent-action` round trip) or a call of one of the
client's tools — the request is completed with `tool_call` parts and the turn waits, blocked, for
the next request to carry the results.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from bridge import events as ev
from bridge.acp_lines import LineTransport
from bridge.acp_updates import ToolCallTracker, read_update, record_tool
from bridge.history import Decision, DecisionKind
from bridge.protocol import (
    Message,
    TextPart,
    ToolCallPart,
    ToolDefinition,
    ToolResultPart,
)
from bridge.render import AGENT_ACTION_TOOL, REPLAY_META, replay_parts, turn_prompt
from bridge.tasks import OwnerClosed, TaskSupervisor
from bridge.tool_results import (
    CLIENT_TOOL_SERVER,
    agent_action_approved,
    describe_received,
    tool_result_text,
)

if TYPE_CHECKING:
    from bridge.approvals import ApprovalBroker
    from bridge.config import BridgeConfig
    from bridge.history import HistoryTracker
    from bridge.tools import ClientToolServer

log = logging.getLogger(__name__)


class RequestCancelled(Exception):
    pass


class SessionFailed(Exception):
    pass


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
        self, stream: ResponseStream, outcome: str, error: str | None = None
    ) -> None: ...

    async def session_died(self, session: AgentSession, reason: str) -> None:
        """The session cannot go on: forget it and close it."""
        ...


# --- the request side ---------------------------------------------------------------------------


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

    @property
    def done(self) -> bool:
        return self.finished.done()

    def emit(self, part: dict[str, Any]) -> None:
        if not self.finished.done():
            self.parts += 1
            self._write_part(part)

    def complete(self) -> None:
        if not self.finished.done():
            self.finished.set_result(None)

    def cancel(self, reason: str = "Request cancelled") -> None:
        if not self.finished.done():
            self.finished.set_exception(RequestCancelled(reason))
            self.finished.exception()  # mark retrieved: nobody may be waiting yet

    def fail(self, message: str) -> None:
        if not self.finished.done():
            self.finished.set_exception(SessionFailed(message))
            self.finished.exception()


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

    @property
    def has_agent_action(self) -> bool:
        return any(t.name == AGENT_ACTION_TOOL for t in self.tools)

    @property
    def client_tools(self) -> list[ToolDefinition]:
        return [t for t in self.tools if t.name != AGENT_ACTION_TOOL]


# --- round trips through the client ------------------------------------------------------------


@dataclass
class RoundTrip:
    """The agent waits on the client: a permission (agent action) or a client tool call."""

    kind: str  # "permission" | "tool"
    call_id: str
    future: asyncio.Future[Any]
    tool_name: str = AGENT_ACTION_TOOL

    def resolve(self, value: Any) -> None:
        if not self.future.done():
            self.future.set_result(value)


@dataclass
class Turn:
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
    one_call: bool = False  # at most one client-tool call per response
    shown: int = 0  # client-tool calls shown in the current response
    deferred: list[tuple[RoundTrip, dict[str, Any]]] = field(default_factory=list)
    usage: dict[str, int] | None = None  # what the agent reported (ACP usage_update, prompt usage)


# --- the agent side -----------------------------------------------------------------------------


class _AcpClient:
    """The ACP client object the SDK calls for everything the agent sends."""

    def __init__(self, session: AgentSession) -> None:
        self._session = session
        self.foreign = 0  # messages for a session this connection did not open: dropped

    def on_connect(self, conn: Any) -> None:
        return None

    def _ours(self, session_id: str, what: str) -> bool:
        if session_id == self._session.acp_session_id:
            return True
        self.foreign += 1
        if self.foreign == 1 or self.foreign % 1000 == 0:
            log.warning(
                "%s/%s: dropped %d %s for unknown ACP session %r (ours: %r)",
                self._session.host.name,
                self._session.id,
                self.foreign,
                what,
                session_id,
                self._session.acp_session_id,
            )
        return False

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        # No await before the update is recorded: the SDK runs each message in its own task.
        if self._ours(session_id, "session/update"):
            self._session.on_update(update)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        if not self._ours(session_id, "session/request_permission"):
            from acp.schema import DeniedOutcome, RequestPermissionResponse

            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return await self._session.on_permission(tool_call, options)

    async def read_text_file(self, **kwargs: Any) -> Any:
        from acp import RequestError

        raise RequestError.method_not_found("fs/read_text_file")

    async def write_text_file(self, **kwargs: Any) -> Any:
        from acp import RequestError

        raise RequestError.method_not_found("fs/write_text_file")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from acp import RequestError

        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


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


def _names_client_tool(title: str | None, tool_names: set[str]) -> bool:
    """Does an agent's title for a tool call name one of the client's tools?

    Agents title these differently (Claude: `mcp__vscode_tools__read_file`; fast-agent
    `vscode_tools/read_file`; Gemini `read_file (vscode_tools MCP Server)`).
    """
    title = (title or "").strip()
    for sep in ("__", "/", ".", "-", ":"):
        for prefix in (f"mcp__{CLIENT_TOOL_SERVER}{sep}", f"{CLIENT_TOOL_SERVER}{sep}"):
            if title.startswith(prefix) and title[len(prefix) :] in tool_names:
                return True
    suffix = f" ({CLIENT_TOOL_SERVER} MCP Server)"
    return title.endswith(suffix) and title[: -len(suffix)] in tool_names


def _client_tool_meta(request: ChatRequest) -> dict[str, Any]:
    """`session/new` `_meta` telling agents that understand it that the client's own tools need
    no permission request: the client runs (or confirms) them itself, and the bridge recognises
    them by the MCP call its tool server receives, never by a permission's title. Claude Code's
    ACP adapter takes SDK options under `claudeCode.options` (`allowedTools`, where a bare
    `mcp__<server>` allows that server's tools); agents that do not know the key ignore it, and
    their permission requests go through the rules and a person like any other."""
    if not request.client_tools:
        return {}
    return {"claudeCode": {"options": {"allowedTools": [f"mcp__{CLIENT_TOOL_SERVER}"]}}}


def _own_mcp_server(server: dict[str, Any], init: Any) -> Any:
    """One of the agent's own MCP servers as the ACP model (http/sse only if the agent takes them)."""
    from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer

    kind = server.get("type", "stdio")
    caps = getattr(getattr(init, "agent_capabilities", None), "mcp_capabilities", None)
    if kind in ("http", "sse") and not getattr(caps, kind, False):
        raise SessionFailed(
            f"the agent does not accept {kind.upper()} MCP servers (server {server.get('name')!r})"
        )
    if kind in ("http", "sse"):
        return (HttpMcpServer if kind == "http" else SseMcpServer).model_validate(server)
    return McpServerStdio.model_validate({k: v for k, v in server.items() if k != "type"})


class AgentSession:
    def __init__(self, host: SessionHost, session_id: str, request: ChatRequest) -> None:
        self.host = host
        self.id = session_id
        self.spec = request.agent
        self.agent_label = request.agent_label
        self.state = "new"  # new → starting → ready → dead
        self.conn: Any = None
        self.acp_session_id: str | None = None
        self.process: Any = None
        self._closer: Callable[[], Awaitable[None]] | None = None
        self.turn: Turn | None = None
        # Its submissions, turns, cancel notifications and client round trips: they end with it.
        self._tasks = TaskSupervisor(f"session {host.name}/{session_id}")
        self.waiting: list[RoundTrip] = []
        self._turn_ids = 0
        self._lock = asyncio.Lock()
        self.tools: list[ToolDefinition] = request.client_tools
        self.tool_names = {t.name for t in self.tools}
        self.needs_replay = False
        self._stream: ResponseStream | None = None
        # the `vscode_tools` server this session's endpoint is registered with, under this key
        self._tool_server: ClientToolServer | None = None
        self._tool_server_key: str | None = None
        self._tools_changed = False  # the client's tool list changed since the last prompt
        self._restart_for_tools = False
        self.last_active = time.monotonic()
        self._call_ids: dict[str, int] = {}
        # MCP tool calls this session's tool server received and is handling, by the agent's own
        # id for them (from the call's `_meta`): the only way a permission request is recognised
        # as one for the client's own tools (never by its title, which the agent chooses).
        self.client_calls: dict[str, str] = {}
        self._secrets: list[str] = []  # the agent's env values: never in a message we send or show
        self._prompted = False  # the agent has been sent a prompt (it knows the conversation)
        self.deny_notices: list[str] = []  # denials with a reason, told at the next prompt
        self._undelivered: str | None = None  # a cancelled request's prompt it never got

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
            # A request cancelled before its turn came (read right behind its cancel, or
            # superseded while waiting here) still has its prompt worked out below: the agent
            # never got it, and the next request's prompt carries it (`_not_delivered`).
            if not stream.done:
                await self._end_running_turn()
            if self._restart_for_tools and not stream.done:
                self._restart_for_tools = False
                await self._stop_agent("the client offered tools")
                self.needs_replay = True
            new = decision.new_messages
            context: str | None = None
            if decision.kind is DecisionKind.NEW_SESSION or self.needs_replay:
                context, prompt = replay_parts(request.messages if self.needs_replay else new)
            else:
                prompt = turn_prompt(new[decision.prompt_start :], request.messages)
            undelivered, self._undelivered = self._undelivered, None
            if undelivered is not None and context is None and not self.needs_replay:
                # The previous request was cancelled before its prompt reached the agent: what
                # the agent never received is prompted now (only what it received counts as sent).
                if decision.kind is DecisionKind.CANCEL:
                    prompt = turn_prompt(new, request.messages)
                else:
                    prompt = f"{undelivered}\n\n{prompt}"
            if request.prompt_suffix:
                prompt = f"{prompt}\n\n{request.prompt_suffix}"
            if stream.done:
                self._not_delivered(prompt, context)
                return
            try:
                await self._ensure_started(request)
            except SessionFailed as exc:
                stream.fail(str(exc))
                await self.host.session_died(self, str(exc))
                return
            if stream.done:
                self._not_delivered(prompt, context)
                return
            if (
                self._tools_changed
                and self._tool_server is not None
                and self._tool_server_key is not None
            ):
                # D17: the agent should meet the new tool list in the prompt that brought it.
                self._tools_changed = False
                await self._tool_server.wait_relisted(self._tool_server_key)
                if stream.done:
                    self._not_delivered(prompt, context)
                    return
            self.needs_replay = False
            turn = self._start_turn(prompt, stream, request.has_agent_action, context=context)
            turn.one_call = not request.parallel_tool_calls
        await asyncio.shield(stream.finished)

    def _not_delivered(self, prompt: str, context: str | None) -> None:
        """A request was cancelled before its prompt was sent: remember it for the next one. A
        session that never prompted its agent replays the whole conversation instead."""
        if context is not None or self.needs_replay or not self._prompted:
            self.needs_replay = True
            return
        self._undelivered = (
            prompt if self._undelivered is None else f"{self._undelivered}\n\n{prompt}"
        )

    def _update_tools(self, request: ChatRequest) -> None:
        tools = request.client_tools
        self.tools = tools
        self.tool_names = {t.name for t in tools}
        if self._tool_server is not None and self._tool_server_key is not None:
            if self._tool_server.set_tools(self._tool_server_key, tools):
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
        self,
        prompt: str,
        stream: ResponseStream,
        has_agent_action: bool,
        context: str | None = None,
    ) -> Turn:
        self._turn_ids += 1
        turn = Turn(id=self._turn_ids, stream=stream, has_agent_action=has_agent_action)
        self.turn = turn
        self._tasks.start(self._run_turn(turn, prompt, context), name=f"turn {turn.id}")
        return turn

    async def _run_turn(self, turn: Turn, prompt: str, context: str | None = None) -> None:
        from acp.schema import TextContentBlock

        error: str | None = None
        while True:
            blocks = [TextContentBlock(type="text", text=prompt)]
            if self.deny_notices:
                notices, self.deny_notices = self.deny_notices, []
                blocks.insert(0, TextContentBlock(type="text", text="\n".join(notices)))
            if context:
                blocks.insert(
                    0, TextContentBlock(type="text", text=context, field_meta=REPLAY_META)
                )
                context = None
            log.debug(
                "%s/%s: turn %d prompts %d characters",
                self.host.name,
                self.id,
                turn.id,
                len(prompt),
            )
            self._prompted = True
            try:
                response = await self._until_agent_exits(
                    self.conn.prompt(session_id=self.acp_session_id, prompt=blocks)
                )
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
            except SessionFailed as exc:
                error = str(exc)
            except Exception as exc:  # the SDK's RequestError, ConnectionError, ...
                error = await self._describe_failure(exc)
            if error or turn.cancelled or not turn.followups:
                break
            # The request that approved a tool also carried the user's words: prompt them now.
            prompt = "\n".join(turn.followups)
            turn.followups.clear()
            turn.tracker.clear()
        turn.done.set()
        for rt in list(self.waiting):
            if rt.kind == "tool" or rt.kind == "permission":
                rt.resolve(None)
        self.waiting.clear()
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

    def _cancel_turn(self, turn: Turn) -> None:
        turn.cancelled = True
        turn.stream = None
        if turn.handoff is not None:
            turn.handoff.cancel()
        for rt in self.waiting:
            rt.resolve(
                None
            )  # ACP: pending permission requests of a cancelled turn answer `cancelled`
        self.waiting.clear()
        for approval_id in turn.approvals:
            self.host.approvals.withdraw(approval_id, "the turn was cancelled")
        if self.conn is not None and self.acp_session_id is not None and not turn.done.is_set():
            self._tasks.start(self._send_cancel(), name=f"cancel turn {turn.id}")

    async def _send_cancel(self) -> None:
        with contextlib.suppress(Exception):
            await self.conn.cancel(session_id=self.acp_session_id)

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
            self.needs_replay = True

    async def _until_agent_exits(self, awaitable: Awaitable[Any]) -> Any:
        """Await an ACP call, but fail as soon as the agent process is gone: the call runs as a
        task of its own, which the agent's exit cancels (this waits for it either way, so it
        never outlives the call). Watching the exit costs a callback, not a second task."""
        task = asyncio.ensure_future(awaitable)
        process = self.process
        if process is None:
            return await task
        gone = False

        def agent_gone() -> None:
            nonlocal gone
            if not task.done():  # an answer (or error) that came first stands
                gone = True
                task.cancel()

        forget = process.on_exit(agent_gone)
        if process.exited.is_set():
            agent_gone()
        try:
            return await task
        except BaseException as exc:
            current = asyncio.current_task()
            if not gone or (current is not None and current.cancelling()):
                raise  # not the exit's doing, or this call itself is being cancelled
            if not isinstance(exc, asyncio.CancelledError):  # failed as it was cancelled
                log.debug("%s: an abandoned ACP call failed", self.id, exc_info=exc)
            raise SessionFailed(process.describe_exit()) from None
        finally:
            forget()

    async def _describe_failure(self, exc: BaseException) -> str:
        process = self.process
        if process is not None and isinstance(exc, (ConnectionError, OSError, EOFError)):
            # The connection noticed first; the process's exit (and stderr) follows within moments.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.exited.wait(), 1.0)
        from bridge.redact import redact_free_text

        if process is not None and process.exited.is_set():
            return redact_free_text(process.describe_exit(), self._secrets)  # its stderr's tail
        return redact_free_text(f"agent session failed: {type(exc).__name__}: {exc}", self._secrets)

    # --- what the agent sends ------------------------------------------------------------------

    def on_update(self, update: Any) -> None:
        turn = self.turn
        if turn is None or turn.cancelled or turn.done.is_set():
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
        calls `_AcpClient.session_update`, so it keeps its place among the agent's messages (the
        prompt's response is read after it). Anything else goes to the SDK."""
        params = message.get("params")
        if message.get("method") != "session/update" or "id" in message:
            return False
        if self.acp_session_id is None or not isinstance(params, dict):
            return False
        if params.get("sessionId") != self.acp_session_id:
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
        if turn is None or turn.cancelled or turn.done.is_set():
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

    async def _ask_client(self, turn: Turn, tool_call: Any) -> tuple[bool, str] | bool | None:
        """The `symposium-agent-action` round trip (docs/protocol.md): the request ends with a
        tool call the client confirms; its result in the next request approves."""
        if turn.cancelled or turn.done.is_set():
            return None
        call_id = self._unique_call_id(str(tool_call.tool_call_id))
        parameters = {
            k: v
            for k, v in (
                ("kind", getattr(tool_call.kind, "value", tool_call.kind)),
                ("title", tool_call.title),
                ("raw_input", tool_call.raw_input),
            )
            if v is not None  # B15: no nulls against the tool's declared schema
        }
        rt = RoundTrip("permission", call_id, asyncio.get_running_loop().create_future())
        self._await_client(
            turn,
            rt,
            {
                "type": "tool_call",
                "toolCallId": call_id,
                "toolName": AGENT_ACTION_TOOL,
                "parameters": parameters,
            },
        )
        answer: tuple[bool, str] | bool | None = await rt.future
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
        if turn is None or turn.cancelled or turn.done.is_set():
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

        rt = RoundTrip("tool", call_id, asyncio.get_running_loop().create_future(), tool_name=name)

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
        self._await_client(
            turn,
            rt,
            {
                "type": "tool_call",
                "toolCallId": call_id,
                "toolName": name,
                "parameters": arguments if arguments is not None else {},
            },
        )
        try:
            result = await rt.future
        except asyncio.CancelledError:
            if rt in self.waiting:
                self.waiting.remove(rt)
            raise
        if result is None:
            outcome = ToolResult(
                text="tool call cancelled: the client did not return a result", is_error=True
            )
        else:
            outcome = ToolResult(text=tool_result_text(result))
        publish(status="failed" if outcome.is_error else "completed", result=outcome.text)
        return outcome

    def _await_client(self, turn: Turn, rt: RoundTrip, part: dict[str, Any]) -> None:
        """Hand the request back to the client with `part`; the turn waits for the next request.

        Tool calls the agent makes at the same moment land in the same response: completion waits
        a short settle window for them (decision 8).
        """
        self.waiting.append(rt)
        if turn.one_call and turn.shown >= 1:
            turn.deferred.append((rt, part))  # shown by a later request (parallel_tool_calls off)
            return
        turn.shown += 1
        self._emit(turn, part)
        if turn.handoff is not None:
            turn.handoff.cancel()
        turn.handoff = asyncio.get_running_loop().call_later(
            self.host.config.tool_batch_window, self._hand_off, turn
        )

    def _hand_off(self, turn: Turn) -> None:
        turn.handoff = None
        if turn.cancelled or turn.done.is_set() or not self.waiting:
            return
        # The agent announced more client-tool calls (ACP `tool_call` updates) than have reached
        # the tool server so far: they are on their way — wait for them, within a bound, so they
        # all land in this response (decision 8).
        announced = sum(
            1
            for state in turn.tracker.calls.values()
            if state.status not in ("completed", "failed")
            and _names_client_tool(state.title, self.tool_names)
        )
        arrived = sum(1 for rt in self.waiting if rt.kind == "tool")
        loop = asyncio.get_running_loop()
        if turn.handoff_started is None:
            turn.handoff_started = loop.time()
        if (
            arrived < announced
            and loop.time() - turn.handoff_started < self.host.config.tool_batch_limit
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
        results: dict[str, Any] = {}
        extra_text: list[str] = []
        for message in decision.new_messages:
            for part in message.content:
                if isinstance(part, ToolResultPart):
                    results.setdefault(part.toolCallId, part.result)
            if message.role == "user":
                text = "".join(p.value for p in message.content if isinstance(p, TextPart))
                if text:
                    extra_text.append(text)
        if not any(rt.call_id in results for rt in self.waiting):
            return False
        turn = self.turn
        if turn is None or turn.done.is_set() or turn.cancelled:
            return False
        waiting, self.waiting = self.waiting, []
        unseen = {id(rt) for rt, _ in turn.deferred}
        for rt in waiting:
            if id(rt) in unseen and rt.call_id not in results:
                self.waiting.append(rt)  # not shown to the client yet: still waits its turn
            elif rt.call_id in results:
                if rt.kind == "permission":
                    # Only the extension's own approval text approves; Skip, an error, empty or
                    # other content is a denial, audited with what was received.
                    received = results[rt.call_id]
                    rt.resolve(
                        (
                            agent_action_approved(received),
                            f"received {describe_received(received)}",
                        )
                    )
                else:
                    rt.resolve(results[rt.call_id])
            else:
                rt.resolve(
                    (False, "the next request carried no result for it")
                    if rt.kind == "permission"
                    else None
                )
        turn.followups.extend(extra_text)
        turn.has_agent_action = request.has_agent_action
        turn.one_call = not request.parallel_tool_calls
        turn.stream = stream
        turn.shown = 0
        self._flush_backlog(turn, stream)
        turn.deferred = [
            (rt, part) for rt, part in turn.deferred if any(rt is w for w in self.waiting)
        ]
        while turn.deferred and (not turn.one_call or turn.shown == 0):
            rt, deferred_part = turn.deferred.pop(0)
            self.waiting = [w for w in self.waiting if w is not rt]
            self._await_client(turn, rt, deferred_part)
        return True

    def _abandon_waiting(self) -> None:
        """The client moved on without the results: the waiting turn is cancelled (D10)."""
        turn = self.turn
        if turn is not None and not turn.done.is_set() and not turn.cancelled:
            self._cancel_turn(turn)
        for rt in self.waiting:
            rt.resolve(None)
        self.waiting.clear()

    # --- agent lifecycle ---------------------------------------------------------------------------

    async def _ensure_started(self, request: ChatRequest) -> None:
        if self.state == "ready":
            return
        if self.state == "dead":
            raise SessionFailed("agent session is closed")
        self.state = "starting"
        try:
            await self.host.make_room_for_agent(self)
            await self._start_agent(request)
        except SessionFailed:
            self.state = "dead"
            await self._stop_agent("failed to start")
            raise
        except Exception as exc:
            from bridge.redact import redact_free_text

            self.state = "dead"
            message = await self._describe_failure(exc)
            if self.process is None or not self.process.exited.is_set():
                message = f"agent failed to start: {type(exc).__name__}: {exc}"
            message = redact_free_text(message, self._secrets)
            await self._stop_agent("failed to start")
            raise SessionFailed(message) from exc
        self.state = "ready"

    async def _start_agent(self, request: ChatRequest) -> None:
        import acp
        from acp.schema import ClientCapabilities, Implementation

        from bridge.agents.launch import LaunchError, launch

        def on_stderr(line: str) -> None:
            self.host.bus.publish(
                lambda: ev.AgentStderr(connection=self.host.name, session_id=self.id, line=line)
            )

        try:
            agent = await launch(self.spec, cwd=self.host.config.cwd, on_stderr=on_stderr)
        except LaunchError as exc:
            raise SessionFailed(str(exc)) from exc
        self._secrets = agent.secrets  # launch() redacts them from stderr already
        self.process = agent.process
        self._closer = None if agent.process is not None else agent.close
        # The SDK looks the client's methods up by name; ours leaves out the optional ones. Its
        # connection runs on our line transport, which hands a streamed text chunk straight to
        # this session (`_take_chunk`).
        client = _AcpClient(self)
        transport = LineTransport(agent.reader, agent.writer, keep_lines=False)
        transport.take = self._take_chunk
        self.conn = acp.connect_to_agent(client, transport)  # type: ignore[arg-type]
        init = await asyncio.wait_for(
            self._until_agent_exits(
                self.conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(),
                    client_info=Implementation(name="symposium-tui", version="0.1.0"),
                )
            ),
            self.host.config.start_timeout,
        )
        mcp_servers = []
        if request.client_tools:
            mcp_servers.append(await self._client_tool_server(init))
        mcp_servers.extend(_own_mcp_server(s, init) for s in request.mcp_servers)
        new = await asyncio.wait_for(
            self._until_agent_exits(
                self.conn.new_session(
                    cwd=self.host.config.cwd, mcp_servers=mcp_servers, **_client_tool_meta(request)
                )
            ),
            self.host.config.start_timeout,
        )
        self.acp_session_id = new.session_id
        log.info(
            "%s/%s: agent %s started (ACP session %s%s)",
            self.host.name,
            self.id,
            self.agent_label,
            self.acp_session_id,
            f", pid {self.process.pid}" if self.process else "",
        )
        self.host.bus.publish(
            lambda: ev.SessionStarted(
                connection=self.host.name,
                session_id=self.id,
                agent=self.agent_label,
                acp_session_id=self.acp_session_id,
                pid=self.process.pid if self.process else None,
            )
        )

    async def _client_tool_server(self, init: Any) -> Any:
        from acp.schema import HttpMcpServer, McpServerStdio

        server = await self.host.ensure_tool_server()
        key = f"{self.host.name}/{self.id}"
        server.register(key, self.call_client_tool, self.tools)
        self._tool_server, self._tool_server_key = server, key
        caps = getattr(getattr(init, "agent_capabilities", None), "mcp_capabilities", None)
        if caps is not None and getattr(caps, "http", False):
            return HttpMcpServer.model_validate(server.http_server(key))
        return McpServerStdio.model_validate(server.stdio_server(key))

    async def _stop_agent(self, reason: str) -> None:
        conn, closer, process = self.conn, self._closer, self.process
        self.conn = self._closer = self.process = None
        self._prompted = False
        self.acp_session_id = None
        if self.state != "dead":
            self.state = "new"
        if self._tool_server is not None and self._tool_server_key is not None:
            self._tool_server.unregister(self._tool_server_key)
        self._tool_server = self._tool_server_key = None
        if conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), 2)
        if closer is not None:
            with contextlib.suppress(Exception):
                await closer()
        if process is not None:
            await process.close()

    async def close(self, reason: str = "closed") -> None:
        turn = self.turn
        if self._stream is not None and not self._stream.done:
            self._stream.fail(f"agent session closed: {reason}")
            self.host.request_finished(self._stream, "error", reason)
        if turn is not None and not turn.done.is_set():
            turn.cancelled = True
            turn.done.set()
        for rt in self.waiting:
            rt.resolve(None)
        self.waiting.clear()
        self.state = "dead"
        await self._stop_agent(reason)
        # Whatever still runs for it ends now (a submission still starting the agent, a turn, a
        # round trip); an agent such a submission had started meanwhile is stopped too.
        await self._tasks.close()
        if self.conn is not None or self._closer is not None or self.process is not None:
            await self._stop_agent(reason)
