"""`AcpProxy`: one ACP client connection, proxied to one agent process (or the built-in Eliza).

The client's requests and notifications go to the agent and the agent's to the client, each as the
JSON object it arrived as; `session/update`s take the fast lane (`bridge.acp_lines`). Beside the
traffic the proxy tracks the sessions and turns for the console's events, reads updates into the
core's records (`bridge.acp_updates`) and hands the agent's permission requests to
`bridge.acp_proxy.permissions`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any

from acp.connection import Connection
from acp.exceptions import RequestError

from bridge import events as ev
from bridge.acp_lines import UPDATE_LINE, LineTransport
from bridge.acp_proxy.permissions import PERMISSION, PermissionRequests
from bridge.acp_proxy.session import ProxySession, prompt_text
from bridge.acp_updates import ToolCallTracker, read_update, record_tool
from bridge.agent_names import agent_info_name
from bridge.agents.launch import LaunchedAgent, LaunchError, launch
from bridge.approvals import Resolution
from bridge.core import Bridge
from bridge.protocol import agent_key, agent_label
from bridge.tasks import TaskSupervisor

log = logging.getLogger("bridge.acp_proxy")  # the door's name in the logs

SESSION_OPENERS = ("session/new", "session/load", "session/resume", "session/fork")


def client_label(info: Any) -> str:
    """A connection name from the client's `clientInfo` (`zed`, `toad`, `acpx`, …)."""
    name = ""
    if isinstance(info, dict):
        name = str(info.get("name") or info.get("title") or "")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-").lower()[:32]
    return name or "acp"


_proxies = itertools.count()


