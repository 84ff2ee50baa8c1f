"""Real third-party ACP agents, driven by a bare ACP SDK client, offline.

The agents are installed by ``tests/agents/install.py`` into ``.cache/agents`` on first use (about
40 s on a fresh machine, then instant). Claude Code and Gemini CLI talk to the scripted fake model
API of ``tests/agents/fake_anthropic.py``; fast-agent runs its ``passthrough`` model. The MCP tools
offered in ``session/new`` are served over streamable HTTP on 127.0.0.1 in the test's own loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.agents import install as agents
from tests.agents.fake_anthropic import (
    FakeAnthropic,
    TextTurn,
    ToolUse,
    last_user_text,
    serve_asgi,
    text,
    tool_results,
    tool_use,
)

INIT_TIMEOUT = 60.0  # a cold start of fast-agent on a busy 2-core machine can take a while
TURN_TIMEOUT = 30.0


# -- install -------------------------------------------------------------------------------------
# (the install fixtures fast_agent_ready, claude_ready, gemini_ready live in tests/conftest.py)


# -- a bare ACP client ---------------------------------------------------------------------------
@dataclass
class RecordingClient:
    """Records every update and permission request; answers permissions by option *kind*."""

    choose: Callable[[Any, list[Any]], str] = lambda tool_call, options: "allow_once"
    updates: list[dict[str, Any]] = field(default_factory=list)
    permissions: list[dict[str, Any]] = field(default_factory=list)
    first_chunk: asyncio.Event = field(default_factory=asyncio.Event)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        # record before any await: each notification runs in its own task
        data = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.updates.append(data)
        if data.get("sessionUpdate") == "agent_message_chunk" and data.get("content", {}).get(
            "text"
        ):
            self.first_chunk.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        self.permissions.append(
            {
                "tool_call": tool_call.model_dump(mode="json", by_alias=True, exclude_none=True),
                "options": [
                    o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in options
                ],
            }
        )
        kind = self.choose(tool_call, options)
        for option in options:
            if option.kind == kind:
                return RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
                )
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        from acp.schema import ReadTextFileResponse

        return ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        Path(path).write_text(content)
        return None

    # views
    def text(self) -> str:
        return "".join(
            u["content"].get("text", "")
            for u in self.updates
            if u.get("sessionUpdate") == "agent_message_chunk"
            and u.get("content", {}).get("type") == "text"
        )

    def chunks(self) -> list[str]:
        return [
            u["content"]["text"]
            for u in self.updates
            if u.get("sessionUpdate") == "agent_message_chunk" and u.get("content", {}).get("text")
        ]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.updates if u.get("sessionUpdate") == kind]


@dataclass
class Running:
    conn: Any
    proc: asyncio.subprocess.Process
    stderr: list[str]
    init: Any
    init_seconds: float

    def stderr_text(self) -> str:
        return "\n".join(self.stderr[-60:])


@contextlib.asynccontextmanager
async def running(
    launch: agents.AgentLaunch, client: RecordingClient, cwd: Path
) -> AsyncIterator[Running]:
    """Spawn the agent in its own process group, connect, ``initialize``; at exit kill the
    whole group (Gemini and Claude leave children behind otherwise)."""
    import acp
    from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        launch.command,
        *launch.args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=launch.env,
        cwd=str(cwd),
        start_new_session=True,
        limit=16 * 1024 * 1024,  # Claude's first update lists every command in one long line
    )
    stderr: list[str] = []

    async def drain() -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            stderr.append(line.decode(errors="replace").rstrip())

    drainer = asyncio.create_task(drain())
    conn = acp.connect_to_agent(client, proc.stdin, proc.stdout)
    try:
        try:
            init = await asyncio.wait_for(
                conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(
                        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                        terminal=False,
                    ),
                    client_info=Implementation(name="symposium-tests", version="0"),
                ),
                INIT_TIMEOUT,
            )
        except Exception as exc:
            raise AssertionError(
                f"initialize failed: {exc!r}\nstderr:\n" + "\n".join(stderr[-60:])
            ) from exc
        yield Running(conn, proc, stderr, init, time.monotonic() - started)
    finally:
        with contextlib.suppress(Exception):
            await conn.close()
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(proc.wait(), 0.3)
        for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), grace)
        drainer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await drainer


async def prompt(run: Running, session_id: str, words: str, timeout: float = TURN_TIMEOUT) -> str:
    import acp

    try:
        response = await asyncio.wait_for(
            run.conn.prompt(session_id=session_id, prompt=[acp.text_block(words)]), timeout
        )
    except Exception as exc:
        raise AssertionError(f"prompt failed: {exc!r}\nstderr:\n{run.stderr_text()}") from exc
    return response.stop_reason


# -- an MCP server with two tools ----------------------------------------------------------------
@dataclass
class ToolServer:
    url: str
    # (tool, args, whether the other tool was running at the same time)
    calls: list[tuple[str, dict[str, Any], bool]]

    def http(self, name: str = "tools") -> Any:
        from acp.schema import HttpMcpServer

        return HttpMcpServer(type="http", name=name, url=self.url, headers=[])


@contextlib.asynccontextmanager
async def tool_server(wait_for_sibling: float = 0.0) -> AsyncIterator[ToolServer]:
    """``add(a, b)`` → ``"sum: <a+b>"`` and ``shout(text)`` → upper case, read-only (Claude runs
    read-only tools of one message concurrently); plain-text results (no structured output).
    With ``wait_for_sibling``, each call waits (at most that many seconds, a limit for a broken
    run) for the other tool's call to start, and records whether it did while it still ran: two
    calls run concurrently exactly when each saw the other — no clock compared."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    calls: list[tuple[str, dict[str, Any], bool]] = []
    started = {"add": asyncio.Event(), "shout": asyncio.Event()}
    server = MCPServer("tools")
    read_only = ToolAnnotations(readOnlyHint=True)

    async def sibling_ran(me: str) -> bool:
        started[me].set()
        if not wait_for_sibling:
            return False
        other = started["shout" if me == "add" else "add"]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(other.wait(), wait_for_sibling)
        return other.is_set()

    @server.tool(annotations=read_only, structured_output=False)
    async def add(a: int, b: int) -> str:
        """Add two integers."""
        calls.append(("add", {"a": a, "b": b}, await sibling_ran("add")))
        # not bare "5": Gemini CLI parses JSON-looking tool text and fails the call unless it is
        # an object ("expected record, received number")
        return f"sum: {a + b}"

    @server.tool(annotations=read_only, structured_output=False)
    async def shout(text: str) -> str:
        """Upper-case a text."""
        calls.append(("shout", {"text": text}, await sibling_ran("shout")))
        return text.upper()

    async with serve_asgi(server.streamable_http_app()) as base:
        yield ToolServer(f"{base}/mcp", calls)


