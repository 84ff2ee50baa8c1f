"""The decision trail: hash-chained entries, `audit verify` catching each kind of tampering, the
decider and the tool's outcome recorded, `audit export`, and `rules check|explain` — the commands
run as real subprocesses."""

from __future__ import annotations

import asyncio
import csv
import io
import itertools
import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from bridge import audit as audit_mod
from bridge import events as ev
from bridge.approvals import ApprovalBroker, ApprovalContext, AuditLog, Policy
from bridge.rules import Rule

SCRIPT = Path(sys.executable).with_name("symposium-tui")
OPTIONS = [
    {"optionId": "a1", "name": "Allow", "kind": "allow_once"},
    {"optionId": "r1", "name": "Reject", "kind": "reject_once"},
]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "symposium_tui"]
    return subprocess.run(
        [*command, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def write_log(path: Path, n: int = 5) -> list[dict]:
    log = AuditLog(path)
    written = [
        log.append({"type": "decision", "ts": 1000.0 + i, "title": f"call {i}"}) for i in range(n)
    ]
    log.close()
    return written


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def test_a_fresh_log_is_chained_across_writers(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    first, second = AuditLog(path), AuditLog(path)  # two processes' worth of writers
    for i in range(6):
        (first if i % 2 else second).append({"type": "decision", "ts": float(i), "n": i})
    first.close()
    second.close()
    entries = [json.loads(line) for line in lines(path)]
    assert [e["seq"] for e in entries] == [1, 2, 3, 4, 5, 6]
    assert entries[0]["prev"] == "" and all(
        b["prev"] == a["hash"] for a, b in itertools.pairwise(entries)
    )
    result = audit_mod.verify(path)
    assert result.ok and result.entries == 6 and result.head == entries[-1]["hash"]
    assert oct(path.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize(
    ("tamper", "expect"),
    [
        ("edit", "does not match its hash (edited)"),
        ("remove", "entries removed before it"),
        ("reorder", "does not link to the entry before it"),
        ("duplicate", "entries reordered or repeated"),
        ("garbage", "not a JSON entry"),
        ("too-deep", "not a JSON entry"),
        ("rehash", "does not link to the entry before it"),
    ],
)
def test_verify_detects_each_kind_of_tampering(tmp_path: Path, tamper: str, expect: str) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)
    rows = lines(path)
    if tamper == "edit":
        rows[2] = rows[2].replace("call 2", "call 9")
    elif tamper == "remove":
        del rows[2]
    elif tamper == "reorder":
        rows[1], rows[2] = rows[2], rows[1]
    elif tamper == "duplicate":
        rows.insert(3, rows[2])
    elif tamper == "garbage":
        rows.insert(1, "{not json\n")
    elif tamper == "too-deep":  # nested past the JSON decoder's depth
        rows.insert(1, "[" * 100_000 + "]" * 100_000 + "\n")
    elif tamper == "rehash":  # edited and its own hash recomputed: the next link breaks
        entry = json.loads(rows[2])
        entry["title"] = "something else"
        entry["hash"] = audit_mod.entry_hash(entry)
        rows[2] = json.dumps(entry) + "\n"
    path.write_text("".join(rows))
    result = audit_mod.verify(path)
    assert not result.ok
    assert any(expect in str(p) for p in result.problems), result.problems
    run = cli("audit", "verify", "--file", str(path))
    assert run.returncode == 1 and expect in run.stderr


def test_truncation_is_caught_with_a_recorded_head(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    written = write_log(path)
    head = written[-1]["hash"]
    ok = cli("audit", "verify", "--file", str(path), "--head", head)
    assert ok.returncode == 0 and "5 entries, the chain holds" in ok.stdout and head in ok.stdout
    path.write_text("".join(lines(path)[:-1]))
    assert audit_mod.verify(path).ok  # a shorter chain is still a chain…
    cut = cli("audit", "verify", "--file", str(path), "--head", head)
    # …but not the one recorded
    assert cut.returncode == 1 and f"does not pass through the head recorded earlier ({head})" in (
        cut.stderr
    )
    assert "line 0" not in cut.stderr  # a problem of the whole log, not of a line of it


def rewrite_as_another_process_would(path: Path, change) -> None:
    """Edit the entries, then compute the whole chain again (seq, prev, hash): what any process
    of the same user can do to the file."""
    entries = [json.loads(line) for line in lines(path)]
    change(entries)
    prev, out = "", []
    for seq, entry in enumerate(entries, 1):
        entry = {k: v for k, v in entry.items() if k != "hash"}
        entry.update(seq=seq, prev=prev)
        entry["hash"] = prev = audit_mod.entry_hash(entry)
        out.append(json.dumps(entry) + "\n")
    path.write_text("".join(out))


def test_a_rewritten_chain_passes_alone_and_fails_against_a_head_kept_elsewhere(
    tmp_path: Path,
) -> None:
    """`audit head` prints SEQ:HASH; the log is rewritten (an entry changed, every hash computed
    again): `verify` alone passes, `verify --head` with the printed head or with a console's
    record of heads fails, and a head from before entries were appended still passes."""
    from symposium_tui import audit_heads

    path = tmp_path / "audit.jsonl"
    written = write_log(path, 3)
    env = {"SYMPOSIUM_HOST_NAME": "devbox"}
    early = cli("audit", "head", "--file", str(path), env=env)
    assert early.returncode == 0 and early.stdout.strip() == f"3:{written[-1]['hash']}"
    log = AuditLog(path)  # the log goes on: a head recorded earlier is still passed through
    log.append({"type": "decision", "ts": 2000.0, "title": "later"})
    log.close()
    assert (
        cli("audit", "verify", "--file", str(path), "--head", early.stdout.strip()).returncode == 0
    )
    # what a console that attached would have recorded (its state dir: SYMPOSIUM_STATE_DIR)
    record = tmp_path / "state" / "audit-heads.json"
    report = audit_mod.head_report(path)
    assert report["extends"] is None and report["seq"] == 4
    assert audit_heads.observe("devbox", report, record) is None
    assert (
        cli("audit", "verify", "--file", str(path), "--head", str(record), env=env).returncode == 0
    )

    def deny_to_allow(entries: list[dict]) -> None:
        entries[1]["title"] = "something else"

    rewrite_as_another_process_would(path, deny_to_allow)
    alone = cli("audit", "verify", "--file", str(path))
    assert alone.returncode == 0 and "4 entries, the chain holds" in alone.stdout
    for head in (early.stdout.strip(), str(record)):
        caught = cli("audit", "verify", "--file", str(path), "--head", head, env=env)
        assert caught.returncode == 1, head
        assert "does not pass through the head recorded earlier" in caught.stderr
    # the record names this host's log; another host's record says so instead of passing
    other = cli("audit", "verify", "--file", str(path), "--head", str(record))
    assert other.returncode == 2 and "records no head of" in other.stderr
    # the host's report to a console that saw the old head: it does not extend it
    seen = audit_heads.seen("devbox", record)
    report = audit_mod.head_report(path, seen)
    assert report["extends"] is False and report["problems"]
    warning = audit_heads.observe("devbox", report, record)
    assert warning is not None and "no longer extends the head" in warning
    assert audit_heads.seen("devbox", record) == seen  # the last good head is kept


def test_older_unchained_lines_are_counted_and_the_chain_continues_from_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text('{"ts": 1, "outcome": "allow_once"}\n')
    log = AuditLog(path)
    log.append({"type": "decision", "ts": 2.0})
    log.close()
    result = audit_mod.verify(path)
    assert result.ok and result.unchained == 1 and result.entries == 1


async def test_decisions_record_request_decider_args_hash_and_the_tools_outcome(
    tmp_path: Path,
) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    policy = Policy(
        rules=[Rule("deny", command="rm", reason="no deletes"), Rule("allow", command="ls")]
    )
    broker = ApprovalBroker(ev.EventBus(), policy=policy, audit=log)

    def ctx(command: str, call_id: str) -> ApprovalContext:
        return ApprovalContext(
            "c1",
            "s1",
            "claude",
            {
                "toolCallId": call_id,
                "title": command,
                "kind": "execute",
                "rawInput": {"command": command},
            },
            OPTIONS,
        )

    await broker.request(ctx("rm -rf x", "t1"))
    await broker.request(ctx("ls -la", "t2"))
    handle = broker.attach("tty1")
    asked = asyncio.Event()
    task = asyncio.ensure_future(
        broker.request(ctx("make", "t3"), on_pending=lambda _: asked.set())
    )
    await asked.wait()
    handle.answer(next(iter(broker.pending)), "approve")
    await task
    broker.tool_outcome("c1", "s1", "t2", "completed")
    broker.tool_outcome("c1", "s1", "t3", "failed")
    broker.tool_outcome("c1", "s1", "t1", "completed")  # denied: no outcome to record
    log.close()
    entries = list(audit_mod.read_entries(log.path))
    denied, allowed, person, out2, out3 = entries
    assert denied["decider"] == {"kind": "rule", "rule": "rule 1: deny command=rm"}
    assert denied["reason"] == "no deletes" and denied["outcome"] == "reject_once"
    assert denied["request"]["rawInput"] == {"command": "rm -rf x"}
    assert denied["args_sha256"] == audit_mod.args_hash({"command": "rm -rf x"})
    assert allowed["decider"]["rule"] == "rule 2: allow command=ls"
    # A console in this process: the process itself is who answered; its name is what it said.
    assert person["decider"] == {
        "kind": "person",
        "person": pwd.getpwuid(os.getuid()).pw_name,
        "via": "console",
        "peer": {"uid": os.getuid(), "pid": os.getpid(), "host": broker.host_name},
        "said": "tty1",
    }
    assert (out2["type"], out2["approval_id"], out2["status"]) == (
        "tool_outcome",
        allowed["approval_id"],
        "completed",
    )
    assert (out3["approval_id"], out3["status"]) == (person["approval_id"], "failed")
    assert audit_mod.verify(log.path).ok


async def test_a_forced_exit_audits_what_is_pending_as_denied_from_another_thread(
    tmp_path: Path,
) -> None:
    """The console's event loop is stuck and its deadline thread is about to kill the process:
    every pending approval is written as denied by default, with the same fields as any
    decision, and nothing is resolved behind the stuck loop's back."""
    import threading

    log = AuditLog(tmp_path / "audit.jsonl")
    broker = ApprovalBroker(ev.EventBus(), policy=Policy(), audit=log)
    broker.attach("tty1")  # a console holds the approval: nobody answers it
    call = {"toolCallId": "t9", "title": "make", "kind": "execute", "rawInput": {"cmd": "make"}}
    asked = asyncio.Event()
    task = asyncio.ensure_future(
        broker.request(
            ApprovalContext("c1", "s1", "claude", call, OPTIONS), on_pending=lambda _: asked.set()
        )
    )
    await asked.wait()
    deadline = threading.Thread(target=broker.audit_pending_as_denied, args=("forced exit",))
    deadline.start()
    deadline.join()
    log.close()
    (entry,) = audit_mod.read_entries(log.path)
    assert (entry["type"], entry["outcome"], entry["option_id"]) == (
        "decision",
        "reject_once",
        "r1",
    )
    assert entry["decider"] == {"kind": "default", "reason": "forced exit"}
    assert entry["request"]["rawInput"] == {"cmd": "make"}
    assert entry["args_sha256"] == audit_mod.args_hash({"cmd": "make"})
    assert entry["approval_id"] in broker.pending and not task.done()
    task.cancel()


def test_export_since_as_jsonl_and_csv(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)  # ts 1000 … 1004
    since = "1970-01-01T00:16:42"  # 1002 seconds
    out = cli("audit", "export", "--file", str(path), "--since", since, "--format", "jsonl")
    assert out.returncode == 0, out.stderr
    exported = [json.loads(line) for line in out.stdout.splitlines()]
    assert [e["seq"] for e in exported] == [3, 4, 5]
    assert exported[0] == json.loads(lines(path)[2])  # as recorded, hashes included
    out = cli("audit", "export", "--file", str(path), "--since", since, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [r["seq"] for r in rows] == ["3", "4", "5"]
    assert rows[0]["title"] == "call 2" and rows[0]["time"] == "1970-01-01T00:16:42+00:00"
    bad = cli("audit", "export", "--file", str(path), "--since", "yesterday-ish")
    assert bad.returncode == 2 and "not a time" in bad.stderr
    assert audit_mod.parse_since("2h", now=10_000.0) == 10_000.0 - 7200


# --- rules check / explain ---------------------------------------------------------------------------

SETTINGS = """\
[agents.claude]
bypass = true

[[rules]]
action = "deny"
agent = "claude"
command = ["git push --force", "rm"]
reason = "history is shared"
match = ["git push --force origin main", "/bin/rm -rf x"]
not_match = ["git push origin"]

[[rules]]
action = "allow"
command = ["git status", "git diff"]
match = ["git status && git diff"]
"""


def test_rules_check_runs_every_example_and_names_the_lines(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(SETTINGS)
    ok = cli("rules", "check", "--file", str(path))
    assert ok.returncode == 0 and "2 rule(s), 4 example(s): all hold" in ok.stdout
    path.write_text(
        SETTINGS.replace('"git push origin"]', '"git push origin", "rm x"]').replace(
            '"git status && git diff"', '"git status | cat"'
        )
    )
    bad = cli("rules", "check", "--file", str(path))
    assert bad.returncode == 1
    assert "line 4: rules[1]: matches 'rm x', listed under not_match" in bad.stderr
    assert "line 12: rules[2]: does not match its example 'git status | cat'" in bad.stderr


def test_rules_explain_knows_an_agent_by_the_name_the_console_shows(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(
        '[agents.cc]\nname = "Claude Code"\ncommand = "claude"\nbypass = true\n\n'
        '[[rules]]\naction = "allow"\nagent = "eliza"\ncommand = ["run git status"]\n'
    )
    for agent in ("eliza", "Eliza (built in)", "eliza (BUILT IN)"):
        out = cli("rules", "explain", "--file", str(path), "--agent", agent, "--", "run git status")
        assert "verdict: allow" in out.stdout and "rule 1" in out.stdout, (agent, out.stdout)
    for agent in ("cc", "Claude Code"):  # its bypass, by its id or its name
        out = cli("rules", "explain", "--file", str(path), "--agent", agent, "--", "make")
        assert "allow (the agent is on bypass)" in out.stdout, (agent, out.stdout)
    out = cli("rules", "explain", "--file", str(path), "--agent", "someone", "--", "make")
    assert "ask (no rule decides" in out.stdout
    # a rule on the whole request (its title) decides every part: none reads "no allow"
    path.write_text('[[rules]]\naction = "deny"\ntitle = "x"\n')
    out = cli("rules", "explain", "--file", str(path), "--", "x")
    assert "verdict: deny" in out.stdout and "  x: deny — rule 1" in out.stdout, out.stdout
    assert "no allow" not in out.stdout
    # a kind ACP does not have is refused, naming the ones it has
    out = cli("rules", "explain", "--file", str(path), "--kind", "bogus", "--", "make")
    assert out.returncode == 2 and "invalid choice: 'bogus'" in out.stderr
    assert "'execute'" in out.stderr and "'fetch'" in out.stderr


def test_rules_explain_a_command_and_a_json_request(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(SETTINGS)
    out = cli(
        "rules", "explain", "--file", str(path), "--agent", "claude", "--", "git status && rm -rf /"
    )
    assert out.returncode == 0, out.stderr
    assert "verdict: deny" in out.stdout
    assert (
        "decided by: rule 1 (line 4): deny agent=claude command=git push --force or rm"
        in out.stdout
    )
    assert "reason told to the agent: history is shared" in out.stdout
    assert "claude is on bypass, but a deny rule beats bypass" in out.stdout
    assert "rm -rf /: deny" in out.stdout and "git status: allow" in out.stdout
    request = {
        "agent": "gemini",
        "title": "x",
        "kind": "execute",
        "rawInput": {"command": "git diff; make"},
    }
    out = cli("rules", "explain", "--file", str(path), "--json", json.dumps(request))
    explained = json.loads(out.stdout)
    assert explained["verdict"] == "ask" and [p["action"] for p in explained["parts"]] == [
        "allow",
        None,
    ]
