"""The settings file's start-up cache (`bridge.startcache`): what `symposium-tui hook` and the
`registry` commands read from the settings without parsing them. Used only while it holds (this
user's, 0600, a regular file, keyed on the settings file's stat); otherwise the settings are read
as they are without it. The decisions made from it are the decisions made from the settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bridge import startcache
from bridge.hooks import audit_append
from bridge.hooks.policy import HookPolicy, load_policy
from bridge.rules import Request, RuleSet
from bridge.settings import Settings
from tests.bridge.corpus.cases import CASES
from tests.support.hooks import SCRIPT

CORPUS = Path(__file__).parents[1] / "bridge" / "corpus"

RULES = """
[preferences]
hook_no_console = "deny"

[agents.claude-code]
command = "claude-agent-acp"
env = { ANTHROPIC_API_KEY = "sk-secret-agent-token" }
bypass = true

[mcp_servers.search]
url = "https://search.example.com/mcp"
headers = { Authorization = "Bearer sk-secret-mcp-token" }

[notify]
command = ["notify-send", "sk-secret-notify"]

[[rules]]
action = "allow"
command = "git status"

[[rules]]
action = "deny"
command = "rm"
reason = "no deleting"
match = ["rm -rf x"]
"""


@pytest.fixture(autouse=True)
def no_racy_wait(monkeypatch):
    """A settings file written by the test is cached at once (a real one must be 2 s old)."""
    monkeypatch.setattr(startcache, "RACY_SECONDS", 0.0)


def settings_file(text: str = RULES) -> Path:
    path = Path(startcache.settings_file())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def cache(kind: str) -> Path:
    return Path(startcache.cache_file(startcache.settings_file(), kind))


def settings_unread(monkeypatch) -> None:
    """From here on, reading the settings file fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the settings were read")

    monkeypatch.setattr(Settings, "load", refuse)
    monkeypatch.setattr("bridge.registry.read_agents", refuse)


def summary(policy: HookPolicy) -> tuple[Any, ...]:
    return (
        [(r.to_dict(), r.line) for r in policy.rules],
        sorted(policy.bypass),
        policy.no_console,
    )


# --- the hook's policy -------------------------------------------------------------------------------


def test_a_valid_cache_is_used_instead_of_the_settings(monkeypatch):
    settings_file()
    first = load_policy()
    assert summary(first) == summary(HookPolicy.of(Settings.load(startcache.settings_file())))
    assert cache("hook").stat().st_mode & 0o777 == 0o600
    settings_unread(monkeypatch)
    again = load_policy()
    assert summary(again) == summary(first)


def test_changed_settings_are_read_again_and_the_cache_follows(monkeypatch):
    path = settings_file()
    load_policy()
    path.write_text(RULES.replace('command = "rm"', 'command = "rmdir"').replace("rm -rf", "rmdir"))
    changed = load_policy()
    assert [r.command for r in changed.rules] == [("git status",), ("rmdir",)]
    settings_unread(monkeypatch)
    assert [r.command for r in load_policy().rules] == [("git status",), ("rmdir",)]


@pytest.mark.parametrize(
    "damage", ["mode 0644", "corrupt", "not a rule", "a symlink", "stale key", "another engine"]
)
def test_a_cache_that_cannot_be_trusted_is_ignored_and_the_settings_are_read(
    damage, tmp_path, monkeypatch
):
    settings_file()
    expected = summary(load_policy())
    path = cache("hook")
    data = json.loads(path.read_text())
    if damage == "mode 0644":
        data["payload"]["rules"] = []  # (what a foreign cache would say: nothing applies)
        path.write_text(json.dumps(data))
        path.chmod(0o644)
    elif damage == "corrupt":
        path.write_bytes(path.read_bytes()[:-10])
    elif damage == "not a rule":
        data["payload"]["rules"][0]["rule"] = {"action": "allow", "commandz": "x"}
        path.write_text(json.dumps(data))
    elif damage == "a symlink":
        elsewhere = tmp_path / "elsewhere.json"
        data["payload"]["rules"] = []
        elsewhere.write_text(json.dumps(data))
        elsewhere.chmod(0o600)
        path.unlink()
        path.symlink_to(elsewhere)
    elif damage == "another engine":  # written before an upgrade: its examples held then
        data["payload"]["engine"][0][1] += 1
        path.write_text(json.dumps(data))
    else:
        data["key"][2] += 1  # the size of another settings file
        data["payload"]["rules"] = []
        path.write_text(json.dumps(data))
    reads: list[Any] = []
    real_load = Settings.load
    monkeypatch.setattr(
        Settings, "load", classmethod(lambda cls, p=None: reads.append(p) or real_load(p))
    )
    assert summary(load_policy()) == expected
    assert reads == [startcache.settings_file()]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_cache_owned_by_another_user_is_ignored():
    settings_file()
    expected = summary(load_policy())
    path = cache("hook")
    data = json.loads(path.read_text())
    data["payload"]["rules"] = []
    path.write_text(json.dumps(data))
    os.chown(path, 12345, 12345)
    assert startcache.load("hook", startcache.settings_file()) is None
    assert summary(load_policy()) == expected