def _overlap(calls: list[tuple[str, dict[str, Any], bool]]) -> bool:
    """Both calls ran at the same time: each saw the other start before it ended."""
    return len(calls) >= 2 and all(saw for _, _, saw in calls[:2])


# -- fast-agent ----------------------------------------------------------------------------------
@pytest.mark.agents
async def test_fast_agent_passthrough_echoes(fast_agent_ready: None, tmp_path: Path) -> None:
    client = RecordingClient()
    launch = agents.fast_agent(tmp_path / "home")
    (tmp_path / "work").mkdir()
    async with running(launch, client, tmp_path / "work") as run:
        print(f"[agents] fast-agent spawn→initialize {run.init_seconds:.2f} s")
        caps = run.init.agent_capabilities
        assert caps.mcp_capabilities.http is True
        session = await run.conn.new_session(cwd=str(tmp_path / "work"), mcp_servers=[])
        assert await prompt(run, session.session_id, "hello from symposium") == "end_turn"
        assert client.text() == "hello from symposium"


@pytest.mark.agents
async def test_fast_agent_calls_mcp_tool_after_permission(
    fast_agent_ready: None, tmp_path: Path
) -> None:
    client = RecordingClient()
    launch = agents.fast_agent(tmp_path / "home")
    (tmp_path / "work").mkdir()
    async with tool_server() as tools, running(launch, client, tmp_path / "work") as run:
        session = await run.conn.new_session(
            cwd=str(tmp_path / "work"), mcp_servers=[tools.http("tools")]
        )
        stop = await prompt(run, session.session_id, '***CALL_TOOL tools__add {"a": 2, "b": 40}')
        assert stop == "end_turn"
        assert [(c[0], c[1]) for c in tools.calls] == [("add", {"a": 2, "b": 40})]
        # the permission request: all four kinds; title "<server>/<tool>"; toolCallId is a
        # placeholder that matches no tool_call update
        (perm,) = client.permissions
        assert {o["kind"] for o in perm["options"]} == {
            "allow_once",
            "allow_always",
            "reject_once",
            "reject_always",
        }
        assert perm["tool_call"]["title"] == "tools/add"
        assert perm["tool_call"]["rawInput"] == {"a": 2, "b": 40}
        (started,) = client.of("tool_call")
        assert started["title"] == "tools/add"
        done = [u for u in client.of("tool_call_update") if u.get("status") == "completed"]
        assert done and done[-1]["rawOutput"] == "sum: 42"
        assert "sum: 42" in client.text()


