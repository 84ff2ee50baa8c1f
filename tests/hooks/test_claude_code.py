"""Claude Code itself (`claude -p`, npm `@anthropic-ai/claude-code`) with `symposium-tui hook`
installed by `hook install claude --project` into a throwaway project.

Claude Code's model is `tests/agents/fake_anthropic.py`: a scripted fake of the remote Anthropic
Messages API on loopback (the real API cannot be reached here). Everything else is real: the CLI,
its hook runner, our hook process, the console host on its unix socket, the audit log.
"""

from __future__ import annotations

import asyncio

import pytest

from bridge import events as ev
from tests.agents.fake_anthropic import FakeAnthropic, text, tool_results, tool_use
from tests.support.acp_console import Console
from tests.support.hooks import RULES, audit, claude_print, hook_install, write_settings
from tests.support.tmux import TMUX, Terminal

pytestmark = pytest.mark.agents


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    path.mkdir()
    hook_install("claude", path, "--project")
    return path


def results(api: FakeAnthropic) -> list[dict]:
    return [r for body in api.main_requests[1:] for r in tool_results(body)]


async def test_rules_allow_and_deny_claude_code_bash_calls_without_a_console(tmp_path, project):
    write_settings(RULES)
    (project / "keep.txt").write_text("precious")
    script = [
        tool_use("Bash", {"command": "touch made.txt", "description": "make a file"}),
        tool_use("Bash", {"command": "rm -f keep.txt", "description": "delete a file"}),
        text("Done"),
    ]
    async with FakeAnthropic(script) as api:
        run = await claude_print(tmp_path / "home", project, api.base_url)
    assert run.code == 0, run.stderr
    assert (project / "made.txt").exists(), "the call a rule allows runs"
    assert (project / "keep.txt").read_text() == "precious", "the call a rule denies does not run"
    made, removed = results(api)
    assert made["is_error"] is False
    assert removed["is_error"] is True
    assert "nothing is deleted in this project" in removed["text"], "the model is told why"
    decisions = audit()
    assert [(d["outcome"], d["resolver"], d["agent"]) for d in decisions] == [
        ("allow_once", "policy", "claude-code"),
        ("reject_once", "policy", "claude-code"),
    ]
    assert decisions[0]["request"]["rawInput"]["command"] == "touch made.txt"
    outcomes = audit("tool_outcome")
    assert [(o["approval_id"], o["status"]) for o in outcomes] == [
        (decisions[0]["approval_id"], "completed")
    ], "the allowed call's outcome is audited against its decision"


@pytest.mark.parametrize("fallback", ["ask", "deny"])
async def test_with_no_console_a_call_no_rule_decides_falls_back_as_configured(
    tmp_path, project, fallback
):
    prefs = f'[preferences]\nhook_no_console = "{fallback}"\n' if fallback == "deny" else ""
    write_settings(prefs + RULES)
    script = [tool_use("Bash", {"command": "echo hi > said.txt"}), text("Done")]
    async with FakeAnthropic(script) as api:
        run = await claude_print(tmp_path / "home", project, api.base_url)
    assert run.code == 0, run.stderr
    assert not (project / "said.txt").exists()
    (result,) = results(api)
    assert result["is_error"] is True
    if fallback == "deny":
        assert "symposium: denied: no console is running" in result["text"]
    else:
        # Handed to Claude Code's own prompt, which print mode cannot show: Claude Code refuses.
        assert "symposium: no console is running; Claude Code asks instead" in result["text"]
    assert [d["outcome"] for d in audit()] == [
        "reject_once" if fallback == "deny" else "cli_prompt"
    ]


async def test_claude_code_on_bypass_cannot_switch_its_own_hooks_off(tmp_path, project):
    """An agent on bypass runs what it likes, but a call that names what governs it (here its
    CLI's settings, where `disableAllHooks` would switch the hook off) is asked — in print mode
    Claude Code then refuses it — and the bypass still runs the rest."""
    write_settings("[agents.claude-code]\nbypass = true\n")
    script = [
        tool_use(
            "Bash", {"command": "echo '{\"disableAllHooks\": true}' > .claude/settings.local.json"}
        ),
        tool_use("Bash", {"command": "touch made.txt"}),
        text("Done"),
    ]
    async with FakeAnthropic(script) as api:
        run = await claude_print(tmp_path / "home", project, api.base_url)
    assert run.code == 0, run.stderr
    assert not (project / ".claude" / "settings.local.json").exists(), "the guard's ask held"
    assert (project / "made.txt").exists(), "the bypass runs what governs nothing"
    asked, made = results(api)
    assert asked["is_error"] is True  # (Claude Code's own words: it has not been granted)
    assert made["is_error"] is False
    decisions = audit()
    assert [(d["outcome"], d["rule"]) for d in decisions] == [
        ("cli_prompt", None),
        ("allow_once", "agent bypass"),
    ]
    assert "settings.local.json (Claude Code's settings" in decisions[0]["reason"]


