"""A CLI's hook on a `symposium-tui serve` host, answered from a console attached over a real ssh
(the suite's OpenSSH server on loopback, tests/support/sshd.py) from another folder: the card
travels to the console and the answer comes back; a link that drops fails closed."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest

from tests.support.hooks import SCRIPT
from tests.support.remote import HeadlessConsole, ServeProcess, ssh_target
from tests.support.sshd import sshd_available, start_sshd

pytestmark = pytest.mark.skipif(
    not sshd_available(), reason="OpenSSH server not installed (.ci/run installs it)"
)


@pytest.fixture
def sshd(tmp_path_factory):
    server = start_sshd(tmp_path_factory.mktemp("sshd"), ["devbox"])
    yield server
    server.stop()


def payload(command: str) -> bytes:
    return json.dumps(
        {
            "session_id": "cc-1",
            "cwd": "/srv/app",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": "toolu_1",
        }
    ).encode()


async def start_hook(env: dict[str, str], command: str, *args: str):
    proc = await asyncio.create_subprocess_exec(
        SCRIPT,
        "hook",
        "claude",
        *args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None
    proc.stdin.write(payload(command))
    proc.stdin.close()
    return proc


async def answer_of(proc) -> dict:
    out = await asyncio.wait_for(proc.stdout.read(), 60)
    await asyncio.wait_for(proc.wait(), 30)
    assert proc.returncode == 0
    return json.loads(out)["hookSpecificOutput"]


async def test_a_hook_on_the_serve_host_is_answered_by_a_console_attached_over_ssh(sshd):
    devbox = sshd.hosts["devbox"]
    serve = await ServeProcess.start(devbox)
    console = HeadlessConsole([ssh_target(sshd, "devbox")], "alice@laptop").start()
    try:
        (link,) = console.links.links
        await asyncio.wait_for(link.wait_up(), 30)
        hook = await start_hook(devbox.env(), "make deploy")
        card = await console.wait_for(lambda e: e.type == "approval_requested")
        assert card.host == "devbox"
        assert (card.agent, card.tool_call["rawInput"]["command"]) == ("claude-code", "make deploy")
        assert console.links.answer(card.approval_id, "approve")
        answer = await answer_of(hook)
        assert answer["permissionDecision"] == "allow"
        (decision,) = serve.audit()
        assert (decision["resolver"], decision["host"]) == ("console", "devbox")
        # who decided: the console, by the peer its socket reported; its own name only as said
        assert (decision["decider"]["via"], decision["decider"]["said"]) == (
            "console",
            "alice@laptop",
        )
    finally:
        await console.stop()
        await serve.stop()


async def test_a_dropped_link_fails_closed_within_the_hooks_time(sshd):
    devbox = sshd.hosts["devbox"]
    (devbox.config_dir / "settings.toml").write_text('[preferences]\nhook_no_console = "deny"\n')
    serve = await ServeProcess.start(devbox)
    console = HeadlessConsole([ssh_target(sshd, "devbox")], "alice@laptop").start()
    try:
        (link,) = console.links.links
        await asyncio.wait_for(link.wait_up(), 30)
        hook = await start_hook(devbox.env(), "make deploy", "--timeout", "8")
        card = await console.wait_for(lambda e: e.type == "approval_requested")
        link.proc.kill()  # the ssh link drops mid-approval: the card cannot be answered now
        answer = await answer_of(hook)
        assert answer["permissionDecision"] == "deny"
        assert "no console answered in time" in answer["permissionDecisionReason"]
        (decision,) = serve.audit()
        assert decision["outcome"] == "cancelled", "the held card was withdrawn"
        assert "stopped waiting" in decision["reason"]
        assert card.tool_call["rawInput"]["command"] == "make deploy"
    finally:
        await console.stop()
        await serve.stop()
