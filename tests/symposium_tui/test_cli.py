"""The command line, run as real subprocesses: flags before and after `vscodelm`
(mismatch M1 / decision 2), the trace and event-log files, `replay` on a real recorded session,
help, and a bad log level."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import SCRIPT, cli
from tests.support.lmclient import REPO, LmClient, user

RECORD = re.compile(r"\A\[([^\]]+)\] (recv|send|stderr): (.*)\Z")


async def spawn(*argv: str, cwd: str | None = None) -> LmClient:
    """The endpoint with exactly `argv` (LmClient.start puts every flag before `vscodelm`)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "symposium_tui",
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd or str(REPO),
        env=dict(os.environ),
        limit=256 * 1024 * 1024,
    )
    client = LmClient(proc)
    client.stderr_lines = []
    client._stderr_task = asyncio.ensure_future(client._read_stderr())
    return client


def read_trace(directory: Path) -> list[tuple[datetime, str, str]]:
    files = sorted(directory.glob("vscodelm-*.log"))
    assert len(files) == 1, list(directory.iterdir())
    assert re.fullmatch(r"vscodelm-\d{8}-\d{6}\.log", files[0].name), files[0].name
    records = []
    # Lines are recorded as received, invalid UTF-8 included.
    for raw in files[0].read_bytes().decode("utf-8", "replace").splitlines():
        m = RECORD.match(raw)
        assert m is not None, f"not a trace record: {raw!r}"
        stamp, direction, payload = m.groups()
        # RFC 3339: a full date, "T", a time, an explicit offset (UTC here).
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", stamp), (
            stamp
        )
        records.append((datetime.fromisoformat(stamp.replace("Z", "+00:00")), direction, payload))
    return records


def events(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


async def chat_and_count(client: LmClient, text: str = "Hello") -> None:
    """A chat and a token count still work (`text` opens a conversation of its own)."""
    resp = await client.chat([user(text)])
    assert resp.error is None, resp.error
    if text == "Hello":
        assert resp.text == "How do you do. Please state your problem."
    else:
        assert resp.text.strip()
    count = await asyncio.wait_for(
        client.request("lm/provideTokenCount", {"modelId": "m", "text": "abcdefgh"}), 10
    )
    assert count.result == 2


# --- --log and --trace-dir, before and after the subcommand ------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["--log", "debug", "vscodelm"],  # what the extension sends (flags first)
        ["vscodelm", "--log", "debug"],
        ["--log=debug", "vscodelm"],  # upstream's removed integration test spelled it so
        ["vscodelm", "--log=debug"],
    ],
)
async def test_log_flag_before_or_after_vscodelm_logs_to_stderr(argv, tmp_path):
    client = (
        await spawn("--cwd", str(tmp_path), *argv)
        if argv[0] != "vscodelm"
        else await spawn(*argv, "--cwd", str(tmp_path))
    )
    try:
        await chat_and_count(client)
        client.cancel({"not": "an id"})  # the bridge logs a warning about it and carries on
        await chat_and_count(client, "I need some help")
    finally:
        code = await client.close()
    assert code == 0
    assert any(" DEBUG " in line for line in client.stderr_lines), client.stderr_lines[:20]
    assert any(
        "WARNING bridge.vscodelm: lm/cancel with bad params" in line for line in client.stderr_lines
    ), client.stderr_lines


async def test_log_level_filters_what_reaches_stderr(tmp_path):
    client = await spawn("vscodelm", "--log", "error", "--cwd", str(tmp_path))
    try:
        client.cancel({"not": "an id"})
        await chat_and_count(client)
    finally:
        assert await client.close() == 0
    assert not [line for line in client.stderr_lines if " DEBUG " in line or " WARNING " in line], (
        client.stderr_lines
    )