def test_a_broken_settings_file_is_not_cached_and_still_refused():
    settings_file("[[rules]]\naction = 'sometimes'\n")
    with pytest.raises(Exception, match="sometimes"):
        load_policy()
    assert not cache("hook").exists()


def test_the_caches_hold_only_what_their_commands_use():
    settings_file()
    load_policy()
    startcache.registry_agents()
    hook_text = cache("hook").read_text()
    registry_text = cache("registry").read_text()
    for secret in ("sk-secret-agent-token", "sk-secret-mcp-token", "sk-secret-notify"):
        assert secret not in hook_text
    # `resolve-agent` prints an agent's environment: the registry's cache holds it, nothing else
    assert "sk-secret-agent-token" in registry_text
    assert "sk-secret-mcp-token" not in registry_text and "sk-secret-notify" not in registry_text
    assert cache("registry").stat().st_mode & 0o777 == 0o600


# --- the same decisions ------------------------------------------------------------------------------


def corpus_call(request: Any) -> dict[str, Any]:
    if isinstance(request, dict):
        return {"toolCallId": "t", **request}
    return {
        "toolCallId": "t",
        "title": request,
        "kind": "execute",
        "rawInput": {"command": request},
    }


def decisions(policy: HookPolicy, requests: list[Any]) -> list[tuple[Any, ...]]:
    rules = RuleSet(policy.rules)
    out = []
    for request in requests:
        verdict = rules.decide(
            Request.from_tool_call("agent", corpus_call(request), cwd=str(CORPUS))
        )
        out.append(None if verdict is None else (verdict.action, verdict.label, verdict.why))
    return out


def test_the_cached_rules_decide_the_corpus_as_the_settings_do(monkeypatch):
    settings_file((CORPUS / "settings.toml").read_text())
    read = load_policy()
    settings_unread(monkeypatch)
    cached = load_policy()
    requests = [case[1] for case in CASES]
    assert len(cached.rules) == len(read.rules) > 0
    assert decisions(cached, requests) == decisions(read, requests)


WATCHED = ("bridge.settings", "tomllib", "bridge.audit", "pathlib", "bashlex")
PROBE = """
import os, sys
from symposium_tui.start import main
code = main(sys.argv[1:])
loaded = sorted(name for name in os.environ["WATCHED"].split(",") if name in sys.modules)
sys.stderr.write("LOADED " + ",".join(loaded) + "\\n")
sys.exit(code)
"""


def probe(
    *argv: str, stdin: bytes = b"", watched: tuple[str, ...] = WATCHED
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        input=stdin,
        capture_output=True,
        timeout=60,
        env={**os.environ, "WATCHED": ",".join(watched)},
    )


def test_a_hook_process_decides_from_the_cache_without_reading_the_settings():
    settings_file()
    load_policy()
    call = {
        "session_id": "s1",
        "cwd": "/tmp",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /tmp/x"},
        "tool_use_id": "t1",
    }
    done = probe("hook", "claude", stdin=json.dumps(call).encode())
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "no deleting" in answer["permissionDecisionReason"]
    assert b"LOADED \n" in done.stderr, done.stderr
    # and the same answer as a hook process that reads the settings (no cache)
    cache("hook").unlink()
    uncached = subprocess.run(
        [SCRIPT, "hook", "claude"], input=json.dumps(call).encode(), capture_output=True, timeout=60
    )
    assert json.loads(uncached.stdout)["hookSpecificOutput"] == answer


