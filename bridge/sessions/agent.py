"""A session's agent: its process (or an in-process agent), the ACP connection to it, and its
registration with the client-tool server — started, called and stopped by the session.

The ACP SDK is imported only here and only when an agent starts: importing `bridge.sessions`
costs no `import acp`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from bridge import events as ev
from bridge.acp_lines import LineTransport
from bridge.agent_names import version_text_of
from bridge.sessions.stream import ChatRequest, SessionFailed
from bridge.tool_results import CLIENT_TOOL_SERVER

if TYPE_CHECKING:
    from bridge.protocol import ToolDefinition
    from bridge.sessions.session import AgentSession, SessionHost
    from bridge.tools import ClientToolServer

log = logging.getLogger(__package__)  # the package's one logger: `bridge.sessions`

# The ids of the `session/prompt` requests a link writes itself (`AgentLink.send_prompt`): far
# above the SDK's own, which count up from 0 on the same connection.
PROMPT_IDS = 1 << 40


class AcpClient:
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
        self._session.settle_fast()  # a turn the front door prompted ahead is the session's now
        if not self._ours(session_id, "session/request_permission"):
            from acp.schema import DeniedOutcome, RequestPermissionResponse

            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return await self._session.client.on_permission(tool_call, options)

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


def client_tool_meta(request: ChatRequest) -> dict[str, Any]:
    """`session/new` `_meta` telling agents that understand it that the client's own tools need
    no permission request: the client runs (or confirms) them itself, and the bridge recognises
    them by the MCP call its tool server receives, never by a permission's title. Claude Code's
    ACP adapter takes SDK options under `claudeCode.options` (`allowedTools`, where a bare
    `mcp__<server>` allows that server's tools); agents that do not know the key ignore it, and
    their permission requests go through the rules and a person like any other."""
    if not request.client_tools:
        return {}
    return {"claudeCode": {"options": {"allowedTools": [f"mcp__{CLIENT_TOOL_SERVER}"]}}}


def own_mcp_server(server: dict[str, Any], init: Any) -> Any:
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


def streamed_text_update(message: dict[str, Any], acp_session_id: str | None) -> Any:
    """The update of a `session/update` notification of this ACP session that streams text (an
    `agent_message_chunk` of a text block), read as the JSON object it came in — no task, model or
    tracing span of the SDK's per chunk; None for any other message."""
    params = message.get("params")
    if message.get("method") != "session/update" or "id" in message:
        return None
    if acp_session_id is None or not isinstance(params, dict):
        return None
    if params.get("sessionId") != acp_session_id:
        return None
    update = params.get("update")
    if not isinstance(update, dict) or update.get("sessionUpdate") != "agent_message_chunk":
        return None
    content = update.get("content")
    if (
        not isinstance(content, dict)
        or content.get("type") != "text"
        or not isinstance(content.get("text"), str)
    ):
        return None
    return update


ClientToolCall = Callable[[str, Any], Awaitable[Any]]


class AgentLink:
    """One agent session's agent while it runs: `start` launches it and opens its ACP session,
    `call` awaits an ACP call unless the agent exits first, `stop` ends all of it."""

    def __init__(self, host: SessionHost, session_id: str, spec: Any, agent_label: str) -> None:
        self.host = host
        self.session_id = session_id
        self.spec = spec  # an AgentSpec
        self.agent_label = agent_label
        self.conn: Any = None
        self.transport: LineTransport | None = None  # what `conn` runs on
        self.acp_session_id: str | None = None
        self.version: str | None = None  # the agent's own word for its version (`agentInfo`)
        self.process: Any = None
        self.secrets: list[str] = []  # the agent's env values: never in a message we send or show
        self._closer: Callable[[], Awaitable[None]] | None = None
        # the `vscode_tools` server this session's endpoint is registered with, under this key
        self._tool_server: ClientToolServer | None = None
        self._tool_server_key: str | None = None
        # The prompts written by `send_prompt` and not answered yet, by request id.
        self._prompts: dict[int, asyncio.Future[Any]] = {}
        self._on_answer: dict[int, Callable[[asyncio.Future[Any]], None]] = {}
        self._prompt_ids = itertools.count(PROMPT_IDS)

    @property
    def is_up(self) -> bool:
        """Anything of an agent is still open (a connection, an in-process agent, a process)."""
        return self.conn is not None or self._closer is not None or self.process is not None

    async def start(
        self,
        request: ChatRequest,
        client: AcpClient,
        on_text: Callable[[Any], None],
        on_read: Callable[[], None],
        call_client_tool: ClientToolCall,
        tools: list[ToolDefinition],
    ) -> None:
        """Launch the agent, initialize it and open its ACP session (raises SessionFailed, or
        what the launch or the SDK raised)."""
        import acp
        from acp.schema import ClientCapabilities, Implementation

        from bridge.agents.launch import LaunchError, launch

        host = self.host

        def on_stderr(line: str) -> None:
            host.bus.publish(
                lambda: ev.AgentStderr(connection=host.name, session_id=self.session_id, line=line)
            )

        try:
            agent = await launch(self.spec, cwd=host.config.cwd, on_stderr=on_stderr)
        except LaunchError as exc:
            raise SessionFailed(str(exc)) from exc
        self.secrets = agent.secrets  # launch() redacts them from stderr already
        self.process = agent.process
        self._closer = None if agent.process is not None else agent.close
        # The SDK looks the client's methods up by name; ours leaves out the optional ones. Its
        # connection runs on our line transport, which hands a streamed text chunk (an update of
        # `streamed_text_update`) straight to `on_text`, where the SDK would have started its task
        # (`in_order`), so it keeps its place among the agent's messages; and calls `on_read`
        # whenever all the agent sent so far is read (the parts made of it can go out).
        transport = self.transport = LineTransport(agent.reader, agent.writer, keep_lines=False)

        def take(message: dict[str, Any]) -> bool:
            if "method" not in message:
                return self._took_answer(message)
            update = streamed_text_update(message, self.acp_session_id)
            if update is None:
                return False
            transport.in_order(on_text, update)
            return True

        transport.take = take
        transport.idle = on_read
        transport.ended = self._fail_prompts
        self.conn = acp.connect_to_agent(client, transport)  # type: ignore[arg-type]
        init = await asyncio.wait_for(
            self.call(
                self.conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(),
                    client_info=Implementation(name="symposium-tui", version="0.1.0"),
                )
            ),
            host.config.start_timeout,
        )
        self.version = version_text_of(getattr(getattr(init, "agent_info", None), "version", None))
        mcp_servers = []
        if request.client_tools:
            mcp_servers.append(await self._client_tool_server(init, call_client_tool, tools))
        mcp_servers.extend(own_mcp_server(s, init) for s in request.mcp_servers)
        new = await asyncio.wait_for(
            self.call(
                self.conn.new_session(
                    cwd=host.config.cwd, mcp_servers=mcp_servers, **client_tool_meta(request)
                )
            ),
            host.config.start_timeout,
        )
        self.acp_session_id = new.session_id
        self._started()

    def _started(self) -> None:
        host, agent_label = self.host, self.agent_label
        pid = self.process.pid if self.process else None
        log.info(
            "%s/%s: agent %s started (ACP session %s%s)",
            host.name,
            self.session_id,
            agent_label,
            self.acp_session_id,
            f", pid {pid}" if pid else "",
        )
        host.bus.publish(
            lambda: ev.SessionStarted(
                connection=host.name,
                session_id=self.session_id,
                agent=agent_label,
                acp_session_id=self.acp_session_id,
                pid=pid,
            )
        )

    async def _client_tool_server(
        self, init: Any, call_client_tool: ClientToolCall, tools: list[ToolDefinition]
    ) -> Any:
        from acp.schema import HttpMcpServer, McpServerStdio

        server = await self.host.ensure_tool_server()
        key = f"{self.host.name}/{self.session_id}"
        server.register(key, call_client_tool, tools)
        self._tool_server, self._tool_server_key = server, key
        caps = getattr(getattr(init, "agent_capabilities", None), "mcp_capabilities", None)
        if caps is not None and getattr(caps, "http", False):
            return HttpMcpServer.model_validate(server.http_server(key))
        return McpServerStdio.model_validate(server.stdio_server(key))

    @property
    def has_tool_server(self) -> bool:
        return self._tool_server is not None and self._tool_server_key is not None

    def set_tools(self, tools: list[ToolDefinition]) -> bool:
        """Offer the agent these client tools: did the list change?"""
        if self._tool_server is None or self._tool_server_key is None:
            return False
        return self._tool_server.set_tools(self._tool_server_key, tools)

    async def wait_relisted(self) -> None:
        """Until the agent has listed the client's tools again (after `set_tools` changed them)."""
        if self._tool_server is not None and self._tool_server_key is not None:
            await self._tool_server.wait_relisted(self._tool_server_key)

    async def call(self, awaitable: Awaitable[Any]) -> Any:
        """Await an ACP call, but fail as soon as the agent process is gone. The call runs in the
        caller's task (a task of its own would cost two turns of the loop on every prompt): the
        agent's exit cancels it as `asyncio.timeout` does, one turn of the loop later, so an
        answer that came first stands (the task it woke runs before that turn)."""
        process = self.process
        if process is None:
            return await awaitable
        current = asyncio.current_task()
        assert current is not None
        loop = asyncio.get_running_loop()
        state = "waiting"  # -> "settled" once the call returned or raised, "gone" once the exit cancelled it

        def cancel_if_waiting() -> None:
            nonlocal state
            if state == "waiting":
                state = "gone"
                current.cancel()

        def agent_gone() -> None:
            loop.call_soon(cancel_if_waiting)

        if process.exited.is_set():
            if asyncio.iscoroutine(awaitable):
                awaitable.close()  # never started: nothing was sent
            raise SessionFailed(process.describe_exit())
        forget = process.on_exit(agent_gone)
        try:
            result = await awaitable
        except BaseException as exc:
            if state != "gone" or current.uncancel() > 0:
                raise  # not the exit's doing, or this call itself is being cancelled
            if not isinstance(exc, asyncio.CancelledError):  # failed as it was cancelled
                log.debug("%s: an abandoned ACP call failed", self.session_id, exc_info=exc)
            raise SessionFailed(process.describe_exit()) from None
        finally:
            forget()
            cancelled, state = state == "gone", "settled"
        if cancelled:  # answered although cancelled: the cancel is taken back
            current.uncancel()
        return result

    async def describe_failure(self, exc: BaseException) -> str:
        process = self.process
        if process is not None and isinstance(exc, (ConnectionError, OSError, EOFError)):
            # The connection noticed first; the process's exit (and stderr) follows within moments.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.exited.wait(), 1.0)
        from bridge.redact import redact_free_text

        if process is not None and process.exited.is_set():
            return redact_free_text(process.describe_exit(), self.secrets)  # its stderr's tail
        return redact_free_text(f"agent session failed: {type(exc).__name__}: {exc}", self.secrets)

    async def describe_start_failure(self, exc: BaseException) -> str:
        """Why the agent failed to start: its exit (and stderr's tail) when it is gone, else
        what went wrong, with its secrets redacted."""
        from bridge.redact import redact_free_text

        message = await self.describe_failure(exc)
        process = self.process
        if process is None or not process.exited.is_set():
            message = f"agent failed to start: {type(exc).__name__}: {exc}"
        return redact_free_text(message, self.secrets)

    def send_prompt(
        self,
        blocks: list[dict[str, Any]],
        on_answer: Callable[[asyncio.Future[Any]], None] | None = None,
    ) -> asyncio.Future[Any]:
        """Write the ACP `session/prompt` of these content blocks now, in the caller's step:
        what the SDK's `prompt` would send, without its request model, serialization and task
        hop before the write (a turn's prompt goes out in the step that routed its request).

        The future gets the agent's answer as the SDK's call would give it: the result validated
        as a `PromptResponse`, or the SDK's `RequestError` for an error answer, a ConnectionError
        when the connection is closed or ends first. It is settled where the SDK would have
        handled the answer (`LineTransport.in_order`): every update the agent sent before its
        answer has reached the session by then, as the SDK's `prompt` waits for them.
        `on_answer(future)` is called right after it is settled by the agent's answer, in that
        same step (not when it fails otherwise: a closed connection, the future given up on)."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        transport = self.transport
        if transport is None or self.conn is None:
            _fail(future, ConnectionError("Connection closed"))
            return future
        rid = next(self._prompt_ids)
        line = b'{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":%s}\n' % (
            rid,
            prompt_params(self.acp_session_id, blocks),
        )
        self._prompts[rid] = future
        if on_answer is not None:
            self._on_answer[rid] = on_answer

        def forget(_: Any) -> None:  # answered, or given up on
            self._prompts.pop(rid, None)
            self._on_answer.pop(rid, None)

        future.add_done_callback(forget)
        try:
            transport.write(line)
        except ConnectionError as exc:
            self._prompts.pop(rid, None)
            _fail(future, exc)
        return future

    def _took_answer(self, message: dict[str, Any]) -> bool:
        """Takes the answer to a prompt `send_prompt` wrote (any other answer is the SDK's)."""
        rid = message.get("id")
        # As the SDK finds its calls (a dict lookup): an id echoed as 1e12 or 1000000000000.0 too.
        if type(rid) not in (int, float) or rid not in self._prompts or self.transport is None:
            return False
        hook = self._on_answer.pop(rid, None)
        if hook is None:
            self.transport.in_order(_settle_prompt, self._prompts.pop(rid), message)
        else:
            self.transport.in_order(_settle_prompt_then, self._prompts.pop(rid), message, hook)
        return True

    def _fail_prompts(self) -> None:
        """The connection ended or is closing: every prompt still waiting fails, as the SDK
        rejects its own calls then."""
        prompts, self._prompts = self._prompts, {}
        for future in prompts.values():
            _fail(future, ConnectionError("Connection closed"))

    async def send_cancel(self) -> None:
        """ACP `session/cancel` for the running prompt (a failure to send it is ignored)."""
        with contextlib.suppress(Exception):
            await self.conn.cancel(session_id=self.acp_session_id)

    async def stop(self) -> None:
        conn, closer, process = self.conn, self._closer, self.process
        self.conn = self._closer = self.process = self.transport = None
        self._fail_prompts()
        self.acp_session_id = None
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


def prompt_params(session_id: Any, blocks: list[dict[str, Any]]) -> bytes:
    """`session/prompt`'s params as compact JSON: the very bytes of `json.dumps({"sessionId":
    session_id, "prompt": blocks}, separators=(",", ":"))`. A turn's blocks are plain text blocks
    (`{"type": "text", "text": ...}`): each is written from a template around its text's JSON
    string, with no encoder built for the call; any other block (a replay's `_meta`) takes the
    encoder."""
    if type(session_id) is str:
        texts = []
        for block in blocks:
            if (
                len(block) != 2
                or next(iter(block)) != "type"
                or block["type"] != "text"
                or type(text := block.get("text")) is not str
            ):
                break
            texts.append(b'{"type":"text","text":' + json.dumps(text).encode("ascii") + b"}")
        else:
            return (
                b'{"sessionId":'
                + json.dumps(session_id).encode("ascii")
                + b',"prompt":['
                + b",".join(texts)
                + b"]}"
            )
    return json.dumps({"sessionId": session_id, "prompt": blocks}, separators=(",", ":")).encode(
        "utf-8"
    )


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)
        future.exception()  # retrieved: its awaiter may have given up on it (the agent exited)


@functools.cache
def _prompt_response() -> Any:
    """The SDK's `PromptResponse` (imported once, when the first answer is read)."""
    from acp.schema import PromptResponse

    return PromptResponse


def _settle_prompt(future: asyncio.Future[Any], message: dict[str, Any]) -> None:
    """A prompt's answer, as the SDK's `Connection` and `prompt` make it of the message."""
    if future.done():
        return
    if "result" not in message and "error" in message:
        import acp

        error = message.get("error")
        error = error if isinstance(error, dict) else {}
        _fail(
            future,
            acp.RequestError(
                error.get("code", -32603), error.get("message", "Error"), error.get("data")
            ),
        )
        return
    try:
        future.set_result(_prompt_response().model_validate(message.get("result")))
    except ValidationError as exc:
        _fail(future, exc)


def _settle_prompt_then(
    future: asyncio.Future[Any],
    message: dict[str, Any],
    hook: Callable[[asyncio.Future[Any]], None],
) -> None:
    _settle_prompt(future, message)
    hook(future)
