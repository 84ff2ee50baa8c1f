"""Codex itself (`codex exec`, npm `@openai/codex`) with `symposium-tui hook` installed by `hook
install codex` into its `CODEX_HOME`, trusted the way Codex records it (no trust bypass flag).

Codex's model is `tests/agents/fake_openai_responses.py`: a scripted fake of OpenAI's remote
Responses API on loopback, reached as a custom provider (the real API cannot be reached here).
The CLI, its hook runner, our hook process, the console host and the audit log are real.
"""

from __future__ import annotations

import pytest

from bridge import events as ev
from tests.agents.fake_openai_responses import FakeResponses, call, outputs, say
from tests.support.acp_console import Console
from tests.support.hooks import (
    RULES,
    audit,
    codex_env,
    codex_exec,
    codex_provider,
    hook_install,
    write_settings,
)

pytestmark = pytest.mark.agents


@pytest.fixture
def codex(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    env = codex_env(tmp_path / "home", tmp_path / "codex-home")
    return project, env


async def run(tmp_path, codex, script, *, console: Console | None = None):
    project, env = codex
    async with FakeResponses(script) as api:
        codex_provider(tmp_path / "codex-home", api.base_url)
        installed = hook_install("codex", project, env=env)
        assert "trust recorded for 4 hooks" in installed, installed
        done = await codex_exec(env, project)
        if console is not None:
            await console.until(lambda: console.of(ev.SessionEnded))
    assert done.code == 0, done.stderr
    return [o["output"] for o in outputs(api.requests[-1])]


async def test_rules_allow_and_deny_codex_commands(tmp_path, codex):
    project, _ = codex
    write_settings(RULES)
    (project / "keep.txt").write_text("precious")
    script = [
        call("exec_command", {"cmd": "touch made.txt"}),
        call("exec_command", {"cmd": "rm -f keep.txt"}),
        say("Done"),
    ]
    results = await run(tmp_path, codex, script)
    assert (project / "made.txt").exists(), "the call a rule allows runs"
    assert (project / "keep.txt").read_text() == "precious", "the call a rule denies does not run"
    assert "nothing is deleted in this project" in results[1], "the model is told why"
    assert [(d["outcome"], d["agent"]) for d in audit()] == [
        ("allow_once", "codex"),
        ("reject_once", "codex"),
    ]


async def test_with_no_console_and_deny_configured_an_undecided_command_is_refused(tmp_path, codex):
    project, _ = codex
    write_settings('[preferences]\nhook_no_console = "deny"\n' + RULES)
    results = await run(tmp_path, codex, [call("exec_command", {"cmd": "mkdir made"}), say("Done")])
    assert not (project / "made").exists()
    assert "symposium: denied: no console is running" in results[0]


async def test_a_console_card_approves_a_codex_command(tmp_path, codex):
    project, _ = codex
    write_settings(RULES)
    async with Console(tmp_path, answer="approve") as console:
        await run(
            tmp_path,
            codex,
            [call("exec_command", {"cmd": "mkdir approved"}), say("Done")],
            console=console,
        )
        await console.until(
            lambda: any(t.status == "completed" for t in console.of(ev.ToolCallSeen))
        )
    assert (project / "approved").is_dir(), "the approved call ran"
    (card,) = console.of(ev.ApprovalRequested)
    assert (card.agent, card.connection) == ("codex", "codex project")
    assert card.tool_call["rawInput"]["command"] == "mkdir approved"
    (decision,) = audit()
    assert (decision["resolver"], decision["outcome"]) == ("console", "allow_once")
    (started,) = console.of(ev.SessionStarted)
    (ended,) = console.of(ev.SessionEnded)
    assert started.connection == ended.connection == card.connection
    assert started.agent == f"codex in {project}"


@pytest.mark.parametrize("bypass", [False, True], ids=["rules", "bypass"])
async def test_a_command_a_rule_asks_about_is_not_run_by_a_codex_that_asks_nobody(
    tmp_path, codex, bypass
):
    """Codex takes no "ask" from a hook; in bypassPermissions (which it sends as the call's
    permission_mode) no decision runs the call with nobody asked: what a rule asks about, which
    beats bypass, is denied instead."""
    project, _ = codex
    agents = "\n[agents.codex]\nbypass = true\n" if bypass else ""
    write_settings(RULES + '\n[[rules]]\naction = "ask"\ncommand = "mkdir"\n' + agents)
    script = [call("exec_command", {"cmd": "mkdir asked"}), call("exec_command", {"cmd": "pwd"})]
    results = await run(tmp_path, codex, [*script, say("Done")])
    assert not (project / "asked").exists(), "an ask rule's command ran with nobody asked"
    assert "Codex would run it unasked, in bypassPermissions" in results[0]
    assert str(project) in results[1], "a call no rule asks about is still Codex's to run"
    assert audit()[0]["outcome"] == "reject_once"
