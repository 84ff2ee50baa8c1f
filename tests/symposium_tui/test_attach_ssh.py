"""`symposium-tui attach` over a real ssh: a real OpenSSH server on a loopback port (its own keys
and config, see tests/support/sshd.py) reaches bridges "on other hosts" — `symposium-tui serve`
processes with their own runtime dirs, reachable only through ssh. VS Code-like clients ask a real
agent (the built-in Eliza) for something that needs permission; the console's links answer."""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter

import pytest

from symposium_tui.app import SymposiumApp
from symposium_tui.wire.link_set import LinkSet
from tests.support.lmclient import LmClient, user
from tests.support.remote import HeadlessConsole, ServeProcess, ssh_target
from tests.support.sshd import sshd_available, start_sshd

pytestmark = pytest.mark.skipif(
    not sshd_available(), reason="OpenSSH server not installed (.ci/run installs it)"
)

ASK = "ask permission to deploy"


def remote_id(card) -> str:
    """The id the host's broker gave (the console's id is `<link>-<socket>_<id>`)."""
    return card.approval_id.rsplit("_", 1)[-1]


@pytest.fixture
def sshd(tmp_path_factory):
    server = start_sshd(tmp_path_factory.mktemp("sshd"), ["devbox", "ci-box", "cloud"])
    yield server
    server.stop()


async def test_a_card_from_another_host_is_answered_through_ssh_and_survives_a_dropped_link(sshd):
    devbox = sshd.hosts["devbox"]
    serve = await ServeProcess.start(devbox)
    console = HeadlessConsole([ssh_target(sshd, "devbox")], "alice@laptop").start()
    client = await serve.client()
    try:
        (link,) = console.links.links
        await asyncio.wait_for(link.wait_up(), 30)
        assert link.remote_host == "devbox"

        # A card asked on devbox appears here, saying which host asks.
        first = client.chat_start([user(ASK)])
        card = await console.wait_for(lambda e: e.type == "approval_requested")
        assert card.host == "devbox" and card.tool_call["title"] == "deploy"

        # The link drops mid-approval: the card leaves this console (it cannot be answered from
        # here), the request stays pending on devbox.
        link.proc.kill()
        lost = await console.wait_for(
            lambda e: e.type == "approval_resolved" and e.resolver == "link"
        )
        assert lost.approval_id == card.approval_id
        assert not first.done(), "the host kept the approval pending"
        assert serve.audit() == []

        # The link comes back by itself; the pending card re-appears with the same id.
        await console.wait_for(
            lambda e: e.type == "link_state" and e.state == "up" and link.connects == 2
        )
        again = [c for c in console.cards() if c.approval_id == card.approval_id]
        assert len(again) == 2, "the pending card came back after reconnecting"

        # Answer it — and drop the link right after the answer was written. Whether the answer
        # made it or not, the approval is settled exactly once.
        assert console.links.answer(card.approval_id, "approve")
        link.proc.kill()
        await console.wait_for(lambda e: e.type == "link_state" and link.connects == 3, 60)
        if not first.done():
            # The answer was lost with the link: the card is back; answer it again.
            await console.wait_for(
                lambda e: (
                    e.type == "approval_requested"
                    and e.approval_id == card.approval_id
                    and len([c for c in console.cards() if c.approval_id == card.approval_id]) == 3
                )
            )
            assert console.links.answer(card.approval_id, "approve")
        response = await asyncio.wait_for(first, 30)
        assert response.error is None
        assert response.text.endswith("Permission granted (allow_once). I ran deploy.")
        records = [r for r in serve.audit() if r["approval_id"] == remote_id(card)]
        assert len(records) == 1, records
        assert records[0]["resolver"] == "console"
        # Who answered, as devbox's socket saw it: the `link` sshd started for the console (its
        # uid, and the address sshd gave it); the console's own name is only what it said.
        decider = records[0]["decider"]
        assert decider["said"] == "alice@laptop"
        assert decider["peer"]["uid"] == os.getuid() and decider["peer"]["host"] == "devbox"
        assert decider["peer"]["ssh_client"].startswith("127.0.0.1 ")
        assert records[0]["host"] == "devbox"
    finally:
        await console.stop()
        await client.close()
        await serve.stop()