@pytest.mark.parametrize("where", ["before", "after"])
async def test_trace_dir_before_or_after_vscodelm_records_the_wire(where, tmp_path):
    trace_dir = tmp_path / "traces" / "nested"  # created on demand
    flags = ["--trace-dir", str(trace_dir), "--cwd", str(tmp_path)]
    client = (
        await spawn(*flags, "vscodelm") if where == "before" else await spawn("vscodelm", *flags)
    )
    try:
        await chat_and_count(client)
        bad = await asyncio.wait_for(client.request("lm/nope", {}), 10)
        assert bad.error["code"] == -32601
    finally:
        assert await client.close() == 0
    records = read_trace(trace_dir)
    recv = [json.loads(p) for t, d, p in records if d == "recv"]
    send = [json.loads(p) for t, d, p in records if d == "send"]
    # Every request went in, and every answer and notification came out, in wire order.
    assert [m["method"] for m in recv] == [
        "lm/provideLanguageModelChatResponse",
        "lm/provideTokenCount",
        "lm/nope",
    ]
    assert recv[0]["params"]["messages"] == [user("Hello")]
    methods = [m.get("method") for m in send]
    assert "lm/responsePart" in methods and "lm/responseComplete" in methods
    answers = {m["id"]: m for m in send if "id" in m}
    assert (
        answers[1]["result"] == {}
        and answers[2]["result"] == 2
        and answers[3]["error"]["code"] == -32601
    )
    # parts, then lm/responseComplete, then the result (docs/protocol.md, "Ordering")
    assert (
        methods.index("lm/responsePart")
        < methods.index("lm/responseComplete")
        < send.index(answers[1])
    )
    stamps = [t for t, _, _ in records]
    assert stamps == sorted(stamps)


async def test_log_and_trace_together_put_the_log_in_the_trace_as_stderr_records(tmp_path):
    client = await spawn(
        "--log", "debug", "vscodelm", "--trace-dir", str(tmp_path / "t"), "--cwd", str(tmp_path)
    )
    try:
        await chat_and_count(client)
    finally:
        assert await client.close() == 0
    directions = {d for _, d, _ in read_trace(tmp_path / "t")}
    assert directions == {"recv", "send", "stderr"}


async def test_lines_answered_by_the_fast_path_are_traced_too(tmp_path):
    client = await spawn("vscodelm", "--trace-dir", str(tmp_path / "t"))
    try:
        # Sent at once: the start-up fast path reads and answers these.
        client.send_raw(b"\xff\xfe\n")
        count = await asyncio.wait_for(
            client.request("lm/provideTokenCount", {"modelId": "m", "text": "abcd"}), 20
        )
        assert count.result == 1
    finally:
        assert await client.close() == 0
    records = read_trace(tmp_path / "t")
    assert [d for _, d, _ in records if d != "stderr"] == ["recv", "send", "recv", "send"]
    assert (
        records[0][2] == "\ufffd\ufffd"
    )  # the invalid bytes, as recorded (decoded leniently here)
    assert json.loads(records[1][2])["error"]["code"] == -32700


async def test_unknown_log_level_is_reported_not_fatal(tmp_path):
    for argv in (["--log", "loud", "vscodelm"], ["vscodelm", "--log", "LOUD"]):
        client = (
            await spawn(*argv, "--cwd", str(tmp_path))
            if argv[0] == "vscodelm"
            else await spawn("--cwd", str(tmp_path), *argv)
        )
        try:
            await chat_and_count(client)
        finally:
            assert await client.close() == 0
        assert any(
            "unknown log level" in line and "loud" in line.lower() for line in client.stderr_lines
        ), client.stderr_lines


def test_unknown_log_level_for_a_one_shot_command_is_not_fatal():
    result = cli("--log", "shouty", "registry", "list")
    assert result.returncode == 0, result.stderr
    assert any(a["id"] == "elizacp" for a in json.loads(result.stdout))
    result = cli("--log", "shouty", "eliza", "--help")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("level", ["error", "warn", "warning", "info", "debug", "trace", "DEBUG"])
async def test_every_documented_log_level_is_accepted(level, tmp_path):
    client = await spawn("--log", level, "vscodelm", "--cwd", str(tmp_path))
    try:
        count = await asyncio.wait_for(
            client.request("lm/provideTokenCount", {"modelId": "m", "text": "abcd"}), 20
        )
        assert count.result == 1
    finally:
        assert await client.close() == 0
    assert not any("unknown log level" in line for line in client.stderr_lines)


