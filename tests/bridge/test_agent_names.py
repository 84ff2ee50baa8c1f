"""An agent's own name (bridge/agent_names.py): never the interpreter or runner in front of it."""

from __future__ import annotations

import pytest

from bridge.agent_names import agent_info_name, command_name, is_interpreter
from bridge.protocol import agent_label, parse_agent
from bridge.settings import Settings


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["node", "script.js"], "script"),
        (["/usr/bin/node", "--no-warnings", "./agents/main.mjs"], "main"),
        (["npx", "-y", "@zed-industries/claude-agent-acp"], "@zed-industries/claude-agent-acp"),
        (["npx", "-y", "@zed-industries/codex-acp@0.9.2"], "@zed-industries/codex-acp"),
        (["python3.11", "-m", "fast_agent.cli", "serve"], "fast_agent.cli"),
        (["uv", "run", "--python", "3.12", "agent.py"], "agent"),
        (["uvx", "--from", "batrachian-toad==0.5", "toad"], "batrachian-toad"),
        (["bun", "x", "some-agent"], "some-agent"),
        (["env", "FOO=1", "node", "/opt/a/b/gemini.js", "--acp"], "gemini"),
        (["/opt/bin/codex-acp"], "codex-acp"),
        (["claude-agent-acp"], "claude-agent-acp"),
        (["node"], "node"),
    ],
)
def test_a_command_line_names_what_it_runs(argv, name):
    assert command_name(argv) == name


def test_interpreters_are_recognised_with_paths_and_versions():
    assert all(is_interpreter(n) for n in ("node", "/usr/bin/python3.12", "npx", "uv", "bun"))
    assert not any(is_interpreter(n) for n in ("claude-agent-acp", "codex-acp", "gemini"))


def test_an_external_agent_started_through_an_interpreter_is_labelled_by_its_script():
    spec = parse_agent({"name": "node", "command": "node", "args": ["script.js"]})
    assert agent_label(spec) == "script"
    named = parse_agent({"name": "node", "command": "node", "args": ["x.js"], "id": "mine"})
    assert agent_label(named) == "mine"  # a settings id is the person's name for it


def test_agent_info_gives_name_and_version_but_never_an_interpreter():
    result = {"agentInfo": {"name": "@zed-industries/claude-agent-acp", "version": "0.23.1"}}
    assert agent_info_name(result) == ("@zed-industries/claude-agent-acp", "0.23.1")
    assert agent_info_name({"agentInfo": {"name": "node", "version": "22"}}) == (None, "22")
    assert agent_info_name({}) == (None, None)


def test_a_bypass_kept_for_an_interpreter_is_reported_and_not_applied(tmp_path):
    path = tmp_path / "settings.toml"
    path.write_text("[agents.node]\nbypass = true\n\n[agents.gemini]\nbypass = true\n")
    settings = Settings.load(path)
    assert settings.bypass_agents() == {"gemini"}
    (warning,) = settings.warnings
    assert "agents.node.bypass" in warning and "not applied" in warning