# -- Claude Code (Zed's ACP adapter) against the fake Anthropic API ------------------------------
@pytest.mark.agents
async def test_claude_streams_scripted_text(claude_ready: None, tmp_path: Path) -> None:
    reply = "Hello from the scripted model, in several chunks."
    client = RecordingClient()
    (tmp_path / "work").mkdir()
    async with FakeAnthropic([text(reply, chunks=5, delay=0.02)]) as api:
        launch = agents.claude_agent(tmp_path / "home", api.base_url)
        async with running(launch, client, tmp_path / "work") as run:
            print(f"[agents] claude spawn→initialize {run.init_seconds:.2f} s")
            assert run.init.agent_capabilities.mcp_capabilities.http is True
            session = await run.conn.new_session(cwd=str(tmp_path / "work"), mcp_servers=[])
            assert await prompt(run, session.session_id, "Say hello") == "end_turn"
    assert client.text() == reply
    assert len(client.chunks()) == 5
    (main,) = api.main_requests
    assert main["stream"] is True
    assert last_user_text(main) == "Say hello"
    assert {"Bash", "Read", "Write"} <= {t["name"] for t in main["tools"]}


@pytest.mark.agents
async def test_claude_cancel_mid_stream(claude_ready: None, tmp_path: Path) -> None:
    client = RecordingClient()
    (tmp_path / "work").mkdir()
    async with FakeAnthropic([text("x" * 200, chunks=100, delay=0.05)]) as api:
        launch = agents.claude_agent(tmp_path / "home", api.base_url)
        async with running(launch, client, tmp_path / "work") as run:
            session = await run.conn.new_session(cwd=str(tmp_path / "work"), mcp_servers=[])
            import acp

            turn = asyncio.create_task(
                run.conn.prompt(session_id=session.session_id, prompt=[acp.text_block("go")])
            )
            await asyncio.wait_for(client.first_chunk.wait(), TURN_TIMEOUT)
            t0 = time.monotonic()
            await run.conn.cancel(session_id=session.session_id)
            response = await asyncio.wait_for(turn, TURN_TIMEOUT)
            print(f"[agents] claude cancel→cancelled {1000 * (time.monotonic() - t0):.0f} ms")
            assert response.stop_reason == "cancelled"
    assert 0 < len(client.text()) < 200


