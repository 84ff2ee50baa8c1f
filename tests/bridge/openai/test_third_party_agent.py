"""A pass-through tool round trip with a real third-party agent: Claude Code (Zed's ACP adapter)
talking to the scripted fake Anthropic API, driven through the OpenAI front door by the SDK."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.agents import install as agents
from tests.agents.fake_anthropic import FakeAnthropic, text, tool_results, tool_use
from tests.support.openai_server import ServerThread

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
        },
    },
}


@pytest.fixture
def claude_model(settings: Path, tmp_path: Path):
    try:
        agents.install("claude", quiet=True)
    except agents.InstallError as exc:
        pytest.fail(f"installing the Claude adapter failed:\n{exc}", pytrace=False)
    srv = ServerThread(str(tmp_path)).start()
    api = FakeAnthropic(
        [
            tool_use(("mcp__vscode_tools__get_weather", {"location": "Paris"})),
            text("It is sunny in Paris."),
        ]
    )
    srv.call(api.__aenter__())
    launch = agents.claude_agent(tmp_path / "home", api.base_url)
    env = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in launch.env.items())
    with open(settings, "a") as fh:
        fh.write(
            f"\n[agents.claude]\ncommand = {json.dumps(launch.command)}\nargs = {json.dumps(launch.args)}\nenv = {{ {env} }}\n"
        )
    os.utime(settings)
    try:
        yield srv, api
    finally:
        srv.stop_with(api.__aexit__(None, None, None))


@pytest.mark.agents
def test_claude_tool_round_trip_through_chat_completions(claude_model):
    import openai

    server, api = claude_model
    with openai.OpenAI(base_url=server.url, api_key="x", max_retries=0, timeout=120) as client:
        messages = [{"role": "user", "content": "What is the weather in Paris?"}]
        first = client.chat.completions.create(model="claude", messages=messages, tools=[WEATHER])
        choice = first.choices[0]
        assert choice.finish_reason == "tool_calls"
        (call,) = choice.message.tool_calls
        assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {
            "location": "Paris"
        }
        messages.append(choice.message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny, 24C"})
        second = client.chat.completions.create(model="claude", messages=messages, tools=[WEATHER])
    assert second.choices[0].finish_reason == "stop"
    assert "It is sunny in Paris." in second.choices[0].message.content
    results = tool_results(api.main_requests[-1])
    assert results and "sunny, 24C" in results[0]["text"]
    (core,) = server.door.connections.values()
    assert len(core.sessions) == 1  # one Claude session for the whole round trip
