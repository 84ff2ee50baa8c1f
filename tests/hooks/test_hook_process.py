"""`symposium-tui hook CLI` as each CLI runs it: a process fed one hook's JSON on stdin, its answer
on stdout in that CLI's schema, and nothing else; every error of its own answered as a block."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from bridge import events as ev
from tests.support.acp_console import Console
from tests.support.hooks import SCRIPT, audit, write_settings

RULES = """
[[rules]]
action = "allow"
command = "git status"

[[rules]]
action = "deny"
command = "rm"
reason = "no deleting"
"""


def pre(cli: str, tool: str, tool_input: dict, **extra) -> dict:
    event = "BeforeTool" if cli == "gemini" else "PreToolUse"
    return {
        "session_id": "s1",
        "cwd": "/tmp",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "t1",
        **extra,
    }


def hook(cli: str, stdin: bytes | str | dict, *args: str) -> subprocess.CompletedProcess[bytes]:
    data = json.dumps(stdin) if isinstance(stdin, dict) else stdin
    return subprocess.run(
        [SCRIPT, "hook", cli, *args],
        input=data.encode() if isinstance(data, str) else data,
        capture_output=True,
        timeout=60,
    )


def verdict(cli: str, done: subprocess.CompletedProcess[bytes]) -> tuple[str, str]:
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    if cli == "gemini":
        return answer["decision"], answer["reason"]
    out = answer["hookSpecificOutput"]
    return out["permissionDecision"], out["permissionDecisionReason"]


SHELL = {"claude": "Bash", "codex": "Bash", "gemini": "run_shell_command"}


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_a_rule_allows_or_denies_in_the_clis_own_schema(cli):
    write_settings(RULES)
    allowed = hook(cli, pre(cli, SHELL[cli], {"command": "git status"}))
    if cli == "codex":  # Codex takes only a deny: no decision leaves it to Codex's own policy
        assert (allowed.returncode, allowed.stdout) == (0, b"")
    else:
        assert verdict(cli, allowed)[0] == "allow"
    word, reason = verdict(cli, hook(cli, pre(cli, SHELL[cli], {"command": "rm -rf /tmp/x"})))
    assert word == "deny"
    assert "no deleting" in reason


@pytest.mark.parametrize(
    "tool_input",
    [
        {"command": ["bash", "-c", "rm -rf /tmp/x"]},  # an argv: not words joined, then re-read
        {"command": ["zsh", "-c", "rm -rf ~/src"]},
        {"command": ["bash", "-l", "-c", "rm -rf /"]},
        {"cmd": "rm -rf /tmp/x"},  # exec_command's key: one command, judged once
        {"cmd": ["bash", "-lc", "rm -rf /tmp/x"]},
    ],
    ids=["bash-c", "zsh-c", "bash-l-c", "cmd", "cmd-argv"],
)
def test_codex_commands_given_as_an_argv_or_under_cmd_are_judged_as_what_runs(tool_input):
    write_settings(RULES + "\n[agents.codex]\nbypass = true\n")  # bypass included
    for tool in ("shell", "exec_command"):
        word, reason = verdict("codex", hook("codex", pre("codex", tool, tool_input)))
        assert (word, "no deleting" in reason) == ("deny", True), (tool, reason)
    allowed = hook("codex", pre("codex", "exec_command", {"cmd": "git status"}))
    assert (allowed.returncode, allowed.stdout) == (0, b"")  # allowed: no decision for Codex
    (*_, last) = audit()
    assert (last["outcome"], last["title"]) == ("allow_once", "git status")


@pytest.mark.parametrize(
    ("stdin", "reason"),
    [
        (b"", "the hook input is empty"),
        (b"not json", "the hook input is not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (json.dumps({"hook_event_name": "Mystery", "session_id": "s"}), "unknown hook event"),
        (json.dumps({"hook_event_name": "PreToolUse"}), "names no tool_name"),
        (b'{"x": "' + b"a" * (10 * 1024 * 1024) + b'"}', "larger than 4 MiB"),
        (
            b'{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"x":'
            + b"[" * 100_000
            + b"]" * 100_000
            + b"}}",
            "the hook input is not JSON",
        ),
    ],
    ids=["empty", "not-json", "not-an-object", "unknown-event", "no-tool", "10-MB", "too-deep"],
)
def test_input_it_cannot_use_is_blocked_with_exit_status_2_and_nothing_on_stdout(stdin, reason):
    done = hook("claude", stdin)
    assert done.returncode == 2
    assert done.stdout == b""
    assert reason in done.stderr.decode()
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_an_unknown_tool_is_denied_when_no_rule_and_no_console_decide(cli):
    write_settings(RULES)
    word, reason = verdict(cli, hook(cli, pre(cli, "NoSuchTool", {"x": 1})))
    assert word == "deny"
    assert "an unknown tool, 'NoSuchTool'" in reason


def test_a_broken_settings_file_denies(tmp_path):
    write_settings("[[rules]]\naction = 'sometimes'\n")
    word, reason = verdict("claude", hook("claude", pre("claude", "Bash", {"command": "ls"})))
    assert word == "deny"
    assert "the settings file is broken" in reason
    (decision,) = audit()  # a fail-closed default is recorded like any decision
    assert (decision["outcome"], decision["resolver"]) == ("reject_once", "default")
    assert "the settings file is broken" in decision["reason"]


def test_a_call_the_rules_cannot_judge_says_why_it_is_left_to_the_cli(tmp_path):
    write_settings(RULES)
    done = hook("claude", pre("claude", "Bash", {"command": "  "}))
    word, reason = verdict("claude", done)
    assert word == "ask" and "None" not in reason, reason
    assert "blank command" in reason


def test_a_call_a_deny_rule_might_match_says_why_not_that_the_deny_rule_asks(tmp_path):
    write_settings(RULES)
    word, reason = verdict(
        "claude", hook("claude", pre("claude", "Bash", {"command": "curl x | sh"}))
    )
    assert word == "ask"
    assert "might match (sh runs what its input gives it" in reason, reason
    assert "asks a person" not in reason


@pytest.mark.parametrize(("answer", "said"), [("approve", "allowed"), ("deny", "denied")])
async def test_a_persons_answer_is_told_to_the_agent_in_plain_words(tmp_path, answer, said):
    write_settings(RULES)
    async with Console(tmp_path, answer=answer):
        code, out, _ = await run_hook("claude", pre("claude", "Bash", {"command": "make"}))
    assert code == 0
    reason = json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith(f"symposium: {said} by ") and reason.endswith(" on the console")
    assert "answered by" not in reason, reason


def test_a_huge_tool_output_after_the_tool_is_not_turned_into_a_block():
    head = b'{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Read","tool_response":"'
    done = hook("claude", head + b"x" * (10 * 1024 * 1024) + b'"}')
    assert (done.returncode, done.stdout) == (0, b"")
    head = head.replace(b"PostToolUse", b"PreToolUse")
    assert hook("claude", head + b"x" * (10 * 1024 * 1024) + b'"}').returncode == 2


def test_a_huge_tool_input_within_the_limit_is_still_decided_by_the_rules():
    write_settings(RULES + '\n[[rules]]\naction = "deny"\nkind = "edit"\nreason = "read only"\n')
    big = pre("claude", "Write", {"file_path": "/tmp/x", "content": "y" * (3 * 1024 * 1024)})
    word, reason = verdict("claude", hook("claude", big))
    assert (word, "read only" in reason) == ("deny", True)


def test_an_unknown_cli_name_is_a_block_that_names_it():
    done = subprocess.run([SCRIPT, "hook", "emacs"], input=b"{}", capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, b"")
    assert b"unknown command 'emacs'" in done.stderr
    done = subprocess.run([SCRIPT, "hook"], input=b"{}", capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, b"")
    assert b"which CLI, or install|uninstall|status?" in done.stderr and b"[]" not in done.stderr


async def run_hook(cli: str, payload: dict, *args: str) -> tuple[int, bytes, bytes]:
    proc = await asyncio.create_subprocess_exec(
        SCRIPT,
        "hook",
        cli,
        *args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await proc.communicate(json.dumps(payload).encode())
    assert proc.returncode is not None
    return proc.returncode, out, err


async def test_a_card_not_answered_before_the_hooks_time_is_withdrawn_and_the_fallback_answers(
    tmp_path,
):
    write_settings('[preferences]\nhook_no_console = "deny"\nhook_wait = 1\n' + RULES)
    async with Console(tmp_path, answer=None) as console:
        code, out, _ = await run_hook("claude", pre("claude", "Bash", {"command": "make"}))
        await console.until(lambda: console.of(ev.ApprovalResolved))
    assert code == 0
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "no console answered in time" in answer["permissionDecisionReason"]
    (card,) = console.of(ev.ApprovalRequested)
    (gone,) = console.of(ev.ApprovalResolved)
    assert (gone.approval_id, gone.outcome) == (card.approval_id, "cancelled")
    assert "stopped waiting" in (gone.reason or "")
    assert not console.bridge.approvals.pending


async def test_a_hook_killed_while_its_card_waits_withdraws_the_card_saying_its_link_closed(
    tmp_path,
):
    write_settings(RULES)
    async with Console(tmp_path, answer=None) as console:
        proc = await asyncio.create_subprocess_exec(
            SCRIPT, "hook", "claude", stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(pre("claude", "Bash", {"command": "make"})).encode())
        proc.stdin.close()
        await console.until(lambda: console.of(ev.ApprovalRequested))
        proc.kill()
        await proc.wait()
        await console.until(lambda: console.of(ev.ApprovalResolved))
    (gone,) = console.of(ev.ApprovalResolved)
    assert gone.outcome == "cancelled"
    assert "its link closed" in (gone.reason or "") and "timeout" not in (gone.reason or "")


async def test_the_watchdog_answers_before_the_clis_timeout_whatever_the_hook_waits_for(tmp_path):
    write_settings(RULES)  # hook_no_console defaults to "ask": the CLI's own prompt
    async with Console(tmp_path, answer=None) as console:
        code, out, _ = await run_hook(
            "gemini", pre("gemini", "run_shell_command", {"command": "make"}), "--timeout", "2"
        )
        await console.until(lambda: console.of(ev.ApprovalResolved))
    assert code == 0
    assert json.loads(out) == {
        "systemMessage": "symposium: no console answered in time; Gemini CLI decides by its own "
        "approval mode"
    }


def test_the_watchdog_answers_a_cli_that_never_closes_the_hooks_input():
    """The hook reads its input to the end: a CLI that keeps the pipe open (half a payload, then
    nothing) gets a block from the watchdog when its timeout nears — the process is not left
    blocked in its read — and the exit status the CLI reads as a block (2: the tool does not run)."""
    write_settings(RULES)
    proc = subprocess.Popen(
        [SCRIPT, "hook", "claude", "--timeout", "1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(json.dumps(pre("claude", "Bash", {"command": "ls"}))[:20].encode())
    proc.stdin.flush()  # and never closed until the hook has answered
    try:
        code = proc.wait(timeout=60)  # (its answer is small: no pipe fills meanwhile)
    finally:
        proc.stdin.close()
        proc.kill()
    out, err = proc.stdout.read(), proc.stderr.read()
    assert code == 2, err
    assert b"did not finish in time (its input was not read)" in err
    assert out == b""


async def test_a_rule_decides_through_a_running_console_and_it_audits(tmp_path):
    write_settings(RULES)
    async with Console(tmp_path, answer=None) as console:
        code, out, _ = await run_hook("codex", pre("codex", "Bash", {"command": "rm x"}))
    assert code == 0
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert not console.of(ev.ApprovalRequested), "a rule decided: no card"
    (decision,) = audit()
    assert (decision["resolver"], decision["agent"], decision["host"]) == (
        "policy",
        "codex",
        console.bridge.approvals.host_name,
    )


def test_after_the_tool_and_at_session_edges_nothing_is_printed():
    for payload in (
        {"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"},
        {**pre("claude", "Bash", {"command": "ls"}), "hook_event_name": "PostToolUse"},
        {"session_id": "s", "hook_event_name": "SessionEnd", "reason": "exit"},
    ):
        done = hook("claude", payload)
        assert (done.returncode, done.stdout) == (0, b""), payload


PROBE = """
import sys
from symposium_tui.cli import main
code = main(["hook", "claude"])
heavy = sorted(
    name
    for name in (
        "pydantic", "acp", "mcp", "textual", "bridge.events", "bridge.approvals",
        "socket", "selectors",  # (the console is reached through `_socket`, the C core)
    )
    if name in sys.modules
)
sys.stderr.write("LOADED " + ",".join(heavy) + "\\n")
"""


@pytest.mark.parametrize("console", [False, True], ids=["no-console", "console"])
async def test_a_hook_process_loads_neither_the_console_nor_the_acp_sdk_mcp_or_pydantic(
    tmp_path, console
):
    import sys

    write_settings(RULES)
    payload = json.dumps(pre("claude", "Bash", {"command": "git status"})).encode()

    async def probe() -> tuple[bytes, bytes]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            PROBE,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        return await proc.communicate(payload)

    if console:
        async with Console(tmp_path, answer=None):
            out, err = await probe()
    else:
        out, err = await probe()
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert b"LOADED \n" in err, err


LEAN = """
import sys
from symposium_tui.start import main
code = main(["hook", "claude"])
slow = ("dataclasses", "inspect", "typing", "urllib.parse", "ipaddress", "bashlex", "tomllib")
sys.stderr.write("LOADED " + ",".join(sorted(name for name in slow if name in sys.modules)) + "\\n")
"""


# what a plain command's decision does without: the shell grammar, `shlex` and `fnmatch` (a plain
# word needs neither), the wrappers' table (no wrapper in it)
PLAIN = ("bashlex", "shlex", "fnmatch", "bridge.shell.wrappers")


@pytest.mark.parametrize(
    ("command", "slow"),
    [
        ("git status", PLAIN),  # a plain command: split as words
        ("git status && git status -s | git status", PLAIN),  # a plain list: split too
        ("git status 2>/dev/null && git status -s", ("ast",)),  # bashlex, from its shipped tables
    ],
)
def test_a_command_rule_from_the_start_up_cache_decides_without_the_slow_standard_modules(
    command, slow
):
    """No console, the rules from the settings file's start-up cache, a plain command: the hook
    loads neither `dataclasses` (nor the `inspect`/`ast`/`dis` it brings), `typing`, the URL
    modules, the shell grammar (bashlex), `shlex`, `fnmatch`, the wrappers' table nor `tomllib`
    (the settings are not parsed)."""
    import os
    import sys
    import time
    from pathlib import Path

    from bridge import startcache

    write_settings(RULES)
    settings = Path(os.environ["SYMPOSIUM_CONFIG_DIR"]) / "settings.toml"
    old = time.time() - 60  # written a minute ago: old enough to be cached
    os.utime(settings, (old, old))
    payload = json.dumps(pre("claude", "Bash", {"command": command})).encode()
    cache = startcache.cache_file(str(settings), "hook")
    deadline = time.monotonic() + 30
    while not os.path.exists(cache):  # (the file's ctime is now: cached once it is 2 s old)
        assert time.monotonic() < deadline, "the hook never wrote the start-up cache"
        assert verdict("claude", hook("claude", payload))[0] == "allow"
    done = subprocess.run(
        [sys.executable, "-c", LEAN.replace('"bashlex"', ", ".join(map(repr, slow)))],
        input=payload,
        capture_output=True,
        timeout=60,
    )
    assert verdict("claude", done)[0] == "allow"
    assert b"LOADED \n" in done.stderr, done.stderr


GC = """
import gc, sys
from symposium_tui.start import main
code = main(["hook", "claude"])
sys.stderr.write(f"GC {gc.isenabled()}\\n")
"""


def test_a_hook_process_runs_without_the_garbage_collector():
    """Its passes over what the imports create, and the last one at exit, would free nothing the
    process needs: a hook disables it (the decision is the same)."""
    import sys

    write_settings(RULES)
    done = subprocess.run(
        [sys.executable, "-c", GC],
        input=json.dumps(pre("claude", "Bash", {"command": "git status"})).encode(),
        capture_output=True,
        timeout=60,
    )
    assert verdict("claude", done)[0] == "allow"
    assert b"GC False\n" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("tool_input", "why"),
    [
        ({"command": "ls\rrm -rf /"}, "a control character"),  # shows as `rm -rf /`
        ({"command": "ls\u202erm"}, "a control character"),  # a bidirectional override
        ({"script": "rm -rf build"}, "under 'script'"),  # not the one command the rules read
        ({"command": ""}, "blank"),
    ],
    ids=["carriage-return", "bidi-override", "script-key", "blank"],
)
def test_what_cannot_be_judged_is_asked_on_bypass_with_no_rules_as_the_broker_asks(tool_input, why):
    """No console, no rules, the agent on bypass: the hook still runs the (empty) rules, as the
    console's broker does, so a call that cannot be judged goes to a person (the CLI asks) rather
    than being allowed by the bypass; an ordinary command is allowed by it."""
    write_settings("[agents.claude-code]\nbypass = true\n")
    word, reason = verdict("claude", hook("claude", pre("claude", "Bash", tool_input)))
    assert (word, why in reason) == ("ask", True), reason
    (*_, last) = audit()
    assert last["outcome"] == "cli_prompt"
    word, reason = verdict("claude", hook("claude", pre("claude", "Bash", {"command": "ls"})))
    assert (word, reason) == (
        "allow",
        "symposium: allowed by agent bypass: always allow claude-code",
    )


@pytest.mark.parametrize(
    "env",
    [
        {"SYMPOSIUM_RUNTIME_DIR": "/x/run"},
        {"SYMPOSIUM_RUNTIME_DIR": "", "XDG_RUNTIME_DIR": "/x/xdg"},
        {"SYMPOSIUM_RUNTIME_DIR": "", "XDG_RUNTIME_DIR": ""},
    ],
    ids=["explicit", "xdg", "temp"],
)
def test_the_hook_looks_for_the_console_where_the_console_listens(monkeypatch, env):
    from bridge.hooks.decide import _runtime_dir
    from bridge.paths import runtime_dir_path

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert _runtime_dir() == runtime_dir_path()


BOOM = """
import sys
from bridge.hooks import clis, decide

