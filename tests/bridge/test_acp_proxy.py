"""The ACP front door (`symposium-tui acp`) with the official SDK's own client on one side.

The proxy runs as a real subprocess over real pipes; the agent behind it is the suite's surface
agent (tests/agents/surface_agent.py, written on the SDK's agent side: every session method,
every update kind, fs/terminal/extension calls, `_meta` everywhere) or the built-in Eliza. A
console, where one is needed, is the real ConsoleHost on its real unix socket in this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import (
    AllowedOutcome,
    CreateTerminalResponse,
    Implementation,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    TextContentBlock,
    WaitForTerminalExitResponse,
)

from bridge import events as ev
from tests.support.acp_console import Console, audit_lines, tool_outcomes
from tests.support.processes import child_pids

REPO = Path(__file__).resolve().parents[2]
SURFACE = str(REPO / "tests" / "agents" / "surface_agent.py")
PROXY = [sys.executable, "-m", "symposium_tui", "acp"]
SURFACE_PROXY = [*PROXY, "--", sys.executable, SURFACE]


class RecordingClient:
    """An ACP client on the SDK: records what reaches it, answers like a real editor would."""

    def __init__(self, permission: str | None = "yes") -> None:
        self.updates: list[Any] = []
        self.update_meta: list[Any] = []
        self.permission_asked: list[Any] = []
        self.permission = permission  # option id to pick; None: never answer (a person away)
        self.reads: list[tuple[str, int | None, int | None]] = []
        self.writes: list[tuple[str, str]] = []
        self.terminals: list[str] = []
        self.ext_calls: list[tuple[str, dict[str, Any]]] = []
        self.ext_notes: list[tuple[str, dict[str, Any]]] = []
        self.noted = asyncio.Event()
        self.asked = asyncio.Event()
        self.got_update = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self.update_meta.append(kwargs)
        self.got_update.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **kwargs: Any
    ) -> Any:
        self.permission_asked.append(tool_call)
        self.asked.set()
        if self.permission is None:
            await asyncio.Event().wait()
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.permission),
            field_meta={"answeredBy": "recording-client"},
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> Any:
        self.reads.append((path, line, limit))
        return ReadTextFileResponse(content=f"contents of {path}")

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> None:
        self.writes.append((path, content))

    async def create_terminal(
        self, session_id: str, command: str, args: Any = None, **kwargs: Any
    ) -> Any:
        self.terminals.append(" ".join([command, *(args or [])]))
        return CreateTerminalResponse(terminal_id="term-7")

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        return TerminalOutputResponse(output=f"output of {terminal_id}", truncated=False)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        return WaitForTerminalExitResponse(exit_code=0)

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.terminals.append(f"released {terminal_id}")

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.ext_calls.append((method, params))
        return {"clientEcho": params}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.ext_notes.append((method, params))
        self.noted.set()


@contextlib.asynccontextmanager
async def proxied(client: RecordingClient, argv: list[str] = SURFACE_PROXY, **kwargs: Any):
    async with acp.spawn_agent_process(
        client, argv[0], *argv[1:], env=dict(os.environ), use_unstable_protocol=True, **kwargs
    ) as (conn, proc):
        yield conn, proc


async def initialized(conn: Any, name: str = "sdk-test-client") -> Any:
    return await conn.initialize(
        protocol_version=acp.PROTOCOL_VERSION,
        client_info=Implementation(name=name, version="1.0"),
    )


def prompt(text: str) -> list[TextContentBlock]:
    return [TextContentBlock(type="text", text=text)]


# --- the protocol surface, unchanged -----------------------------------------------------------------


async def _raw_exchange(argv: list[str]) -> list[dict[str, Any]]:
    """initialize, session/new and an extension request as raw JSON-RPC results."""
    from acp.stdio import spawn_stdio_connection

    async def handler(method: str, params: Any, is_notification: bool) -> Any:
        return None

    results = []
    async with spawn_stdio_connection(handler, argv[0], *argv[1:], env=dict(os.environ)) as (
        conn,
        _proc,
    ):
        results.append(
            await conn.send_request(
                "initialize",
                {
                    "protocolVersion": 1,
                    "clientCapabilities": {
                        "fs": {"readTextFile": True, "writeTextFile": False},
                        "terminal": True,
                        "_meta": {"x.test/cap": 1},
                    },
                    "clientInfo": {"name": "raw", "version": "0"},
                    "_meta": {"x.test/init": [1, 2]},
                    "someFutureField": {"kept": True},
                },
            )
        )
        new = await conn.send_request(
            "session/new", {"cwd": "/project", "mcpServers": [], "_meta": {"x.test/new": "y"}}
        )
        results.append({k: v for k, v in new.items() if k != "sessionId"})
        results.append(
            await conn.send_request("_surface/echo", {"a": [1, {"b": None}], "_meta": {"m": 1}})
        )
    return results


async def test_initialize_and_session_new_answer_exactly_what_the_agent_answers():
    direct = await _raw_exchange([sys.executable, SURFACE])
    through = await _raw_exchange(SURFACE_PROXY)
    assert through == direct
    init_meta = through[0]["_meta"]
    # The agent saw the client's capabilities, _meta and unknown fields as the client sent them.
    assert init_meta["clientCapabilities"]["terminal"] is True
    assert init_meta["clientCapabilities"]["fs"] == {"readTextFile": True, "writeTextFile": False}
    assert init_meta["clientCapabilities"]["_meta"] == {"x.test/cap": 1}
    assert init_meta["initializeMeta"] == {"x.test/init": [1, 2]}
    assert through[0]["agentCapabilities"]["loadSession"] is True
    assert through[1]["_meta"]["newSessionMeta"]["x.test/new"] == "y"
    assert through[2] == {
        "echo": {"method": "surface/echo", "params": {"a": [1, {"b": None}], "_meta": {"m": 1}}}
    }


async def test_what_no_acp_version_defines_passes_untouched():
    """Unknown methods, unknown fields and unknown update kinds: forwarded as they are."""
    from acp.stdio import spawn_stdio_connection

    seen: list[tuple[str, Any]] = []
    arrived = asyncio.Event()

    async def handler(method: str, params: Any, is_notification: bool) -> Any:
        seen.append((method, params))
        arrived.set()
        return None

    argv = [*PROXY, "--", sys.executable, SURFACE, "--raw"]
    odd = {
        "sessionId": "s",
        "future": {"deep": [1, 2.5, None, True, "\u00e9\U0001f600"]},
        "_meta": {"a": {}},
    }
    async with spawn_stdio_connection(handler, argv[0], *argv[1:], env=dict(os.environ)) as (
        conn,
        _,
    ):
        echoed = await conn.send_request("session/from_the_future", odd)
        await conn.send_notification("session/also_new", {"x": 1})
        await asyncio.wait_for(arrived.wait(), 30)
    assert echoed == {"method": "session/from_the_future", "params": odd}
    assert seen == [
        (
            "session/update",
            {
                "sessionId": "raw",
                "update": {
                    "sessionUpdate": "from_the_future",
                    "echo": ["session/also_new", {"x": 1}],
                },
            },
        )
    ]


async def test_elicitation_reaches_the_client_and_its_answer_the_agent():
    from acp.stdio import spawn_stdio_connection

    seen: list[tuple[str, Any]] = []
    completed = asyncio.Event()

    async def handler(method: str, params: Any, is_notification: bool) -> Any:
        seen.append((method, params))
        if method == "elicitation/complete":
            completed.set()
        if method == "elicitation/create":
            return {"action": "accept", "content": {"name": "Ada"}, "_meta": {"k": 1}}
        return None

    argv = [*PROXY, "--", sys.executable, SURFACE, "--raw"]
    request = {
        "sessionId": "s",
        "elicitationId": "e-7",
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    }
    async with spawn_stdio_connection(handler, argv[0], *argv[1:], env=dict(os.environ)) as (
        conn,
        _,
    ):
        answer = await conn.send_request("_surface/elicit", request)
        await asyncio.wait_for(completed.wait(), 30)
    assert answer == {
        "clientAnswered": {"action": "accept", "content": {"name": "Ada"}, "_meta": {"k": 1}}
    }
    assert seen[0] == ("elicitation/create", request)
    assert seen[1] == ("elicitation/complete", {"elicitationId": "e-7"})


async def test_session_methods_pass_through():
    client = RecordingClient()
    async with proxied(client) as (conn, _):
        await initialized(conn)
        new = await conn.new_session(cwd="/project", mcp_servers=[])
        sid = new.session_id
        assert new.modes.current_mode_id == "ask"
        assert [o.id for o in new.config_options] == ["model"]

        changed = await conn.set_config_option(config_id="model", session_id=sid, value="large")
        assert changed.config_options[0].current_value == "large"
        assert changed.field_meta == {"configId": "model"}

        client.got_update.clear()
        mode = await conn.set_session_mode(session_id=sid, mode_id="code")
        assert mode.field_meta == {"mode": "code"}
        await asyncio.wait_for(client.got_update.wait(), 30)
        assert client.updates[-1].session_update == "current_mode_update"

        listed = await conn.list_sessions(cwd="/project")
        assert [s.session_id for s in listed.sessions] == [sid]
        assert listed.next_cursor == "page-2"
        page2 = await conn.list_sessions(cursor="page-2")
        assert page2.field_meta == {"cursorSeen": "page-2"}

        client.updates.clear()
        loaded = await conn.load_session(cwd="/project", session_id="earlier-1", mcp_servers=[])
        assert loaded.field_meta == {"loaded": "earlier-1"}
        kinds = [u.session_update for u in client.updates]
        assert kinds == [
            "user_message_chunk",
            "agent_message_chunk",
        ]  # the replay, before the answer

        resumed = await conn.resume_session(session_id="earlier-2", cwd="/project")
        assert resumed.field_meta == {"resumed": "earlier-2"}
        assert resumed.config_options[0].current_value == "large"

        closed = await conn.close_session(session_id=sid)
        assert closed.field_meta == {"closed": sid}
        listed = await conn.list_sessions()
        assert sid not in [s.session_id for s in listed.sessions]


async def test_every_update_kind_and_the_agents_requests_reach_the_client():
    client = RecordingClient()
    async with proxied(client) as (conn, _):
        await initialized(conn)
        sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
        result = await conn.prompt(session_id=sid, prompt=prompt("surface"), **{"x.test/turn": 7})
    kinds = [u.session_update for u in client.updates]
    assert kinds == [
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
    ]
    assert client.update_meta[0] == {"surface.test/marker": {"nested": [1, 2, {"x": None}]}}
    diff = client.updates[2].content[0]
    assert (diff.type, diff.path, diff.new_text) == ("diff", "a.txt", "new text")
    assert client.updates[-1].used == 1234 and client.updates[-1].size == 200000
    # fs/* and terminal/* reached the client, and its answers reached the agent.
    assert client.reads == [("/project/a.txt", 2, 3)]
    assert client.writes == [("/project/b.txt", "written")]
    assert client.terminals == ["echo hi", "released term-7"]
    assert client.ext_calls == [
        (
            "client/echo",
            {
                "payload": [1, "two"],
                "_meta": {"surface.test/marker": {"nested": [1, 2, {"x": None}]}},
            },
        )
    ]
    meta = result.field_meta
    assert meta["read"] == "contents of /project/a.txt"
    assert (meta["terminal"], meta["output"], meta["exitCode"]) == ("term-7", "output of term-7", 0)
    assert meta["ext"] == {
        "clientEcho": {
            "payload": [1, "two"],
            "_meta": {"surface.test/marker": {"nested": [1, 2, {"x": None}]}},
        }
    }
    assert meta["promptMeta"] == {"x.test/turn": 7}


async def test_extension_notifications_travel_both_ways():
    client = RecordingClient()
    async with proxied(client) as (conn, _):
        await initialized(conn)
        await conn.ext_notification("client/hello", {"n": 1, "_meta": {"k": "v"}})
        await asyncio.wait_for(client.noted.wait(), 30)
    assert client.ext_notes == [
        ("surface/noted", {"method": "client/hello", "params": {"n": 1, "_meta": {"k": "v"}}})
    ]


async def test_an_agents_error_reaches_the_client_with_its_code():
    client = RecordingClient()
    async with proxied(client) as (conn, _):
        await initialized(conn)
        with pytest.raises(acp.RequestError) as info:
            await conn.authenticate(method_id="nope")  # answered null: fine
            await conn.fork_session(session_id="x", cwd="/p")  # not offered by the agent
        assert info.value.code == -32601


async def test_an_agent_that_cannot_start_fails_initialize_with_the_reason():
    client = RecordingClient()
    async with proxied(client, [*PROXY, "--", "/nonexistent/agent-binary"]) as (conn, _):
        with pytest.raises(acp.RequestError) as info:
            await initialized(conn)
    assert "could not start agent" in json.dumps(info.value.data)


# --- permissions through the broker --------------------------------------------------------------------


async def test_without_a_console_the_clients_own_permission_ui_answers_and_is_audited():
    client = RecordingClient(permission="always")
    async with proxied(client) as (conn, _):
        await initialized(conn)
        sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
        result = await conn.prompt(session_id=sid, prompt=prompt("permission"))
    assert [t.title for t in client.permission_asked] == ["Bash: rm -rf build"]
    assert result.field_meta["permission"] == {"outcome": "selected", "optionId": "always"}
    # The client's own answer went back as it was, _meta and all.
    assert result.field_meta["responseMeta"] == {"answeredBy": "recording-client"}
    (line,) = audit_lines()
    assert (line["resolver"], line["outcome"], line["option_id"]) == (
        "client",
        "allow_always",
        "always",
    )
    assert line["connection"].startswith("sdk-test-client-")


async def test_a_deny_rule_answers_before_anyone_is_asked():
    config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(
        '[[rules]]\naction = "deny"\nkind = "execute"\ntitle = "bash:*"\n'
    )
    client = RecordingClient(permission="yes")
    async with proxied(client) as (conn, _):
        await initialized(conn)
        sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
        result = await conn.prompt(session_id=sid, prompt=prompt("permission"))
    assert client.permission_asked == []
    assert result.field_meta["permission"] == {"outcome": "selected", "optionId": "no"}
    (line,) = audit_lines()
    assert (
        line["resolver"] == "policy"
        and line["rule"].startswith("rule 1")
        and "deny" in line["rule"]
    )


# --- with a console -------------------------------------------------------------------------------------


async def test_a_console_card_answers_and_the_console_shows_the_session(tmp_path):
    async with Console(tmp_path, answer="approve") as console:
        client = RecordingClient(permission="no")
        async with proxied(client) as (conn, _):
            await initialized(conn, name="Zed")
            sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
            result = await conn.prompt(session_id=sid, prompt=prompt("permission"))
            await console.until(lambda: console.of(ev.RequestFinished))
        await console.until(lambda: console.of(ev.SessionEnded))
    assert client.permission_asked == []  # the console answered: the client's UI was never shown
    assert result.field_meta["permission"] == {"outcome": "selected", "optionId": "yes"}
    (started,) = console.of(ev.SessionStarted)
    assert started.connection.startswith("zed-") and started.session_id == sid
    (turn,) = console.of(ev.HistoryDecided)
    assert (
        turn.decision["kind"] == "turn"
        and turn.decision["new_messages"][0]["content"][0]["value"] == "permission"
    )
    (finished,) = console.of(ev.RequestFinished)
    assert (finished.outcome, finished.stop_reason) == ("complete", "end_turn")
    assert any(t.title == "Bash: rm -rf build" for t in console.of(ev.ToolCallSeen))
    (card,) = console.of(ev.ApprovalRequested)
    assert card.connection == started.connection and card.session_id == sid
    (resolved,) = console.of(ev.ApprovalResolved)
    assert (resolved.resolver, resolved.outcome, resolved.option_id) == (
        "console",
        "allow_once",
        "yes",
    )
    # One decision, one audit line: the console's.
    (line,) = audit_lines()
    assert line["resolver"] == "console" and line["connection"] == started.connection


async def test_a_console_started_later_picks_up_the_next_session(tmp_path):
    client = RecordingClient(permission="no")
    async with proxied(client) as (conn, _):
        await initialized(conn)
        first = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
        before = await conn.prompt(session_id=first, prompt=prompt("permission"))
        assert before.field_meta["permission"]["optionId"] == "no"  # the client answered
        async with Console(tmp_path, answer="approve") as console:
            second = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
            after = await conn.prompt(session_id=second, prompt=prompt("permission"))
            assert after.field_meta["permission"]["optionId"] == "yes"  # the console answered
            assert second in [e.session_id for e in console.of(ev.SessionStarted)]
    assert len(client.permission_asked) == 1


async def test_a_console_going_away_denies_what_it_held_then_the_client_is_asked(tmp_path):
    client = RecordingClient(permission="always")
    console = Console(tmp_path, answer=None)
    await console.host.start()
    try:
        async with proxied(client) as (conn, _):
            await initialized(conn)
            sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
            pending = asyncio.ensure_future(
                conn.prompt(session_id=sid, prompt=prompt("permission"))
            )
            await asyncio.wait_for(console.card.wait(), 60)
            await console.stop()  # the person quit the console with the card unanswered
            result = await asyncio.wait_for(pending, 60)
            assert result.field_meta["permission"] == {"outcome": "selected", "optionId": "no"}
            assert client.permission_asked == []
            again = await conn.prompt(session_id=sid, prompt=prompt("permission"))
            assert again.field_meta["permission"]["optionId"] == "always"
            assert len(client.permission_asked) == 1
    finally:
        await console.stop()
    lines = audit_lines()
    assert [line["resolver"] for line in lines][-1] == "client"
    assert any(
        line["outcome"] == "reject_once" and "went away" in (line["reason"] or "") for line in lines
    )


async def test_a_cancelled_turn_withdraws_its_card(tmp_path):
    async with Console(tmp_path, answer=None) as console:
        client = RecordingClient(permission="yes")
        async with proxied(client) as (conn, _):
            await initialized(conn)
            sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
            pending = asyncio.ensure_future(
                conn.prompt(session_id=sid, prompt=prompt("permission"))
            )
            await asyncio.wait_for(console.card.wait(), 60)
            await conn.cancel(session_id=sid)
            result = await asyncio.wait_for(pending, 60)
            await console.until(lambda: console.of(ev.RequestFinished))
    assert result.stop_reason == "cancelled"
    assert result.field_meta["permission"] == {"outcome": "cancelled"}
    (resolved,) = console.of(ev.ApprovalResolved)
    assert resolved.outcome == "cancelled"
    assert console.bridge.approvals.pending == {}
    (finished,) = console.of(ev.RequestFinished)
    assert (finished.outcome, finished.stop_reason) == ("cancelled", "cancelled")
    assert client.permission_asked == []


async def test_an_over_long_answer_from_the_console_is_skipped_whole_and_the_next_line_decides(
    tmp_path, monkeypatch
):
    """The proxy reads the console's answers with its size limit. An answer over it is read past
    to its end: the approval it answered (its id shows in its first bytes) is denied, once, as a
    failed console; one whose id does not show is dropped and its tail — here a whole answer
    after the padding — is never read as an answer; the line after it decides."""
    limit = 1024 * 1024  # the reader takes it in several reads, so a tail would be seen
    monkeypatch.setenv("SYMPOSIUM_MAX_MESSAGE_BYTES", str(limit))
    runtime = Path(os.environ["SYMPOSIUM_RUNTIME_DIR"])
    runtime.mkdir(parents=True, exist_ok=True)
    asked: list[Any] = []

    def answer(link_id: int, outcome: str, option: str, reason: str) -> bytes:
        result = {"outcome": outcome, "optionId": option, "resolver": "console", "reason": reason}
        return json.dumps({"jsonrpc": "2.0", "id": link_id, "result": result}).encode() + b"\n"

    async def console(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            msg = json.loads(line)
            if msg.get("method") != "link/approval":
                continue
            asked.append(msg["id"])
            if len(asked) == 1:  # over the limit, its id in its first bytes
                writer.write(answer(msg["id"], "allow_once", "yes", "x" * limit))
            else:  # over the limit, its id out of sight; then the line that decides
                writer.write(b" " * (limit + limit // 2))
                writer.write(answer(msg["id"], "allow_once", "yes", "the tail"))
                writer.write(answer(msg["id"], "reject_once", "no", "the valid line"))
            await writer.drain()

    server = await asyncio.start_unix_server(
        console, path=str(runtime / "console.sock"), limit=4 * limit
    )
    try:
        client = RecordingClient(permission="always")
        async with proxied(client) as (conn, _):
            await initialized(conn)
            sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
            first = await asyncio.wait_for(
                conn.prompt(session_id=sid, prompt=prompt("permission")), 60
            )
            second = await asyncio.wait_for(
                conn.prompt(session_id=sid, prompt=prompt("permission")), 60
            )
    finally:
        server.close()
    assert len(asked) == 2 and client.permission_asked == []  # the console was asked both times
    assert first.field_meta["permission"] == {"outcome": "selected", "optionId": "no"}
    assert second.field_meta["permission"] == {"outcome": "selected", "optionId": "no"}
    (failed,) = audit_lines()  # the console's own answers are audited by the console
    assert failed["resolver"] == "default" and failed["outcome"] == "reject_once"
    assert f"its answer was longer than {limit} bytes" in failed["reason"]


async def test_eliza_by_name_streams_a_reply():
    client = RecordingClient()
    async with proxied(client, [*PROXY, "--agent", "elizacp"]) as (conn, _):
        init = await initialized(conn)
        assert init.agent_info.name == "symposium-eliza"
        sid = (await conn.new_session(cwd=str(REPO), mcp_servers=[])).session_id
        result = await conn.prompt(session_id=sid, prompt=prompt("Hello, I feel sad"))
    assert result.stop_reason == "end_turn"
    text = "".join(
        u.content.text for u in client.updates if u.session_update == "agent_message_chunk"
    )
    assert text.strip()


def test_acp_without_an_agent_says_how_to_name_one():
    import subprocess

    for argv in ([], ["--agent", "nosuch"]):
        done = subprocess.run(
            [*PROXY, *argv], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
        assert done.returncode == 2 and done.stdout == ""
        assert ("name the agent" in done.stderr) if not argv else ("unknown agent" in done.stderr)


# --- one approval, one id, one name, one audit line --------------------------------------------------


@pytest.mark.parametrize("decision", ["approve", "deny", "cancel", "timeout"])
async def test_each_decision_through_a_console_is_one_approval_one_name_one_audit_line(
    tmp_path, decision
):
    """The proxy and the console share the approval's id and the connection's name, and the
    decision is audited once, by whoever made it: the console (a person's answer, its timeout)
    or the proxy (the client cancelled the turn)."""
    if decision == "timeout":
        config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
        config.mkdir(parents=True, exist_ok=True)
        (config / "settings.toml").write_text("[preferences]\napproval_timeout = 1\n")
    answer = decision if decision in ("approve", "deny") else None
    async with Console(tmp_path, answer=answer) as console:
        client = RecordingClient(permission="yes")
        async with proxied(client) as (conn, proc):
            await initialized(conn)
            sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
            pending = asyncio.ensure_future(
                conn.prompt(session_id=sid, prompt=prompt("permission"))
            )
            await asyncio.wait_for(console.card.wait(), 60)
            if decision == "cancel":
                await conn.cancel(session_id=sid)
            await asyncio.wait_for(pending, 60)
            await console.until(lambda: console.of(ev.RequestFinished))
    (card,) = console.of(ev.ApprovalRequested)
    (resolved,) = console.of(ev.ApprovalResolved)
    assert resolved.approval_id == card.approval_id
    (line,) = audit_lines()
    assert line["approval_id"] == card.approval_id
    assert line["connection"] == card.connection
    assert card.connection == f"sdk-test-client-{proc.pid}"  # the proxy's own name
    expected = {
        "approve": ("console", "allow_once"),
        "deny": ("console", "reject_once"),
        "cancel": ("default", "cancelled"),
        "timeout": ("timeout", "reject_once"),
    }[decision]
    assert (line["resolver"], line["outcome"]) == expected
    assert client.permission_asked == []


# --- tool outcomes ------------------------------------------------------------------------------------


async def test_an_approval_given_through_the_acp_door_gets_its_tool_outcome(tmp_path):
    """Without a console nobody watches the stream, yet the approved call's end is read from
    the agent's updates and recorded next to the decision."""
    client = RecordingClient(permission="yes")
    async with proxied(client) as (conn, _):
        await initialized(conn)
        sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
        result = await conn.prompt(session_id=sid, prompt=prompt("permission"))
    assert result.field_meta["permission"] == {"outcome": "selected", "optionId": "yes"}
    (decision,) = audit_lines()
    (outcome,) = tool_outcomes()
    assert outcome["approval_id"] == decision["approval_id"]
    assert (outcome["tool_call_id"], outcome["status"]) == ("bash-1", "completed")
    assert outcome["connection"] == decision["connection"]


async def test_a_console_approval_gets_its_tool_outcome_under_the_same_id(tmp_path):
    async with Console(tmp_path, answer="approve") as console:
        client = RecordingClient(permission="no")
        async with proxied(client) as (conn, _):
            await initialized(conn)
            sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=prompt("permission"))
            await console.until(lambda: console.of(ev.RequestFinished))
    (card,) = console.of(ev.ApprovalRequested)
    (decision,) = audit_lines()
    (outcome,) = tool_outcomes()
    assert decision["approval_id"] == outcome["approval_id"] == card.approval_id
    assert outcome["status"] == "completed"
    # The console's tool call log shows the call as the core renders it.
    ended = [t for t in console.of(ev.ToolCallSeen) if t.status == "completed"]
    assert [t.tool_call_id for t in ended] == ["bash-1"]