@pytest.mark.agents
async def test_claude_calls_two_mcp_tools_in_one_message(
    claude_ready: None, tmp_path: Path
) -> None:
    add = ToolUse("mcp__tools__add", {"a": 2, "b": 3})
    shout = ToolUse("mcp__tools__shout", {"text": "quiet"})
    client = RecordingClient()
    (tmp_path / "work").mkdir()
    async with (
        tool_server(wait_for_sibling=60) as tools,
        FakeAnthropic([tool_use(add, shout), text("Both tools ran.")]) as api,
    ):
        launch = agents.claude_agent(tmp_path / "home", api.base_url)
        async with running(launch, client, tmp_path / "work") as run:
            session = await run.conn.new_session(
                cwd=str(tmp_path / "work"), mcp_servers=[tools.http("tools")]
            )
            assert await prompt(run, session.session_id, "Use both tools") == "end_turn"

    # the model was offered the MCP tools as mcp__<server>__<tool>
    first, second = api.main_requests
    assert {"mcp__tools__add", "mcp__tools__shout"} <= {t["name"] for t in first["tools"]}
    # both ran, concurrently (read-only tools of one message)
    assert sorted((c[0], json.dumps(c[1])) for c in tools.calls) == [
        ("add", '{"a": 2, "b": 3}'),
        ("shout", '{"text": "quiet"}'),
    ]
    assert _overlap(tools.calls)
    # Claude asks permission for each MCP tool; title and toolCallId match the tool_call update
    assert sorted(p["tool_call"]["toolCallId"] for p in client.permissions) == sorted(
        [add.id, shout.id]
    )
    assert {p["tool_call"]["title"] for p in client.permissions} == {
        "mcp__tools__add",
        "mcp__tools__shout",
    }
    assert {u["toolCallId"] for u in client.of("tool_call")} == {add.id, shout.id}
    # the results reached the model, as tool_result blocks in the next request
    results = {r["tool_use_id"]: r for r in tool_results(second)}
    assert results[add.id]["text"] == "sum: 5" and not results[add.id]["is_error"]
    assert results[shout.id]["text"] == "QUIET" and not results[shout.id]["is_error"]
    assert client.text() == "Both tools ran."


