"""Third-party OpenAI client frameworks against a real uvicorn on loopback: the OpenAI Agents SDK,
LangChain and pydantic-ai, each in its own process from the frameworks venv that
`tests/agents/install.py` installs (pinned). The scripts are in `tests/bridge/openai/frameworks/`; the
`tool` and `echo` test agents show what the agent was prompted with."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.openai_server import ServerThread, read_log

pytestmark = pytest.mark.agents

SCRIPTS = Path(__file__).parent / "frameworks"


def run(python: str, server: ServerThread, script: str, scenario: str) -> dict:
    proc = subprocess.run(
        [python, str(SCRIPTS / f"{script}.py"), server.url, scenario],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, f"{script} {scenario} failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def prompts(logs: dict[str, Path]) -> list[str]:
    return [e["text"] for e in read_log(logs["tool"]) if e["event"] == "prompt"]


# --- the OpenAI Agents SDK ----------------------------------------------------------------------


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_agents_sdk_runner_with_a_function_tool(frameworks_python, server, logs, api):
    out = run(frameworks_python, server, "agents_sdk", f"tool-{api}")
    assert out == {"final": "RESULTS: Sunny in Paris", "calls": ["Paris"]}
    (prompt,) = prompts(logs)  # one agent turn, resumed by the tool result
    assert prompt.startswith("You answer weather questions with the tool.\n")  # the instructions


def test_agents_sdk_handoff_reaches_the_second_agent_with_the_history(
    frameworks_python, server, logs
):
    out = run(frameworks_python, server, "agents_sdk", "handoff")
    assert out["last_agent"] == "Spanish agent"
    seen = out["final"]  # the echo agent shows what it was prompted with: never empty
    assert seen.startswith("ECHO: [The conversation so far, replayed")
    assert "User: You only speak Spanish." in seen  # the second agent's instructions
    assert "Hola!" in seen and "Hand off to the right agent." not in seen
    assert "Assistant called tool transfer_to_spanish_agent" in seen
    assert 'returned: {"assistant": "Spanish agent"}' in seen
    assert seen.endswith("[Continue from the tool results above.]")


# --- LangChain ----------------------------------------------------------------------------------


def test_langchain_bind_tools_round_trip(frameworks_python, server, logs):
    out = run(frameworks_python, server, "langchain_app", "bind-tools")
    assert out == {
        "tool_calls": [{"name": "get_weather", "args": {"location": "Oslo"}}],
        "final": "RESULTS: Rainy in Oslo",
    }
    assert len(prompts(logs)) == 1


def test_langchain_batch_sharing_a_system_prompt_gets_three_independent_answers(
    frameworks_python, server
):
    out = run(frameworks_python, server, "langchain_app", "batch")
    for question, answer in zip(out["questions"], out["answers"]):
        assert answer == f"ECHO: You are a terse assistant.\n{question}"
    assert sum(len(c.sessions) for c in server.door.connections.values()) == 3


def test_langchain_with_structured_output(frameworks_python, server, logs):
    out = run(frameworks_python, server, "langchain_app", "structured")
    assert set(out["person"]) == {"name", "age"} and isinstance(out["person"]["age"], int)
    (prompt,) = prompts(logs)
    assert prompt.startswith("Bob is 42.") and "named Person" in prompt


# --- pydantic-ai --------------------------------------------------------------------------------


def test_pydantic_ai_agent_with_a_tool(frameworks_python, server, logs):
    out = run(frameworks_python, server, "pydantic_ai_app", "tool")
    assert out == {"final": "RESULTS: Windy in Lima", "calls": ["Lima"]}
    (prompt,) = prompts(logs)
    assert prompt.startswith("Use the tool.\n")


@pytest.mark.parametrize("mode", ["structured", "native"])
def test_pydantic_ai_structured_output(frameworks_python, server, logs, mode):
    out = run(frameworks_python, server, "pydantic_ai_app", mode)
    assert set(out["city"]) == {"name", "population"}
    assert isinstance(out["city"]["population"], int)
    (prompt,) = prompts(logs)
    assert prompt.startswith("Describe the city.\nParis")