# --- --event-log -------------------------------------------------------------------------------------


async def test_event_log_writes_jsonl_events_with_history_decisions(tmp_path):
    log = tmp_path / "events.jsonl"
    client = await spawn("vscodelm", "--event-log", str(log), "--cwd", str(tmp_path))
    try:
        first = await client.chat([user("Hello")])
        second = await client.chat([user("Hello"), first.as_assistant(), user("I feel fine")])
        assert second.error is None
    finally:
        assert await client.close() == 0
    evs = events(log)
    assert all(
        isinstance(e.get("type"), str) and isinstance(e.get("ts"), (int, float)) for e in evs
    )
    types = [e["type"] for e in evs]
    for expected in (
        "request_received",
        "history_decision",
        "part_streamed",
        "request_finished",
        "session_started",
    ):
        assert expected in types, types
    decisions = [e for e in evs if e["type"] == "history_decision"]
    assert [d["request_id"] for d in decisions] == [1, 2]
    assert [d["decision"]["kind"] for d in decisions] == ["new_session", "commit"]
    assert decisions[0]["decision"]["session_id"] == decisions[1]["decision"]["session_id"]
    assert decisions[1]["decision"]["committed_len"] == 2
    received = [e for e in evs if e["type"] == "request_received"]
    assert received[1]["messages"][-1] == user("I feel fine")
    finished = [e for e in evs if e["type"] == "request_finished"]
    assert [f["outcome"] for f in finished] == ["complete", "complete"]


async def test_event_log_flag_before_the_subcommand(tmp_path):
    log = tmp_path / "events.jsonl"
    client = await spawn("--event-log", str(log), "vscodelm")
    try:
        await chat_and_count(client)
    finally:
        assert await client.close() == 0
    assert any(e["type"] == "history_decision" for e in events(log))


# --- replay a real recorded session ---------------------------------------------------------------------


@pytest.fixture
async def recorded(tmp_path) -> dict[str, Any]:
    """A real session: a new conversation, a continuation, then an edit of the last user message
    (which cancels the provisional exchange), recorded with --trace-dir and --event-log."""
    trace_dir = tmp_path / "trace"
    log = tmp_path / "events.jsonl"
    client = await spawn(
        "--trace-dir", str(trace_dir), "vscodelm", "--event-log", str(log), "--cwd", str(tmp_path)
    )
    try:
        first = await client.chat([user("Hello")])
        second = await client.chat([user("Hello"), first.as_assistant(), user("I am happy")])
        edited = await client.chat([user("Hello"), first.as_assistant(), user("I am sad")])
        for resp in (first, second, edited):
            assert resp.error is None, resp.error
    finally:
        assert await client.close() == 0
    (trace,) = trace_dir.glob("vscodelm-*.log")
    live = [e["decision"] for e in events(log) if e["type"] == "history_decision"]
    assert [d["kind"] for d in live] == ["new_session", "commit", "cancel"]
    return {"trace": trace, "events": log, "live": live, "first": first}


def test_replay_explains_a_recorded_trace(recorded):
    result = cli("replay", str(recorded["trace"]))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    paragraphs = list(out.strip().split("\n\n"))
    assert len(paragraphs) == 4, out  # three requests and the summary
    p1, p2, p3, summary = paragraphs
    assert p1.startswith("request 1") and "NEW SESSION" in p1
    assert p2.startswith("request 2") and "COMMIT" in p2 and "committed 2" in p2
    assert p3.startswith("request 3") and "CANCEL" in p3
    # Why was it cancelled: the first mismatching message, where in it, and both versions.
    live_cancel = recorded["live"][2]
    assert live_cancel["mismatch_index"] == 2
    assert "first mismatch: message 2" in p3
    assert "character 5" in p3  # "I am h…" vs "I am s…"
    assert "expected:" in p3 and "I am happy" in p3
    assert "received:" in p3 and "I am sad" in p3
    session = re.search(r"NEW SESSION (\S+)", p1).group(1)
    assert f"COMMIT {session}" in p2 and f"CANCEL {session}" in p3
    assert "3 requests replayed" in summary and "1 cancel" in summary


