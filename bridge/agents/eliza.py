"""The built-in Eliza: a real ACP agent written on the SDK's agent side.

It answers like Weizenbaum's DOCTOR (``eliza_script``), and understands three commands that let
the bridge be exercised end to end without any external agent:

* ``list tools from <server>`` lists the tools of one of the session's MCP servers;
* ``use tool <server>::<tool> with <json object>`` calls one of them;
* ``ask permission to <title>`` announces a tool call, asks the client's permission for it and
  reports the answer.

Replies are streamed as a few ``agent_message_chunk`` updates. ``session/cancel`` stops a running
prompt promptly; it then ends with stop reason ``cancelled``.

Run it in-process with :func:`connect_in_memory`, or over stdio with :func:`main_stdio`
(``python -m bridge.agents.eliza``). The ``mcp`` SDK is imported only when a tool command runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import re
import sys
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO, TypeVar

import acp
from acp import helpers
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    ToolCallUpdate,
)

from .. import mcp_client
from ..mcp_client import McpTarget
from .eliza_script import Eliza
from .memory import memory_stream_pair

__all__ = [
    "AGENT_NAME",
    "DETERMINISTIC_SEED",
    "PERMISSION_OPTIONS",
    "ElizaAgent",
    "InMemoryAgent",
    "InMemoryStreams",
    "chunk_reply",
    "connect_in_memory",
    "main_stdio",
    "start_in_memory",
]

from bridge.registry import BUILTIN_VERSION  # (the light module `registry list` reads)

log = logging.getLogger(__name__)

AGENT_NAME = "symposium-eliza"
AGENT_TITLE = "Eliza (built in)"
AGENT_VERSION = BUILTIN_VERSION  # what `registry list` says too

#: The seed every session of a deterministic agent starts from. With it, a fresh session answers
#: "Hello" with "How do you do. Please state your problem." and then "I am doing well, thanks!"
#: with "Do you believe it is normal to be doing well thanks?" (upstream elizacp's golden replies).
DETERMINISTIC_SEED = 4

#: The options offered by ``ask permission to …``: (option id, name, kind); ids equal kinds.
OptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
PERMISSION_OPTIONS: tuple[tuple[str, str, OptionKind], ...] = (
    ("allow_once", "Allow once", "allow_once"),
    ("allow_always", "Always allow", "allow_always"),
    ("reject_once", "Reject", "reject_once"),
    ("reject_always", "Always reject", "reject_always"),
)

_LIST_TOOLS = re.compile(r"list\s+tools\s+from\s+([A-Za-z0-9_-]+)", re.IGNORECASE)
_USE_TOOL = re.compile(
    r"use\s+tool\s+([A-Za-z0-9_-]+)::(\S+?)(?:\s+with\s+(.*))?", re.IGNORECASE | re.DOTALL
)
_ASK_PERMISSION = re.compile(r"ask\s+permission\s+to\s+(.*)", re.IGNORECASE | re.DOTALL)
# Where a command starts: at the start of a line, so that a system prompt, `instructions` or a
# replayed context may come before it and a client's hint (`[The client requires a tool call…]`)
# after it.
_COMMAND_START = re.compile(
    r"^[ \t]*(?:list\s+tools\s+from|use\s+tool|ask\s+permission\s+to)\b",
    re.IGNORECASE | re.MULTILINE,
)


def find_command(text: str) -> str | None:
    """The command in a prompt (the last line that starts one, with what follows), or None.

    `use tool … with {json}` keeps exactly its JSON value (which may span lines) and nothing after
    it; the other commands keep the rest of their line."""
    starts = list(_COMMAND_START.finditer(text))
    if not starts:
        return None
    command = text[starts[-1].start() :].strip()
    if match := _USE_TOOL.fullmatch(command):
        raw = match[3]
        if raw is None or not raw.strip():
            return command.split("\n", 1)[0].strip()
        raw = raw.lstrip()
        try:
            _, end = json.JSONDecoder().raw_decode(raw)
        except ValueError:
            return command.split("\n", 1)[0].strip()  # not JSON: the tool call reports it
        return command[: match.start(3)] + raw[:end]
    return command.split("\n", 1)[0].strip()


T = TypeVar("T")


class _Cancelled(Exception):
    """The session's running prompt was cancelled by the client."""


