"""`symposium-tui hook install|uninstall|status`: the entries in each CLI's own settings file,
added once, everything else kept, removed exactly."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.hooks import SCRIPT


def hook(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        [SCRIPT, "hook", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("cli", "relative", "events"),
    [
        (
            "claude",
            ".claude/settings.json",
            ["PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "SessionEnd"],
        ),
        (
            "gemini",
            ".gemini/settings.json",
            ["BeforeTool", "AfterTool", "SessionStart", "SessionEnd"],
        ),
    ],
)
@pytest.mark.parametrize("scope", ["--project", "--user"])
def test_json_settings_get_our_entries_once_and_lose_exactly_them(
    tmp_path, cli, relative, events, scope
):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    path = (project if scope == "--project" else home) / relative
    path.parent.mkdir(parents=True)
    theirs = {
        "model": "keep me",
        "hooks": {
            events[0]: [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "their-hook"}]}
            ]
        },
    }
    path.write_text(json.dumps(theirs))
    assert hook("install", cli, scope, cwd=project, home=home).returncode == 0
    first = path.read_text()
    again = hook("install", cli, scope, cwd=project, home=home)
    assert "already installed" in again.stdout
    assert path.read_text() == first, "installing twice changes nothing"
    data = json.loads(first)
    assert data["model"] == "keep me"
    assert sorted(data["hooks"]) == sorted(events)
    commands = [h["command"] for g in data["hooks"][events[0]] for h in g["hooks"]]
    assert commands[0] == "their-hook"
    assert commands[1].endswith(f"symposium-tui hook {cli} --timeout 300")
    status = hook("status", cli, scope, cwd=project, home=home).stdout
    assert f"installed in {path}" in status
    assert hook("uninstall", cli, scope, cwd=project, home=home).returncode == 0
    assert json.loads(path.read_text()) == theirs, "uninstall removes exactly what install added"
    assert "not installed" in hook("status", cli, scope, cwd=project, home=home).stdout


def test_codex_toml_keeps_comments_and_without_codex_status_says_trust_is_unknown(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('# my own comment\nmodel = "o3"  # why\n')
    done = hook("install", "codex", cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    assert "Codex could not be run" in done.stdout, (
        "no codex on PATH: the person is told to trust it"
    )
    text = config.read_text()
    assert text.startswith('# my own comment\nmodel = "o3"  # why\n')
    assert "[[hooks.PreToolUse]]" in text
    assert (
        "Codex could not be run to check its trust"
        in hook("status", "codex", cwd=project, home=home).stdout
    )
    hook("uninstall", "codex", cwd=project, home=home)
    assert config.read_text() == '# my own comment\nmodel = "o3"  # why\n'


def test_an_unknown_cli_is_refused(tmp_path):
    done = hook("install", "emacs", cwd=tmp_path, home=tmp_path)
    assert done.returncode == 2


def test_status_says_when_gemini_cli_would_skip_project_hooks_in_an_untrusted_folder(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    assert hook("install", "gemini", "--project", cwd=project, home=home).returncode == 0
    status = hook("status", "gemini", "--project", cwd=project, home=home).stdout
    assert "Gemini CLI SKIPS these" in status
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(project.resolve()): "TRUST_FOLDER"})
    )
    status = hook("status", "gemini", "--project", cwd=project, home=home).stdout
    assert f"Gemini CLI trusts {project.resolve()}" in status


def test_help_says_what_the_hook_is_and_how_to_install_it_even_after_a_cli_name(tmp_path):
    for args in (("--help",), ("-h",), ("claude", "--help")):
        done = hook(*args, cwd=tmp_path, home=tmp_path / "home")
        assert done.returncode == 0, done.stderr
        assert "around each tool call" in done.stdout and "docs/hooks.md" in done.stdout
        assert "install CLI" in done.stdout


def test_contradicting_or_unknown_flags_are_refused_and_nothing_is_written(tmp_path):
    home = tmp_path / "home"
    for flags in (("--project", "--user"), ("--proj",), ("--global",)):
        done = hook("install", "claude", *flags, cwd=tmp_path, home=home)
        assert done.returncode == 2, flags
        assert "usage: symposium-tui hook install" in done.stderr
    assert not (tmp_path / ".claude").exists() and not (home / ".claude").exists()


@pytest.mark.parametrize(
    ("cli", "relative", "broken"),
    [("claude", ".claude/settings.json", "{not json"), ("codex", ".codex/config.toml", "[x")],
)
def test_status_of_a_settings_file_that_does_not_read_says_so_not_that_nothing_is_installed(
    tmp_path, cli, relative, broken
):
    home = tmp_path / "home"
    (home / relative).parent.mkdir(parents=True)
    (home / relative).write_text(broken)
    done = hook("status", cli, cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    assert "does not read, so no hook in it runs" in done.stdout, done.stdout
    assert "not installed" not in done.stdout
    assert (home / relative).read_text() == broken


@pytest.mark.parametrize(
    ("cli", "variable", "relative"),
    [
        ("claude", "CLAUDE_CONFIG_DIR", "settings.json"),
        ("gemini", "GEMINI_CLI_HOME", ".gemini/settings.json"),
    ],
)
def test_the_user_settings_are_the_ones_the_cli_reads_under_its_home_variable(
    tmp_path, monkeypatch, cli, variable, relative
):
    # Claude Code reads $CLAUDE_CONFIG_DIR/settings.json, Gemini CLI $GEMINI_CLI_HOME/.gemini/
    # settings.json: a hook written to ~/.claude or ~/.gemini instead never runs, and status said
    # it was installed
    home, elsewhere, project = tmp_path / "home", tmp_path / "elsewhere", tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv(variable, str(elsewhere))
    done = hook("install", cli, cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    assert f"installed in {elsewhere / relative}" in done.stdout
    assert json.loads((elsewhere / relative).read_text())["hooks"]
    assert not (home / f".{cli}").exists()
    status = hook("status", cli, cwd=project, home=home).stdout
    assert f"installed in {elsewhere / relative}" in status
    assert hook("uninstall", cli, cwd=project, home=home).returncode == 0
    assert "hooks" not in json.loads((elsewhere / relative).read_text())


@pytest.mark.parametrize(
    ("cli", "relative", "setting", "said"),
    [
        ("claude", ".claude/settings.local.json", {"disableAllHooks": True}, "disableAllHooks is true"),
        ("claude", ".claude/settings.json", {"disableAllHooks": True}, "disableAllHooks is true"),
        ("gemini", ".gemini/settings.json", {"hooksConfig": {"enabled": False}}, "hooksConfig.enabled is false"),
        ("gemini", ".gemini/settings.json", {"hooksConfig": {"disabled": ["symposium"]}}, 'hooksConfig.disabled names "symposium"'),
    ],
)  # fmt: skip
def test_install_and_status_say_when_a_setting_keeps_the_cli_from_running_the_hook(
    tmp_path, cli, relative, setting, said
):
    # `"disableAllHooks": true` in .claude/settings.local.json: install said "installed", Claude
    # Code ran no hook, and `claude -p` ran `rm -f keep.txt` past deny command=rm, unaudited
    home, project = tmp_path / "home", tmp_path / "project"
    (project / relative).parent.mkdir(parents=True)
    (project / relative).write_text(json.dumps(setting))
    done = hook("install", cli, "--project", cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    assert f"SKIPS these: {said} in {project / relative}" in done.stdout
    assert (
        f"{said} in {project / relative}"
        in hook("status", cli, "--project", cwd=project, home=home).stdout
    )
    (project / relative).write_text("{}")
    assert (
        "SKIPS these: " + said
        not in hook("status", cli, "--project", cwd=project, home=home).stdout
    )