EXAMPLES = """
[[rules]]
action = "deny"
command = ["git push --force", "rm -rf"]
match = ["git push --force origin main", "cd x && rm -rf build"]
not_match = ["git push origin feature"]

[[rules]]
action = "deny"
kind = "edit"
reason = "read only"
"""


def test_a_hook_process_trusts_the_examples_its_cache_was_written_under():
    """The examples were checked when the settings were read, not again each call: a Write
    decided by its kind loads no shell parser at all (not even the one plain lists are read with),
    which checking `cd x && rm -rf build` would need."""
    settings_file(EXAMPLES)
    load_policy()
    call = {
        "session_id": "s1",
        "cwd": "/tmp",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "/tmp/x.txt", "content": "x"},
        "tool_use_id": "t1",
    }
    done = probe(
        "hook",
        "claude",
        stdin=json.dumps(call).encode(),
        watched=(*WATCHED, "bridge.shell.parser", "bridge.shell.wrappers"),
    )
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert (
        answer["permissionDecision"] == "deny" and "read only" in answer["permissionDecisionReason"]
    )
    assert b"LOADED \n" in done.stderr, done.stderr


def test_a_rule_whose_examples_fail_is_refused_whether_or_not_a_cache_was_written():
    settings_file(EXAMPLES.replace('"cd x && rm -rf build"', '"cd x && rmdir build"'))
    with pytest.raises(Exception, match="example"):
        load_policy()
    assert not cache("hook").exists()


def test_the_engine_key_follows_every_source_file_of_the_rule_engine(tmp_path):
    from bridge.hooks.policy import engine_key

    for package in ("rules", "shell", "options"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "a.py").write_text("x = 1\n")
    (tmp_path / "rules" / "notes.txt").write_text("not code")
    first = engine_key(str(tmp_path))
    assert first is not None
    assert [name for name, *_ in first] == ["options/a.py", "rules/a.py", "shell/a.py"]
    assert engine_key(str(tmp_path)) == first
    (tmp_path / "shell" / "a.py").write_text("x = 22\n")
    assert engine_key(str(tmp_path)) != first
    (tmp_path / "shell" / "b.py").write_text("")
    assert len(engine_key(str(tmp_path)) or []) == 4
    assert engine_key(str(tmp_path / "missing")) is None


# --- the registry ------------------------------------------------------------------------------------


def test_the_registry_answers_from_a_valid_cache_and_rereads_changed_settings(monkeypatch):
    path = settings_file()
    assert startcache.registry_agents()["claude-code"]["command"] == "claude-agent-acp"
    done = probe("registry", "resolve-agent", "claude-code")
    assert json.loads(done.stdout)["command"] == "claude-agent-acp"
    assert b"LOADED \n" in done.stderr, done.stderr
    path.write_text(RULES.replace("claude-agent-acp", "other-acp"))
    done = probe("registry", "list")
    assert [entry["id"] for entry in json.loads(done.stdout)] == ["elizacp", "claude-code"]
    assert b"tomllib" in done.stderr  # the changed file was read
    done = probe("registry", "resolve-agent", "claude-code")
    assert json.loads(done.stdout)["command"] == "other-acp"


# --- the audit entry ---------------------------------------------------------------------------------


def test_the_hooks_audit_entries_chain_with_the_audit_logs_own(tmp_path):
    from bridge.audit import AuditLog, args_hash, verify

    path = tmp_path / "private" / "audit.jsonl"
    record = {"type": "decision", "ts": 1.5, "reason": "é ✓", "args_sha256": "x"}
    first = audit_append.append(str(path), record)
    log = AuditLog(path)
    try:
        second = log.append(record)
    finally:
        log.close()
    third = audit_append.append(str(path), record)
    assert verify(path).ok and verify(path).entries == 3
    assert (first["seq"], second["seq"], third["seq"]) == (1, 2, 3)
    assert {k: v for k, v in third.items() if k not in ("seq", "prev", "hash")} == record
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert audit_append.args_hash({"command": "ls"}) == args_hash({"command": "ls"})
