"""The built-in Eliza: the ELIZA engine, the in-memory streams, and the real ACP agent driven
through the ACP SDK's client side (in memory and over a real stdio subprocess), including
permission requests, cancellation and MCP tool calls against a real MCP server."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    HttpMcpServer,
    McpServerStdio,
    RequestPermissionResponse,
)

from bridge.agents import eliza_script
from bridge.agents.eliza import (
    DETERMINISTIC_SEED,
    ElizaAgent,
    chunk_reply,
    connect_in_memory,
)
from bridge.agents.eliza_script import Eliza, reflect
from bridge.agents.memory import memory_stream_pair

REPO = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------


def all_reassemblies(keyword: str) -> set[str]:
    return {r for _, reassemblies in eliza_script.SCRIPT[keyword][1] for r in reassemblies}


def test_reflection_swaps_first_and_second_person() -> None:
    assert reflect("i am sad about my job") == "you are sad about your job"
    assert reflect("you were mean to me") == "I was mean to you"
    assert reflect("you are what i need") == "I am what you need"
    assert reflect("i told myself that you hate me") == "you told yourself that I hate you"


def test_i_am_reflects_the_rest_of_the_sentence() -> None:
    for seed in range(20):
        reply = Eliza(seed=seed).respond("I am sad")
        assert "you are sad" in reply or "be sad" in reply or "you sad" in reply, reply
    replies = {Eliza(seed=seed).respond("I am tired of the noise") for seed in range(40)}
    assert "Did you come to me because you are tired of the noise?" in replies


def test_i_feel_reflects_what_is_felt() -> None:
    for seed in range(20):
        reply = Eliza(seed=seed).respond("I feel that my boss ignores me")
        assert "feel" in reply.lower() and "your boss ignores you" in reply, reply


def test_hello_gets_a_greeting() -> None:
    assert Eliza(seed=1).respond("Hello") in set(eliza_script.SCRIPT["hello"][1][0][1])
    assert Eliza(seed=2).greeting() in eliza_script.GREETINGS


def test_highest_ranked_keyword_wins() -> None:
    # "computer" (rank 50) outranks "remember" (5) and "my" (2) wherever it appears.
    for seed in range(10):
        assert Eliza(seed=seed).respond("I remember my old computer") in all_reassemblies(
            "computer"
        )
    # ...and "remember" outranks "i".
    for seed in range(10):
        reply = Eliza(seed=seed).respond("I remember the summer")
        assert reply in {r.replace("(4)", "the summer") for r in all_reassemblies("remember")}, (
            reply
        )


def test_goto_rules_borrow_another_keywords_answers() -> None:
    assert Eliza(seed=3).respond("Why?") in all_reassemblies("what")
    assert Eliza(seed=3).respond("She is like a fish") in all_reassemblies("alike")


def test_unknown_input_gets_a_fallback_and_memory_comes_back() -> None:
    eliza = Eliza(seed=5)
    assert eliza.respond("xyzzy plugh") in eliza_script.FALLBACKS
    eliza.respond("My sister hates cats")
    recalled = eliza.respond("xyzzy plugh")
    assert "your sister hates cats" in recalled, recalled


def test_same_seed_same_conversation() -> None:
    lines = [
        "Hello",
        "I am unhappy",
        "My mother never listens",
        "You are a machine",
        "Why?",
        "xyzzy",
        "Bye",
    ]
    first = [Eliza(seed=42).respond(line) for line in lines]
    a, b = Eliza(seed=42), Eliza(seed=42)
    assert [a.respond(line) for line in lines] == [b.respond(line) for line in lines]
    # Unseeded engines still answer sensibly, and seeds do change the choices somewhere.
    assert all(Eliza().respond(line) for line in lines)
    assert any([Eliza(seed=s).respond(line) for line in lines] != first for s in range(5))


def test_deterministic_seed_gives_upstreams_golden_replies() -> None:
    eliza = Eliza(seed=DETERMINISTIC_SEED)
    assert eliza.respond("Hello") == "How do you do. Please state your problem."
    assert (
        eliza.respond("I am doing well, thanks!")
        == "Do you believe it is normal to be doing well thanks?"
    )
    assert Eliza(seed=DETERMINISTIC_SEED).respond("Hello, how are you?") == (
        "I don't have feelings, but I'm functioning well. What about you?"
    )


def test_chunk_reply_splits_on_words_and_rejoins_exactly() -> None:
    for reply in [
        "How do you do. Please state your problem.",
        "Why?",
        "Available tools:\n  - add: Add\n  - x: y",
        " lead and trail  ",
        "one two",
        "a " * 100,
    ]:
        chunks = chunk_reply(reply)
        assert "".join(chunks) == reply
        assert 1 <= len(chunks) <= 6
        assert all(chunks)
    assert 3 <= len(chunk_reply("How do you do. Please state your problem.")) <= 6


# --------------------------------------------------------------------------------------------
# In-memory streams
# --------------------------------------------------------------------------------------------


async def test_memory_streams_carry_bytes_both_ways_and_close_gives_eof() -> None:
    (reader_a, writer_a), (reader_b, writer_b) = memory_stream_pair()
    assert isinstance(writer_a, asyncio.StreamWriter) and isinstance(reader_b, asyncio.StreamReader)
    writer_a.write(b"ping\n")
    await writer_a.drain()
    assert await reader_b.readline() == b"ping\n"
    writer_b.write(b"pong\n")
    await writer_b.drain()
    assert await reader_a.readline() == b"pong\n"
    writer_a.close()
    await writer_a.wait_closed()
    assert await reader_b.read() == b""
    writer_b.close()
    await writer_b.wait_closed()


async def test_memory_streams_apply_back_pressure() -> None:
    (_, writer_a), (reader_b, writer_b) = memory_stream_pair(limit=1024)
    writer_a.write(b"x" * 10_000)
    drained = asyncio.ensure_future(writer_a.drain())
    await asyncio.sleep(0.01)
    assert not drained.done()  # the peer holds more than twice its limit unread
    assert len(await reader_b.readexactly(10_000)) == 10_000
    await asyncio.wait_for(drained, 1)
    writer_a.close()
    writer_b.close()


# --------------------------------------------------------------------------------------------
# The ACP agent
# --------------------------------------------------------------------------------------------


class RecordingClient:
    """A minimal ACP client: records every session update, answers permission requests."""

    def __init__(self, answer: str | None = "allow_once") -> None:
        self.answer = answer  # an option id, or None for "cancelled"
        self.updates: list[Any] = []
        self.permission_requests: list[Any] = []
        self.permission_asked = asyncio.Event()
        self.first_chunk = asyncio.Event()
        self.release_permission: asyncio.Future[str | None] | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        # Recorded before any await, so arrival order is kept.
        self.updates.append(update)
        if update.session_update == "agent_message_chunk":
            self.first_chunk.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ):
        self.permission_requests.append((tool_call, options))
        self.permission_asked.set()
        answer = self.answer
        if self.release_permission is not None:
            answer = await self.release_permission
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    def chunks(self) -> list[str]:
        return [u.content.text for u in self.updates if u.session_update == "agent_message_chunk"]

    def text(self) -> str:
        return "".join(self.chunks())

    def clear(self) -> None:
        self.updates.clear()


async def start_session(client: RecordingClient, **kwargs: Any):
    handle = await connect_in_memory(client, **kwargs)
    init = await handle.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
    mcp_servers = kwargs.pop("mcp_servers", None)
    session = await handle.conn.new_session(cwd=str(REPO), mcp_servers=mcp_servers or [])
    return handle, init, session.session_id


async def say(handle: Any, client: RecordingClient, session_id: str, text: str) -> tuple[str, str]:
    client.clear()
    response = await handle.conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])
    return response.stop_reason, client.text()


async def test_in_memory_chat_streams_a_reply_in_chunks() -> None:
    client = RecordingClient()
    handle = await connect_in_memory(client, deterministic=True)
    try:
        init = await handle.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        assert init.protocol_version == acp.PROTOCOL_VERSION
        assert init.agent_info is not None and init.agent_info.name == "symposium-eliza"
        assert init.agent_capabilities.mcp_capabilities.http is True
        session = await handle.conn.new_session(cwd=str(REPO), mcp_servers=[])
        assert handle.agent.sessions[session.session_id].cwd == str(REPO)

        response = await handle.conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("Hello")]
        )
        assert response.stop_reason == "end_turn"
        chunks = client.chunks()
        assert 3 <= len(chunks) <= 6
        assert "".join(chunks) == "How do you do. Please state your problem."

        # Text blocks are joined (by a line break) and read as one sentence.
        client.clear()
        reference = Eliza(seed=DETERMINISTIC_SEED)
        reference.respond("Hello")
        expected = reference.respond("I am tired of the noise")
        assert "tired of the noise" in expected
        blocks = [acp.text_block("I am"), acp.text_block("tired of the noise")]
        response = await handle.conn.prompt(session_id=session.session_id, prompt=blocks)
        assert response.stop_reason == "end_turn"
        assert client.text() == expected
    finally:
        await handle.close()
    assert handle.task.done()


async def test_deterministic_sessions_replay_identical_replies() -> None:
    lines = ["Hello", "I am worried about my exams", "You are not helping", "Why?", "Perhaps"]
    transcripts = []
    client = RecordingClient()
    handle = await connect_in_memory(client, deterministic=True)
    try:
        await handle.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        for _ in range(2):
            session = await handle.conn.new_session(cwd=str(REPO), mcp_servers=[])
            replies = []
            for line in lines:
                stop, text = await say(handle, client, session.session_id, line)
                assert stop == "end_turn" and text
                replies.append(text)
            transcripts.append(replies)
    finally:
        await handle.close()
    assert transcripts[0] == transcripts[1]
    reference = Eliza(seed=DETERMINISTIC_SEED)
    assert transcripts[0] == [reference.respond(line) for line in lines]


async def test_load_session_gives_a_fresh_conversation_under_that_id() -> None:
    client = RecordingClient()
    handle = await connect_in_memory(client, deterministic=True)
    try:
        await handle.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        await handle.conn.load_session(cwd=str(REPO), session_id="old-one", mcp_servers=[])
        stop, text = await say(handle, client, "old-one", "Hello")
        assert (stop, text) == ("end_turn", "How do you do. Please state your problem.")
        with pytest.raises(acp.RequestError):
            await handle.conn.prompt(session_id="never-made", prompt=[acp.text_block("Hello")])
    finally:
        await handle.close()


async def test_over_real_stdio_subprocess() -> None:
    client = RecordingClient()
    async with acp.spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "bridge.agents.eliza",
        "--deterministic",
        cwd=REPO,
        # The SDK pipes stderr and never reads it; nothing useful comes out of Eliza there.
        transport_kwargs={"stderr": subprocess.DEVNULL},
    ) as (conn, process):
        init = await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION), 15)
        assert init.agent_info is not None and init.agent_info.name == "symposium-eliza"
        session = await conn.new_session(cwd=str(REPO), mcp_servers=[])
        reference = Eliza(seed=DETERMINISTIC_SEED)
        for line in ["Hello", "I am doing well, thanks!", "My father was a sailor"]:
            client.clear()
            response = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[acp.text_block(line)]), 10
            )
            assert response.stop_reason == "end_turn"
            assert len(client.chunks()) >= 3
            assert client.text() == reference.respond(line)
    assert process.returncode is not None


@pytest.mark.parametrize(
    ("answer", "expected", "final_status"),
    [
        ("allow_once", "Permission granted (allow_once). I ran the tests.", "completed"),
        ("reject_once", "Permission denied (reject_once). I did not run the tests.", "failed"),
        (None, "Permission request cancelled.", "failed"),
    ],
)
async def test_ask_permission(answer: str | None, expected: str, final_status: str) -> None:
    client = RecordingClient(answer=answer)
    handle, _, session_id = await start_session(client)
    try:
        stop, text = await say(handle, client, session_id, "Ask permission to run the tests")
    finally:
        await handle.close()
    assert stop == "end_turn"
    assert text == expected

    [(tool_call, options)] = client.permission_requests
    assert [(o.option_id, o.name, o.kind) for o in options] == [
        ("allow_once", "Allow once", "allow_once"),
        ("allow_always", "Always allow", "allow_always"),
        ("reject_once", "Reject", "reject_once"),
        ("reject_always", "Always reject", "reject_always"),
    ]
    start, update = client.updates[0], client.updates[1]
    assert start.session_update == "tool_call"
    assert (start.title, start.kind, start.status) == ("run the tests", "execute", "pending")
    assert start.raw_input == {"command": "run the tests"}
    assert tool_call.tool_call_id == start.tool_call_id
    assert update.session_update == "tool_call_update" and update.tool_call_id == start.tool_call_id
    assert update.status == final_status
    if final_status == "completed":
        assert update.content[0].content.text == "Ran run the tests"
    assert all(u.session_update == "agent_message_chunk" for u in client.updates[2:])


async def test_a_command_after_a_notice_block_is_still_carried_out() -> None:
    """The bridge puts a denial's reason in a block of its own before the person's next text:
    the command in the following block still starts a line and is carried out."""
    client = RecordingClient(answer="allow_once")
    handle, _, session_id = await start_session(client)
    try:
        client.clear()
        blocks = [
            acp.text_block("The user denied `drop the database`: not on a Friday"),
            acp.text_block("ask permission to deploy"),
        ]
        response = await handle.conn.prompt(session_id=session_id, prompt=blocks)
    finally:
        await handle.close()
    assert response.stop_reason == "end_turn"
    [(tool_call, _)] = client.permission_requests
    assert tool_call.title == "deploy"
    assert client.text() == "Permission granted (allow_once). I ran deploy."


async def test_cancel_mid_stream_stops_chunks_and_returns_cancelled() -> None:
    client = RecordingClient()
    handle, _, session_id = await start_session(client, deterministic=True, chunk_delay=0.05)
    line = "I feel that the long summer we spent by the sea with the dogs was far too short"
    full = Eliza(seed=DETERMINISTIC_SEED).respond(line)
    assert len(chunk_reply(full)) >= 4
    try:
        turn = asyncio.create_task(
            handle.conn.prompt(session_id=session_id, prompt=[acp.text_block(line)])
        )
        await asyncio.wait_for(client.first_chunk.wait(), 30)
        await handle.conn.cancel(session_id=session_id)
        response = await asyncio.wait_for(turn, 30)
        assert response.stop_reason == "cancelled"
        seen = client.text()
        assert full.startswith(seen) and len(seen) < len(full)
        count = len(client.chunks())

        # The session carries on normally afterwards, and nothing of the cancelled reply trickles
        # in after its answer: what comes next is the next reply only.
        after = await handle.conn.prompt(session_id=session_id, prompt=[acp.text_block("Hello")])
        assert after.stop_reason == "end_turn"
        later = client.chunks()[count:]
        assert later and not set(later) & set(chunk_reply(full)[count:]), later
    finally:
        await handle.close()


async def test_cancel_while_permission_is_pending() -> None:
    client = RecordingClient()
    client.release_permission = asyncio.get_running_loop().create_future()
    handle, _, session_id = await start_session(client)
    try:
        turn = asyncio.create_task(
            handle.conn.prompt(
                session_id=session_id, prompt=[acp.text_block("ask permission to deploy")]
            )
        )
        await asyncio.wait_for(client.permission_asked.wait(), 30)
        await handle.conn.cancel(session_id=session_id)
        client.release_permission.set_result(
            None
        )  # as ACP asks: a cancelled turn's request answers cancelled
        response = await asyncio.wait_for(turn, 30)
        assert response.stop_reason == "cancelled"
        assert client.chunks() == []
        assert client.updates[-1].session_update == "tool_call_update"
        assert client.updates[-1].status == "failed"
    finally:
        await handle.close()


async def test_import_does_not_load_mcp() -> None:
    code = "import sys, bridge.agents.eliza; print(any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules))"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, cwd=REPO, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    assert out.strip() == b"False"


# --------------------------------------------------------------------------------------------
# MCP tools, against a real streamable-HTTP MCP server served by uvicorn in this loop
# --------------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def demo_mcp_server():
    import uvicorn
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("demo")
    slow_started = asyncio.Event()  # the `slow` tool is running: a call is in flight

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    async def slow(seconds: float) -> str:
        slow_started.set()
        await asyncio.sleep(seconds)
        return "done"

    @server.tool()
    def fail(reason: str) -> str:
        raise ToolError(f"failing on purpose: {reason}")

    config = uvicorn.Config(
        server.streamable_http_app(),
        host="127.0.0.1",
        port=0,
        log_level="warning",
        timeout_graceful_shutdown=1,
        lifespan="on",
    )
    web = uvicorn.Server(config)
    task = asyncio.create_task(web.serve())
    try:
        while not web.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        port = web.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}/mcp", slow_started
    finally:
        web.should_exit = True
        await asyncio.wait_for(task, 10)


async def test_mcp_tools_over_http() -> None:
    async with demo_mcp_server() as (url, slow_started):
        client = RecordingClient()
        demo = HttpMcpServer(type="http", name="demo", url=url, headers=[])
        handle = await connect_in_memory(client)
        try:
            await handle.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = (await handle.conn.new_session(cwd=str(REPO), mcp_servers=[demo])).session_id
            assert handle.agent.sessions[session].mcp_servers[0].url == url

            stop, text = await say(handle, client, session, "list tools from demo")
            assert stop == "end_turn"
            assert (
                text
                == "Available tools:\n  - add: Add two numbers.\n  - slow: No description\n  - fail: No description"
            )
            assert len(client.chunks()) >= 3

            stop, text = await say(
                handle, client, session, 'use tool demo::add with {"a": 2, "b": 3}'
            )
            assert (stop, text) == ("end_turn", "OK: 5")

            stop, text = await say(
                handle, client, session, 'USE TOOL demo::fail with {"reason": "test"}'
            )
            assert text.startswith("ERROR: ") and "failing on purpose: test" in text

            _, text = await say(handle, client, session, "use tool demo::add with [1, 2]")
            assert text == "ERROR: tool arguments must be a JSON object"
            _, text = await say(handle, client, session, "list tools from elsewhere")
            assert text == "ERROR: no MCP server named elsewhere"

            # A cancel while a tool call is in flight ends the turn at once, with no reply.
            client.clear()
            prompt = [acp.text_block('use tool demo::slow with {"seconds": 3600}')]
            turn = asyncio.create_task(handle.conn.prompt(session_id=session, prompt=prompt))
            await asyncio.wait_for(slow_started.wait(), 30)
            assert not turn.done()
            await handle.conn.cancel(session_id=session)
            response = await asyncio.wait_for(turn, 60)  # the tool would take an hour
            assert response.stop_reason == "cancelled"
            assert client.chunks() == []
        finally:
            await handle.close()


async def test_mcp_failures_become_error_replies(unused_tcp_port: int) -> None:
    client = RecordingClient()
    dead = HttpMcpServer(
        type="http", name="dead", url=f"http://127.0.0.1:{unused_tcp_port}/mcp", headers=[]
    )
    broken = McpServerStdio(name="broken", command=str(REPO / "no-such-command"), args=[], env=[])
    handle = await connect_in_memory(client)
    try:
        await handle.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = (
            await handle.conn.new_session(cwd=str(REPO), mcp_servers=[dead, broken])
        ).session_id
        stop, text = await asyncio.wait_for(
            say(handle, client, session, "list tools from dead"), 10
        )
        assert stop == "end_turn" and text.startswith("ERROR: ") and len(text) > len("ERROR: ")
        stop, text = await asyncio.wait_for(
            say(handle, client, session, "use tool broken::x with {}"), 10
        )
        assert stop == "end_turn" and text.startswith("ERROR: ") and len(text) > len("ERROR: ")
    finally:
        await handle.close()


STDIO_SERVER = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("echo")


@server.tool()
def echo(text: str) -> str:
    \"\"\"Say the text back.\"\"\"
    return text


server.run()
"""