def test_replay_json_reports_each_decision(recorded):
    result = cli("replay", "--json", str(recorded["trace"]))
    assert result.returncode == 0, result.stderr
    steps = [json.loads(line) for line in result.stdout.splitlines()]
    assert [s["request_id"] for s in steps] == [1, 2, 3]
    kinds = [s["decision"]["kind"] for s in steps]
    assert kinds == ["new_session", "commit", "cancel"]
    cancel = steps[2]["decision"]
    assert cancel["mismatch_index"] == 2
    assert cancel["expected"] == user("I am happy")
    assert cancel["received"] == user("I am sad")
    # The replay reaches the same decisions as the live bridge did.
    for step, live in zip(steps, recorded["live"]):
        for key in (
            "kind",
            "committed_len",
            "mismatch_index",
            "expected",
            "received",
            "prompt_start",
        ):
            assert step["decision"][key] == live[key], key
    # Each step is stamped with the time of its request in the trace (RFC 3339).
    assert all(datetime.fromisoformat(s["time"].replace("Z", "+00:00")) for s in steps)


def test_replay_of_the_event_log_agrees_with_the_trace(recorded):
    from_trace = [
        json.loads(line)
        for line in cli("replay", "--json", str(recorded["trace"])).stdout.splitlines()
    ]
    result = cli("replay", "--json", str(recorded["events"]))
    assert result.returncode == 0, result.stderr
    from_log = [json.loads(line) for line in result.stdout.splitlines()]
    assert [s["decision"]["kind"] for s in from_log] == [s["decision"]["kind"] for s in from_trace]
    assert from_log[2]["decision"]["mismatch_index"] == 2
    # The event log also carries the live decision, which the replay shows next to its own.
    assert [s["recorded"]["kind"] for s in from_log] == ["new_session", "commit", "cancel"]


def test_replay_of_a_missing_or_foreign_file_fails_cleanly(tmp_path):
    missing = cli("replay", str(tmp_path / "nope.log"))
    assert (
        missing.returncode == 1
        and "nope.log" in missing.stderr
        and "Traceback" not in missing.stderr
    )
    foreign = tmp_path / "foreign.txt"
    foreign.write_text("hello\nworld\n")
    result = cli("replay", str(foreign))
    assert result.returncode == 1 and "Traceback" not in result.stderr


# --- help ---------------------------------------------------------------------------------------------------


def test_top_level_help():
    result = cli("--help")
    assert result.returncode == 0, result.stderr
    for word in ("vscodelm", "registry", "replay", "eliza", "--log", "--trace-dir"):
        assert word in result.stdout


