"""Auto-execute: the settings' MCP servers given to the agent, which runs their tools itself;
its permission requests go through the approval broker; `GET /v1/tools` lists the tools."""

from __future__ import annotations

import threading
import time

import httpx2

from tests.support.openai_server import ServerThread, read_log

AUTO = {"tool_execution": "auto"}


def test_tools_endpoint_lists_and_filters(server: ServerThread):
    base = server.url
    data = httpx2.get(base + "/tools", timeout=30).json()
    assert data["object"] == "list"
    (add,) = data["data"]
    assert add["name"] == "add" and add["tags"] == ["math", "local", "calc"]
    assert add["inputSchema"]["type"] == "object" and set(add["inputSchema"]["properties"]) == {
        "a",
        "b",
    }
    assert len(httpx2.get(base + "/tools", params={"tags": "vscode,math"}).json()["data"]) == 1
    assert httpx2.get(base + "/tools", params={"tags": "editor"}).json()["data"] == []
    assert len(httpx2.get(base + "/tools", params={"name": "a*"}).json()["data"]) == 1
    assert httpx2.get(base + "/tools", params={"name": "get_*"}).json()["data"] == []


def test_agent_runs_a_configured_tool_itself(client, logs):
    ask = 'use tool calc::add with {"a": 2, "b": 3}'
    r = client.chat.completions.create(
        model="eliza", messages=[{"role": "user", "content": ask}], extra_body=AUTO
    )
    assert r.choices[0].finish_reason == "stop" and "sum: 5" in r.choices[0].message.content
    assert read_log(logs["calc"]) == [{"tool": "add", "a": 2, "b": 3}]
    # streaming works in this mode too
    stream = client.chat.completions.create(
        model="eliza",
        stream=True,
        extra_body={"use_vscode_tools": True},
        messages=[{"role": "user", "content": 'use tool calc::add with {"a": 4, "b": 5}'}],
    )
    assert "sum: 9" in "".join(c.choices[0].delta.content or "" for c in stream)


def test_without_auto_execute_the_agent_has_no_configured_servers(client, logs):
    ask = 'use tool calc::add with {"a": 2, "b": 3}'
    r = client.chat.completions.create(model="eliza", messages=[{"role": "user", "content": ask}])
    assert "no MCP server named calc" in r.choices[0].message.content
    assert read_log(logs["calc"]) == []


def test_permission_requests_are_denied_without_a_console(client):
    r = client.chat.completions.create(
        model="eliza",
        messages=[{"role": "user", "content": "ask permission to deploy"}],
        extra_body=AUTO,
    )
    assert "deploy" in r.choices[0].message.content
    assert "granted" not in r.choices[0].message.content.lower()


def test_permission_requests_go_to_an_attached_console(client, server: ServerThread):
    broker = server.bridge.approvals
    console = server.call(_attach(broker))
    answered = []

    def approve_when_pending() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            pending = list(broker.pending)
            if pending:
                server.loop.call_soon_threadsafe(console.answer, pending[0], "approve")
                answered.append(pending[0])
                return
            time.sleep(0.02)

    t = threading.Thread(target=approve_when_pending)
    t.start()
    r = client.chat.completions.create(
        model="eliza",
        messages=[{"role": "user", "content": "ask permission to deploy"}],
        extra_body=AUTO,
    )
    t.join()
    assert answered
    assert "Permission granted" in r.choices[0].message.content


async def _attach(broker):
    return broker.attach("test console")


def test_max_tool_rounds_ends_the_answer_with_length():
    """Unit level: the exchange counts the agent's own tool calls and stops at the limit."""
    import asyncio

    from bridge.openai.exchange import Exchange

    async def run() -> Exchange:
        ex = Exchange(None, None, max_tool_calls=2)
        for _ in range(3):
            ex.stream.on_agent_tool_call(object())
        await asyncio.sleep(0)
        return ex

    ex = asyncio.run(run())
    assert ex.limited and ex.stream.done
