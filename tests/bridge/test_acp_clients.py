"""Real ACP clients nobody here wrote, through `symposium-tui acp`, to real agents.

The client is `acpx` (npm, installed by tests/agents/install.py): it spawns
`symposium-tui acp …` as its agent exactly as it would spawn any ACP agent, and with
`--format json` prints every JSON-RPC message it sends and receives, which is what these tests
read. Behind the proxy: the built-in Eliza, fast-agent (its `passthrough` model) and Claude Code's
ACP adapter talking to the suite's scripted fake Anthropic API (the only fake: the remote model
API cannot run here). A console, where one is needed, is the real ConsoleHost on its unix socket in
this process (tests/bridge/test_acp_proxy.py's `Console`).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bridge import events as ev
from tests.agents import install as agents
from tests.agents.fake_anthropic import FakeAnthropic, ToolUse, text, tool_use
from tests.support.acp_console import Console, audit_lines, tool_outcomes
from tests.support.waiting import until

PROXY = [sys.executable, "-m", "symposium_tui", "acp"]
RUN_TIMEOUT = 240.0  # a cold Claude Code start on a loaded 2-core machine is slow


@dataclass
class AcpxRun:
    code: int
    messages: list[dict[str, Any]]
    stderr: str

    def methods(self) -> list[str]:
        return [m["method"] for m in self.messages if "method" in m]

    def updates(self, kind: str) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.messages
            if m.get("method") == "session/update"
            and m["params"]["update"].get("sessionUpdate") == kind
        ]

    def text(self) -> str:
        return "".join(u["content"].get("text", "") for u in self.updates("agent_message_chunk"))

    def stop_reasons(self) -> list[str]:
        return [
            m["result"]["stopReason"]
            for m in self.messages
            if isinstance(m.get("result"), dict) and "stopReason" in m["result"]
        ]


def acpx_env(home: Path, extra: dict[str, str] | None = None) -> tuple[str, dict[str, str]]:
    launch = agents.acpx(home)
    env = dict(launch.env)
    for key in ("SYMPOSIUM_CONFIG_DIR", "SYMPOSIUM_RUNTIME_DIR", "SYMPOSIUM_TEST_AGENTS_DIR"):
        if key in os.environ:
            env[key] = os.environ[key]
    env.update(extra or {})
    return launch.command, env


async def acpx(
    home: Path, agent: list[str], *args: str, cwd: Path, env: dict[str, str] | None = None
) -> AcpxRun:
    command, full_env = acpx_env(home, env)
    proc = await asyncio.create_subprocess_exec(
        command,
        "--format",
        "json",
        "--agent",
        shlex.join(agent),
        *args,
        cwd=str(cwd),
        env=full_env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), RUN_TIMEOUT)
    messages = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    return AcpxRun(proc.returncode or 0, messages, err.decode())


# --- the built-in Eliza and fast-agent -----------------------------------------------------------------


@pytest.mark.agents
async def test_acpx_talks_to_eliza_through_the_proxy(acpx_ready: None, tmp_path: Path) -> None:
    run = await acpx(
        tmp_path / "home", [*PROXY, "--agent", "elizacp"], "exec", "Hello, I feel sad", cwd=tmp_path
    )
    assert run.code == 0, run.stderr
    assert run.methods()[:3] == ["initialize", "session/new", "session/prompt"]
    (init,) = [m for m in run.messages if m.get("id") == 0 and "result" in m]
    assert init["result"]["agentInfo"]["name"] == "symposium-eliza"
    assert run.text().strip() and run.stop_reasons() == ["end_turn"]


@pytest.mark.agents
async def test_acpx_answers_elizas_permission_when_no_console_runs(
    acpx_ready: None, tmp_path: Path
) -> None:
    run = await acpx(
        tmp_path / "home",
        [*PROXY, "--agent", "elizacp"],
        "--approve-all",
        "exec",
        "ask permission to run the tests",
        cwd=tmp_path,
    )
    assert run.code == 0, run.stderr
    assert "session/request_permission" in run.methods()  # forwarded to the client's own UI
    assert "Permission granted" in run.text()
    (line,) = audit_lines()
    assert (line["resolver"], line["outcome"]) == ("client", "allow_once")
    assert line["connection"].startswith("acpx-")


@pytest.mark.agents
async def test_acpx_talks_to_fast_agent_through_the_proxy(
    acpx_ready: None, fast_agent_ready: None, tmp_path: Path
) -> None:
    launch = agents.fast_agent(tmp_path / "fa-home")
    run = await acpx(
        tmp_path / "home",
        [*PROXY, "--", *launch.argv],
        "exec",
        "echo me through the proxy",
        cwd=tmp_path,
        env={k: v for k, v in launch.env.items() if k not in ("HOME", "PATH")},
    )
    assert run.code == 0, run.stderr
    assert "echo me through the proxy" in run.text()
    assert run.stop_reasons() == ["end_turn"]


# --- Claude Code's ACP adapter, its Bash tool, the fake model API ------------------------------------


def claude_env(tmp_path: Path, base_url: str) -> tuple[list[str], dict[str, str]]:
    launch = agents.claude_agent(tmp_path / "home", base_url)
    env = {k: v for k, v in launch.env.items() if k not in ("HOME", "PATH")}
    env["PATH"] = launch.env["PATH"]
    return [*PROXY, "--", *launch.argv], env


def bash_marker() -> ToolUse:
    return ToolUse("Bash", {"command": "echo ran > marker.txt", "description": "Write a marker"})


@pytest.mark.agents
async def test_claude_bash_approved_from_a_console_card(
    acpx_ready: None, claude_ready: None, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    async with (
        FakeAnthropic([tool_use(bash_marker()), text("Done.")]) as api,
        Console(tmp_path, answer="approve") as console,
    ):
        agent, env = claude_env(tmp_path, api.base_url)
        run = await acpx(tmp_path / "home", agent, "exec", "Write a marker", cwd=work, env=env)
    assert run.code == 0, run.stderr
    assert "session/request_permission" not in run.methods()  # the console answered
    assert (work / "marker.txt").read_text().strip() == "ran"
    (card,) = console.of(ev.ApprovalRequested)
    assert card.tool_call["rawInput"]["command"] == "echo ran > marker.txt"
    assert card.connection.startswith("acpx-")
    (resolved,) = console.of(ev.ApprovalResolved)
    assert (resolved.resolver, resolved.outcome) == ("console", "allow_once")
    assert any(s.connection == card.connection for s in console.of(ev.SessionStarted))
    assert [f.stop_reason for f in console.of(ev.RequestFinished)] == ["end_turn"]


@pytest.mark.agents
async def test_claude_bash_denied_by_a_rule(
    acpx_ready: None, claude_ready: None, tmp_path: Path
) -> None:
    config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text('[[rules]]\naction = "deny"\nkind = "execute"\n')
    work = tmp_path / "work"
    work.mkdir()
    async with FakeAnthropic([tool_use(bash_marker()), text("Understood.")]) as api:
        agent, env = claude_env(tmp_path, api.base_url)
        run = await acpx(
            tmp_path / "home", agent, "--approve-all", "exec", "Write a marker", cwd=work, env=env
        )
    assert run.code == 0, run.stderr
    assert "session/request_permission" not in run.methods()  # the rule answered first
    assert not (work / "marker.txt").exists()
    lines = audit_lines()
    assert len(lines) == 1, (lines, run.messages, run.stderr)
    (line,) = lines
    assert line["resolver"] == "policy" and "deny" in line["rule"]


@pytest.mark.agents
async def test_claude_bash_forwarded_to_the_client_without_a_console(
    acpx_ready: None, claude_ready: None, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    async with FakeAnthropic([tool_use(bash_marker()), text("Done.")]) as api:
        agent, env = claude_env(tmp_path, api.base_url)
        run = await acpx(
            tmp_path / "home", agent, "--approve-all", "exec", "Write a marker", cwd=work, env=env
        )
    assert run.code == 0, run.stderr
    (asked,) = [m for m in run.messages if m.get("method") == "session/request_permission"]
    assert asked["params"]["toolCall"]["rawInput"]["command"] == "echo ran > marker.txt"
    assert (work / "marker.txt").read_text().strip() == "ran"
    (line,) = audit_lines()
    assert line["resolver"] == "client" and line["outcome"] in ("allow_once", "allow_always")


@pytest.mark.agents
async def test_acpx_cancels_a_turn_and_the_console_sees_it(
    acpx_ready: None, claude_ready: None, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    home = tmp_path / "home"
    async with (
        FakeAnthropic([text("x" * 400, chunks=200, delay=0.1)]) as api,
        Console(tmp_path) as console,
    ):
        agent, env = claude_env(tmp_path, api.base_url)
        made = await acpx(home, agent, "--ttl", "5", "sessions", "new", cwd=work, env=env)
        assert made.code == 0, made.stderr
        command, full_env = acpx_env(home, env)
        prompt = await asyncio.create_subprocess_exec(
            command,
            "--format",
            "json",
            "--ttl",
            "5",
            "--agent",
            shlex.join(agent),
            "prompt",
            "Write a long answer",
            cwd=str(work),
            env=full_env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        await console.until(lambda: console.of(ev.PartStreamed), RUN_TIMEOUT)
        cancelled = await acpx(home, agent, "cancel", cwd=work, env=env)
        assert cancelled.code == 0, cancelled.stderr
        out, err = await asyncio.wait_for(prompt.communicate(), RUN_TIMEOUT)
        await console.until(lambda: console.of(ev.RequestFinished), RUN_TIMEOUT)
        await acpx(home, agent, "sessions", "close", cwd=work, env=env)
    lines = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    assert any(m.get("method") == "session/cancel" for m in lines), err.decode()
    stops = [m["result"]["stopReason"] for m in lines if "stopReason" in (m.get("result") or {})]
    assert stops == ["cancelled"]
    (finished,) = console.of(ev.RequestFinished)
    assert (finished.outcome, finished.stop_reason) == ("cancelled", "cancelled")


# --- one approval, one name, one audit line; outcomes; the agent's own name; the reason --------------


def claude_node_script(tmp_path: Path, base_url: str) -> tuple[list[str], dict[str, str]]:
    """Claude Code's ACP adapter started as `node <its script>`, the way a launcher would."""
    agent, env = claude_env(tmp_path, base_url)
    script = Path(agent[-1]).resolve()  # node_modules/.bin/claude-agent-acp → dist/index.js
    return [*agent[:-1], "node", str(script)], env


