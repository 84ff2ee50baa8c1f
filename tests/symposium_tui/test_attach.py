"""A bridge that outlives its consoles, the console protocol on this machine (no ssh), and the
`[notify]` command. Real `symposium-tui serve` processes, real unix sockets, the real Eliza."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bridge import events as ev
from bridge.approvals import REASON_LIMIT, ApprovalBroker, ApprovalContext
from bridge.settings import Settings, SettingsError
from symposium_tui.wire.transport import Target
from tests.support.lmclient import REPO, user
from tests.support.remote import HeadlessConsole, ServeProcess
from tests.support.sshd import FakeHost
from tests.support.waiting import until

ASK = "ask permission to deploy"
OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def ctx(title: str = "deploy") -> ApprovalContext:
    return ApprovalContext("c1", "s1", "agent", {"toolCallId": "t", "title": title}, OPTIONS)


@pytest.fixture
def host(tmp_path) -> FakeHost:
    h = FakeHost("devbox", tmp_path / "devbox")
    h.runtime_dir.mkdir(parents=True)
    h.config_dir.mkdir(parents=True)
    return h


# --- the broker -----------------------------------------------------------------------------------


async def test_a_holding_broker_keeps_an_approval_for_a_console_that_attaches_later():
    broker = ApprovalBroker(ev.EventBus(), hold=True)
    asked = asyncio.ensure_future(broker.request(ctx()))
    await until(lambda: broker.pending, what="the request at the broker")
    assert not asked.done()
    console = broker.attach("alice@laptop")
    console.detach()  # a console that comes and goes does not deny what is held
    assert not asked.done()
    other = broker.attach("alice@phone")
    (approval_id,) = broker.pending
    assert other.answer(approval_id, "approve")
    resolution = await asked
    assert resolution.outcome == "allow_once" and resolution.who == "alice@phone"


async def test_a_broker_that_does_not_hold_denies_when_its_last_console_goes():
    broker = ApprovalBroker(ev.EventBus())
    console = broker.attach("alice@laptop")
    asked = asyncio.ensure_future(broker.request(ctx()))
    await until(lambda: broker.pending, what="the request at the broker")
    console.detach()
    resolution = await asked
    assert resolution.outcome == "reject_once" and resolution.resolver == "default"


async def test_the_timeout_denies_and_says_so_and_a_late_answer_is_refused():
    bus = ev.EventBus()
    seen: list[ev.Event] = []
    bus.subscribe(seen.append)
    broker = ApprovalBroker(bus, hold=True, timeout=0.05)
    console = broker.attach("alice@laptop")
    resolution = await broker.request(ctx())
    assert resolution.outcome == "reject_once" and resolution.resolver == "timeout"
    assert "0.05 s" in (resolution.reason or "")
    resolved = [e for e in seen if isinstance(e, ev.ApprovalResolved)]
    assert [e.resolver for e in resolved] == ["timeout"]
    assert not console.answer(resolved[0].approval_id, "approve")


async def test_first_answer_wins_and_names_who_answered():
    bus = ev.EventBus()
    seen: list[ev.Event] = []
    bus.subscribe(seen.append)
    broker = ApprovalBroker(bus, hold=True)
    a, b = broker.attach("alice@laptop"), broker.attach("alice@phone")
    asked = asyncio.ensure_future(broker.request(ctx()))
    await until(lambda: broker.pending, what="the request at the broker")
    (approval_id,) = broker.pending
    assert b.answer(approval_id, "deny")
    assert not a.answer(approval_id, "approve")
    assert (await asked).outcome == "reject_once"
    (resolved,) = [e for e in seen if isinstance(e, ev.ApprovalResolved)]
    assert resolved.by == "alice@phone"


# --- the console protocol on this machine ---------------------------------------------------------


async def test_a_console_attached_locally_answers_what_serve_held(host):
    serve = await ServeProcess.start(host)
    client = await serve.client()
    console = None
    try:
        chat = client.chat_start([user(ASK)])
        target = Target("local", socket=host.runtime_dir / "console.sock")
        console = HeadlessConsole([target], "alice@laptop").start()
        card = await console.wait_for(lambda e: e.type == "approval_requested")
        assert card.host == "local" and card.agent == "eliza"
        assert console.links.answer(card.approval_id, "approve")
        response = await asyncio.wait_for(chat, 30)
        assert response.text.endswith("Permission granted (allow_once). I ran deploy.")
        settled = await console.wait_for(lambda e: e.type == "approval_resolved")
        assert settled.by == "alice@laptop" and settled.resolver == "console"
    finally:
        if console is not None:
            await console.stop()
        await client.close()
        await serve.stop()


async def test_an_attaching_console_records_the_audit_head_and_warns_when_it_was_rewritten(host):
    """A console attached locally records the host's audit head (in its own state directory); the
    host's log is then rewritten as another process of the user would (one entry changed, every
    hash computed again): `audit verify` alone passes, and the next console to attach warns."""
    from bridge.audit import AuditLog, entry_hash
    from symposium_tui import audit_heads

    log_path = host.config_dir / "audit.jsonl"
    log = AuditLog(log_path)
    for n in range(3):
        log.append({"type": "decision", "ts": 1000.0 + n, "title": f"call {n}", "outcome": "x"})
    log.close()
    serve = await ServeProcess.start(host)
    target = Target("local", socket=host.runtime_dir / "console.sock")
    try:
        first = HeadlessConsole([target], "alice@laptop").start()
        try:
            seen = await first.wait_for(lambda e: e.type == "audit_head")
        finally:
            await first.stop()
        assert seen.warning is None and seen.seq == 3
        (recorded,) = audit_heads.seen("devbox")
        assert recorded["head"] == seen.head and recorded["log"] == str(log_path)

        entries = [json.loads(line) for line in log_path.read_text().splitlines()]
        entries[1]["outcome"] = "rewritten"
        prev, out = "", []
        for seq, entry in enumerate(entries, 1):
            entry = {k: v for k, v in entry.items() if k != "hash"}
            entry.update(seq=seq, prev=prev)
            entry["hash"] = prev = entry_hash(entry)
            out.append(json.dumps(entry) + "\n")
        log_path.write_text("".join(out))
        verify = subprocess.run(
            [sys.executable, "-m", "symposium_tui", "audit", "verify"],
            env=host.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert verify.returncode == 0, verify.stderr  # the chain alone holds

        second = HeadlessConsole([target], "alice@laptop").start()
        try:
            warned = await second.wait_for(lambda e: e.type == "audit_head")
        finally:
            await second.stop()
        assert warned.warning is not None
        assert "The audit log of devbox" in warned.warning
        assert "no longer extends the head this console recorded" in warned.warning
        assert audit_heads.seen("devbox") == [recorded]  # the last good head is kept
        against = subprocess.run(
            [
                sys.executable,
                "-m",
                "symposium_tui",
                "audit",
                "verify",
                "--head",
                str(audit_heads.record_path()),
            ],
            env=host.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert against.returncode == 1
        assert "does not pass through the head recorded earlier" in against.stderr
    finally:
        await serve.stop()


def test_a_hosts_card_keeps_the_agents_version_and_why_it_was_asked(tmp_path):
    """What a host sends of a card (`card_of_event`, `card_of_pending`) and what the console makes
    of it carry the agent's version and the rules' reason for asking, as a local card does."""
    from symposium_tui.state.approval import ApprovalInfo
    from symposium_tui.wire.attached_console import card_of_event, card_of_pending
    from symposium_tui.wire.link_set import LinkSet

    asked = ctx()
    asked.agent_version, asked.ask_reason = "2.1.0", "ask by rule 1: ask command=deploy"
    event = ev.ApprovalRequested(
        connection="c1",
        approval_id="a1",
        session_id="s1",
        agent="agent",
        tool_call=asked.tool_call,
        options=OPTIONS,
        agent_version="2.1.0",
        ask_reason="ask by rule 1: ask command=deploy",
    )
    pending = SimpleNamespace(id="a2", ctx=asked, created=1.0)
    posted: list[Any] = []
    links = LinkSet([Target("devbox", socket=tmp_path / "console.sock")], post=posted.append)
    for card in (card_of_event(event, "devbox"), card_of_pending(pending, "devbox")):  # type: ignore[arg-type]
        links._on_link("requested", links.links[0], json.loads(json.dumps(card)))
    infos = [ApprovalInfo.from_event(p) for p in posted]
    assert [(i.agent_version, i.why_asked()) for i in infos] == [
        ("2.1.0", "asked by rule 1: ask command=deploy")
    ] * 2
    # A host that sends neither (an older one) gives a card without them.
    links._on_link("requested", links.links[0], {"approvalId": "a3", "agentVersion": 3})
    bare = ApprovalInfo.from_event(posted[-1])
    assert (bare.agent_version, bare.why_asked()) == (None, None)


async def test_a_card_from_a_host_where_its_agent_is_on_bypass_says_so(host):
    """Eliza on bypass on the host, an ask rule that asks anyway: the card an attached console
    gets says bypass is on there, and the console shows it on the card and in the header."""
    from bridge.agents.eliza import AGENT_VERSION
    from bridge.rules import Rule
    from bridge.settings import SettingsStore
    from symposium_tui.app import SymposiumApp
    from symposium_tui.wire.link_set import LinkSet
    from tests.support.console import wait_for

    store = SettingsStore(host.config_dir / "settings.toml")
    store.set_agent_bypass("eliza", True)
    store.add_rule(Rule("ask", command="deploy"))
    serve = await ServeProcess.start(host)
    client = await serve.client()
    links = LinkSet([Target("local", socket=host.runtime_dir / "console.sock")], post=print)
    app = SymposiumApp(links=links, arm_delay=0.0, linger=0.0, alert=False)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            chat = client.chat_start([user(ASK)])
            card = await wait_for(pilot, lambda: app.queue.pending and app.queue.pending[0])
            assert card.info.host == "local" and card.info.host_bypass
            # and, as on the host's own console, why the rules asked and the agent's version
            why = card.info.why_asked() or ""
            assert why.startswith("asked by rule 1 (line ") and why.endswith(": ask command=deploy")
            assert card.info.agent_version == AGENT_VERSION
            await wait_for(pilot, lambda: "bypass on for Eliza" in str(card.border_subtitle))
            await wait_for(pilot, lambda: "⚠ bypass on: Eliza (built in) on local" in app.sub_title)
            assert links.answer(card.info.approval_id, "approve")
            response = await asyncio.wait_for(chat, 30)
            assert response.text.endswith("I ran deploy.")
    finally:
        await links.stop()
        await client.close()
        await serve.stop()


async def test_approve_all_of_a_session_reaches_the_host_the_card_came_from(host):
    serve = await ServeProcess.start(host)
    client = await serve.client()
    target = Target("local", socket=host.runtime_dir / "console.sock")
    console = HeadlessConsole([target], "alice@laptop").start()
    try:
        chat = client.chat_start([user(ASK)])
        card = await console.wait_for(lambda e: e.type == "approval_requested")
        assert card.connection.startswith("local:")
        assert console.links.approve_all(card.connection, card.session_id) == 1
        assert console.links.approve_all("elsewhere:" + card.connection, card.session_id) == 0
        response = await asyncio.wait_for(chat, 30)
        assert response.text.endswith("Permission granted (allow_once). I ran deploy.")
        (record,) = serve.audit()
        assert record["reason"] == "approved with every pending card of this session"
    finally:
        await console.stop()
        await client.close()
        await serve.stop()


def _hello_exchange(path: Path, lines: list[dict]) -> list[dict]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(str(path))
        for msg in lines:
            sock.sendall(json.dumps(msg).encode() + b"\n")
        out: list[dict] = []
        buf = b""
        while len(out) < len(lines):
            chunk = sock.recv(65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                msg = json.loads(line)
                if "method" not in msg:  # the answers; a card announced meanwhile is not one
                    out.append(msg)
        return out


async def test_the_console_protocol_is_versioned_and_refuses_another_version(host):
    serve = await ServeProcess.start(host)
    try:
        path = host.runtime_dir / "console.sock"
        (refused,) = await asyncio.to_thread(
            _hello_exchange,
            path,
            [{"jsonrpc": "2.0", "id": 1, "method": "console/hello", "params": {"protocol": 99}}],
        )
        assert refused["error"]["data"] == {"protocol": 1}
        assert "99" in refused["error"]["message"]
        hello, bad_answer = await asyncio.to_thread(
            _hello_exchange,
            path,
            [
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "console/hello",
                    "params": {"protocol": 1, "console": "probe"},
                },
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "console/answer",
                    "params": {"approvalId": "nope", "answer": "maybe"},
                },
            ],
        )
        assert hello["result"] == {"protocol": 1, "host": "devbox", "pending": []}
        assert bad_answer["error"]["code"] == -32602
    finally:
        await serve.stop()


async def test_an_answer_is_audited_under_the_socket_peer_and_its_reason_is_capped(host):
    """A console that calls itself someone else and sends a 5 MB reason: the audit entry names
    the process the socket reports (this test's own: uid, pid, host), keeps the name only as what
    it said, and keeps at most REASON_LIMIT characters of the reason."""
    serve = await ServeProcess.start(host)
    client = await serve.client()
    writer = None
    try:
        chat = client.chat_start([user(ASK)])
        reader, writer = await asyncio.open_unix_connection(
            str(host.runtime_dir / "console.sock"), limit=64 * 1024 * 1024
        )

        def send(msg: dict) -> None:
            assert writer is not None
            writer.write(json.dumps(msg).encode() + b"\n")

        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "console/hello",
                "params": {"protocol": 1, "console": "root@the-admins-laptop"},
            }
        )
        approval_id = None
        while approval_id is None:  # the card: in the hello's snapshot, or announced after it
            msg = json.loads(await asyncio.wait_for(reader.readline(), 30))
            cards = (msg.get("result") or {}).get("pending") or []
            if msg.get("method") == "console/approvalRequested":
                cards = [msg["params"]]
            approval_id = cards[0]["approvalId"] if cards else None
        reason = "no deploys on Friday. " + "x" * (5 * 1024 * 1024)
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "console/answer",
                "params": {"approvalId": approval_id, "answer": "deny", "reason": reason},
            }
        )
        await writer.drain()
        response = await asyncio.wait_for(chat, 30)
        assert "Permission granted" not in response.text
        (record,) = serve.audit()
    finally:
        if writer is not None:
            writer.close()
        await client.close()
        await serve.stop()
    assert record["outcome"] == "reject_once"
    assert record["decider"] == {
        "kind": "person",
        "person": pwd.getpwuid(os.getuid()).pw_name,
        "via": "console",
        "peer": {"uid": os.getuid(), "pid": os.getpid(), "host": "devbox"},
        "said": "root@the-admins-laptop",
    }
    kept = record["reason"]
    assert kept.startswith(reason[:REASON_LIMIT]) and len(kept) < REASON_LIMIT + 100
    assert kept.endswith(f"({len(reason) - REASON_LIMIT} more characters not kept)")


def test_link_without_a_bridge_says_so_and_fails(host):
    done = subprocess.run(
        [sys.executable, "-m", "symposium_tui", "link"],
        env=host.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=str(REPO),
        timeout=60,
        check=False,
    )
    assert done.returncode == 3
    assert b"no Symposium bridge runs here" in done.stderr


def test_attach_refuses_something_that_is_not_a_host():
    with pytest.raises(ValueError, match="not a host"):
        Target.parse("-oProxyCommand=touch /tmp/x")
    target = Target.parse("alice@devbox", ssh="ssh -F cfg", remote_command="symposium-tui link")
    assert target.label == "devbox"
    assert target.argv is not None and target.argv[:3] == ["ssh", "-F", "cfg"]
    assert target.argv[-2:] == ["alice@devbox", "symposium-tui link"]
    assert "BatchMode=yes" in target.argv


# --- [notify] -------------------------------------------------------------------------------------

RECORDER = textwrap.dedent(
    """
    import json, os, sys, time
    out, gate = sys.argv[1], sys.argv[2]
    with open(out, "a") as f:
        f.write(json.dumps(sys.argv[3:]) + "\\n")
    while not os.path.exists(gate):  # the test holds this run until it has withdrawn a card
        time.sleep(0.01)
    """
)


def test_notify_settings_are_checked():
    parsed = Settings.parse('[notify]\ncommand = ["ntfy", "publish", "me"]\nburst = 2\n')
    assert parsed.notify is not None and parsed.notify.command == ("ntfy", "publish", "me")
    assert parsed.notify.burst == 2
    with pytest.raises(SettingsError, match="without a shell"):
        Settings.parse('[notify]\ncommand = "notify-send hi"\n')
    with pytest.raises(SettingsError, match="1 or more"):
        Settings.parse('[notify]\ncommand = ["x"]\nburst = 0\n')


async def _wait_file(path: Path, predicate, timeout: float = 30) -> str:
    async with asyncio.timeout(timeout):
        while True:
            text = path.read_text() if path.exists() else ""
            if predicate(text):
                return text
            await asyncio.sleep(0.02)


async def test_notify_runs_for_each_new_card_with_its_arguments_and_never_for_a_withdrawn_one(
    host,
):
    out, gate = host.root / "notified.jsonl", host.root / "gate"
    script = host.root / "recorder.py"
    script.write_text(RECORDER)
    (host.config_dir / "settings.toml").write_text(
        f"[notify]\ncommand = {json.dumps([sys.executable, str(script), str(out), str(gate)])}\n"
    )
    serve = await ServeProcess.start(host)
    client = await serve.client()
    try:
        first = client.chat_start([user("ask permission to deploy alpha")])
        await _wait_file(out, lambda t: t.count("\n") == 1)
        # While the first notification runs, a second card comes and is withdrawn.
        second = client.chat_start([user("ask permission to deploy beta")])
        second_id = max(client._pending)
        await _wait_card_count(host, 2)
        client.cancel(second_id)
        await _wait_file(host.config_dir / "audit.jsonl", lambda t: '"cancelled"' in t)
        gate.touch()
        third = client.chat_start([user("ask permission to deploy gamma")])
        text = await _wait_file(out, lambda t: t.count("\n") == 2)
        lines = [json.loads(line) for line in text.splitlines()]
        assert lines == [
            ["eliza", "devbox", "deploy alpha"],
            ["eliza", "devbox", "deploy gamma"],
        ]
        assert not first.done() and not third.done()
        assert (await asyncio.wait_for(second, 30)).error is not None
    finally:
        gate.touch()
        await client.close()
        await serve.stop()


async def test_notify_is_rate_limited_and_skips_what_was_settled_while_it_waited(tmp_path):
    """burst = 2, one run per 60 s after that: the third card waits for its turn (on a clock the
    test drives), and a card settled meanwhile is never announced."""
    from bridge.settings import NotifyConfig
    from symposium_tui.hosting.notify import Notifier

    out = tmp_path / "args.jsonl"
    script = tmp_path / "record.py"
    script.write_text(
        "import json, sys\nopen(sys.argv[1], 'a').write(json.dumps(sys.argv[2:]) + '\\n')\n"
    )
    now = [1000.0]
    naps: list[float] = []
    woken = asyncio.Event()

    async def sleep(seconds: float) -> None:
        naps.append(seconds)
        await woken.wait()
        woken.clear()

    notifier = Notifier(
        NotifyConfig(command=(sys.executable, str(script), str(out)), interval=60, burst=2),
        "devbox",
        clock=lambda: now[0],
        sleep=sleep,
    )
    try:
        for i, title in enumerate(("one", "two", "three", "four")):
            notifier.card(f"id{i}", "eliza", title)
        async with asyncio.timeout(30):
            while not naps:
                await asyncio.sleep(0.01)
        assert notifier.runs == 2 and naps == [60.0]  # the burst ran; the third waits a minute
        notifier.on_event(type("E", (), {"type": "approval_resolved", "approval_id": "id2"})())
        now[0] += 60
        woken.set()
        await _wait_file(out, lambda t: t.count("\n") == 3)
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        assert lines == [
            ["eliza", "devbox", "one"],
            ["eliza", "devbox", "two"],
            ["eliza", "devbox", "four"],
        ]
        assert notifier.skipped == 1
    finally:
        await notifier.close()


async def _wait_card_count(host: FakeHost, n: int) -> None:
    """Wait until `n` approvals are pending on the host (asked over the console protocol)."""
    path = host.runtime_dir / "console.sock"
    async with asyncio.timeout(30):
        while True:
            (hello,) = await asyncio.to_thread(
                _hello_exchange,
                path,
                [
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "console/hello",
                        "params": {"protocol": 1, "console": "probe"},
                    }
                ],
            )
            if len(hello["result"]["pending"]) >= n:
                return
            await asyncio.sleep(0.02)


def test_serve_prints_how_long_approvals_wait(host):
    proc = subprocess.Popen(
        [sys.executable, "-m", "symposium_tui", "serve", "--approval-timeout", "42"],
        env=host.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=str(REPO),
    )
    try:
        assert proc.stdout is not None
        assert b"serving on" in proc.stdout.readline()
        assert b"wait up to 42 s for a console" in proc.stdout.readline()
    finally:
        proc.terminate()
        proc.wait(20)
    assert os.path.exists(host.runtime_dir) and not (host.runtime_dir / "console.sock").exists()


def test_attach_refuses_a_bad_host_before_starting_anything(host):
    done = subprocess.run(
        [sys.executable, "-m", "symposium_tui", "attach", "dev box"],
        env=host.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=str(REPO),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert b"not a host: 'dev box'" in done.stderr
