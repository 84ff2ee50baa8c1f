"""An ACP client's session in the console: the sessions pane names it after the client, the
history inspector shows its turns (prompt, streamed reply, stop reason, cancellation) and the
tool-call log its tool calls and approvals. The ACP front door (`bridge.acp_proxy.AcpProxy`) runs
in-process with the built-in Eliza behind it; the client is the ACP SDK's own client connection,
reaching the proxy through in-memory streams; the panes run in a tiny app under Pilot."""

from __future__ import annotations

import asyncio
from typing import Any

import acp
from acp.schema import Implementation, TextContentBlock
from rich.text import Text
from textual.widgets import DataTable, Static

from bridge import events as ev
from bridge.acp_proxy import AcpProxy
from bridge.agents.memory import memory_stream_pair
from bridge.protocol import ElizaAgent
from symposium_tui.state import ConsoleState
from symposium_tui.widgets.toollog import ToolLogView
from tests.support.panes import sessions_app, toollog_app


class Client:
    def __init__(self) -> None:
        self.permissions = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        self.permissions += 1
        raise AssertionError("the console answers: the client is never asked")


def plain(app: Any, selector: str) -> str:
    value = app.query_one(selector, Static).content
    return value.plain if isinstance(value, Text) else str(value)


async def drive(bridge: Any, *prompts: str) -> tuple[str, Client]:
    """One ACP session through the proxy, a card answered by a console; returns its id."""
    handle = bridge.approvals.attach("pane test console")

    def answer(event: ev.Event) -> None:
        if isinstance(event, ev.ApprovalRequested):
            asyncio.get_running_loop().call_soon(handle.answer, event.approval_id, "approve")

    unsubscribe = bridge.bus.subscribe(answer)
    (client_reader, client_writer), (proxy_reader, proxy_writer) = memory_stream_pair()
    proxy = AcpProxy(bridge, ElizaAgent(deterministic=True))
    serving = asyncio.ensure_future(proxy.serve(proxy_reader, proxy_writer))
    client = Client()
    conn = acp.connect_to_agent(client, client_writer, client_reader)
    await conn.initialize(
        protocol_version=acp.PROTOCOL_VERSION, client_info=Implementation(name="Zed", version="1")
    )
    session_id = (await conn.new_session(cwd=bridge.config.cwd, mcp_servers=[])).session_id
    for text in prompts:
        await conn.prompt(session_id=session_id, prompt=[TextContentBlock(type="text", text=text)])
    await conn.close()
    client_writer.close()
    await asyncio.wait_for(serving, 30)
    unsubscribe()
    handle.detach()
    return session_id, client


async def test_an_acp_session_is_listed_under_the_clients_name_with_its_turns(bridge):
    state = ConsoleState(bridge)
    state.attach()
    app = sessions_app(state, bridge)
    async with app.run_test(size=(100, 40)) as pilot:
        _session_id, client = await drive(
            bridge, "Hello, I feel sad", "ask permission to run the tests"
        )
        state.flush()
        await pilot.pause()
        await pilot.pause()
        table = app.query_one("#sessions-table", DataTable)
        (row,) = [table.get_row_at(i) for i in range(table.row_count)]
        assert row[0].startswith("zed-")  # named after the client's clientInfo
        assert row[1] == "Eliza (built in)"  # the id is `eliza`
        decisions = app.query_one("#decisions-table", DataTable)
        assert decisions.row_count == 2
        kinds = [decisions.get_row_at(i)[1].plain for i in range(2)]
        assert kinds == ["ACP turn", "ACP turn"]
        assert "ACP TURN" in plain(app, "#sessions-decision")
        assert "stop reason end_turn" in plain(app, "#sessions-decision")
        history = plain(app, "#sessions-history")
        assert "Hello, I feel sad" in history and "ask permission to run the tests" in history
        assert "Permission granted" in history  # the streamed reply, as the console saw it
    assert client.permissions == 0


async def test_an_acp_sessions_tool_calls_and_approvals_are_in_the_tool_log(bridge):
    state = ConsoleState(bridge, coalesce=0.01)
    state.attach()
    app = toollog_app(state)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(ToolLogView)
        await drive(bridge, "ask permission to run the tests")
        async with asyncio.timeout(30):  # the state's coalesced updates reach the view
            while len(view.index) < 2:
                state.flush()
                await pilot.pause()
        titles = [view.state.tools.get(seq).title for seq in view.index]
        assert titles == ["run the tests", "run the tests"]  # the agent's call, and its approval
        approval = view.state.tools.get(view.index[-1])
        assert approval.source == "permission" and approval.connection.startswith("zed-")
        assert "allow_once by a person" in (approval.output or "")  # not a rule