@pytest.mark.agents
async def test_claude_approval_from_a_console_is_one_line_under_the_agents_own_name_with_its_outcome(
    acpx_ready: None, claude_ready: None, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    async with (
        FakeAnthropic([tool_use(bash_marker()), text("Done.")]) as api,
        Console(tmp_path, answer="approve") as console,
    ):
        agent, env = claude_node_script(tmp_path, api.base_url)
        run = await acpx(tmp_path / "home", agent, "exec", "Write a marker", cwd=work, env=env)
    assert run.code == 0, run.stderr
    assert (work / "marker.txt").read_text().strip() == "ran"
    (card,) = console.of(ev.ApprovalRequested)
    # Known by its initialize agentInfo, never as `node`; its version is on the card.
    assert card.agent == "@zed-industries/claude-agent-acp"
    assert card.agent_version == agents.CLAUDE_ACP_VERSION
    (decision,) = audit_lines()
    assert decision["approval_id"] == card.approval_id
    assert decision["connection"] == card.connection and decision["resolver"] == "console"
    assert decision["agent"] == "@zed-industries/claude-agent-acp"
    (outcome,) = tool_outcomes()
    assert outcome["approval_id"] == card.approval_id and outcome["status"] == "completed"
    assert outcome["tool_call_id"] == decision["tool_call_id"]


@pytest.mark.agents
async def test_claude_approval_cancelled_from_acpx_is_one_line_under_one_name(
    acpx_ready: None, claude_ready: None, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    home = tmp_path / "home"
    async with (
        FakeAnthropic([tool_use(bash_marker()), text("Stopped.")]) as api,
        Console(tmp_path, answer=None) as console,
    ):
        agent, env = claude_env(tmp_path, api.base_url)
        made = await acpx(home, agent, "--ttl", "5", "sessions", "new", cwd=work, env=env)
        assert made.code == 0, made.stderr
        command, full_env = acpx_env(home, env)
        prompt = await asyncio.create_subprocess_exec(
            command,
            "--format",
            "json",
            "--ttl",
            "5",
            "--agent",
            shlex.join(agent),
            "prompt",
            "Write a marker",
            cwd=str(work),
            env=full_env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        await asyncio.wait_for(console.card.wait(), RUN_TIMEOUT)
        cancelled = await acpx(home, agent, "cancel", cwd=work, env=env)
        assert cancelled.code == 0, cancelled.stderr
        await asyncio.wait_for(prompt.communicate(), RUN_TIMEOUT)
        await console.until(lambda: console.of(ev.ApprovalResolved), RUN_TIMEOUT)
        await acpx(home, agent, "sessions", "close", cwd=work, env=env)
    assert not (work / "marker.txt").exists()
    (card,) = console.of(ev.ApprovalRequested)
    (resolved,) = console.of(ev.ApprovalResolved)
    assert resolved.approval_id == card.approval_id and resolved.outcome == "cancelled"
    (line,) = audit_lines()  # the proxy decided (the turn was cancelled): its line only
    assert (line["approval_id"], line["connection"]) == (card.approval_id, card.connection)
    assert (line["resolver"], line["outcome"]) == ("default", "cancelled")
    assert card.connection.startswith("acpx-")


@pytest.mark.agents
async def test_acpx_shows_why_a_rule_denied_claudes_bash_and_claude_is_told(
    acpx_ready: None, claude_ready: None, tmp_path: Path
) -> None:
    config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(
        '[[rules]]\naction = "deny"\nkind = "execute"\nreason = "no shell in this repository"\n'
    )
    work = tmp_path / "work"
    work.mkdir()
    home = tmp_path / "home"
    async with FakeAnthropic([tool_use(bash_marker()), text("Understood."), text("Ok.")]) as api:
        agent, env = claude_env(tmp_path, api.base_url)
        made = await acpx(home, agent, "--ttl", "5", "sessions", "new", cwd=work, env=env)
        assert made.code == 0, made.stderr
        run = await acpx(home, agent, "--ttl", "5", "prompt", "Write a marker", cwd=work, env=env)
        again = await acpx(home, agent, "--ttl", "5", "prompt", "Go on", cwd=work, env=env)
        await acpx(home, agent, "sessions", "close", cwd=work, env=env)
    assert run.code == 0 and again.code == 0, (run.stderr, again.stderr)
    assert not (work / "marker.txt").exists()
    notice = "The user's rules denied `"
    chunks = [u["content"].get("text", "") for u in run.updates("agent_message_chunk")]
    (shown,) = [c for c in chunks if notice in c]
    assert shown.startswith("\n\n> Symposium: ") and "no shell in this repository" in shown
    # Claude is told at its next prompt, as on the other doors.
    last_user = api.main_requests[-1]["messages"][-1]
    told = json.dumps(last_user["content"])
    assert "no shell in this repository" in told and "Go on" in told


@pytest.mark.agents
async def test_acpx_never_sees_a_permission_asked_for_a_session_it_never_opened(
    acpx_ready: None, tmp_path: Path
) -> None:
    surface = str(Path(__file__).resolve().parents[1] / "agents" / "surface_agent.py")
    run = await acpx(
        tmp_path / "home",
        [*PROXY, "--", sys.executable, surface],
        "--approve-all",
        "exec",
        "permission elsewhere",
        cwd=tmp_path,
    )
    assert run.code == 0, run.stderr
    assert "session/request_permission" not in run.methods()
    assert "'optionId': 'no'" in run.text()  # the agent was denied
    (line,) = audit_lines()
    assert (line["resolver"], line["outcome"], line["session_id"]) == (
        "default",
        "reject_once",
        "never-created",
    )
    assert line["connection"].startswith("acpx-") and line["agent"] == "surface-agent"


# --- Codex beside Claude Code: known by its own name -------------------------------------------------


@pytest.mark.agents
async def test_codex_started_by_node_is_known_as_codex_and_a_node_bypass_covers_nothing(
    acpx_ready: None, codex_acp_ready: None, tmp_path: Path
) -> None:
    """`symposium-tui acp -- node …/codex-acp.js`: the card names Codex by its agentInfo (name and
    version), and a bypass once saved for `node` is reported and not applied to it."""
    from tests.agents.fake_openai_responses import FakeResponses, call, say

    config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text("[agents.node]\nbypass = true\n")
    work = tmp_path / "work"
    work.mkdir()
    async with (
        FakeResponses(
            [call("exec_command", {"cmd": "echo ran > marker.txt"}), say("Done.")]
        ) as api,
        Console(tmp_path, answer="approve") as console,
    ):
        launch = agents.codex_agent(tmp_path / "home", api.base_url)
        script = Path(launch.command).resolve()  # node_modules/.bin/codex-acp → bin/codex-acp.js
        env = {k: v for k, v in launch.env.items() if k != "HOME"}
        agent = [*PROXY, "--", "node", str(script)]
        run = await acpx(tmp_path / "home", agent, "exec", "Write a marker", cwd=work, env=env)
    assert run.code == 0, run.stderr
    assert "session/request_permission" not in run.methods()  # the console answered
    # (waited for, not read at once: in a run beside another suite and a CPU hog, acpx had
    # exited and the file was not there yet)
    marker = work / "marker.txt"
    await until(marker.exists, RUN_TIMEOUT, what="the file Codex's approved command writes")
    assert marker.read_text().strip() == "ran"
    (card,) = console.of(ev.ApprovalRequested)  # asked: the `node` bypass did not apply
    assert (card.agent, card.agent_version) == ("codex-acp", agents.CODEX_ACP_VERSION)
    assert card.tool_call["rawInput"]["command"][-1] == "echo ran > marker.txt"
    (line,) = audit_lines()
    assert (line["agent"], line["resolver"], line["approval_id"]) == (
        "codex-acp",
        "console",
        card.approval_id,
    )
    (outcome,) = tool_outcomes()
    assert outcome["approval_id"] == card.approval_id and outcome["status"] == "completed"