# --- a console that is still starting ------------------------------------------------------------------


async def test_a_console_still_starting_is_used_as_soon_as_it_accepts(tmp_path, monkeypatch):
    """The console's socket exists before it accepts (made, then served): a proxy that looked
    while it did not accept attaches when it does, before the next prompt."""
    bound, serve = asyncio.Event(), asyncio.Event()
    real = asyncio.start_unix_server

    async def held_back(*args: Any, **kwargs: Any) -> Any:
        server = await real(*args, **kwargs)
        start_serving = server.start_serving

        async def when_told() -> None:
            await serve.wait()
            await start_serving()

        server.start_serving = when_told  # type: ignore[method-assign]
        bound.set()
        return server

    monkeypatch.setattr(asyncio, "start_unix_server", held_back)
    console = Console(tmp_path, answer="approve")
    starting = asyncio.ensure_future(console.host.start())
    try:
        await asyncio.wait_for(bound.wait(), 60)
        client = RecordingClient(permission="no")
        async with proxied(client) as (conn, _):
            await initialized(conn)
            sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
            assert console.of(ev.SessionStarted) == []  # it looked: the socket did not accept
            serve.set()
            await asyncio.wait_for(starting, 60)
            await console.until(lambda: console.of(ev.SessionStarted))  # attached on its own
            result = await conn.prompt(session_id=sid, prompt=prompt("permission"))
    finally:
        serve.set()
        await console.stop()
    assert result.field_meta["permission"] == {"outcome": "selected", "optionId": "yes"}
    assert client.permission_asked == []
    (line,) = audit_lines()
    assert line["resolver"] == "console"