async def test_two_consoles_race_and_each_approval_is_resolved_once(sshd):
    devbox = sshd.hosts["devbox"]
    serve = await ServeProcess.start(devbox)
    consoles = [
        HeadlessConsole([ssh_target(sshd, "devbox")], name).start()
        for name in ("alice@laptop", "alice@phone")
    ]
    clients = []
    try:
        for console in consoles:
            await asyncio.wait_for(console.links.links[0].wait_up(), 30)
            # Each console answers every card the moment it sees it.
            console.on_card = lambda e, c=console: c.links.answer(e.approval_id, "approve")
        n = 8
        clients = [await serve.client() for _ in range(2)]
        chats = [
            clients[i % 2].chat_start([user(f"{ASK} build {i}")], agent=None) for i in range(n)
        ]
        responses = await asyncio.wait_for(asyncio.gather(*chats), 60)
        assert all(
            r.error is None and "Permission granted (allow_once)" in r.text for r in responses
        )
        records = serve.audit()
        assert len(records) == n
        assert len({r["approval_id"] for r in records}) == n
        winners = Counter(r["decider"]["said"] for r in records)
        assert set(winners) <= {"alice@laptop", "alice@phone"}
        # Each console saw every approval settled once, and names who answered.
        for console in consoles:
            for record in records:
                approval_id = "h1-console_" + record["approval_id"]
                # The settlement reaches each console over its own link, possibly after the
                # audit record is written: wait for it, then check it came exactly once.
                await console.wait_for(
                    lambda e, a=approval_id: e.type == "approval_resolved" and e.approval_id == a
                )
                (settled,) = console.resolved(approval_id)
                assert settled.by == record["decider"]["said"]
    finally:
        for console in consoles:
            await console.stop()
        for client in clients:
            await client.close()
        await serve.stop()


async def test_an_approval_no_console_answers_is_denied_at_the_timeout_and_audited(sshd):
    devbox = sshd.hosts["devbox"]
    serve = await ServeProcess.start(devbox, "--approval-timeout", "1")
    console = HeadlessConsole([ssh_target(sshd, "devbox")], "alice@laptop").start()
    client = await serve.client()
    try:
        await asyncio.wait_for(console.links.links[0].wait_up(), 30)
        response = await client.chat([user(ASK)])
        assert response.error is None
        assert response.text.endswith("Permission denied (reject_once). I did not run deploy.")
        (record,) = serve.audit()
        assert record["resolver"] == "timeout" and record["outcome"] == "reject_once"
        assert "1 s" in record["reason"]
        card = await console.wait_for(lambda e: e.type == "approval_requested")
        (settled,) = console.resolved(card.approval_id) or [
            await console.wait_for(lambda e: e.type == "approval_resolved")
        ]
        assert settled.resolver == "timeout"
    finally:
        await console.stop()
        await client.close()
        await serve.stop()


async def test_serve_holds_an_approval_until_a_console_attaches_over_ssh(sshd):
    devbox = sshd.hosts["devbox"]
    events = devbox.root / "events.jsonl"
    serve = await ServeProcess.start(devbox, "--event-log", str(events))
    client = await serve.client()
    console = None
    try:
        pending = client.chat_start([user(ASK)])
        # Nothing is attached: the request waits (it is neither denied nor sent to VS Code).
        async with asyncio.timeout(30):
            while not (events.exists() and "approval_requested" in events.read_text()):
                await asyncio.sleep(0.02)
        assert not pending.done()
        console = HeadlessConsole([ssh_target(sshd, "devbox")], "alice@laptop").start()
        card = await console.wait_for(lambda e: e.type == "approval_requested")
        assert not pending.done()
        assert console.links.answer(card.approval_id, "deny", "not on a Friday")
        response = await asyncio.wait_for(pending, 30)
        assert response.text.endswith("Permission denied (reject_once). I did not run deploy.")
        (record,) = serve.audit()
        assert record["answer"] == "deny" and record["reason"] == "not on a Friday"
    finally:
        if console is not None:
            await console.stop()
        await client.close()
        await serve.stop()


