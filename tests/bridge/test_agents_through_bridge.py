"""Agents nobody on this project wrote, behind the real bridge, end to end.

The VS Code side is `tests/support/lmclient.py` speaking the vscodelm protocol to a real
`symposium-tui vscodelm` process over pipes; the agent side is fast-agent, Claude Code (Zed's ACP
adapter, talking to the scripted fake Anthropic API of `tests/agents/fake_anthropic.py`), Gemini
CLI (the same fake, in its Gemini dialect) and Codex (Zed's adapter, on the fake Responses API of
`tests/agents/fake_openai_responses.py`), each an external process the bridge launches
from the agent definition of the request. Each agent runs under `tests/agents/acp_tap.py`, which
relays its stdio unchanged and logs every ACP message, so that a test can check what the agent was
really sent (the outcome of a permission request, `session/cancel`, the order of a drained turn).

Upstream's scenarios (docs/upstream.md) covered here with real agents: D9 (permission approved through the
`symposium-agent-action` round trip), D10 (abandoned), D11 (no agent-action tool offered: denied,
the agent told), D12 (permission for the client's own tool: no round trip), D14 (cancel mid
stream), D16 (client tool call: `tool_call` part, a non-string result reaches the agent as its
text), D17 (tool list changed between requests), and architecture decision 8 (several client
tools called at once: one response).

The agents are installed by `tests/agents/install.py` into `.cache/agents` (about 40 s on a fresh
machine, then instant); an install failure fails the tests with the installer's output.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.agents import install as agents
from tests.agents.fake_anthropic import (
    FakeAnthropic,
    ToolUse,
    last_user_text,
    text,
    tool_results,
    tool_use,
)
from tests.support.lmclient import AGENT_ACTION, LmClient, Response, tool, user
from tests.support.waiting import until

pytestmark = pytest.mark.agents

HERE = Path(__file__).resolve().parents[1]
TAP = HERE / "agents" / "acp_tap.py"
CALC_SERVER = HERE / "agents" / "calc_mcp_server.py"

FIRST_TIMEOUT = (
    120.0  # the first request starts the agent: fast-agent takes seconds on a busy machine
)
TURN_TIMEOUT = 60.0

READ_FILE = tool(
    "read_file",
    "Read a file of the workspace",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
LIST_DIR = tool(
    "list_dir",
    "List a directory of the workspace",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
GREP = tool(
    "grep",
    "Search the workspace",
    {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]},
)

#: Zed's Claude adapter up to at least 0.23.1 answers the first `session/prompt` after a cancelled
#: one with a stale stop reason (`end_turn`, no output, zero usage) and delivers that prompt's answer
#: during the prompt after it (upstream claude-agent-acp issue #551). The bridge drains the
#: cancelled turn correctly (the tap shows `cancelled` arriving before the next prompt is sent); it
#: cannot tell the stale answer from an empty one. The renamed package
#: (@agentclientprotocol/claude-agent-acp 0.100.0) was seen answering cleanly.
CLAUDE_STALE_STOP_AFTER_CANCEL = (
    agents.AGENTS["claude"] == "@zed-industries/claude-agent-acp@0.23.1"
)


# -- install (never skipped: a failed install fails with the installer's output) ---------------------
# (the install fixtures fast_agent_ready, claude_ready, gemini_ready live in tests/conftest.py)


# -- the tap: what the agent was really sent ----------------------------------------------------------
class Tap:
    """Reads the log `acp_tap.py` writes: every ACP message to and from the agent, in order."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def entries(self) -> list[dict[str, Any]]:
        out = []
        if not self.path.exists():
            return out
        for line in self.path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
        return out

    def messages(self) -> list[tuple[str, dict[str, Any]]]:
        return [(e["dir"], e["msg"]) for e in self.entries() if isinstance(e["msg"], dict)]

    def sent(self, method: str) -> list[dict[str, Any]]:
        """Requests and notifications the bridge sent the agent."""
        return [m for d, m in self.messages() if d == "to_agent" and m.get("method") == method]

    def permissions(self) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """Each `session/request_permission` of the agent with the bridge's answer (its result)."""
        msgs = self.messages()
        out = []
        for d, m in msgs:
            if d == "from_agent" and m.get("method") == "session/request_permission":
                answer = next(
                    (
                        a
                        for e, a in msgs
                        if e == "to_agent" and "method" not in a and a.get("id") == m["id"]
                    ),
                    None,
                )
                out.append((m["params"], answer.get("result") if answer else None))
        return out

    def index(self, pred: Callable[[str, dict[str, Any]], bool], start: int = 0) -> int:
        """Where the first message from `start` on that `pred` accepts is."""
        for i, (d, m) in enumerate(self.messages()):
            if i >= start and pred(d, m):
                return i
        raise AssertionError("not in the tap:\n" + self.tail())

    def prompt_ids(self) -> list[Any]:
        return [m["id"] for m in self.sent("session/prompt")]

    def stop_reason(self, prompt_id: Any) -> str | None:
        for d, m in self.messages():
            if d == "from_agent" and m.get("id") == prompt_id and "method" not in m:
                return (m.get("result") or {}).get("stopReason")
        return None

    def tail(self, n: int = 25) -> str:
        lines = []
        for d, m in self.messages()[-n:]:
            lines.append(f"{d}: {json.dumps(m)[:300]}")
        return "\n".join(lines)