def _is_replay(block: Any) -> bool:
    meta = getattr(block, "field_meta", None) or {}
    return isinstance(meta, dict) and bool((meta.get("symposium") or {}).get("replay"))


def chunk_reply(reply: str) -> list[str]:
    """Split ``reply`` on word boundaries into 3–6 chunks (fewer for very short replies).

    ``"".join(chunk_reply(r)) == r`` always holds.
    """
    pieces = re.findall(r"\s*\S+\s*", reply)
    if not pieces or "".join(pieces) != reply:
        # Whitespace only (or empty): nothing to split.
        return [reply]
    count = min(len(pieces), max(3, min(6, math.ceil(len(pieces) / 4))))
    chunks: list[str] = []
    start = 0
    for index in range(count):
        end = round((index + 1) * len(pieces) / count)
        chunks.append("".join(pieces[start:end]))
        start = end
    return chunks


@dataclass
class _Session:
    session_id: str
    cwd: str
    mcp_servers: list[Any]
    eliza: Eliza
    # Set by session/cancel; replaced at the start of every prompt.
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    prompting: bool = False
    # "allow_always" / "reject_always" once chosen: the rest of the session is not asked again.
    always: str | None = None


class ElizaAgent:
    """An ACP agent (``acp.interfaces.Agent``) answering as ELIZA. One instance per connection."""

    def __init__(
        self,
        deterministic: bool = False,
        chunk_delay: float = 0.0,
        *,
        mcp_stderr: TextIO | None = None,
    ) -> None:
        """``deterministic`` seeds every session with :data:`DETERMINISTIC_SEED`;
        ``chunk_delay`` is the pause between two streamed chunks; ``mcp_stderr`` receives the
        stderr of stdio MCP servers the agent starts (default: discarded, because in-process the
        host's stderr may be a terminal UI)."""
        self.deterministic = deterministic
        self.chunk_delay = max(0.0, float(chunk_delay))
        self._mcp_stderr = mcp_stderr
        self._client: Any = None
        self._sessions: dict[str, _Session] = {}

    # ---- connection ----------------------------------------------------------------------

    def on_connect(self, conn: Any) -> None:
        self._client = conn

    @property
    def sessions(self) -> dict[str, _Session]:
        return self._sessions

    # ---- ACP agent methods -----------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, acp.PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=False,
                prompt_capabilities=PromptCapabilities(),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
            ),
            agent_info=Implementation(name=AGENT_NAME, title=AGENT_TITLE, version=AGENT_VERSION),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        session = self._open_session(str(uuid.uuid4()), cwd, mcp_servers)
        return NewSessionResponse(session_id=session.session_id)

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        # Eliza keeps no transcripts: loading gives a fresh conversation under the asked id.
        self._open_session(session_id, cwd, mcp_servers)
        return LoadSessionResponse()

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            session.cancelled.set()
        return CloseSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None and session.prompting:
            session.cancelled.set()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._sessions.get(session_id)
        if session is None:
            raise acp.RequestError.invalid_params(
                {"sessionId": session_id, "reason": "unknown session"}
            )
        session.cancelled = asyncio.Event()
        session.prompting = True
        try:
            # A block the client marks as replayed context (`_meta.symposium.replay`) is history,
            # not what the person is saying now: ELIZA answers only the latter.
            # Blocks are joined by line breaks: a command starts a line of its own even when
            # the bridge put a notice (a denial's reason) in a block before the person's text.
            text = "\n".join(
                block.text
                for block in prompt
                if getattr(block, "type", None) == "text" and not _is_replay(block)
            )
            await self._stream(session, await self._reply(session, text))
            if session.cancelled.is_set():
                return PromptResponse(stop_reason="cancelled")
            return PromptResponse(stop_reason="end_turn")
        except _Cancelled:
            return PromptResponse(stop_reason="cancelled")
        finally:
            session.prompting = False

    # ---- turns -----------------------------------------------------------------------------

    def _open_session(self, session_id: str, cwd: str, mcp_servers: list[Any] | None) -> _Session:
        seed = DETERMINISTIC_SEED if self.deterministic else None
        session = _Session(session_id, cwd, list(mcp_servers or []), Eliza(seed=seed))
        self._sessions[session_id] = session
        return session

    async def _reply(self, session: _Session, text: str) -> str:
        """Carry out a command, or ask ELIZA; returns the text to stream back."""
        command = find_command(text) or text.strip()
        if match := _LIST_TOOLS.fullmatch(command):
            name = match[1]
            work = _list_tools(self._server(session, name), name, self._mcp_stderr)
            return await self._until_cancelled(session, work)
        if match := _USE_TOOL.fullmatch(command):
            name, tool, raw_args = match[1], match[2], match[3]
            work = _call_tool(self._server(session, name), name, tool, raw_args, self._mcp_stderr)
            return await self._until_cancelled(session, work)
        if match := _ASK_PERMISSION.fullmatch(command):
            return await self._ask_permission(session, match[1].strip())
        return session.eliza.respond(text)

    @staticmethod
    def _server(session: _Session, name: str) -> Any | None:
        for server in session.mcp_servers:
            if getattr(server, "name", None) == name:
                return server
        return None

    async def _stream(self, session: _Session, reply: str) -> None:
        for index, chunk in enumerate(chunk_reply(reply)):
            if index and self.chunk_delay:
                await self._sleep_unless_cancelled(session, self.chunk_delay)
            if session.cancelled.is_set():
                raise _Cancelled
            await self._client.session_update(
                session.session_id, helpers.update_agent_message_text(chunk)
            )

    async def _ask_permission(self, session: _Session, title: str) -> str:
        tool_call_id = f"eliza-{uuid.uuid4()}"
        raw_input = {"command": title}
        await self._client.session_update(
            session.session_id,
            helpers.start_tool_call(
                tool_call_id, title, kind="execute", status="pending", raw_input=raw_input
            ),
        )
        # "run the tests" is both what is asked and what was (not) done: "I ran the tests".
        done = title[4:] if title.lower().startswith("run ") else title
        if session.always is not None:  # the person chose "always" earlier in this session
            allowed = session.always == "allow_always"
            if allowed:
                update = helpers.update_tool_call(
                    tool_call_id,
                    status="completed",
                    content=[helpers.tool_content(helpers.text_block(f"Ran {title}"))],
                    raw_output={"ran": title},
                )
            else:
                update = helpers.update_tool_call(tool_call_id, status="failed")
            await self._client.session_update(session.session_id, update)
            if allowed:
                return f"Permission granted ({session.always}, this session). I ran {done}."
            return f"Permission denied ({session.always}, this session). I did not run {done}."
        options = [
            PermissionOption(option_id=oid, name=name, kind=kind)
            for oid, name, kind in PERMISSION_OPTIONS
        ]
        request = ToolCallUpdate(
            tool_call_id=tool_call_id,
            title=title,
            kind="execute",
            status="pending",
            raw_input=raw_input,
        )
        try:
            response = await self._until_cancelled(
                session,
                self._client.request_permission(
                    session_id=session.session_id, tool_call=request, options=options
                ),
            )
        except _Cancelled:
            await self._client.session_update(
                session.session_id, helpers.update_tool_call(tool_call_id, status="failed")
            )
            raise

        outcome = response.outcome
        kind = None
        if isinstance(outcome, AllowedOutcome):
            kind = next((k for oid, _, k in PERMISSION_OPTIONS if oid == outcome.option_id), None)
        if kind in ("allow_always", "reject_always"):
            session.always = kind
        if kind is not None and kind.startswith("allow"):
            await self._client.session_update(
                session.session_id,
                helpers.update_tool_call(
                    tool_call_id,
                    status="completed",
                    content=[helpers.tool_content(helpers.text_block(f"Ran {title}"))],
                    raw_output={"ran": title},
                ),
            )
            return f"Permission granted ({kind}). I ran {done}."
        await self._client.session_update(
            session.session_id, helpers.update_tool_call(tool_call_id, status="failed")
        )
        if session.cancelled.is_set():
            raise _Cancelled
        if isinstance(outcome, AllowedOutcome):
            if kind is None:
                return (
                    f"Permission denied (unknown option {outcome.option_id}). I did not run {done}."
                )
            return f"Permission denied ({kind}). I did not run {done}."
        return "Permission request cancelled."

    # ---- cancellation helpers --------------------------------------------------------------

    async def _sleep_unless_cancelled(self, session: _Session, delay: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(session.cancelled.wait(), delay)

    async def _until_cancelled(self, session: _Session, awaitable: Awaitable[T]) -> T:
        """Await ``awaitable``, abandoning it (and raising _Cancelled) if the prompt is cancelled."""
        work = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(session.cancelled.wait())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            work.cancel()
            stop.cancel()
            raise
        stop.cancel()
        if work.done():
            return work.result()
        work.cancel()
        work.add_done_callback(_discard_result)
        # Give the abandoned work a moment to unwind (an MCP client closes its transport).
        await asyncio.wait({work}, timeout=2.0)
        raise _Cancelled


def _discard_result(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


# ---- MCP (imported lazily: the mcp SDK costs about a second to import) ---------------------


def _target(server: Any) -> McpTarget:
    """An ACP session's MCP server description as the shared client's target."""
    kind = getattr(server, "type", None)
    if kind == "acp":
        raise RuntimeError(
            f"MCP server {server.name} is reached over ACP, which Eliza does not support"
        )
    if kind in ("http", "sse"):
        headers = {header.name: header.value for header in server.headers or []}
        return McpTarget(type=kind, url=server.url, headers=headers)
    env = {variable.name: variable.value for variable in server.env or []}
    return McpTarget(type="stdio", command=server.command, args=tuple(server.args or []), env=env)


async def _list_tools(server: Any | None, name: str, errlog: TextIO | None) -> str:
    if server is None:
        return f"ERROR: no MCP server named {name}"
    try:
        async with mcp_client.connect(_target(server), errlog) as client:
            tools = await mcp_client.list_tools(client)
    except Exception as exc:  # noqa: BLE001 - every failure is reported to the user
        return f"ERROR: {mcp_client.error_text(exc)}"
    lines = [f"  - {tool.name}: {tool.description or 'No description'}" for tool in tools]
    return "\n".join(["Available tools:", *lines])


async def _call_tool(
    server: Any | None, name: str, tool: str, raw_args: str | None, errlog: TextIO | None
) -> str:
    if server is None:
        return f"ERROR: no MCP server named {name}"
    try:
        arguments = json.loads(raw_args) if raw_args and raw_args.strip() else {}
    except (json.JSONDecodeError, RecursionError) as exc:
        return f"ERROR: invalid JSON arguments: {exc}"
    if not isinstance(arguments, dict):
        return "ERROR: tool arguments must be a JSON object"
    try:
        async with mcp_client.connect(_target(server), errlog) as client:
            result = await client.call_tool(tool, arguments)
    except Exception as exc:  # noqa: BLE001
        return f"ERROR: {mcp_client.error_text(exc)}"
    text = "\n".join(part.text for part in result.content if getattr(part, "type", None) == "text")
    return f"ERROR: {text}" if result.is_error else f"OK: {text}"


# ---- wiring --------------------------------------------------------------------------------


@dataclass
class InMemoryStreams:
    """An :class:`ElizaAgent` running in this event loop, reached through a pair of byte streams
    (``reader``/``writer`` are the client's end): what any ACP client connection is built on."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    agent: ElizaAgent
    task: asyncio.Task[None]
    _agent_writer: asyncio.StreamWriter

    async def close(self) -> None:
        """Close both ends; the agent's running prompts are cancelled."""
        self.writer.close()  # the agent reads EOF and stops listening
        try:
            await asyncio.wait_for(asyncio.shield(self.task), 5.0)
        except TimeoutError:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        except Exception:  # noqa: BLE001 - the agent's failure is not the closer's
            log.exception("built-in Eliza stopped with an error")
        self._agent_writer.close()


@dataclass
class InMemoryAgent:
    """An :class:`ElizaAgent` running in this event loop, reached through ``conn``."""

    conn: Any  # acp.ClientSideConnection
    streams: InMemoryStreams

    @property
    def agent(self) -> ElizaAgent:
        return self.streams.agent

    @property
    def task(self) -> asyncio.Task[None]:
        return self.streams.task

    async def close(self) -> None:
        """Close both ends; the agent's running prompts are cancelled."""
        await self.conn.close()
        await self.streams.close()

    async def __aenter__(self) -> InMemoryAgent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def start_in_memory(*, deterministic: bool = False, chunk_delay: float = 0.0) -> InMemoryStreams:
    """Start an :class:`ElizaAgent` in this loop; return the client's end of its streams."""
    (client_reader, client_writer), (agent_reader, agent_writer) = memory_stream_pair()
    agent = ElizaAgent(deterministic=deterministic, chunk_delay=chunk_delay)
    # The SDK looks the agent's methods up by name; Eliza leaves out the optional ones.
    running = acp.run_agent(agent, agent_writer, agent_reader)  # type: ignore[arg-type]
    task = asyncio.create_task(running, name="eliza.agent")
    return InMemoryStreams(client_reader, client_writer, agent, task, agent_writer)


async def connect_in_memory(
    client: Any,
    *,
    deterministic: bool = False,
    chunk_delay: float = 0.0,
    **connection_kwargs: Any,
) -> InMemoryAgent:
    """Start an :class:`ElizaAgent` in this loop and connect ``client`` to it.

    ``client`` is what :func:`acp.connect_to_agent` takes (a duck-typed ACP client, or a
    callable building one from the connection). Returns an :class:`InMemoryAgent`: use its
    ``conn`` (an ``acp.ClientSideConnection``) and ``await close()`` it (or ``async with``).
    """
    streams = start_in_memory(deterministic=deterministic, chunk_delay=chunk_delay)
    conn = acp.connect_to_agent(client, streams.writer, streams.reader, **connection_kwargs)
    return InMemoryAgent(conn, streams)


def main_stdio(argv: list[str] | None = None) -> int:
    """Run Eliza as an ACP agent over this process's stdin/stdout."""
    parser = argparse.ArgumentParser(
        prog="eliza", description="The built-in Eliza ACP agent, over stdio."
    )
    parser.add_argument(
        "--deterministic", action="store_true", help="seed every session identically"
    )
    parser.add_argument(
        "--chunk-delay",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="pause between streamed chunks",
    )
    args = parser.parse_args(argv)
    if args.chunk_delay < 0:
        parser.error("--chunk-delay must not be negative")
    agent = ElizaAgent(
        deterministic=args.deterministic, chunk_delay=args.chunk_delay, mcp_stderr=sys.stderr
    )
    try:
        asyncio.run(acp.run_agent(agent))  # type: ignore[arg-type]  # as in connect_in_memory
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main_stdio())