async def test_claude_code_on_bypass_cannot_delete_the_folder_that_holds_its_settings(
    tmp_path, project
):
    """The folder above: `cd .. && rm -rf project` would take the project's `.claude/` (its hooks)
    along. Asked, bypass included (print mode: Claude Code refuses); the rest still runs."""
    write_settings("[agents.claude-code]\nbypass = true\n")
    script = [
        tool_use("Bash", {"command": f"cd .. && rm -rf {project.name}"}),
        tool_use("Bash", {"command": "rm -rf build"}),
        text("Done"),
    ]
    (project / "build").mkdir()
    async with FakeAnthropic(script) as api:
        run = await claude_print(tmp_path / "home", project, api.base_url)
    assert run.code == 0, run.stderr
    assert (project / ".claude" / "settings.json").exists(), "the guard's ask held"
    assert not (project / "build").exists(), "the bypass runs what governs nothing"
    asked, removed = results(api)
    assert asked["is_error"] is True and removed["is_error"] is False
    decisions = audit()
    assert [(d["outcome"], d["rule"]) for d in decisions] == [
        ("cli_prompt", None),
        ("allow_once", "agent bypass"),
    ]
    assert "deletes or moves a folder that holds" in decisions[0]["reason"]


async def test_a_console_card_approves_a_claude_code_call_and_the_console_follows_the_session(
    tmp_path, project
):
    write_settings(RULES)
    script = [tool_use("Bash", {"command": "echo approved > card.txt"}), text("Done")]
    async with Console(tmp_path, answer="approve") as console, FakeAnthropic(script) as api:
        run = await claude_print(tmp_path / "home", project, api.base_url)
        await console.until(lambda: console.of(ev.SessionEnded))
    assert run.code == 0, run.stderr
    assert (project / "card.txt").read_text() == "approved\n", "the approved call ran"
    (card,) = console.of(ev.ApprovalRequested)
    assert card.agent == "claude-code"
    assert card.connection == "claude-code project"
    assert card.tool_call["rawInput"]["command"] == "echo approved > card.txt"
    (started,) = console.of(ev.SessionStarted)
    assert (started.connection, started.session_id) == (card.connection, card.session_id)
    assert started.agent == f"claude-code in {project}"
    statuses = [
        t.status
        for t in console.of(ev.ToolCallSeen)
        if t.tool_call_id == card.tool_call["toolCallId"]
    ]
    assert statuses == ["pending", "completed"], "the outcome reaches the tool-call log"
    (decision,) = audit()
    assert (decision["resolver"], decision["outcome"]) == ("console", "allow_once")
    (outcome,) = audit("tool_outcome")
    assert (outcome["approval_id"], outcome["status"]) == (decision["approval_id"], "completed")


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
async def test_a_person_approves_a_claude_code_call_on_a_card_of_the_real_console_in_tmux(
    tmp_path, project, monkeypatch
):
    term = Terminal(tmp_path / "console")
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(term.config))
    monkeypatch.setenv("SYMPOSIUM_RUNTIME_DIR", str(term.runtime))
    write_settings(RULES)
    term.start("console", "--no-mouse")
    try:
        await asyncio.to_thread(
            term.wait_for_all, "no pending approvals", "Console socket:", timeout=60
        )
        script = [tool_use("Bash", {"command": "mkdir from-the-card"}), text("Done")]
        async with FakeAnthropic(script) as api:
            claude = asyncio.ensure_future(claude_print(tmp_path / "home", project, api.base_url))
            await asyncio.to_thread(term.wait_for, "Approvals (1)", timeout=120)
            term.keys("F2")
            screen = await asyncio.to_thread(term.wait_for, "⚠ mkdir from-the-card")
            assert "claude-code · " in screen, "the card names the CLI and its session"
            await asyncio.to_thread(term.wait_until_gone, "(arming…)")
            term.keys("a")
            run = await claude
        assert run.code == 0, run.stderr
        assert (project / "from-the-card").is_dir(), "the call approved on the card ran"
        (decision,) = audit()
        assert (decision["resolver"], decision["outcome"]) == ("console", "allow_once")
    finally:
        term.close()