# --- malformed permission requests ----------------------------------------------------------------------


async def test_a_permission_for_a_session_the_client_never_opened_is_denied_and_audited():
    client = RecordingClient(permission="yes")
    async with proxied(client) as (conn, _):
        await initialized(conn)
        sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
        result = await conn.prompt(session_id=sid, prompt=prompt("permission elsewhere"))
    assert client.permission_asked == []  # never forwarded
    assert result.field_meta["permission"] == {"outcome": "selected", "optionId": "no"}
    (line,) = audit_lines()
    assert (line["resolver"], line["outcome"]) == ("default", "reject_once")
    assert line["session_id"] == "never-created" and "never opened" in line["reason"]
    assert line["received"]["sessionId"] == "never-created"


@pytest.mark.parametrize(
    ("how", "problem"),
    [
        ("duplicate", "optionId 'yes' is offered twice"),
        ("mislabelled", "option 'yes' is named 'Reject' but its kind is 'allow_once'"),
    ],
)
async def test_malformed_permission_options_are_refused_and_audited(how, problem):
    client = RecordingClient(permission="yes")
    async with proxied(client) as (conn, _):
        await initialized(conn)
        sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
        result = await conn.prompt(session_id=sid, prompt=prompt(f"permission {how}"))
    assert client.permission_asked == []
    error = result.field_meta["permissionError"]
    assert error["code"] == -32602 and problem in json.dumps(error["data"])
    (line,) = audit_lines()
    assert line["outcome"] in ("reject_once", "cancelled") and line["resolver"] == "default"
    assert problem in line["reason"]
    received = line["received"]["options"]
    assert [o["optionId"] for o in received] == (
        ["yes", "always", "yes"] if how == "duplicate" else ["yes", "always", "no"]
    )
    assert received[0]["name"] == ("Allow" if how == "duplicate" else "Reject")