def boom(call):
    raise RuntimeError("kaboom")

clis.tool_call = boom  # an exception of the hook's own, while it decides
sys.exit(decide.main(["claude"]))
"""


@pytest.mark.parametrize("closed", [1, 2], ids=["stdout", "stderr"])
def test_a_hook_whose_output_is_closed_still_exits_with_its_answer(closed):
    """The console script ends a CLI's hook with `os._exit` once it has answered: with its
    output closed by the CLI, a block still exits 2 (never a traceback's 1, which a CLI runs the
    tool after)."""
    import os

    done = subprocess.run(
        [SCRIPT, "hook", "claude"],
        input=b"{",
        capture_output=True,
        timeout=60,
        preexec_fn=lambda: os.close(closed),
    )
    assert done.returncode == 2, done


def test_an_exception_while_deciding_is_a_deny_with_its_reason_and_no_traceback():
    import sys

    done = subprocess.run(
        [sys.executable, "-c", BOOM],
        input=json.dumps(pre("claude", "Bash", {"command": "ls"})).encode(),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert answer["permissionDecisionReason"] == "symposium: the hook failed: RuntimeError: kaboom"
    assert b"Traceback" not in done.stdout + done.stderr


def test_global_flags_before_hook_choose_the_settings_it_reads(tmp_path):
    config = tmp_path / "elsewhere"
    config.mkdir()
    (config / "settings.toml").write_text(RULES)
    done = subprocess.run(
        [SCRIPT, "--config-dir", str(config), "hook", "claude"],
        input=json.dumps(pre("claude", "Bash", {"command": "rm -rf x"})).encode(),
        capture_output=True,
        timeout=60,
    )
    word, reason = verdict("claude", done)
    assert (word, "no deleting" in reason) == ("deny", True)


@pytest.mark.parametrize("bypass", [False, True], ids=["rules", "bypass"])
def test_gemini_cli_is_told_to_ask_when_a_rule_asks_and_left_its_own_mode_when_none_decides(
    bypass,
):
    # Gemini CLI asks its user on "ask" whatever its approval mode (yolo too); no decision is its
    # own approval mode, which runs the call under yolo
    agents = "\n[agents.gemini-cli]\nbypass = true\n" if bypass else ""
    write_settings(RULES + '\n[[rules]]\naction = "ask"\ncommand = "make"\n' + agents)
    asked = json.loads(
        hook("gemini", pre("gemini", "run_shell_command", {"command": "make"})).stdout
    )
    assert asked["decision"] == "ask"
    assert "ask command=make" in asked["systemMessage"]
    if not bypass:
        done = hook("gemini", pre("gemini", "run_shell_command", {"command": "mkdir x"}))
        assert "decision" not in json.loads(done.stdout)


@pytest.mark.parametrize(
    ("mode", "where"),
    [
        ("bypassPermissions", "bypassPermissions"),
        ("dontAsk", "dontAsk"),
        # `codex -a on-request -s workspace-write` (its default) sends "default" and runs a
        # command its sandbox allows unasked: no decision ran `mkdir` under an ask rule
        ("default", "its sandbox, default"),
        (None, "its sandbox, default"),
    ],
)
def test_codex_is_denied_what_a_rule_asks_about_in_every_permission_mode(mode, where):
    write_settings(RULES + '\n[[rules]]\naction = "ask"\ncommand = "make"\n')
    extra = {"permission_mode": mode} if mode else {}
    done = hook("codex", pre("codex", "Bash", {"command": "make"}, **extra))
    assert verdict("codex", done) == (
        "deny",
        f"symposium: denied (Codex would run it unasked, in {where}): no console is running "
        "(ask by rule 3 (line 11): ask command=make)",
    )
    (decision,) = audit()
    assert decision["outcome"] == "reject_once"
    # a call no rule decides is still left to Codex's own approval policy
    assert hook("codex", pre("codex", "Bash", {"command": "pwd"}, **extra)).stdout == b""


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_a_lone_surrogate_in_a_tool_call_is_denied_and_audited(cli, tmp_path):
    # `"\ud800"` is JSON a CLI may pass on from the model: no UTF-8 spells it, and the audit log
    # could not hash it (the hook failed, denied, and audited nothing)
    from bridge.audit import verify

    write_settings(RULES + f'\n[[rules]]\naction = "deny"\npath = "{tmp_path}"\nreason = "no"\n')
    call = json.dumps(pre(cli, SHELL[cli], {"command": f"cat {tmp_path}/\ud800"}))
    assert "\\ud800" in call
    word, reason = verdict(cli, hook(cli, call))
    assert word == "deny"
    assert "the hook failed" not in reason, reason
    (decision,) = audit()
    assert decision["outcome"] == "reject_once"
    assert decision["request"]["rawInput"]["command"] == f"cat {tmp_path}/\ud800"
    assert verify(Path(os.environ["SYMPOSIUM_CONFIG_DIR"]) / "audit.jsonl").ok
