"""What the real Symposium extension does, end to end (M2 and B18 in docs/upstream.md): it runs
`registry list` for its model picker; before every chat request it runs
`registry resolve-agent '{"id","name","distribution"}'`, merges `"id"` in front of the flat
McpServer it prints and sends that as `agent` to the vscodelm endpoint.

The registry commands run as real subprocesses; settings come from `$SYMPOSIUM_CONFIG_DIR`
(a temporary directory per test, see conftest), which the subprocesses inherit.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.lmclient import REPO, LmClient, user

SCRIPT = Path(sys.executable).with_name("symposium-tui")
ELIZA_REQUEST = {
    "id": "elizacp",
    "name": "ElizACP",
    "distribution": {"symposium": {"subcommand": "eliza"}},
}


def registry(*args: str, via_module: bool = False) -> subprocess.CompletedProcess[str]:
    command = (
        [sys.executable, "-m", "symposium_tui"]
        if via_module or not SCRIPT.exists()
        else [str(SCRIPT)]
    )
    return subprocess.run(
        [*command, "registry", *args], capture_output=True, text=True, cwd=str(REPO), timeout=60
    )


def resolve(arg: Any, **kw: Any) -> dict[str, Any]:
    result = registry("resolve-agent", arg if isinstance(arg, str) else json.dumps(arg), **kw)
    assert result.returncode == 0, result.stderr
    server = json.loads(result.stdout)
    assert_flat_mcp_server(server)
    return server


def assert_flat_mcp_server(server: Any) -> None:
    """ACP's stdio McpServer, serialized flat (untagged): name, command, args, env — all present."""
    assert isinstance(server, dict)
    assert set(server) == {"name", "command", "args", "env"}, server
    assert isinstance(server["name"], str) and server["name"]
    assert isinstance(server["command"], str) and server["command"]
    assert isinstance(server["args"], list) and all(isinstance(a, str) for a in server["args"])
    assert isinstance(server["env"], list)
    for var in server["env"]:
        assert set(var) == {"name", "value"} and all(isinstance(v, str) for v in var.values()), var


