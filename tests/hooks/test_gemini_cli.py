"""Gemini CLI itself (`gemini -p`, npm `@google/gemini-cli`) with `symposium-tui hook` installed
by `hook install gemini --project` into a throwaway, trusted project.

Gemini CLI's model is `tests/agents/fake_anthropic.py` speaking the Gemini API: a scripted fake
of the remote model API on loopback (the real API cannot be reached here). The CLI, its hook
runner, our hook process, the console host and the audit log are real.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from bridge import events as ev
from tests.agents.fake_anthropic import FakeAnthropic, text, tool_use
from tests.support.acp_console import Console
from tests.support.hooks import (
    RULES,
    SCRIPT,
    audit,
    gemini_print,
    hook_install,
    write_settings,
)

pytestmark = pytest.mark.agents


@pytest.fixture
def project(tmp_path, gemini_ready):
    path = tmp_path / "project"
    path.mkdir()
    hook_install("gemini", path, "--project")
    return path


def sent_back(api: FakeAnthropic) -> str:
    """What Gemini CLI sent the model after the tool (its function response), as text."""
    return json.dumps(api.main_requests[-1]["contents"][-1])


async def test_rules_allow_and_deny_gemini_cli_shell_calls(tmp_path, project):
    write_settings(RULES)
    (project / "keep.txt").write_text("precious")
    script = [
        tool_use("run_shell_command", {"command": "touch made.txt"}),
        tool_use("run_shell_command", {"command": "rm -f keep.txt"}),
        text("Done"),
    ]
    async with FakeAnthropic(script) as api:
        run = await gemini_print(tmp_path / "home", project, api.base_url)
    assert run.code == 0, run.stderr
    assert (project / "made.txt").exists(), "the call a rule allows runs"
    assert (project / "keep.txt").read_text() == "precious", "the call a rule denies does not run"
    assert "nothing is deleted in this project" in sent_back(api), "the model is told why"
    assert [(d["outcome"], d["agent"]) for d in audit()] == [
        ("allow_once", "gemini-cli"),
        ("reject_once", "gemini-cli"),
    ]


async def test_a_commented_settings_file_keeps_its_comments_and_gemini_cli_runs_the_hook(
    tmp_path, gemini_ready
):
    """Gemini CLI allows comments in its settings.json: install keeps them (and every other byte),
    Gemini CLI reads the file and runs the hook from it, and uninstall gives back the very file."""
    project = tmp_path / "project"
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = '{\n  // the person\'s own note\n  "general": { /* kept */ "vimMode": false }\n}\n'
    settings.write_text(original)
    hook_install("gemini", project, "--project")
    installed = settings.read_text()
    assert installed.startswith(original[:-3]), installed  # all of it, up to the closing brace
    write_settings(RULES)
    (project / "keep.txt").write_text("precious")
    script = [tool_use("run_shell_command", {"command": "rm -f keep.txt"}), text("Done")]
    async with FakeAnthropic(script) as api:
        run = await gemini_print(tmp_path / "home", project, api.base_url)
    assert run.code == 0, run.stderr
    assert (project / "keep.txt").read_text() == "precious", "the hook in the file denied it"
    assert [d["outcome"] for d in audit()] == ["reject_once"]
    done = subprocess.run(
        [SCRIPT, "hook", "uninstall", "gemini", "--project"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert settings.read_text() == original


async def test_with_no_console_and_deny_configured_an_undecided_call_is_refused(tmp_path, project):
    write_settings('[preferences]\nhook_no_console = "deny"\n' + RULES)
    script = [tool_use("run_shell_command", {"command": "mkdir made"}), text("Done")]
    async with FakeAnthropic(script) as api:
        run = await gemini_print(tmp_path / "home", project, api.base_url)
    assert run.code == 0, run.stderr
    assert not (project / "made").exists()
    assert "symposium: denied: no console is running" in sent_back(api)


async def test_a_console_card_approves_a_gemini_cli_call(tmp_path, project):
    write_settings(RULES)
    script = [tool_use("run_shell_command", {"command": "mkdir approved"}), text("Done")]
    async with Console(tmp_path, answer="approve") as console, FakeAnthropic(script) as api:
        run = await gemini_print(tmp_path / "home", project, api.base_url)
        await console.until(lambda: console.of(ev.SessionEnded))
    assert run.code == 0, run.stderr
    assert (project / "approved").is_dir(), "the approved call ran"
    (card,) = console.of(ev.ApprovalRequested)
    assert (card.agent, card.connection) == ("gemini-cli", "gemini-cli project")
    assert card.tool_call["rawInput"]["command"] == "mkdir approved"
    assert [t.status for t in console.of(ev.ToolCallSeen)] == ["pending", "completed"]
    (decision,) = audit()
    assert (decision["resolver"], decision["outcome"]) == ("console", "allow_once")


@pytest.mark.parametrize("bypass", [False, True], ids=["rules", "bypass"])
async def test_a_call_a_rule_asks_about_is_not_run_unasked_in_yolo_mode(tmp_path, project, bypass):
    """Gemini CLI takes "ask" from a BeforeTool hook (it asks its user whatever its approval
    mode): a call an ask rule holds, which beats bypass, is not run unasked under yolo."""
    agents = "\n[agents.gemini-cli]\nbypass = true\n" if bypass else ""
    write_settings(RULES + '\n[[rules]]\naction = "ask"\ncommand = "mkdir"\n' + agents)
    script = [tool_use("run_shell_command", {"command": "mkdir asked"}), text("Done")]
    async with FakeAnthropic(script) as api:
        run = await gemini_print(tmp_path / "home", project, api.base_url)
    assert run.code == 0, run.stderr
    assert not (project / "asked").exists(), "an ask rule's call ran with nobody asked"
    (decision,) = audit()
    assert decision["outcome"] == "cli_prompt"
    assert decision["asked_by"] == "rule 3 (line 11): ask command=mkdir"


@pytest.mark.parametrize(
    "tool_input",
    [
        {"pattern": "KEYS/*"},
        {"pattern": "Keys/ID_RSA"},
        {"pattern": "kEyS/*", "dir_path": "."},
        {"pattern": "k\\eys/*", "case_sensitive": True},  # `\e` is `e` to node-glob
    ],
    ids=["upper-case", "mixed-case", "in-a-folder", "backslash"],
)
async def test_a_glob_gemini_cli_matches_whatever_its_case_is_judged_by_what_it_lists(
    tmp_path, project, tool_input
):
    """Gemini CLI's glob tool matches with node-glob's `nocase` unless `case_sensitive`:
    `KEYS/*` lists keys/id_rsa, which a deny rule on keys holds; and `\\e` in a glob is `e`."""
    (project / "keys").mkdir()
    (project / "keys" / "id_rsa").write_text("secret key")
    write_settings(
        f'[[rules]]\naction = "deny"\npath = "{project}/keys"\nreason = "no keys"\n\n'
        "[agents.gemini-cli]\nbypass = true\n"
    )
    script = [tool_use("glob", tool_input), text("Done")]
    async with FakeAnthropic(script) as api:
        run = await gemini_print(tmp_path / "home", project, api.base_url)
    assert run.code == 0, run.stderr
    assert "id_rsa" not in sent_back(api).replace("ID_RSA", ""), "Gemini CLI listed the key"
    assert "no keys" in sent_back(api)
    assert [d["outcome"] for d in audit()] == ["reject_once"]


async def test_a_console_that_never_answers_lifts_no_deny_rule_in_yolo_mode(tmp_path, project):
    """A console that takes the call and never answers (hung, stopped): the hook applies the
    rules itself. Answered with the bare fallback (no decision), yolo ran `rm` past a deny rule."""
    from tests.hooks.test_hook_console_failures import console_that

    settings = project / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    for hook in data["hooks"]["BeforeTool"][0]["hooks"]:  # a short wait for the hung console
        hook["command"] = hook["command"].replace("--timeout 300", "--timeout 8")
        hook["timeout"] = 8000
    settings.write_text(json.dumps(data))
    write_settings(RULES)
    (project / "keep.txt").write_text("precious")
    script = [tool_use("run_shell_command", {"command": "rm -f keep.txt"}), text("Done")]
    async with console_that(None), FakeAnthropic(script) as api:
        run = await gemini_print(tmp_path / "home", project, api.base_url)
    assert run.code == 0, run.stderr
    assert (project / "keep.txt").read_text() == "precious", "a deny rule's call ran"
    assert "nothing is deleted in this project" in sent_back(api)
    assert [(d["outcome"], d["resolver"]) for d in audit()] == [("reject_once", "policy")]