@pytest.mark.agents
async def test_claude_bash_rejected_never_runs(claude_ready: None, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    bash = ToolUse("Bash", {"command": "echo ran > marker.txt", "description": "Write a marker"})
    client = RecordingClient(choose=lambda tool_call, options: "reject_once")
    async with FakeAnthropic([tool_use(bash), text("Understood.")]) as api:
        launch = agents.claude_agent(tmp_path / "home", api.base_url)
        async with running(launch, client, work) as run:
            session = await run.conn.new_session(cwd=str(work), mcp_servers=[])
            assert await prompt(run, session.session_id, "Write a marker") == "end_turn"
    (perm,) = client.permissions
    assert perm["tool_call"]["toolCallId"] == bash.id
    assert perm["tool_call"]["kind"] == "execute"
    assert perm["tool_call"]["rawInput"]["command"] == "echo ran > marker.txt"
    assert not (work / "marker.txt").exists()
    (result,) = tool_results(api.main_requests[1])
    assert result["tool_use_id"] == bash.id and result["is_error"]


# -- Gemini CLI against the same fake, in its Gemini dialect -------------------------------------
@pytest.mark.agents
async def test_gemini_calls_mcp_tools_and_streams(gemini_ready: None, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    add = ToolUse("mcp_tools_add", {"a": 20, "b": 22})
    shout = ToolUse("mcp_tools_shout", {"text": "hey"})
    client = RecordingClient()
    script = [tool_use(add, shout), text("Gemini is done.", chunks=3)]
    async with tool_server() as tools, FakeAnthropic(script) as api:
        launch = agents.gemini_agent(tmp_path / "home", api.base_url, trusted=[work])
        async with running(launch, client, work) as run:
            print(f"[agents] gemini spawn→initialize {run.init_seconds:.2f} s")
            assert run.init.agent_capabilities.mcp_capabilities.http is True
            session = await run.conn.new_session(cwd=str(work), mcp_servers=[tools.http("tools")])
            assert await prompt(run, session.session_id, "Use both tools") == "end_turn"
    first, second = api.main_requests
    offered = {d["name"] for t in first["tools"] for d in t.get("functionDeclarations", [])}
    assert {"mcp_tools_add", "mcp_tools_shout"} <= offered
    assert sorted(c[0] for c in tools.calls) == ["add", "shout"]
    assert {p["tool_call"]["title"] for p in client.permissions} == {
        "add (tools MCP Server)",
        "shout (tools MCP Server)",
    }
    # Gemini wraps MCP results for the model in <untrusted_context>
    texts = sorted(r["text"] for r in tool_results(second))
    assert len(texts) == 2 and "HEY" in texts[0] and "sum: 42" in texts[1], texts
    assert client.text() == "Gemini is done."


# -- the fake itself (no agent needed) -----------------------------------------------------------
def _post(url: str, body: dict[str, Any]) -> tuple[str, str]:
    import urllib.request

    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.headers.get("content-type", ""), resp.read().decode()


def _sse_events(raw: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for frame in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in frame.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


async def test_fake_anthropic_speaks_messages_api() -> None:
    tools = [{"name": "mcp__t__add", "input_schema": {"type": "object"}}]

    def respond(body: dict[str, Any]) -> Any:
        return (
            TextTurn("you said: " + last_user_text(body))
            if "echo" in last_user_text(body)
            else None
        )

    script = [
        tool_use(("mcp__t__add", {"a": 1}), ("mcp__t__add", {"a": 2}), text="Calling."),
        text("abcdef", chunks=3),
    ]
    async with FakeAnthropic(script, respond=respond, side_text="A title") as api:
        url = api.base_url + "/v1/messages"
        user = {"role": "user", "content": [{"type": "text", "text": "go"}]}
        # a side call (no tools) neither eats the script nor counts as a main request
        ctype, raw = await asyncio.to_thread(
            _post, url, {"model": "m", "messages": [user], "max_tokens": 5}
        )
        assert ctype.startswith("application/json") and json.loads(raw)["content"] == [
            {"type": "text", "text": "A title"}
        ]
        # streamed tool turn: two tool_use blocks after a text block, input as input_json_delta
        body = {"model": "m", "messages": [user], "tools": tools, "stream": True}
        ctype, raw = await asyncio.to_thread(_post, url, body)
        events = _sse_events(raw)
        assert ctype.startswith("text/event-stream")
        assert next(e for e, _ in events) == "message_start" and [e for e, _ in events][-2:] == [
            "message_delta",
            "message_stop",
        ]
        assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
        starts = [d["content_block"] for e, d in events if e == "content_block_start"]
        assert [b["type"] for b in starts] == ["text", "tool_use", "tool_use"]
        for index in (1, 2):
            partial = "".join(
                d["delta"]["partial_json"]
                for e, d in events
                if e == "content_block_delta" and d["index"] == index
            )
            assert json.loads(partial) == {"a": index}
        ids = [b["id"] for b in starts[1:]]
        # the results come back; the next scripted turn streams in 3 text deltas
        results = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in ids],
        }
        body = {
            "model": "m",
            "messages": [user, {"role": "assistant", "content": []}, results],
            "tools": tools,
            "stream": True,
        }
        _, raw = await asyncio.to_thread(_post, url, body)
        deltas = [d["delta"]["text"] for e, d in _sse_events(raw) if e == "content_block_delta"]
        assert deltas == ["ab", "cd", "ef"]
        # respond() overrides the script; non-streaming main request
        echo = {
            "role": "user",
            "content": [
                {"type": "text", "text": "<system-reminder>x</system-reminder>"},
                {"type": "text", "text": "echo me"},
            ],
        }
        _, raw = await asyncio.to_thread(
            _post, url, {"model": "m", "messages": [echo], "tools": tools}
        )
        assert json.loads(raw)["content"] == [{"type": "text", "text": "you said: echo me"}]
    assert len(api.requests) == 4 and len(api.main_requests) == 3
    assert [r["tool_use_id"] for r in tool_results(api.main_requests[1])] == ids