# --- the reason reaches the client ------------------------------------------------------------------------


async def test_a_denial_reason_reaches_the_acp_client_and_the_agent():
    config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(
        '[[rules]]\naction = "deny"\nkind = "execute"\nreason = "no shell in this project"\n'
    )
    client = RecordingClient(permission="yes")
    async with proxied(client) as (conn, _):
        await initialized(conn)
        sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
        result = await conn.prompt(session_id=sid, prompt=prompt("permission"))
        texts = [
            u.content.text for u in client.updates if u.session_update == "agent_message_chunk"
        ]
        later = await conn.prompt(session_id=sid, prompt=prompt("next"))
    notice = "The user's rules denied `Bash: rm -rf build`: no shell in this project"
    # The client's stream says why, labelled as Symposium's, before the agent's next words.
    assert texts[0] == f"\n\n> Symposium: {notice}\n\n"
    assert texts[1].startswith("permission: ")
    assert result.field_meta["permission"] == {"outcome": "selected", "optionId": "no"}
    # The agent is told as on the other doors: the response's _meta and its next prompt.
    assert result.field_meta["responseMeta"]["symposium"]["message"] == notice
    assert later.field_meta["prompt"] == [notice, "next"]


# --- an agent known by its own name ---------------------------------------------------------------------


async def test_an_agent_is_known_by_its_agent_info_not_its_interpreter(tmp_path):
    """`acp -- python surface_agent.py`: the agent names itself `surface-agent` 1.0; a bypass
    kept for `python` (what it was recorded as) covers no agent."""
    config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    interpreter = os.path.basename(sys.executable)
    (config / "settings.toml").write_text(f'[agents."{interpreter}"]\nbypass = true\n')
    async with Console(tmp_path, answer="deny") as console:
        client = RecordingClient(permission="yes")
        async with proxied(client) as (conn, _):
            await initialized(conn)
            sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
            result = await conn.prompt(session_id=sid, prompt=prompt("permission"))
            await console.until(lambda: console.of(ev.RequestFinished))
    assert result.field_meta["permission"] == {"outcome": "selected", "optionId": "no"}
    (card,) = console.of(ev.ApprovalRequested)
    assert (card.agent, card.agent_version) == ("surface-agent", "1.0")
    (line,) = audit_lines()
    assert line["agent"] == "surface-agent" and line["resolver"] == "console"