def outcome(answer: dict[str, Any] | None) -> str | None:
    """`allow_once` etc. for a selected option (by the option's id), or `cancelled`."""
    if answer is None:
        return None
    chosen = answer["outcome"]
    return chosen.get("optionId") if chosen.get("outcome") == "selected" else chosen.get("outcome")


# -- the bridge and a conversation through it ------------------------------------------------------
def agent_definition(launch: agents.AgentLaunch, tap: Path, name: str) -> dict[str, Any]:
    """The flat McpServer form the extension sends; the agent runs under the tap."""
    return {
        "id": name,
        "name": name,
        "command": sys.executable,
        "args": [str(TAP), str(tap), "--", launch.command, *launch.args],
        "env": [{"name": k, "value": v} for k, v in launch.env.items()],
    }


class Chat:
    """One VS Code conversation: keeps the messages as VS Code would echo them back."""

    def __init__(
        self, lm: LmClient, agent: dict[str, Any], tools: list[dict[str, Any]], tap: Tap
    ) -> None:
        self.lm = lm
        self.agent = agent
        self.tools = tools
        self.tap = tap
        self.messages: list[dict[str, Any]] = []
        self.first = True

    def diagnose(self) -> str:
        stderr = "\n".join(self.lm.stderr_lines[-30:])
        return f"\n--- endpoint stderr ---\n{stderr}\n--- ACP tap ---\n{self.tap.tail()}"

    async def send(
        self, *new: dict[str, Any], tools: list[dict[str, Any]] | None = None
    ) -> Response:
        """Send the conversation plus `new`; the reply becomes part of the conversation."""
        messages = self.messages + list(new)
        timeout = FIRST_TIMEOUT if self.first else TURN_TIMEOUT
        self.first = False
        try:
            resp = await self.lm.chat(
                messages,
                agent=self.agent,
                tools=self.tools if tools is None else tools,
                timeout=timeout,
            )
        except TimeoutError as exc:
            raise AssertionError("no answer in time" + self.diagnose()) from exc
        assert resp.error is None, f"request failed: {resp.error}" + self.diagnose()
        assert resp.completed
        self.messages = [*messages, resp.as_assistant()]
        return resp

    async def say(self, words: str, **kw: Any) -> Response:
        return await self.send(user(words), **kw)

    async def answer(
        self, resp: Response, results: dict[str, Any] | None = None, **kw: Any
    ) -> Response:
        """Return results for the tool calls of `resp` (default "Approved" for each) in one message."""
        results = (
            results
            if results is not None
            else {c["toolCallId"]: [{"$mid": 21, "value": "Approved"}] for c in resp.tool_calls}
        )
        content = [
            {"type": "tool_result", "toolCallId": cid, "result": value}
            for cid, value in results.items()
        ]
        return await self.send({"role": "user", "content": content}, **kw)

    async def approved(self, resp: Response) -> Response:
        """Approve, as VS Code's user would, every agent action `resp` asks for (a permission for
        a client tool is asked like any other: the title an agent gives is never trusted)."""
        while resp.tool_calls and all(
            c["toolName"] == AGENT_ACTION["name"] for c in resp.tool_calls
        ):
            resp = await self.answer(resp)
        return resp