async def test_a_headless_endpoint_holds_what_it_cannot_ask_about_for_a_console_over_ssh(sshd):
    """No console and no `serve` on devbox: VS Code's own endpoint serves headless. Its client
    offered no round trip and `approval_timeout` is set, so the approval is held (not denied) and
    a console attaching through ssh (`link` finds the endpoint's socket) answers it."""
    devbox = sshd.hosts["devbox"]
    (devbox.config_dir / "settings.toml").write_text("[preferences]\napproval_timeout = 120\n")
    client = await LmClient.start("--cwd", str(devbox.root), env=devbox.env())
    console = None
    try:
        chat = client.chat_start([user(ASK)])
        async with asyncio.timeout(60):
            while not list((devbox.runtime_dir / "endpoints").glob("*.sock")):
                await asyncio.sleep(0.02)
        console = HeadlessConsole([ssh_target(sshd, "devbox")], "alice@laptop").start()
        card = await console.wait_for(lambda e: e.type == "approval_requested", 60)
        assert card.host == "devbox" and "_" in card.approval_id
        assert console.links.answer(card.approval_id, "approve")
        response = await asyncio.wait_for(chat, 30)
        assert response.text.endswith("Permission granted (allow_once). I ran deploy.")
        audit = devbox.config_dir / "audit.jsonl"
        decisions = [
            json.loads(line)
            for line in audit.read_text().splitlines()
            if json.loads(line).get("type", "decision") == "decision"
        ]
        (record,) = decisions
        assert record["resolver"] == "console" and record["approval_id"] == remote_id(card)
    finally:
        if console is not None:
            await console.stop()
        await client.close()
    assert not list((devbox.runtime_dir / "endpoints").glob("*.sock")), "socket removed at exit"


async def test_the_attached_console_shows_the_host_on_its_card_and_a_key_answers_it(sshd):
    """The real app (Textual Pilot) attached over ssh to two hosts: one queue, cards say which
    host asks, `a` approves on the right host."""
    serves = [await ServeProcess.start(sshd.hosts[h]) for h in ("devbox", "ci-box")]
    links = LinkSet([ssh_target(sshd, "devbox"), ssh_target(sshd, "ci-box")], post=lambda e: None)
    app = SymposiumApp(links=links, arm_delay=0, linger=0)
    clients = [await s.client() for s in serves]
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            for link in links.links:
                await asyncio.wait_for(link.wait_up(), 30)
            chat = clients[1].chat_start([user(ASK)])
            async with asyncio.timeout(30):
                while not app.queue.pending or not app.queue.pending[0].border_title:
                    await pilot.pause(0.05)  # the card arrives, then mounts
            (card,) = app.queue.pending
            assert card.info.host == "ci-box"
            assert "ci-box" in str(card.border_title)
            card.focus()
            await pilot.press("a")
            response = await asyncio.wait_for(chat, 30)
            assert "Permission granted (allow_once)" in response.text
            assert serves[0].audit() == []
            (record,) = serves[1].audit()
            assert record["host"] == "ci-box" and record["answer"] == "approve"
    finally:
        for client in clients:
            await client.close()
        for s in serves:
            await s.stop()


async def test_quitting_an_attached_console_says_the_card_stays_with_the_host_and_it_does(sshd):
    """Ctrl+Q on a console attached to devbox's `serve` with a card pending: the question says the
    card stays with devbox (another console may answer it, devbox's timeout denies it) — and after
    quitting, it does: devbox still holds it and another console answers it."""
    from symposium_tui.screens.confirm import ConfirmQuit

    devbox = sshd.hosts["devbox"]
    serve = await ServeProcess.start(devbox, "--approval-timeout", "600")
    links = LinkSet([ssh_target(sshd, "devbox")], post=lambda e: None)
    app = SymposiumApp(links=links, arm_delay=0, linger=0)
    client = await serve.client()
    other = None
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await asyncio.wait_for(links.links[0].wait_up(), 30)
            chat = client.chat_start([user(ASK)])
            async with asyncio.timeout(30):
                while not app.queue.pending:
                    await pilot.pause(0.05)
            await pilot.press("ctrl+q")
            async with asyncio.timeout(30):
                while not isinstance(app.screen, ConfirmQuit):
                    await pilot.pause(0.05)
            text = " ".join(str(app.screen.query_one("#confirm-text").render()).split())
            assert "1 approval is waiting for an answer." in text
            assert "It is from devbox: it stays with that host when you quit." in text
            assert "Another console attached there may answer it" in text
            assert "the host's approval timeout denies it" in text
            assert "Quitting denies" not in text and "quitting denies" not in text
            await pilot.press("y")
            async with asyncio.timeout(30):
                while app.is_running:
                    await pilot.pause(0.05)
        await links.stop()
        assert not chat.done() and serve.audit() == [], "devbox still holds the card"
        other = HeadlessConsole([ssh_target(sshd, "devbox")], "alice@phone").start()
        card = await other.wait_for(lambda e: e.type == "approval_requested")
        assert other.links.answer(card.approval_id, "approve")
        response = await asyncio.wait_for(chat, 30)
        assert "Permission granted (allow_once)" in response.text
        (record,) = serve.audit()
        assert record["decider"]["said"] == "alice@phone"
    finally:
        if other is not None:
            await other.stop()
        await links.stop()
        await client.close()
        await serve.stop()