async def test_an_agent_without_agent_info_is_known_by_its_script(tmp_path):
    echo = str(REPO / "tests" / "agents" / "echo_agent.py")
    async with Console(tmp_path, answer="approve") as console:
        client = RecordingClient()
        async with proxied(client, [*PROXY, "--", sys.executable, echo]) as (conn, _):
            await initialized(conn)
            sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=prompt("hello"))
        await console.until(lambda: console.of(ev.SessionStarted))
    assert [s.agent for s in console.of(ev.SessionStarted)] == ["echo_agent"]


async def test_the_console_sees_tool_calls_as_the_core_reads_them(tmp_path):
    """The ACP door reads updates with the core's reader: a diff is shown as the other doors
    show it (its path and new text), not a shorthand of the door's own."""
    async with Console(tmp_path) as console:
        client = RecordingClient()
        async with proxied(client) as (conn, _):
            await initialized(conn)
            sid = (await conn.new_session(cwd="/project", mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=prompt("surface"))
            await console.until(lambda: console.of(ev.RequestFinished))
    from bridge.acp_updates import tool_content_text

    diff = {"type": "diff", "path": "a.txt", "newText": "new text"}
    seen = [t.content for t in console.of(ev.ToolCallSeen) if t.content]
    assert seen and seen[0] == tool_content_text(diff) == "--- a.txt\n+++ a.txt\nnew text"


async def test_a_call_eliza_runs_unasked_under_its_kept_always_allow_is_audited():
    """Through the ACP front door: the client's own UI answers Eliza's "Always allow"; the next
    command Eliza runs without asking still gets its decision line and its outcome."""
    client = RecordingClient(permission="allow_always")
    async with proxied(client, [*PROXY, "--agent", "elizacp"]) as (conn, _):
        await initialized(conn)
        sid = (await conn.new_session(cwd=str(REPO), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=prompt("ask permission to run the tests"))
        await conn.prompt(session_id=sid, prompt=prompt("ask permission to deploy"))
    assert [t.title for t in client.permission_asked] == ["run the tests"]  # asked once
    path = Path(os.environ["SYMPOSIUM_CONFIG_DIR"]) / "audit.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    granted, granted_outcome, kept, outcome = lines
    assert granted_outcome["approval_id"] == granted["approval_id"]
    assert (granted["title"], granted["outcome"], granted["resolver"]) == (
        "run the tests",
        "allow_always",
        "client",
    )
    assert (kept["type"], kept["title"], kept["outcome"]) == ("decision", "deploy", "allow_always")
    assert kept["decider"]["kind"] == "agent_kept" and granted["approval_id"] in kept["rule"]
    assert (outcome["type"], outcome["approval_id"], outcome["status"]) == (
        "tool_outcome",
        kept["approval_id"],
        "completed",
    )


def _wchar(pid: int) -> int:
    with open(f"/proc/{pid}/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("wchar:"))


def test_a_client_that_reads_nothing_holds_the_agent_back_and_then_gets_every_update(tmp_path):
    """While the client reads nothing of a long streamed reply, the proxy stops reading the agent
    once the client's pipe is full, so the agent waits on its own full pipe (as it would with the
    client on its pipe directly) instead of the proxy taking in the whole reply; once the client
    reads, every update arrives, in order."""
    import subprocess
    import time

    chunks = 100_000  # ~18 MB of updates
    env = {
        **os.environ,
        "SYMPOSIUM_CONFIG_DIR": str(tmp_path / "config"),
        "SYMPOSIUM_RUNTIME_DIR": str(tmp_path / "run"),
    }
    proxy = subprocess.Popen(
        SURFACE_PROXY, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=str(REPO), env=env
    )
    assert proxy.stdin is not None and proxy.stdout is not None

    def send(message: dict[str, Any]) -> None:
        proxy.stdin.write(json.dumps(message).encode() + b"\n")
        proxy.stdin.flush()

    def answer(rid: int) -> dict[str, Any]:
        while True:
            message = json.loads(proxy.stdout.readline())
            if message.get("id") == rid and "method" not in message:
                return message

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        answer(1)
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": str(tmp_path), "mcpServers": []},
            }
        )
        session_id = answer(2)["result"]["sessionId"]
        agents = child_pids(proxy.pid)
        assert len(agents) == 1
        before = _wchar(agents[0])
        prompt = [{"type": "text", "text": f"stream {chunks}"}]
        send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {"sessionId": session_id, "prompt": prompt},
            }
        )
        # Wait until the agent stops writing: the same count three polls in a row.
        seen: list[int] = []
        deadline = time.monotonic() + 60
        while len(seen) < 3 or len(set(seen[-3:])) > 1:
            assert time.monotonic() < deadline, f"the agent never stopped writing: {seen[-3:]}"
            time.sleep(0.1)
            seen.append(_wchar(agents[0]) - before)
        assert seen[-1] < 4 << 20, f"the agent wrote {seen[-1]} bytes while the client read none"

        updates = 0
        while True:
            message = json.loads(proxy.stdout.readline())
            if message.get("method") == "session/update":
                updates += 1
            elif message.get("id") == 3:
                break
        assert updates == chunks
        assert message["result"]["stopReason"] == "end_turn"
    finally:
        proxy.stdin.close()
        proxy.wait(timeout=30)