def write_settings(text: str) -> Path:
    path = Path(os.environ["SYMPOSIUM_CONFIG_DIR"]) / "settings.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def speak_acp(server: dict[str, Any], text: str = "Hello") -> dict[str, Any]:
    """Launch `server` as the bridge would and hold one ACP prompt turn with it over stdio."""
    env = dict(os.environ)
    env.update({v["name"]: v["value"] for v in server["env"]})
    proc = await asyncio.create_subprocess_exec(
        server["command"],
        *server["args"],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=str(REPO),
    )
    assert proc.stdin is not None and proc.stdout is not None

    async def call(
        id_: int, method: str, params: dict[str, Any]
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        proc.stdin.write(
            (
                json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}) + "\n"
            ).encode()
        )
        await proc.stdin.drain()
        notes = []
        while True:
            raw = await asyncio.wait_for(proc.stdout.readline(), 30)
            assert raw, "the agent closed its output"
            msg = json.loads(raw)
            if msg.get("id") == id_ and "method" not in msg:
                return msg, notes
            notes.append(msg)

    try:
        init, _ = await call(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        new, _ = await call(2, "session/new", {"cwd": str(REPO), "mcpServers": []})
        session_id = new["result"]["sessionId"]
        done, notes = await call(
            3,
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
        )
    finally:
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()
    reply = "".join(
        n["params"]["update"]["content"].get("text", "")
        for n in notes
        if n.get("method") == "session/update"
        and n["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
    )
    return {"init": init["result"], "stop": done["result"]["stopReason"], "reply": reply}


def decisions(event_log: Path) -> list[dict[str, Any]]:
    out = []
    for line in event_log.read_text().splitlines():
        event = json.loads(line)
        if event["type"] == "history_decision":
            out.append(event["decision"])
    return out


# --- registry list -------------------------------------------------------------------------------------


def test_registry_list_prints_a_json_array_with_eliza():
    result = registry("list")
    assert result.returncode == 0, result.stderr
    agents = json.loads(result.stdout)
    assert isinstance(agents, list)
    eliza = [a for a in agents if a.get("id") == "elizacp"]
    assert len(eliza) == 1
    assert isinstance(eliza[0]["name"], str) and eliza[0]["name"]
    for agent in agents:  # what the extension's model picker reads
        assert isinstance(agent["id"], str) and isinstance(agent.get("name", agent["id"]), str)
        assert isinstance(agent.get("version", "1.0.0"), str)


def test_configured_agents_appear_in_the_list_and_resolve():
    write_settings(
        """
[agents.my-agent]
name = "My Agent"
command = "/opt/my-agent/bin/agent"
args = ["--acp", "--verbose"]
env = { API_KEY = "secret", MODE = "fast" }

[agents.bare]
command = "bare-agent"

[agents.zed-claude-code]   # settings only (a bypass), no command: not an agent of its own
bypass = true
"""
    )
    agents = {a["id"]: a for a in json.loads(registry("list").stdout)}
    assert "elizacp" in agents
    assert agents["my-agent"]["name"] == "My Agent"
    assert agents["bare"]["name"] == "bare"  # the id when no name is given
    assert "zed-claude-code" not in agents
    server = resolve("my-agent")
    assert server == {
        "name": "My Agent",
        "command": "/opt/my-agent/bin/agent",
        "args": ["--acp", "--verbose"],
        "env": [{"name": "API_KEY", "value": "secret"}, {"name": "MODE", "value": "fast"}],
    }
    # As the extension asks for it: an id the settings know, with an empty distribution.
    assert resolve({"id": "my-agent", "name": "My Agent", "distribution": {}}) == server
    assert resolve("bare") == {"name": "bare", "command": "bare-agent", "args": [], "env": []}


def test_a_broken_settings_file_does_not_break_the_registry():
    write_settings("[agents.x\ncommand = ")
    result = registry("list")
    assert result.returncode == 0, result.stderr
    assert any(a["id"] == "elizacp" for a in json.loads(result.stdout))
    assert resolve("elizacp")["args"][-1] == "eliza"


# --- resolve-agent ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arg",
    [
        "elizacp",
        ELIZA_REQUEST,
        {"id": "elizacp", "name": "ElizACP", "distribution": {}},
        {"id": "elizacp"},
    ],
)
@pytest.mark.parametrize("via_module", [False, True])
async def test_resolve_eliza_gives_a_command_that_is_eliza_over_stdio(arg, via_module):
    from bridge.registry import BUILTIN_NAME

    server = resolve(arg, via_module=via_module)
    # The extension's own name for it when it sends one, else the one the console shows.
    assert server["name"] == (
        arg.get("name", BUILTIN_NAME) if isinstance(arg, dict) else BUILTIN_NAME
    )
    assert server["env"] == []
    assert os.path.isabs(server["command"]), server  # the extension spawns it from anywhere
    assert server["args"][-1] == "eliza"
    turn = await speak_acp(server)
    assert turn["init"]["agentInfo"]["name"] == "symposium-eliza"
    assert turn["stop"] == "end_turn"
    assert turn["reply"].strip()


def test_resolving_twice_gives_the_same_json():
    """The extension resolves before every request; sessions match on the agent, so the output
    must be stable or every turn would start a new session."""
    first = registry("resolve-agent", json.dumps(ELIZA_REQUEST))
    second = registry("resolve-agent", json.dumps(ELIZA_REQUEST))
    assert first.returncode == 0 and first.stdout == second.stdout


@pytest.mark.parametrize(
    ("distribution", "expected"),
    [
        (
            {"local": {"command": "/usr/bin/agent", "args": ["--acp"], "env": {"K": "V", "N": 1}}},
            {
                "command": "/usr/bin/agent",
                "args": ["--acp"],
                "env": [{"name": "K", "value": "V"}, {"name": "N", "value": "1"}],
            },
        ),
        ({"local": {"command": "agent"}}, {"command": "agent", "args": [], "env": []}),
        (
            {"npx": {"package": "@zed-industries/claude-code-acp@latest"}},
            {"command": "npx", "args": ["-y", "@zed-industries/claude-code-acp@latest"], "env": []},
        ),
        (
            {
                "npx": {
                    "package": "@google/gemini-cli",
                    "args": ["--experimental-acp"],
                    "env": {"DEBUG": "1"},
                }
            },
            {
                "command": "npx",
                "args": ["-y", "@google/gemini-cli", "--experimental-acp"],
                "env": [{"name": "DEBUG", "value": "1"}],
            },
        ),
        (
            {"pipx": {"package": "fast-agent-mcp", "args": ["go", "--acp"]}},
            {"command": "pipx", "args": ["run", "fast-agent-mcp", "go", "--acp"], "env": []},
        ),
        # Several distributions: local, then npx, then pipx, then symposium.
        (
            {"pipx": {"package": "p"}, "npx": {"package": "n"}},
            {"command": "npx", "args": ["-y", "n"], "env": []},
        ),
        (
            {"npx": {"package": "n"}, "local": {"command": "l"}},
            {"command": "l", "args": [], "env": []},
        ),
        (
            {
                "pipx": {"package": "p"},
                "npx": {"package": "n"},
                "local": {"command": "l", "args": ["a"]},
            },
            {"command": "l", "args": ["a"], "env": []},
        ),
        (
            {"symposium": {"subcommand": "eliza"}, "pipx": {"package": "p"}},
            {"command": "pipx", "args": ["run", "p"], "env": []},
        ),
        (
            {
                "binary": {
                    "linux-x86_64": {"archive": "https://example.com/a.tar.gz", "cmd": "./a"}
                },
                "npx": {"package": "n"},
            },
            {"command": "npx", "args": ["-y", "n"], "env": []},
        ),
    ],
)
def test_distributions_resolve_in_priority_order(distribution, expected):
    server = resolve({"id": "some-agent", "name": "Some Agent", "distribution": distribution})
    assert server == {"name": "Some Agent", **expected}


@pytest.mark.parametrize(
    ("arg", "words"),
    [
        (
            {
                "id": "bin-agent",
                "name": "Bin",
                "distribution": {
                    "binary": {"linux-x86_64": {"archive": "https://x/a.tgz", "cmd": "./a"}}
                },
            },
            ["bin-agent", "binary"],
        ),
        ("no-such-agent", ["no-such-agent", "unknown agent"]),
        ({"id": "no-such-agent", "name": "Nope"}, ["no-such-agent", "unknown agent"]),
        (
            {"id": "no-such-agent", "name": "Nope", "distribution": {}},
            ["no-such-agent", "unknown agent"],
        ),
        ({"id": "x", "distribution": {"npx": {}}}, ["npx", "package"]),
        ({"id": "x", "distribution": {"local": {"args": ["a"]}}}, ["local", "command"]),
        ({"id": "x", "distribution": {"symposium": {"subcommand": "rm -rf"}}}, ["subcommand"]),
    ],
)
def test_unresolvable_agents_are_a_clear_error(arg, words):
    result = registry("resolve-agent", arg if isinstance(arg, str) else json.dumps(arg))
    assert result.returncode != 0
    assert result.stdout == ""  # nothing the extension could mistake for a server
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


@pytest.mark.parametrize(
    "args",
    [[], ["frob"], ["resolve-agent"], ["resolve-agent", "a", "b"], ["resolve-agent", "{not json"]],
)
def test_registry_usage_errors(args):
    result = registry(*args)
    assert result.returncode == 2
    assert result.stderr.strip() and "Traceback" not in result.stderr


# --- the whole sequence through the endpoint ---------------------------------------------------------------


async def test_chat_with_the_agent_the_extension_builds(tmp_path):
    log = tmp_path / "events.jsonl"
    client = await LmClient.start("--cwd", str(tmp_path), "--event-log", str(log))
    try:
        # Turn 1: resolve (a subprocess per request, as the extension does), merge the id in front.
        agent = {"id": "elizacp", **resolve(ELIZA_REQUEST)}
        assert next(iter(agent)) == "id"
        first = await client.chat([user("Hello")], agent=agent)
        assert first.error is None, first.error
        assert first.completed and first.order[-2:] == ["complete", "response"]
        assert len(first.parts) >= 1 and first.text.strip()
        # Turn 2: resolved again; VS Code echoes the reply and adds a message.
        agent2 = {"id": "elizacp", **resolve(ELIZA_REQUEST)}
        assert agent2 == agent
        second = await client.chat(
            [user("Hello"), first.as_assistant(), user("I feel tired today")], agent=agent2
        )
        assert second.error is None, second.error
        assert second.completed and second.text.strip()
    finally:
        assert await client.close() == 0
    d1, d2 = decisions(log)
    assert d1["kind"] == "new_session"
    assert (
        d2["kind"] == "commit" and d2["session_id"] == d1["session_id"] and d2["committed_len"] == 2
    )
    started = [
        json.loads(line)
        for line in log.read_text().splitlines()
        if json.loads(line)["type"] == "session_started"
    ]
    assert len(started) == 1
    assert started[0]["pid"], "Eliza ran as the external process the registry named"


async def test_the_id_distinguishes_otherwise_identical_agents(tmp_path):
    """Two registry ids that resolve to the same command are different models in VS Code."""
    log = tmp_path / "events.jsonl"
    client = await LmClient.start("--cwd", str(tmp_path), "--event-log", str(log))
    try:
        server = resolve(ELIZA_REQUEST)
        for agent in ({"id": "elizacp", **server}, {"id": "eliza-copy", **server}):
            resp = await client.chat([user("Hello")], agent=agent)
            assert resp.error is None
    finally:
        assert await client.close() == 0
    d1, d2 = decisions(log)
    assert d2["kind"] == "new_session" and d2["session_id"] != d1["session_id"]


async def test_configured_agent_runs_through_the_endpoint(tmp_path):
    write_settings(
        f"""
[agents.eliza-local]
name = "Local Eliza"
command = {json.dumps(sys.executable)}
args = ["-m", "symposium_tui", "eliza", "--deterministic"]
env = {{ SYMPOSIUM_TEST_MARKER = "1" }}
"""
    )
    assert "eliza-local" in {a["id"] for a in json.loads(registry("list").stdout)}
    server = resolve({"id": "eliza-local", "name": "Local Eliza", "distribution": {}})
    assert server["env"] == [{"name": "SYMPOSIUM_TEST_MARKER", "value": "1"}]
    client = await LmClient.start("--cwd", str(tmp_path))
    try:
        resp = await client.chat([user("Hello")], agent={"id": "eliza-local", **server})
        assert resp.error is None, resp.error
        assert resp.text == "How do you do. Please state your problem."
    finally:
        assert await client.close() == 0
