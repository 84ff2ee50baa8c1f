"""Files that hold conversations, tool input or settings are private, secrets never reach them,
and a runtime directory someone else planted is refused.

* Every file we write that can hold conversation content, tool input or settings — the event log,
  traces, the audit log, logs, the settings — is created 0600 in a 0700 directory, under
  `umask 022` (the usual one, which would give 0644/0755).
* An API key in an agent definition's `env` appears in none of the files written, nor in what the
  endpoint prints.
* A default runtime path pre-created as a symlink by another user is not followed.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.lmclient import AGENT_ACTION, REPO, LmClient, echo_agent, tool_result, user

SECRET = "sk-ant-api03-TOPSECRETvalue0123456789"


@contextlib.contextmanager
def umask(value: int):
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def agent_with_secret() -> dict:
    agent = echo_agent()
    agent["env"] = [
        {"name": "ANTHROPIC_API_KEY", "value": SECRET},
        {"name": "HARMLESS", "value": "visible"},
    ]
    return agent


async def test_files_are_private_and_hold_no_secret_under_umask_022(tmp_path):
    out = tmp_path / "out"  # nothing under it exists yet: every directory is ours to create
    config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
    assert not config.exists()
    with umask(0o022):
        lm = await LmClient.start(
            "--log",
            "debug",
            "--log-dir",
            str(out / "logs"),
            "--trace-dir",
            str(out / "traces"),
            "--event-log",
            str(out / "events" / "events.jsonl"),
            "--cwd",
            str(tmp_path),
        )
        try:
            agent = agent_with_secret()
            hello = await lm.chat([user("hello")], agent=agent)
            assert hello.text == "ECHO: hello"
            # a permission answered through VS Code: the audit log is written too
            first = await lm.chat([user("permit deploy")], agent=agent, tools=[AGENT_ACTION])
            (call,) = first.tool_calls
            second = await lm.chat(
                [
                    user("permit deploy"),
                    first.as_assistant(),
                    tool_result(call["toolCallId"], [{"$mid": 21, "value": "Approved"}]),
                ],
                agent=agent,
                tools=[AGENT_ACTION],
            )
            assert second.text == "OUTCOME: allow_once"
        finally:
            await lm.close()
        # the settings, written by the same code the console's settings screen uses
        from bridge.settings import SettingsStore

        store = SettingsStore()
        store.load()
        store.set_agent_bypass("echo", True)

    written = {
        "event log": out / "events" / "events.jsonl",
        "audit log": config / "audit.jsonl",
        "settings": config / "settings.toml",
    }
    (log_file,) = (out / "logs").iterdir()
    (trace_file,) = (out / "traces").iterdir()
    written["log"] = log_file
    written["trace"] = trace_file
    for what, path in written.items():
        assert mode(path) == 0o600, (what, oct(mode(path)))
        assert mode(path.parent) == 0o700, (what, oct(mode(path.parent)))
    for directory in (out, out / "logs", out / "traces", out / "events", config):
        assert mode(directory) == 0o700, directory

    # no file anywhere we wrote, nor the endpoint's own output, holds the secret
    everything = [p for root in (out, config) for p in root.rglob("*") if p.is_file()]
    assert len(everything) >= 5
    for path in everything:
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in "\n".join(lm.stderr_lines)
    # … while what is not secret is still there to read
    assert b"HARMLESS" in (out / "events" / "events.jsonl").read_bytes()  # names, not values
    assert b"[redacted]" in trace_file.read_bytes()


async def test_an_agents_error_and_stderr_never_show_its_key(tmp_path):
    """An agent that fails and prints its own key: the error the client gets and the event log's
    stderr lines show `[redacted]` instead."""
    log = tmp_path / "events.jsonl"
    script = tmp_path / "leaky_agent.py"
    script.write_text(
        "import os, sys\n"
        "print('starting with key', os.environ['ANTHROPIC_API_KEY'], file=sys.stderr)\n"
        "sys.exit(3)\n"
    )
    agent = {
        "id": "leaky",
        "name": "Leaky",
        "command": sys.executable,
        "args": [str(script)],
        "env": [{"name": "ANTHROPIC_API_KEY", "value": SECRET}],
    }
    lm = await LmClient.start("--event-log", str(log), "--cwd", str(tmp_path))
    try:
        resp = await lm.chat([user("hello")], agent=agent)
    finally:
        await lm.close()
    assert resp.error is not None
    assert SECRET not in str(resp.error)
    assert "[redacted]" in str(resp.error) or "exited" in str(resp.error)
    assert SECRET.encode() not in log.read_bytes()
    assert SECRET not in "\n".join(lm.stderr_lines)


INHERITED = "inherited-service-token-0123456789"  # in the endpoint's env: the agent inherits it
FREE_TEXT = "hunter2-free-text-password"
BEARER = "eyJhbGciOiJIUzI1NiJ9.bearer-credential"


async def test_what_an_agent_writes_on_stderr_is_redacted_everywhere_it_goes(tmp_path):
    """A real agent process that prints secrets on its stderr as it starts (its own key, a
    variable it inherited, a password and a bearer credential in free text), then serves ACP:
    the debug log, the trace, the event log (what the console shows) and the endpoint's output
    hold none of them, and the lines are still there, redacted."""
    out = tmp_path / "out"
    script = tmp_path / "chatty_agent.py"
    script.write_text(
        "import os, sys\n"
        "print('using key', os.environ['ANTHROPIC_API_KEY'], file=sys.stderr)\n"
        "print('service token:', os.environ['MY_SERVICE_TOKEN'], file=sys.stderr)\n"
        f"print('retrying with password={FREE_TEXT} after 1s', file=sys.stderr)\n"
        f"print('header Authorization: Bearer {BEARER}', file=sys.stderr, flush=True)\n"
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])\n"
    )
    agent = echo_agent()
    agent.update(
        id="chatty",
        args=[str(script), *agent["args"]],
        env=[{"name": "ANTHROPIC_API_KEY", "value": SECRET}],
    )
    env = {**os.environ, "MY_SERVICE_TOKEN": INHERITED}
    lm = await LmClient.start(
        "--log",
        "debug",
        "--log-dir",
        str(out / "logs"),
        "--trace-dir",
        str(out / "traces"),
        "--event-log",
        str(out / "events.jsonl"),
        "--cwd",
        str(tmp_path),
        env=env,
    )
    try:
        hello = await lm.chat([user("hello")], agent=agent)
        assert hello.text == "ECHO: hello"
    finally:
        await lm.close()
    events = (out / "events.jsonl").read_text()
    stderr_lines = [
        json.loads(line)["line"] for line in events.splitlines() if '"agent_stderr"' in line
    ]
    assert any(line.startswith("header Authorization: Bearer [redacted]") for line in stderr_lines)
    assert "retrying with password=[redacted] after 1s" in stderr_lines
    assert "service token: [redacted]" in stderr_lines
    assert "using key [redacted]" in stderr_lines
    everything = [p for p in out.rglob("*") if p.is_file()]
    assert len(everything) >= 3
    for secret in (SECRET, INHERITED, FREE_TEXT, BEARER):
        for path in everything:
            assert secret.encode() not in path.read_bytes(), (secret, path)
        assert secret not in "\n".join(lm.stderr_lines)
    (log_file,) = (out / "logs").iterdir()
    assert "service token: [redacted]" in log_file.read_text()  # logged, redacted


def test_free_text_redaction():
    from bridge.redact import redact_free_text

    assert redact_free_text("key abcd1234 and zzzz", ["abcd1234"]) == "key [redacted] and zzzz"
    assert redact_free_text('{"apiKey": "k3y-value", "max_tokens": 5}') == (
        '{"apiKey": "[redacted]", "max_tokens": 5}'
    )
    assert redact_free_text("GITHUB_TOKEN=abc rest") == "GITHUB_TOKEN=[redacted] rest"
    assert redact_free_text("get https://bob:pa55@example.com/x") == (
        "get https://bob:[redacted]@example.com/x"
    )
    assert redact_free_text("found ghp_abcdefghijklmnopqrstuvwxyz0123") == "found [redacted]"
    # what names no secret is left as it is
    assert redact_free_text("max_tokens=100 keyword=foo session=s1") == (
        "max_tokens=100 keyword=foo session=s1"
    )


def test_redaction_rules():
    from bridge.redact import REDACTED, redact

    data = {
        "agent": {"env": {"GITHUB_TOKEN": "g"}, "command": "x"},
        "headers": [{"name": "Authorization", "value": "Bearer b"}, {"name": "X", "value": "y"}],
        "apiKey": "k",
        "client_secret": "s",
        "max_tokens": 10,
        "toolCallId": "t",
    }
    assert redact(data) == {
        "agent": {"env": {"GITHUB_TOKEN": REDACTED}, "command": "x"},
        "headers": [{"name": "Authorization", "value": REDACTED}, {"name": "X", "value": "y"}],
        "apiKey": REDACTED,
        "client_secret": REDACTED,
        "max_tokens": 10,
        "toolCallId": "t",
    }


@pytest.mark.skipif(os.geteuid() != 0, reason="planting another user's symlink needs root")
def test_a_runtime_dir_planted_as_another_users_symlink_is_refused(tmp_path):
    """The default runtime path (`$TMPDIR/symposium-<uid>`) pre-created by another user as a
    symlink: the console refuses it (it neither follows nor chmods it) and the endpoint's relay
    does not talk to a socket behind it."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    victim = tmp_path / "victim"  # where the link points: a directory of ours, mode 0755
    victim.mkdir()
    os.chmod(victim, 0o755)
    link = tmp / f"symposium-{os.getuid()}"
    link.symlink_to(victim)
    os.lchown(link, 4242, 4242)  # made by someone else
    env = {
        k: v for k, v in os.environ.items() if k not in ("SYMPOSIUM_RUNTIME_DIR", "XDG_RUNTIME_DIR")
    }
    env["TMPDIR"] = str(tmp)
    proc = subprocess.run(
        [sys.executable, "-m", "symposium_tui", "serve"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "symlink made by another user" in proc.stderr
    assert mode(victim) == 0o755 and list(victim.iterdir()) == []

    from symposium_tui.hosting import relay

    assert relay.connect(link / "console.sock") is None
