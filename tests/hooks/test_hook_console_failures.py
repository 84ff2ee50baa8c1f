"""`symposium-tui hook CLI` (a real hook process) with a console socket that takes the call and
then fails it: never answers (a hung console, a `serve` link that stalls), answers what is not
JSON-RPC, or closes. Each is answered as the settings say or denied, and audited by the hook."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.hooks.test_hook_process import RULES, SHELL, pre, run_hook
from tests.support.hooks import audit, write_settings


@contextlib.asynccontextmanager
async def console_that(answer: bytes | None) -> AsyncIterator[None]:
    """A console socket that reads the hook's hello and call, then writes `answer` and closes
    (None: holds the connection, answering nothing, until the hook closes it)."""
    path = Path(os.environ["SYMPOSIUM_RUNTIME_DIR"]) / "console.sock"
    path.parent.mkdir(parents=True, exist_ok=True)

    async def on_hook(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()  # hook/hello
        await reader.readline()  # hook/decide
        if answer is None:
            await reader.read()  # until the hook gives up and closes
        else:
            writer.write(answer)
            await writer.drain()
        writer.close()

    server = await asyncio.start_unix_server(on_hook, path=str(path))
    try:
        yield
    finally:
        server.close()
        await server.wait_closed()


def word_of(cli: str, out: bytes) -> str:
    if cli == "codex" and out == b"":
        return "no decision"
    answer = json.loads(out)
    if cli == "gemini":
        return answer.get("decision", "no decision")
    return answer["hookSpecificOutput"]["permissionDecision"]


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
async def test_a_console_that_never_answers_gets_the_settings_fallback_and_it_is_audited(cli):
    write_settings('[preferences]\nhook_no_console = "deny"\n' + RULES)
    async with console_that(None):
        code, out, _ = await run_hook(
            cli, pre(cli, SHELL[cli], {"command": "make"}), "--timeout", "3"
        )
    assert code == 0
    assert word_of(cli, out) == "deny", out  # not the CLI's own approval mode (yolo runs it)
    assert b"no console answered in time" in out
    (decision,) = audit()
    assert (decision["outcome"], decision["resolver"]) == ("reject_once", "default")


async def test_with_the_default_fallback_a_console_that_never_answers_leaves_it_to_the_cli():
    write_settings(RULES)
    async with console_that(None):
        code, out, _ = await run_hook(
            "claude", pre("claude", "Bash", {"command": "make"}), "--timeout", "3"
        )
    assert (code, word_of("claude", out)) == (0, "ask")
    (decision,) = audit()
    assert decision["outcome"] == "cli_prompt"


BYPASS = "\n".join(f"[agents.{a}]\nbypass = true\n" for a in ("claude-code", "codex", "gemini-cli"))


@pytest.mark.parametrize(
    ("cli", "command", "word"),
    [
        ("claude", "rm -rf /tmp/x", "deny"),
        ("codex", "rm -rf /tmp/x", "deny"),
        ("gemini", "rm -rf /tmp/x", "deny"),
        ("codex", "mkdir made", "deny"),  # Codex takes no "ask": on bypass, it would run it
        ("gemini", "mkdir made", "ask"),  # Gemini CLI asks on "ask", yolo or not
    ],
)
async def test_a_console_that_never_answers_lifts_no_rule(cli, command, word):
    """A hung console (stopped with ^Z, a stalled `serve` link) is no console: the rules still
    decide. The fallback alone was "ask", which Codex and Gemini CLI on bypass read as "run it"."""
    write_settings(RULES + '\n[[rules]]\naction = "ask"\ncommand = "mkdir"\n\n' + BYPASS)
    call = pre(cli, SHELL[cli], {"command": command}, permission_mode="bypassPermissions")
    async with console_that(None):
        code, out, _ = await run_hook(cli, call, "--timeout", "5")
    assert (code, word_of(cli, out)) == (0, word), out
    (decision,) = audit()
    if word == "deny" and command.startswith("rm"):
        assert b"no deleting" in out
        assert (decision["outcome"], decision["resolver"]) == ("reject_once", "policy")
    else:
        assert decision["rule"].endswith("ask command=mkdir"), decision


@pytest.mark.parametrize(
    "answer",
    [
        b"hello world\n",
        b'{"jsonrpc":"2.0","id":1,"error":"no"}\n',
        b'{"jsonrpc":"2.0","id":1,"result":[]}\n',
        b"",
    ],
    ids=["not-json", "odd-error", "odd-result", "closed"],
)
async def test_a_console_that_answers_garbage_or_closes_is_a_denial_and_it_is_audited(answer):
    write_settings(RULES)
    async with console_that(answer):
        code, out, _ = await run_hook(
            "gemini", pre("gemini", "run_shell_command", {"command": "x"})
        )
    assert (code, word_of("gemini", out)) == (0, "deny"), out
    (decision,) = audit()
    assert (decision["outcome"], decision["resolver"]) == ("reject_once", "default")