class AcpProxy(PermissionRequests):
    """One ACP client connection, proxied to one agent process (or the built-in Eliza)."""

    def __init__(self, bridge: Bridge, spec: Any, *, cwd: str | None = None) -> None:
        self.bridge = bridge
        self.spec = spec
        self.agent_label = agent_label(spec)  # its `agentInfo` name once it has given one
        self.agent_version: str | None = None
        self.agent_key = agent_key(spec)
        self.cwd = cwd or bridge.config.cwd
        self._nth = next(_proxies)
        self.name = self._connection_name("acp")
        self.client_info: dict[str, Any] | None = None
        self.client: Connection | None = None
        self.agent: Connection | None = None
        self._client_transport: LineTransport
        self._agent_transport: LineTransport
        self.launched: LaunchedAgent | None = None
        self.sessions: dict[str, ProxySession] = {}
        self._started: asyncio.Task[None] | None = None
        self._agent_gone: str | None = None
        # Awaited before a session is opened: the console link checks for a console there.
        self.before_session: Callable[[], Awaitable[None]] | None = None
        self._watch: asyncio.Task[None] | None = None
        self._awaited: set[tuple[str, str]] = set()  # (session, call) approved, outcome awaited
        # The agent's start, its exit watcher and the client round trips: they end with the proxy.
        self._tasks = TaskSupervisor(f"ACP proxy {self.name}")

    @property
    def bus(self) -> ev.EventBus:
        return self.bridge.bus

    def _connection_name(self, label: str) -> str:
        """`<client>-<pid>`: the one name of this connection — in this process, in a linked
        console and in the audit log. Unique on the machine (one client per process; a second
        proxy in the same process adds its number)."""
        return f"{label}-{os.getpid()}" + (f"-{self._nth}" if self._nth else "")

    def _learn_agent(self, result: Any) -> None:
        """An agent started by command line is known by the name its `initialize` gives
        (`agentInfo`), else by the script or package it runs; one named in the settings keeps
        its settings id (its rules and bypass are keyed by it)."""
        from bridge.protocol import ExternalAgent

        name, version = agent_info_name(result)
        self.agent_version = version
        if name is not None and isinstance(self.spec, ExternalAgent) and not self.spec.id:
            self.agent_label = name
        log.info(
            "%s: the agent is %s%s", self.name, self.agent_label, f" {version}" * bool(version)
        )

    # --- lifecycle ---------------------------------------------------------------------------------

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve the client on (reader, writer) until it closes its end; then stop the agent."""
        self._started = self._tasks.start(self._start_agent(), name="start the agent")
        # The client is owed JSON-RPC's errors for what it sends malformed; the agent is not.
        self._client_transport = LineTransport(reader, writer, answer_invalid=True)
        self._client_transport.pace_like_a_pipe()  # the agent is read as the client takes it
        self.client = Connection(self._from_client, self._client_transport, listening=False)
        try:
            await self.client.main_loop()
        finally:
            await self.close("the client closed the connection")

    async def _start_agent(self) -> None:
        def on_stderr(line: str) -> None:
            def event() -> ev.Event:
                session = next(reversed(self.sessions), "") if self.sessions else ""
                return ev.AgentStderr(connection=self.name, session_id=session, line=line)

            self.bus.publish(event)

        self.launched = await launch(self.spec, cwd=self.cwd, on_stderr=on_stderr)
        self._agent_transport = LineTransport(self.launched.reader, self.launched.writer)
        self._agent_transport.fast = self._fast_update
        self._agent_transport.forward = self._client_transport.write_lines
        self._agent_transport.pace = self._keep_pace
        self.agent = Connection(self._from_agent, self._agent_transport)
        if self.launched.process is not None:
            self._watch = self._tasks.start(
                self._watch_agent(self.launched.process), name="agent exit watcher"
            )

    async def _watch_agent(self, process: Any) -> None:
        await process.exited.wait()
        self._agent_gone = process.describe_exit()
        log.warning("%s: %s", self.name, self._agent_gone)
        for session in list(self.sessions):
            self._session_ended(session, self._agent_gone)

    async def _agent_conn(self) -> Connection:
        assert self._started is not None
        try:
            await asyncio.shield(self._started)
        except LaunchError as exc:
            raise RequestError.internal_error({"details": str(exc)}) from None
        except Exception as exc:  # noqa: BLE001 - any start failure is this request's answer
            raise RequestError.internal_error(
                {"details": f"the agent did not start: {type(exc).__name__}: {exc}"}
            ) from None
        if self._agent_gone is not None:
            raise RequestError.internal_error({"details": self._agent_gone})
        assert self.agent is not None
        return self.agent

    async def close(self, reason: str) -> None:
        for session in list(self.sessions):
            self._session_ended(session, reason)
        if self._started is not None and not self._started.done():
            self._started.cancel()
        if self.agent is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.agent.close(), 2)
        if self.launched is not None:
            with contextlib.suppress(Exception):
                await self.launched.close()
        if self._watch is not None:
            self._watch.cancel()
        if self.client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.close(), 2)
        await self._tasks.close()

    async def _request_agent(self, method: str, params: Any) -> Any:
        agent = await self._agent_conn()
        try:
            return await agent.send_request(method, params)
        except RequestError:
            raise
        except (ConnectionError, OSError, EOFError) as exc:
            if self.launched is not None and self.launched.process is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.launched.process.exited.wait(), 1.0)
            details = self._agent_gone or f"the agent's connection closed: {exc}"
            raise RequestError.internal_error({"details": details}) from None

    def _fast_update(self, line: bytes) -> bool:
        """The streaming fast lane: a `session/update` goes to the client as the line it came in,
        from a loop callback — the very place in the loop's FIFO where the SDK would have started
        a task to forward it, so the order against everything else the agent sent is the same,
        without a task, a parse (unless someone observes) or a re-serialization per update; the
        transport forwards a run of them in one write (`LineTransport.forward`). A client that
        falls behind holds the agent's reading back (`_keep_pace`), not the lane."""
        if not line.startswith(UPDATE_LINE):
            return False  # another key order: the general path
        if self.bus.active or self._awaited or self.bridge.approvals.keeps_always(self.name):
            try:
                self._observe(json.loads(line).get("params"))
            except (ValueError, AttributeError, RecursionError):
                return False
        return True

    async def _keep_pace(self) -> None:
        """After an update taken by the fast lane: while the client has more than the high-water
        mark unread, the agent's next line waits (back-pressure reaches the agent through its
        pipe, as it does when the client reads the agent directly)."""
        await self._client_transport.keep_up()

    @staticmethod
    async def _forward(to: LineTransport, method: str, params: Any) -> None:
        """A notification to the other side: the line it came in, when there is one."""
        line = getattr(params, "line", None)
        if line is not None:
            await to.send_line(line)
        else:
            await to.send({"jsonrpc": "2.0", "method": method, "params": params})

    # --- client → agent ------------------------------------------------------------------------------

    async def _from_client(self, method: str, params: Any, is_notification: bool) -> Any:
        if is_notification:
            if method == "session/cancel" and isinstance(params, dict):
                # Cards of the cancelled turn leave the console; the agent answers `cancelled`.
                self.bridge.approvals.withdraw_session(
                    self.name, str(params.get("sessionId")), "the turn was cancelled"
                )
            await self._agent_conn()
            with contextlib.suppress(ConnectionError):
                await self._forward(self._agent_transport, method, params)
            return None
        if method == "session/prompt":
            return await self._prompt(params)
        if method == "initialize":
            if isinstance(params, dict) and isinstance(params.get("clientInfo"), dict):
                self.client_info = params["clientInfo"]
                self.name = self._connection_name(client_label(self.client_info))
            result = await self._request_agent(method, params)
            self._learn_agent(result)
            return result
        if method in SESSION_OPENERS:
            if self.before_session is not None:
                with contextlib.suppress(Exception):
                    await self.before_session()
            result = await self._request_agent(method, params)
            session_id = (result or {}).get("sessionId") if isinstance(result, dict) else None
            if session_id is None and isinstance(params, dict):
                session_id = params.get("sessionId")  # load and resume name it in the request
            if isinstance(session_id, str):
                session = self._session_started(session_id, method)
                if isinstance(params, dict) and isinstance(params.get("cwd"), str):
                    session.cwd = params["cwd"]
            return result
        result = await self._request_agent(method, params)
        if method == "session/close" and isinstance(params, dict):
            self._session_ended(str(params.get("sessionId")), "closed by the client")
        return result

    async def _prompt(self, params: Any) -> Any:
        session_id = str(params.get("sessionId")) if isinstance(params, dict) else ""
        if self.before_session is not None:
            with contextlib.suppress(Exception):
                await self.before_session()
        session = self.sessions.get(session_id)
        if session is None:
            session = self._session_started(session_id, "session/prompt")
        if session.notices and isinstance(params.get("prompt"), list):
            # Denials since the last prompt, told as the other front doors tell them.
            notices, session.notices = session.notices, []
            params["prompt"] = [{"type": "text", "text": "\n".join(notices)}, *params["prompt"]]
        session.turns += 1
        turn = f"{session_id}#{session.turns}"
        session.turn = turn
        bus = self.bus

        def decided() -> ev.Event:
            text = prompt_text(params.get("prompt"))
            return ev.HistoryDecided(
                connection=self.name,
                request_id=turn,
                decision={
                    "seq": session.turns,
                    "session_id": session_id,
                    "kind": "turn",
                    "agent_key": self.agent_key,
                    "committed_len": 0,
                    "new_messages": [
                        {"role": "user", "content": [{"type": "text", "value": text}]}
                    ],
                    "reason": f"session/prompt from {self.client_name}: the ACP session "
                    "keeps its own history",
                },
            )

        bus.publish(decided)
        outcome, error, stop = "error", None, None
        try:
            result = await self._request_agent("session/prompt", params)
            stop = result.get("stopReason") if isinstance(result, dict) else None
            outcome = "cancelled" if stop == "cancelled" else "complete"
            return result
        except RequestError as exc:
            error = str(exc)
            raise
        except asyncio.CancelledError:
            outcome, error = "cancelled", "the client went away"
            raise
        finally:
            if session.turn == turn:
                session.turn = None
            self.bridge.approvals.withdraw_session(self.name, session_id, "the turn ended")
            bus.publish(
                lambda: ev.RequestFinished(
                    connection=self.name,
                    request_id=turn,
                    session_id=session_id,
                    outcome=outcome,  # type: ignore[arg-type]
                    error=error,
                    stop_reason=stop,
                )
            )

    @property
    def client_name(self) -> str:
        info = self.client_info or {}
        return str(info.get("title") or info.get("name") or "the ACP client")

    def _session_started(self, session_id: str, how: str) -> ProxySession:
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = ProxySession(session_id)

        def started() -> ev.Event:
            process = self.launched.process if self.launched is not None else None
            return ev.SessionStarted(
                connection=self.name,
                session_id=session_id,
                agent=self.agent_label,
                acp_session_id=session_id,
                pid=process.pid if process is not None else None,
            )

        self.bus.publish(started)
        log.info("%s: ACP session %s (%s)", self.name, session_id, how)
        return session

    def _session_ended(self, session_id: str, reason: str) -> None:
        if self.sessions.pop(session_id, None) is None:
            return
        self._awaited = {key for key in self._awaited if key[0] != session_id}
        self.bridge.approvals.withdraw_session(self.name, session_id, reason)
        self.bus.publish(
            lambda: ev.SessionEnded(connection=self.name, session_id=session_id, reason=reason)
        )

    # --- agent → client ------------------------------------------------------------------------------

    async def _from_agent(self, method: str, params: Any, is_notification: bool) -> Any:
        client = self.client
        assert client is not None
        if is_notification:
            if method == "session/update" and (
                self.bus.active or self._awaited or self.bridge.approvals.keeps_always(self.name)
            ):
                self._observe(params)
            with contextlib.suppress(ConnectionError):
                await self._forward(self._client_transport, method, params)
            return None
        if method == PERMISSION:
            return await self._permission(params)
        try:
            return await client.send_request(method, params)
        except (ConnectionError, OSError) as exc:
            raise RequestError.internal_error({"details": f"the client went away: {exc}"}) from None

    async def _tell_client(self, session_id: str, notice: str, resolution: Resolution) -> None:
        """Why a permission was denied, shown to the client as a message update from the proxy
        (labelled as Symposium's), before the agent's next update."""
        update = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": f"\n\n> Symposium: {notice}\n\n"},
            "_meta": {
                "symposium": {
                    "notice": "permission_denied",
                    "reason": resolution.reason,
                    "decidedBy": resolution.rule or resolution.resolver,
                }
            },
        }
        message = {"sessionId": session_id, "update": update}
        self._observe(message)  # the console shows it in the turn's text too
        with contextlib.suppress(ConnectionError, OSError):
            await self._client_transport.send(
                {"jsonrpc": "2.0", "method": "session/update", "params": message}
            )

    def _observe(self, params: Any) -> None:
        """One `session/update` read into the core's records (`bridge.acp_updates`): the
        console's events, and the outcome of an approved tool call (or of one the agent ran
        unasked under an "always" answer it keeps, audited as such)."""
        if not isinstance(params, dict):
            return
        update = params.get("update")
        if not isinstance(update, dict):
            return
        session_id = str(params.get("sessionId"))
        session = self.sessions.get(session_id)
        tools = session.tools if session is not None else ToolCallTracker()
        reading = read_update(update, tools)
        if reading is None:
            return
        if reading.kind == "agent_message_chunk":
            if session is not None and session.turn is not None and reading.text:
                turn, text = session.turn, reading.text
                self.bus.publish(
                    lambda: ev.PartStreamed(
                        connection=self.name,
                        request_id=turn,
                        session_id=session_id,
                        part={"type": "text", "value": text},
                    )
                )
        elif reading.tool is not None and reading.tool_call_id is not None:
            record_tool(
                reading,
                connection=self.name,
                session_id=session_id,
                bus=self.bus,
                approvals=self.bridge.approvals,
            )
            if reading.finished:  # an ended call changes no more: forgotten
                tools.calls.pop(reading.tool_call_id, None)
                self._awaited.discard((session_id, reading.tool_call_id))