def test_vscodelm_help():
    result = cli("vscodelm", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: symposium-tui vscodelm")
    for word in ("--log", "--trace-dir", "--event-log", "--cwd"):
        assert word in result.stdout


@pytest.mark.parametrize(
    "argv", [["replay", "--help"], ["registry", "--help"], ["eliza", "--help"]]
)
def test_subcommand_help(argv):
    result = cli(*argv)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: symposium-tui {argv[0]}")


def test_unknown_subcommand_is_a_usage_error():
    result = cli("frobnicate")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr and "Traceback" not in result.stderr


def test_module_entry_point_matches_the_script():
    via_module = subprocess.run(
        [sys.executable, "-m", "symposium_tui", "registry", "list"],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=60,
    )
    assert via_module.returncode == 0
    assert json.loads(via_module.stdout) == json.loads(cli("registry", "list").stdout)


def test_eliza_subcommand_uses_the_same_flags_after_it(tmp_path):
    """`eliza` is what `registry resolve-agent elizacp` launches; flags after it are accepted too."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}},
    }
    proc = subprocess.run(
        [sys.executable, "-m", "symposium_tui", "eliza", "--deterministic", "--log", "error"],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout.splitlines()[0])
    assert answer["id"] == 1 and "result" in answer


# --- what a newcomer reads: version, each command's help, where the files are -----------------------


def test_version_prints_the_installed_version():
    from importlib.metadata import version

    result = cli("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"symposium-tui {version('symposium-tui')}"


BRIDGE_FLAGS = ("--cwd", "--event-log", "--idle-timeout", "--max-agents")
OPENAI_FLAGS = ("--openai", "--api-key")


@pytest.mark.parametrize(
    ("command", "description", "own", "foreign"),
    [
        (
            "console",
            "approval cards",
            ("--no-mouse", *BRIDGE_FLAGS, *OPENAI_FLAGS),
            ("--trace-dir",),
        ),
        (
            "vscodelm",
            "VS Code extension spawns",
            ("--trace-dir", *BRIDGE_FLAGS),
            ("--no-mouse", "--openai"),
        ),
        (
            "serve",
            "without a UI",
            ("--approval-timeout", *BRIDGE_FLAGS, *OPENAI_FLAGS),
            ("--trace-dir", "--no-mouse"),
        ),
        (
            "acp",
            "ACP client",
            ("--agent", "--log", "--cwd", "--event-log", "--config-dir"),
            ("--trace-dir", "--no-mouse", "--openai"),
        ),
        (
            "attach",
            "other machines",
            ("--ssh", "--remote-command", "--no-mouse"),
            ("--trace-dir", "--openai", *BRIDGE_FLAGS),
        ),
        (
            "web",
            "in a browser",
            ("--port", "--ssh"),
            ("--trace-dir", "--openai", "--no-mouse", *BRIDGE_FLAGS),
        ),
        ("link", "console protocol", ("--log",), ("--trace-dir", "--openai", *BRIDGE_FLAGS)),
        ("eliza", "built-in Eliza", ("--deterministic", "--log"), ("--trace-dir", *BRIDGE_FLAGS)),
        ("replay", "history decisions", ("--json",), ("--log", "--trace-dir", *BRIDGE_FLAGS)),
        (
            "config",
            "keeps its files",
            ("--config-dir", "--runtime-dir", "--json"),
            ("--trace-dir", "--log", *BRIDGE_FLAGS),
        ),
        (
            "registry",
            "VS Code extension can offer",
            ("list", "resolve-agent"),
            ("--trace-dir", *BRIDGE_FLAGS),
        ),
        ("rules", "approval rules", ("check", "explain"), ("--trace-dir", *BRIDGE_FLAGS)),
    ],
)
def test_each_command_help_says_what_it_is_for_and_lists_only_its_own_flags(
    command, description, own, foreign
):
    result = cli(command, "--help")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())  # argparse wraps lines
    usage, _, _options = text.partition(" options:")
    assert description in usage, f"{command} --help starts with what it is for:\n{result.stdout}"
    listed = set(re.findall(r"^\s{2,4}(--?[\w-]+|[a-z][\w-]*)", result.stdout, re.MULTILINE))
    for flag in own:
        assert flag in listed, f"{command} --help lists {flag}:\n{result.stdout}"
    for flag in foreign:
        assert flag not in listed, f"{command} --help does not list {flag}:\n{result.stdout}"


def test_registry_help_documents_its_subcommands_and_they_still_answer():
    text = " ".join(cli("registry", "resolve-agent", "--help").stdout.split())
    assert "AGENT" in text and "an agent id" in text
    resolved = cli("registry", "resolve-agent", "elizacp")
    assert resolved.returncode == 0, resolved.stderr
    assert json.loads(resolved.stdout)["args"][-1] == "eliza"
    as_json = cli("registry", "resolve-agent", json.dumps({"id": "elizacp"}))
    assert json.loads(as_json.stdout) == json.loads(resolved.stdout)
    bare = cli("registry")
    assert bare.returncode == 2 and "registry list" in bare.stderr


def test_config_names_every_file_and_every_default_in_words(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYMPOSIUM_", "XDG_"))}
    env["HOME"] = str(tmp_path)
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "symposium_tui"]
    result = subprocess.run(
        [*command, "config"], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    home = tmp_path / ".config" / "symposium"
    for line in (
        f"settings:    {home / 'settings.toml'}",
        f"themes:      {home / 'themes'}/*.toml",
        f"audit log:   {home / 'audit.jsonl'}",
        "runtime:",
        "logs:",
        "event log:",
    ):
        assert line in result.stdout, result.stdout
    for default in (
        "theme = symposium-dark (default)",
        "arm_delay = 0.5 seconds (default)",
        "idle_timeout = 1800 seconds (default)",
        "max_agents = 16 (default)",
        "mouse = true (default)",
        "approval_timeout = 600 seconds with serve",
        'hook_no_console = "ask" (default)',
        "hook_wait = until just before the CLI's hook timeout (default)",
    ):
        assert default in result.stdout, result.stdout


def test_config_and_runtime_dirs_by_flag_as_by_environment(tmp_path):
    flagged = cli(
        "config", "--config-dir", str(tmp_path / "c"), "--runtime-dir", str(tmp_path / "r")
    )
    assert flagged.returncode == 0, flagged.stderr
    assert f"settings:    {tmp_path / 'c' / 'settings.toml'}" in flagged.stdout
    assert f"runtime:     {tmp_path / 'r'}" in flagged.stdout
    before = cli("--config-dir", str(tmp_path / "c"), "config")  # before the command, too
    assert f"settings:    {tmp_path / 'c' / 'settings.toml'}" in before.stdout


def test_your_own_theme_loads_from_the_path_the_docs_name(tmp_path, monkeypatch):
    console_doc = (REPO / "docs" / "console.md").read_text()
    assert "`~/.config/symposium/themes/*.toml`" in console_doc
    themes = tmp_path / ".config" / "symposium" / "themes"
    themes.mkdir(parents=True)
    (themes / "mine.toml").write_text('name = "mine"\nprimary = "#3366cc"\ndark = true\n')
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in ("SYMPOSIUM_CONFIG_DIR", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(variable, raising=False)
    from symposium_tui.themes import load_themes

    loaded = load_themes()
    assert "mine" in loaded.themes and loaded.errors == []
    env = {**os.environ}
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "symposium_tui"]
    shown = subprocess.run(
        [*command, "config"], capture_output=True, text=True, env=env, timeout=60
    )
    assert "yours: mine" in shown.stdout


async def test_replay_of_an_event_log_with_two_runs_starts_afresh_at_each_run(tmp_path):
    """Two endpoint processes append to one event log: each run's connection and sessions are new,
    so the second run's first request is a new session, as the live bridge decided, and replay
    names the sessions as the live bridge (and the console) did."""
    log = tmp_path / "events.jsonl"
    for _ in range(2):
        client = await spawn("vscodelm", "--event-log", str(log), "--cwd", str(tmp_path))
        try:
            first = await client.chat([user("Hello")])
            again = await client.chat([user("Hello"), first.as_assistant(), user("I am happy")])
            assert first.error is None and again.error is None
        finally:
            assert await client.close() == 0
    assert [e["type"] for e in events(log)].count("run_started") == 2
    live = [e["decision"] for e in events(log) if e["type"] == "history_decision"]
    assert [d["kind"] for d in live] == ["new_session", "commit"] * 2
    result = cli("replay", "--json", str(log))
    assert result.returncode == 0, result.stderr
    steps = [json.loads(line) for line in result.stdout.splitlines()]
    assert [s["decision"]["kind"] for s in steps] == [d["kind"] for d in live]
    assert [s["decision"]["session_id"] for s in steps] == [d["session_id"] for d in live]
    assert [s["run"] for s in steps] == [1, 1, 2, 2]
    assert steps[0]["connection"] != steps[2]["connection"], "run 2's connection is its own"
    text = cli("replay", str(log)).stdout
    assert "note: the live bridge decided" not in text, text
    assert "4 requests replayed" in text and "in 2 runs" in text
    assert "(run 2)" in text