@contextlib.asynccontextmanager
async def bridge(
    tmp_path: Path,
    name: str,
    launch_of: Callable[[Path], agents.AgentLaunch],
    tools: list[dict[str, Any]],
) -> AsyncIterator[Chat]:
    """A `symposium-tui vscodelm` process (cwd for agent sessions: a throwaway `work/`) and a chat
    with the agent `launch_of(work)` gives, run under the tap."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    tap = Tap(tmp_path / f"{name}-tap.jsonl")
    lm = await LmClient.start("--cwd", str(work), "--event-log", str(tmp_path / "events.jsonl"))
    try:
        yield Chat(lm, agent_definition(launch_of(work), tap.path, name), tools, tap)
    finally:
        await lm.close()


def agent_action_calls(resp: Response) -> list[dict[str, Any]]:
    return [c for c in resp.tool_calls if c["toolName"] == AGENT_ACTION["name"]]


def drained_before_next_prompt(tap: Tap, cancelled_prompt: Any) -> bool:
    """Was `session/cancel` sent, and the cancelled prompt's stop reason received, before the next
    `session/prompt` went out (the drain that fixes upstream's race R1)?"""
    prompt_at = tap.index(
        lambda d, m: (
            d == "to_agent" and m.get("method") == "session/prompt" and m["id"] == cancelled_prompt
        )
    )
    cancel_at = tap.index(
        lambda d, m: d == "to_agent" and m.get("method") == "session/cancel", prompt_at
    )
    stopped_at = tap.index(
        lambda d, m: d == "from_agent" and m.get("id") == cancelled_prompt and "method" not in m,
        prompt_at,
    )
    next_prompt_at = tap.index(
        lambda d, m: d == "to_agent" and m.get("method") == "session/prompt", prompt_at + 1
    )
    return cancel_at < stopped_at < next_prompt_at


# == fast-agent (`--model passthrough`) ================================================================
def fast_agent_with_calc(home: Path, calls_log: Path) -> agents.AgentLaunch:
    """fast-agent with an MCP server of its own (`calc`, stdio, from `fastagent.config.yaml` in its
    home): its tool is the agent's, not the client's, so calling it needs a permission."""
    home.mkdir(parents=True, exist_ok=True)
    config = {
        "mcp": {
            "servers": {
                "calc": {"command": sys.executable, "args": [str(CALC_SERVER), str(calls_log)]}
            }
        }
    }
    (home / "fastagent.config.yaml").write_text(json.dumps(config, indent=2))  # JSON is YAML
    return agents.fast_agent(home, extra_args=["--servers", "calc"])


def calc_calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def test_fast_agent_echoes_calls_client_tools_and_sees_a_changed_tool_list(
    fast_agent_ready: None, tmp_path: Path
) -> None:
    async with bridge(
        tmp_path,
        "fast-agent",
        lambda work: agents.fast_agent(tmp_path / "home"),
        [AGENT_ACTION, READ_FILE],
    ) as chat:
        t0 = time.monotonic()
        hello = await chat.say("hello from symposium")
        print(
            f"[agents] fast-agent through the bridge, first reply after {time.monotonic() - t0:.1f} s"
        )
        assert hello.text == "hello from symposium"
        assert [p["type"] for p in hello.parts] == ["text"]

        # D16: the agent calls a client tool → a tool_call part with the unprefixed name and the
        # arguments. The permission fast-agent asks first ("vscode_tools/read_file") is asked of
        # the user like any other: a title is the agent's to choose, so it proves nothing.
        asking = await chat.say('***CALL_TOOL vscode_tools__read_file {"path": "notes.txt"}')
        (action,) = agent_action_calls(asking)
        assert action["parameters"]["title"] == "vscode_tools/read_file"
        call = await chat.approved(asking)
        (part,) = call.tool_calls
        assert part["toolName"] == "read_file" and part["parameters"] == {"path": "notes.txt"}
        ((asked, answer),) = chat.tap.permissions()
        assert asked["toolCall"]["title"] == "vscode_tools/read_file"
        assert outcome(answer) == "allow_once"

        # A non-string result (VS Code's result parts) reaches the agent as its text.
        done = await chat.answer(call, {part["toolCallId"]: [{"value": "the notes say hi"}]})
        assert done.tool_calls == []
        assert done.text.endswith("the notes say hi"), done.text
        assert '"value"' not in done.text

        # D17: the client's tool list changes between requests; the agent's MCP client hears
        # list_changed and the new tool is there for the very request that brought it.
        chat.tools = [AGENT_ACTION, READ_FILE, GREP]
        grep = await chat.approved(
            await chat.say('***CALL_TOOL vscode_tools__grep {"pattern": "TODO"}')
        )
        assert [(c["toolName"], c["parameters"]) for c in grep.tool_calls] == [
            ("grep", {"pattern": "TODO"})
        ], grep.text
        found = await chat.answer(grep, {grep.tool_calls[0]["toolCallId"]: "notes.txt:1: TODO"})
        assert found.text.endswith("notes.txt:1: TODO")

        # ... and a tool taken away is gone for the agent too.
        chat.tools = [AGENT_ACTION, GREP]
        gone = await chat.say('***CALL_TOOL vscode_tools__read_file {"path": "notes.txt"}')
        assert gone.tool_calls == [] and "not available" in gone.text, gone.text


async def test_fast_agent_own_mcp_tool_needs_permission_approved_abandoned_denied(
    fast_agent_ready: None, tmp_path: Path
) -> None:
    calls = tmp_path / "calc-calls.jsonl"
    async with bridge(
        tmp_path,
        "fast-agent",
        lambda work: fast_agent_with_calc(tmp_path / "home", calls),
        [AGENT_ACTION, READ_FILE],
    ) as chat:
        # D9: approved through the agent-action round trip → the tool really runs.
        ask = await chat.say('***CALL_TOOL calc__add {"a": 2, "b": 40}')
        (action,) = ask.tool_calls
        assert action["toolName"] == "symposium-agent-action"
        assert action["parameters"] == {
            "kind": "other",
            "title": "calc/add",
            "raw_input": {"a": 2, "b": 40},
        }
        assert calc_calls(calls) == []
        ran = await chat.answer(ask)
        assert "sum: 42" in ran.text, ran.text
        assert calc_calls(calls) == [{"tool": "add", "a": 2, "b": 40}]
        assert outcome(chat.tap.permissions()[-1][1]) == "allow_once"

        # D10: asked again; the next request abandons the call (a new message, no result) → the
        # agent gets `cancelled` and `session/cancel`, the turn is drained, the new message is
        # prompted as a fresh turn, and the tool never runs.
        again = await chat.say('***CALL_TOOL calc__add {"a": 5, "b": 5}')
        (action2,) = agent_action_calls(again)
        assert action2["toolCallId"] != action["toolCallId"], "the client keys results by call id"
        abandoned_prompt = chat.tap.prompt_ids()[-1]
        moved_on = await chat.say("never mind")
        assert outcome(chat.tap.permissions()[-1][1]) == "cancelled"
        assert chat.tap.stop_reason(abandoned_prompt) == "cancelled"
        assert drained_before_next_prompt(chat.tap, abandoned_prompt)
        assert chat.tap.sent("session/prompt")[-1]["params"]["prompt"] == [
            {"type": "text", "text": "never mind"}
        ]
        assert "sum" not in moved_on.text and moved_on.tool_calls == []
        assert "interrupted" in moved_on.text.lower(), (
            moved_on.text
        )  # the agent learnt what happened
        assert len(calc_calls(calls)) == 1

        # D11: no agent-action tool offered → denied at once (reject_once), no round trip; the agent
        # says so in the same reply and the tool never runs.
        denied = await chat.say('***CALL_TOOL calc__add {"a": 1, "b": 2}', tools=[READ_FILE])
        assert denied.tool_calls == []
        assert outcome(chat.tap.permissions()[-1][1]) == "reject_once"
        assert "declined" in denied.text, denied.text
        assert len(calc_calls(calls)) == 1

        # The conversation goes on normally afterwards.
        assert (await chat.say("still there?")).text == "still there?"


# == Claude Code (Zed's ACP adapter) + the fake Anthropic API ===========================================
def claude(tmp_path: Path, api: FakeAnthropic) -> Callable[[Path], agents.AgentLaunch]:
    return lambda work: agents.claude_agent(tmp_path / "home", api.base_url)


async def test_claude_two_client_tools_of_one_message_reach_the_client_in_one_response(
    claude_ready: None, tmp_path: Path
) -> None:
    read = ToolUse("mcp__vscode_tools__read_file", {"path": "a.txt"})
    listing = ToolUse("mcp__vscode_tools__list_dir", {"path": "."})
    async with FakeAnthropic([tool_use(read, listing), text("Both tools ran.")]) as api:
        async with bridge(
            tmp_path, "claude", claude(tmp_path, api), [AGENT_ACTION, READ_FILE, LIST_DIR]
        ) as chat:
            t0 = time.monotonic()
            first = await chat.say("Read a.txt and list the directory")
            print(
                f"[agents] claude through the bridge, first response after {time.monotonic() - t0:.1f} s"
            )
            # Decision 8: both calls in ONE response, unprefixed names, the model's arguments.
            assert sorted(
                (c["toolName"], json.dumps(c["parameters"])) for c in first.tool_calls
            ) == [
                ("list_dir", '{"path": "."}'),
                ("read_file", '{"path": "a.txt"}'),
            ], first.parts
            # Claude was told at session/new that the client's tools need no permission
            # (`allowedTools: ["mcp__vscode_tools"]`): it asked none, and its MCP calls are what
            # the bridge recognises them by.
            assert chat.tap.permissions() == []
            assert agent_action_calls(first) == []

            by_name = {c["toolName"]: c["toolCallId"] for c in first.tool_calls}
            second = await chat.answer(
                first,
                {
                    by_name["read_file"]: [{"value": "x"}],  # D16: a non-string result
                    by_name["list_dir"]: [
                        {"$mid": 21, "value": "a.txt"},
                        {"$mid": 21, "value": "b.txt"},
                    ],
                },
            )
            assert second.tool_calls == []
            assert second.text.endswith("Both tools ran."), second.text

    offered = {t["name"] for t in api.main_requests[0]["tools"]}
    assert {"mcp__vscode_tools__read_file", "mcp__vscode_tools__list_dir"} <= offered
    # Both results reached the model in the next request, as plain text (not VS Code's JSON).
    results = {r["tool_use_id"]: r for r in tool_results(api.main_requests[1])}
    assert results[read.id] == {"tool_use_id": read.id, "is_error": False, "text": "x"}
    assert results[listing.id] == {
        "tool_use_id": listing.id,
        "is_error": False,
        "text": "a.txt\nb.txt",
    }


async def test_claude_bash_approved_through_the_agent_action_round_trip_really_runs(
    claude_ready: None, tmp_path: Path
) -> None:
    bash = ToolUse(
        "Bash", {"command": "touch marker && echo made-marker", "description": "Make a marker file"}
    )
    async with (
        FakeAnthropic([tool_use(bash), text("Marker made.")]) as api,
        bridge(tmp_path, "claude", claude(tmp_path, api), [AGENT_ACTION, READ_FILE]) as chat,
    ):
        ask = await chat.say("Make a marker file")
        # D9: the permission becomes the agent-action tool call; Claude's id is the model's.
        (action,) = ask.tool_calls
        assert action == {
            "type": "tool_call",
            "toolCallId": bash.id,
            "toolName": "symposium-agent-action",
            "parameters": {
                "kind": "execute",
                "title": bash.input["command"],
                "raw_input": bash.input,
            },
        }
        assert not (tmp_path / "work" / "marker").exists()
        ran = await chat.answer(ask)
        assert (tmp_path / "work" / "marker").exists()
        assert ran.text.endswith("Marker made."), ran.text
        assert "made-marker" in ran.text  # the command's output, rendered in the tool call
        assert outcome(chat.tap.permissions()[-1][1]) == "allow"
    (result,) = tool_results(api.main_requests[1])
    assert result == {"tool_use_id": bash.id, "is_error": False, "text": "made-marker"}


async def test_claude_bash_denied_never_runs_and_the_model_learns(
    claude_ready: None, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    denied_bash = ToolUse("Bash", {"command": "touch denied", "description": "Make a file"})
    abandoned_bash = ToolUse(
        "Bash", {"command": "touch abandoned", "description": "Make another file"}
    )
    script = [
        tool_use(denied_bash),
        text("I was not allowed."),
        tool_use(abandoned_bash),
        text("Left it alone."),
        text("Still here."),
    ]
    async with (
        FakeAnthropic(script) as api,
        bridge(tmp_path, "claude", claude(tmp_path, api), [AGENT_ACTION, READ_FILE]) as chat,
    ):
        # D11: no agent-action tool offered → reject_once at once; the model gets an error
        # result and its answer streams into the same response.
        denied = await chat.say("Make a file", tools=[READ_FILE])
        assert denied.tool_calls == []
        assert outcome(chat.tap.permissions()[-1][1]) == "reject"  # Claude's reject_once option id
        assert denied.text.endswith("I was not allowed."), denied.text
        assert not (work / "denied").exists()
        (result,) = tool_results(api.main_requests[1])
        assert result["tool_use_id"] == denied_bash.id and result["is_error"]

        # D10: asked through the round trip, then abandoned by a new message.
        ask = await chat.say("Make another file")
        (action,) = agent_action_calls(ask)
        assert action["toolCallId"] == abandoned_bash.id
        abandoned_prompt = chat.tap.prompt_ids()[-1]
        moved_on = await chat.say("No, leave it")
        assert outcome(chat.tap.permissions()[-1][1]) == "cancelled"
        assert chat.tap.stop_reason(abandoned_prompt) == "cancelled"
        assert drained_before_next_prompt(chat.tap, abandoned_prompt)
        after = await chat.say("Anything else?")
        assert not (work / "abandoned").exists()
        replies = moved_on.text + after.text
        if CLAUDE_STALE_STOP_AFTER_CANCEL:  # the adapter's answers lag one turn (see above)
            assert moved_on.text == "" and after.text.startswith("Left it alone."), (
                moved_on.text,
                after.text,
            )
        else:
            assert (moved_on.text, after.text) == ("Left it alone.", "Still here.")
        assert "abandoned" not in replies

    # The model learnt: the request after the abandoned call carries its error result.
    after_abandon = next(r for r in api.main_requests if "No, leave it" in last_user_text(r))
    (result,) = [r for r in tool_results(after_abandon) if r["tool_use_id"] == abandoned_bash.id]
    assert result["is_error"]


async def test_claude_a_deny_rules_reason_reaches_the_model_the_agent_and_the_client(
    claude_ready: None, tmp_path: Path
) -> None:
    """A rule in the settings denies a Bash call with a reason: the agent gets it in the
    permission response's `_meta` and as user text at the start of the session's next prompt —
    which the (fake) model sees in its request — and the client sees it in the streamed reply."""
    import os

    reason = "no new files in this repository; write to notes.md instead"
    config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(
        f'[[rules]]\naction = "deny"\ncommand = "touch"\nreason = "{reason}"\n'
        'match = ["touch denied"]\n'
    )
    work = tmp_path / "work"
    bash = ToolUse("Bash", {"command": "cd . && touch denied", "description": "Make a file"})
    script = [tool_use(bash), text("I was not allowed."), text("Understood.")]
    async with FakeAnthropic(script) as api:
        async with bridge(
            tmp_path, "claude", claude(tmp_path, api), [AGENT_ACTION, READ_FILE]
        ) as chat:
            denied = await chat.say("Make a file")
            assert denied.tool_calls == [], "a rule decided: VS Code is not asked"
            notice = f"The user's rules denied `cd . && touch denied`: {reason}"
            assert notice in denied.text and denied.text.endswith("I was not allowed.")
            _params, answer = chat.tap.permissions()[-1]
            assert answer is not None and answer["outcome"]["optionId"] == "reject"
            assert answer["_meta"]["symposium"]["reason"] == reason
            assert (
                answer["_meta"]["symposium"]["decidedBy"] == "rule 1 (line 1): deny command=touch"
            )
            assert not (work / "denied").exists()
            after = await chat.say("What now?")
            assert after.text == "Understood."
    next_turn = next(r for r in api.main_requests if "What now?" in json.dumps(r))
    assert notice in json.dumps(next_turn["messages"][-1], ensure_ascii=False)
    assert not any(notice in json.dumps(r["messages"][-1]) for r in api.main_requests[:2])


async def test_claude_turn_cancelled_mid_stream_is_drained_and_the_next_turn_is_clean(
    claude_ready: None, tmp_path: Path
) -> None:
    long = "x" * 300
    async with (
        FakeAnthropic(
            [text(long, chunks=150, delay=0.04), text("fresh answer"), text("third answer")]
        ) as api,
        bridge(tmp_path, "claude", claude(tmp_path, api), [AGENT_ACTION, READ_FILE]) as chat,
    ):
        messages = [user("Write a lot")]
        request_id = "to-be-cancelled"
        params = {
            "modelId": "m",
            "messages": messages,
            "agent": chat.agent,
            "options": {"tools": chat.tools},
        }
        pending = chat.lm.request("lm/provideLanguageModelChatResponse", params, id_=request_id)
        await chat.lm.wait_for_parts(request_id, 3, timeout=FIRST_TIMEOUT)
        chat.lm.cancel(request_id)
        cancelled = await pending
        # D14: the request is answered "cancelled"; the agent got session/cancel.
        assert cancelled.error is not None and "cancelled" in cancelled.error["message"].lower()
        assert 0 < len(cancelled.text) < len(long) and set(cancelled.text) == {"x"}
        (prompt_id,) = chat.tap.prompt_ids()
        chat.first = False
        chat.messages = [*messages, cancelled.as_assistant()]

        nxt = await chat.say("Next question")
        assert chat.tap.stop_reason(prompt_id) == "cancelled"
        assert drained_before_next_prompt(chat.tap, prompt_id)
        third = await chat.say("Third question")
        assert "x" not in nxt.text + third.text, (
            "nothing of the cancelled turn leaks into later ones"
        )
        if CLAUDE_STALE_STOP_AFTER_CANCEL:  # the adapter's answers lag one turn (see above)
            assert nxt.text == "" and third.text.startswith("fresh answer"), (
                nxt.text,
                third.text,
            )
        else:
            assert (nxt.text, third.text) == ("fresh answer", "third answer")
    # The model heard of the interruption, and got the next question.
    assert "[Request interrupted by user]" in last_user_text(api.main_requests[1])
    assert "Next question" in last_user_text(api.main_requests[1])


# == Gemini CLI + the fake, in its Gemini dialect =========================================================
async def test_gemini_calls_client_tools_through_vscode_tools(
    gemini_ready: None, tmp_path: Path
) -> None:
    read = ToolUse("mcp_vscode_tools_read_file", {"path": "a.txt"})
    listing = ToolUse("mcp_vscode_tools_list_dir", {"path": "."})
    async with FakeAnthropic([tool_use(read, listing), text("Gemini is done.", chunks=3)]) as api:

        def launch_of(work):
            return agents.gemini_agent(tmp_path / "home", api.base_url, trusted=[work])

        async with bridge(
            tmp_path, "gemini", launch_of, [AGENT_ACTION, READ_FILE, LIST_DIR]
        ) as chat:
            t0 = time.monotonic()
            # Gemini runs MCP tools one after the other: one client round trip each.
            first = await chat.approved(await chat.say("Read a.txt and list the directory"))
            print(
                f"[agents] gemini through the bridge, first response after {time.monotonic() - t0:.1f} s"
            )
            (call1,) = first.tool_calls
            assert (call1["toolName"], call1["parameters"]) == ("read_file", {"path": "a.txt"})
            second = await chat.approved(
                await chat.answer(first, {call1["toolCallId"]: [{"value": "x"}]})
            )
            (call2,) = second.tool_calls
            assert (call2["toolName"], call2["parameters"]) == ("list_dir", {"path": "."})
            done = await chat.answer(
                second, {call2["toolCallId"]: [{"$mid": 21, "value": "a.txt b.txt"}]}
            )
            assert done.text == "Gemini is done."
            # Gemini asks in its words ("<tool> (vscode_tools MCP Server)"); a title proves
            # nothing, so each went to the user (the agent-action round trip) and was approved
            asked = chat.tap.permissions()
            assert [p["toolCall"]["title"] for p, _ in asked] == [
                "read_file (vscode_tools MCP Server)",
                "list_dir (vscode_tools MCP Server)",
            ]
            assert [outcome(a) for _, a in asked] == [
                "proceed_once",
                "proceed_once",
            ]  # Gemini's allow_once id
    offered = {
        d["name"] for t in api.main_requests[0]["tools"] for d in t.get("functionDeclarations", [])
    }
    assert {"mcp_vscode_tools_read_file", "mcp_vscode_tools_list_dir"} <= offered
    # Both results reached the model as the plain text (Gemini wraps MCP results for the model).
    texts = [r["text"] for r in tool_results(api.main_requests[-1], last_only=False)]
    assert len(texts) == 2, texts
    assert "x" in texts[0].split() and "a.txt b.txt" in texts[1] and "$mid" not in "".join(texts)


# == Codex (Zed's ACP adapter, in Rust) + the fake Responses API =========================================
async def test_codex_command_is_approved_through_vscode_and_the_next_turn_continues(
    codex_acp_ready: None, tmp_path: Path
) -> None:
    """Codex asks before it runs a command (`approval_policy = "untrusted"`): the question reaches
    VS Code as the agent-action round trip, is approved there, and the command runs; the next turn
    is prompted into the same ACP session. Codex's ACP side is the Rust SDK: every prompt it was
    sent (written by the bridge itself) was answered once, under the id it was sent with."""
    from tests.agents.fake_openai_responses import FakeResponses, call, say

    async with FakeResponses(
        [call("exec_command", {"cmd": "echo ran > marker.txt"}), say("Done."), say("Again.")]
    ) as api:

        def launch_of(work: Path) -> agents.AgentLaunch:
            return agents.codex_agent(tmp_path / "home", api.base_url)

        async with bridge(tmp_path, "codex", launch_of, [AGENT_ACTION]) as chat:
            first = await chat.approved(await chat.say("Write a marker"))
            assert first.text.endswith("Done."), first.parts
            # Codex's exec tool may answer the model while the command still runs (its yield
            # time is short under load): the file is there once the shell has run it.
            marker = tmp_path / "work" / "marker.txt"
            await until(
                lambda: marker.exists() and marker.read_text().strip(), TURN_TIMEOUT, "marker.txt"
            )
            assert marker.read_text().strip() == "ran"
            ((asked, answer),) = chat.tap.permissions()
            assert asked["toolCall"]["rawInput"]["command"][-1] == "echo ran > marker.txt"
            assert outcome(answer) == "approved"
            second = await chat.say("Once more")
            assert second.text.endswith("Again."), second.parts
            prompts = chat.tap.sent("session/prompt")
            assert len(chat.tap.sent("session/new")) == 1 and len(prompts) == 2
            for prompt in prompts:
                answers = [
                    m
                    for d, m in chat.tap.messages()
                    if d == "from_agent" and "method" not in m and m.get("id") == prompt["id"]
                ]
                assert [a["result"]["stopReason"] for a in answers] == ["end_turn"]