async def test_mcp_tools_over_stdio() -> None:
    client = RecordingClient()
    echo = McpServerStdio(name="echo", command=sys.executable, args=["-c", STDIO_SERVER], env=[])
    handle = await connect_in_memory(client)
    try:
        await handle.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = (await handle.conn.new_session(cwd=str(REPO), mcp_servers=[echo])).session_id
        _, text = await asyncio.wait_for(say(handle, client, session, "list tools from echo"), 15)
        assert text == "Available tools:\n  - echo: Say the text back."
        _, text = await asyncio.wait_for(
            say(handle, client, session, 'use tool echo::echo with {"text": "hi"}'), 15
        )
        assert text == "OK: hi"
    finally:
        await handle.close()


def test_agent_defaults() -> None:
    agent = ElizaAgent()
    assert agent.deterministic is False and agent.chunk_delay == 0.0


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("allow_always", "Permission granted (allow_always, this session). I ran deploy."),
        ("reject_always", "Permission denied (reject_always, this session). I did not run deploy."),
    ],
)
async def test_always_holds_for_the_rest_of_the_session(answer: str, expected: str) -> None:
    client = RecordingClient(answer=answer)
    handle, _, session_id = await start_session(client)
    try:
        _, first = await say(handle, client, session_id, "Ask permission to run the tests")
        _, second = await say(handle, client, session_id, "Ask permission to deploy")
        other = (await handle.conn.new_session(cwd=str(REPO), mcp_servers=[])).session_id
        _, elsewhere = await say(handle, client, other, "Ask permission to deploy")
    finally:
        await handle.close()
    assert first.endswith("the tests.") and second == expected
    assert len(client.permission_requests) == 2, "asked once per session"
    assert "this session" not in elsewhere, "another session asks again"
