"""The approval broker: policy order, consoles racing, fail-closed, withdrawal, audit."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from bridge import events as ev
from bridge.approvals import ApprovalBroker, ApprovalContext, AuditLog, Policy, Rule
from bridge.tasks import TaskSupervisor
from tests.support.waiting import until

OPTIONS = [
    {"optionId": "a1", "name": "Allow", "kind": "allow_once"},
    {"optionId": "a2", "name": "Always", "kind": "allow_always"},
    {"optionId": "r1", "name": "Reject", "kind": "reject_once"},
    {"optionId": "r2", "name": "Never", "kind": "reject_always"},
]


def ctx(
    session="s1",
    *,
    title="Bash",
    kind="execute",
    agent="claude",
    options=OPTIONS,
    raw=None,
    locations=None,
    connection="c1",
    client_tool=False,
):
    tool_call = {"toolCallId": "t1", "title": title, "kind": kind}
    if raw is None and kind == "execute":
        raw = {"command": title}  # an execute call is judged by its command, never its title
    if raw is not None:
        tool_call["rawInput"] = raw
    if locations is not None:
        tool_call["locations"] = locations
    return ApprovalContext(
        connection=connection,
        session_id=session,
        agent=agent,
        tool_call=tool_call,
        options=options,
        client_tool=client_tool,
    )


@pytest.fixture
def bus():
    return ev.EventBus()


@pytest.fixture
def audit(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl")
    yield log
    log.close()


def audit_lines(audit):
    return [json.loads(line) for line in audit.path.read_text().splitlines()]


async def test_nobody_to_ask_denies_with_reject_once(bus, audit):
    broker = ApprovalBroker(bus, audit=audit)
    r = await broker.request(ctx())
    assert (r.outcome, r.option_id, r.resolver) == ("reject_once", "r1", "default")
    assert audit_lines(audit)[0]["outcome"] == "reject_once"


async def test_rules_that_raise_deny_and_are_audited(bus, audit):
    """A policy that cannot be applied (a rule's matcher raising, a parser missing) denies at once:
    the request never waits, and the audit log says why."""

    class BrokenPolicy(Policy):
        def rules_decision(self, ctx):
            raise RuntimeError("matcher exploded")

    broker = ApprovalBroker(
        bus,
        policy=BrokenPolicy(bypass_agents={"eliza"}, rules=[Rule("deny", command="rm")]),
        audit=audit,
    )
    r = await broker.request(ctx())
    assert (r.outcome, r.option_id, r.resolver) == ("reject_once", "r1", "policy")
    assert "matcher exploded" in r.reason
    [entry] = [e for e in audit_lines(audit) if e.get("outcome")]
    assert entry["outcome"] == "reject_once" and "matcher exploded" in entry["reason"]
    assert broker.pending == {}


async def test_deny_without_a_reject_option_falls_back_to_cancelled(bus):
    broker = ApprovalBroker(bus)
    r = await broker.request(ctx(options=[OPTIONS[0]]))
    assert r.outcome == "cancelled" and r.option_id is None


async def test_client_tools_are_approved_by_policy(bus):
    r = await ApprovalBroker(bus).request(ctx(client_tool=True))
    assert (r.outcome, r.resolver, r.rule) == ("allow_once", "policy", "client tool")


async def test_rules_in_order_kind_title_agent_and_resource(bus, tmp_path):
    inside = tmp_path / "proj"
    inside.mkdir()
    policy = Policy(
        rules=[
            Rule("deny", title="rm *"),
            Rule("allow", kind="read"),
            Rule("allow", kind="edit", path=str(inside)),
            Rule("allow", agent="trusted-*"),
        ]
    )
    broker = ApprovalBroker(bus, policy=policy)
    assert (await broker.request(ctx(title="rm -rf /", agent="trusted-x"))).outcome == "reject_once"
    assert (await broker.request(ctx(kind="read", title="Read x"))).outcome == "allow_once"
    ok = await broker.request(
        ctx(kind="edit", title="Edit", raw={"file_path": str(inside / "a.py")})
    )
    assert ok.outcome == "allow_once" and ok.rule.startswith("rule 3")
    outside = await broker.request(
        ctx(kind="edit", title="Edit", raw={"file_path": str(tmp_path / "b.py")})
    )
    assert outside.outcome == "reject_once" and outside.resolver == "default"
    escape = await broker.request(
        ctx(kind="edit", title="Edit", locations=[{"path": str(inside / ".." / "c.py")}])
    )
    assert escape.outcome == "reject_once", "a path that leaves the directory does not match"
    assert (await broker.request(ctx(agent="trusted-bot"))).outcome == "allow_once"


async def test_an_explicit_deny_rule_beats_bypass_and_allow_rules(bus, audit):
    policy = Policy(
        bypass_agents={"claude"},
        rules=[
            Rule("allow", agent="claude"),
            Rule("deny", agent="claude", title="push *", reason="prod is frozen"),
        ],
    )
    broker = ApprovalBroker(bus, policy=policy, audit=audit)
    r = await broker.request(ctx(agent="claude", title="push to prod", kind="other"))
    assert (r.outcome, r.resolver) == ("reject_once", "policy")
    assert r.rule == "rule 2: deny agent=claude title=push *" and r.reason == "prod is frozen"
    policy.session_bypass.add(("c1", "s1"))
    r = await broker.request(ctx(agent="claude", title="push to prod", kind="other"))
    assert r.outcome == "reject_once", "a session bypass loses to a deny rule too"
    r = await broker.request(ctx(agent="claude", title="pull", kind="other"))
    assert (r.outcome, r.rule) == ("allow_once", "session bypass")
    assert [e["rule"] for e in audit_lines(audit)][:2] == [
        "rule 2: deny agent=claude title=push *"
    ] * 2
    assert policy.shadowing_denies("claude") == ["rule 2: deny agent=claude title=push *"]
    assert policy.shadowing_denies("gemini") == []


async def test_an_ask_rule_sends_a_bypassed_agent_to_a_person(bus):
    policy = Policy(bypass_agents={"claude"}, rules=[Rule("ask", command="git push")])
    broker = ApprovalBroker(bus, policy=policy)
    handle = broker.attach()
    asked = asyncio.Event()
    task = asyncio.ensure_future(
        broker.request(
            ctx(agent="claude", raw={"command": "git status && git push"}),
            on_pending=lambda _id: asked.set(),
        )
    )
    await asked.wait()
    pending = next(iter(broker.pending.values()))
    assert pending.ctx.asked_by == "rule 1: ask command=git push"
    handle.answer(pending.id, "deny")
    assert (await task).outcome == "reject_once"
    r = await broker.request(ctx(agent="claude", raw={"command": "git status"}))
    assert (r.outcome, r.rule) == ("allow_once", "agent bypass")


async def test_console_answers_and_the_first_answer_wins(bus, audit):
    broker = ApprovalBroker(bus, audit=audit)
    one, two = broker.attach("one"), broker.attach("two")
    seen: list[ev.Event] = []
    bus.subscribe(seen.append)
    task = asyncio.ensure_future(broker.request(ctx()))
    await until(lambda: broker.pending, what="the card")
    (requested,) = [e for e in seen if isinstance(e, ev.ApprovalRequested)]
    assert one.answer(requested.approval_id, "deny", reason="not now")
    assert not two.answer(requested.approval_id, "approve"), (
        "a later answer finds the card withdrawn"
    )
    r = await task
    assert (r.outcome, r.resolver, r.reason) == ("reject_once", "console", "not now")
    resolved = [e for e in seen if isinstance(e, ev.ApprovalResolved)]
    assert len(resolved) == 1
    assert audit_lines(audit)[-1]["reason"] == "not now"


async def test_console_answers_map_to_the_agents_own_options(bus):
    broker = ApprovalBroker(bus)
    handle = broker.attach()
    for answer, kind in [
        ("approve", "allow_once"),
        ("allow_always", "allow_always"),
        ("reject_always", "reject_always"),
        ("cancel", "cancelled"),
    ]:
        task = asyncio.ensure_future(broker.request(ctx()))
        await until(lambda: broker.pending, what="the card")
        (pending,) = broker.pending
        handle.answer(pending, answer)
        assert (await task).outcome == kind


async def test_bypass_approves_persists_and_then_policy_answers(bus):
    persisted = []
    broker = ApprovalBroker(bus, persist_bypass=persisted.append)
    handle = broker.attach()
    task = asyncio.ensure_future(broker.request(ctx(agent="claude")))
    await until(lambda: broker.pending, what="the card")
    handle.answer(next(iter(broker.pending)), "bypass")
    assert (await task).outcome == "allow_once"
    assert persisted == ["claude"]
    again = await broker.request(ctx(agent="claude"))
    assert (again.outcome, again.resolver, again.rule) == ("allow_once", "policy", "agent bypass")
    other = asyncio.ensure_future(broker.request(ctx(agent="gemini")))
    await until(lambda: broker.pending or other.done(), what="the card or an answer")
    assert broker.pending, "bypass is per agent"
    handle.answer(next(iter(broker.pending)), "deny")
    await other


async def test_session_bypass_and_approve_all(bus):
    broker = ApprovalBroker(bus)
    handle = broker.attach()
    tasks = [asyncio.ensure_future(broker.request(ctx("s1"))) for _ in range(3)]
    other = asyncio.ensure_future(broker.request(ctx("s2")))
    await until(lambda: len(broker.pending) == 4, what="four cards")
    assert broker.approve_all("c1", "s1") == 3
    await asyncio.gather(*tasks)
    assert [t.result().outcome for t in tasks] == ["allow_once"] * 3
    assert not other.done()
    broker.policy.session_bypass.add(("c1", "s2"))
    nxt = await broker.request(ctx("s2"))
    assert nxt.rule == "session bypass"
    handle.answer(next(iter(broker.pending)), "deny")
    assert (await other).outcome == "reject_once"


async def test_a_console_that_goes_away_denies_what_only_it_held(bus, audit):
    broker = ApprovalBroker(bus, audit=audit)
    one = broker.attach("one")
    task = asyncio.ensure_future(broker.request(ctx()))
    await until(lambda: broker.pending, what="the card")
    two = broker.attach("two")  # attached later: it holds the pending card too
    one.detach()
    await asyncio.sleep(0)
    assert not task.done(), "another console still holds it"
    two.detach()
    r = await task
    assert r.outcome == "reject_once" and "went away" in r.reason


async def test_withdrawn_on_cancel_answers_cancelled(bus):
    broker = ApprovalBroker(bus)
    broker.attach()
    ids: list[str] = []
    task = asyncio.ensure_future(broker.request(ctx(), on_pending=ids.append))
    await until(lambda: ids, what="the card")
    broker.withdraw(ids[0], "the turn was cancelled")
    r = await task
    assert r.outcome == "cancelled" and r.reason == "the turn was cancelled"


async def test_vscode_round_trip_is_asked_only_without_a_console(bus):
    asked = []

    async def ask_client():
        asked.append(1)
        return True

    broker = ApprovalBroker(bus)
    session = TaskSupervisor("session")  # the asker owns the round trip
    r = await broker.request(ctx(), ask_client=ask_client, tasks=session)
    assert (r.outcome, r.resolver) == ("allow_once", "vscode") and asked == [1]
    handle = broker.attach()
    task = asyncio.ensure_future(broker.request(ctx(), ask_client=ask_client, tasks=session))
    await until(lambda: broker.pending, what="the request waiting for the console")
    assert asked == [1], "with a console attached the console decides"
    handle.answer(next(iter(broker.pending)), "approve")
    assert (await task).resolver == "console"
    await session.close()


async def test_a_failing_round_trip_fails_closed(bus):
    async def broken():
        raise RuntimeError("pipe broke")

    r = await ApprovalBroker(bus).request(ctx(), ask_client=broken, tasks=TaskSupervisor("s"))
    assert r.outcome == "reject_once" and "pipe broke" in r.reason


async def test_a_round_trip_its_asker_ends_first_is_withdrawn(bus, audit):
    asking = asyncio.Event()

    async def never_answers():
        asking.set()
        await asyncio.Event().wait()

    broker = ApprovalBroker(bus, audit=audit)
    session = TaskSupervisor("session")
    task = asyncio.ensure_future(broker.request(ctx(), ask_client=never_answers, tasks=session))
    await asking.wait()
    await session.close()  # the session closed while the client had not answered
    r = await task
    assert (r.outcome, r.reason) == ("cancelled", "the asker closed before the client answered")
    assert broker.pending == {}
    assert [e["outcome"] for e in audit_lines(audit)] == ["cancelled"]


async def test_a_round_trip_needs_an_owner(bus):
    async def ask_client():
        return True

    with pytest.raises(TypeError, match="needs the TaskSupervisor"):
        await ApprovalBroker(bus).request(ctx(), ask_client=ask_client)


async def test_a_thousand_concurrent_approvals_across_twenty_sessions_each_resolved_once_and_audited(
    bus, audit
):
    broker = ApprovalBroker(bus, audit=audit)
    handles = [broker.attach("one"), broker.attach("two")]
    resolved: dict[str, int] = {}
    rng = random.Random(7)

    def on_event(event: ev.Event) -> None:
        if isinstance(event, ev.ApprovalResolved):
            resolved[event.approval_id] = resolved.get(event.approval_id, 0) + 1
        elif isinstance(event, ev.ApprovalRequested):
            # Both consoles race to answer every card, in a random order and with random answers.
            for h in rng.sample(handles, 2):
                asyncio.get_running_loop().call_later(
                    rng.random() / 100,
                    h.answer,
                    event.approval_id,
                    rng.choice(["approve", "deny", "allow_always", "reject_always"]),
                )

    bus.subscribe(on_event)
    results = await asyncio.gather(*(broker.request(ctx(f"s{i % 20}")) for i in range(1000)))
    assert len(results) == 1000
    assert all(r.resolver == "console" for r in results)
    assert len(resolved) == 1000 and set(resolved.values()) == {1}
    audit.close()
    lines = audit_lines(audit)
    assert len(lines) == 1000 and len({line["approval_id"] for line in lines}) == 1000
    assert {line["session_id"] for line in lines} == {f"s{i}" for i in range(20)}
    assert not broker.pending


async def test_a_request_cancelled_as_the_rules_decide_is_cancelled_not_left_waiting(
    bus, monkeypatch
):
    """The rules' answer and the cancel land in the same turn of the loop: the request ends
    cancelled (it must not swallow the cancel and go on to wait for a card nobody will answer)."""
    from bridge import approvals

    loop = asyncio.get_running_loop()
    decided: list[asyncio.Future[object]] = []

    def run(fn: object) -> asyncio.Future[object]:
        decided.append(loop.create_future())
        return decided[-1]

    monkeypatch.setattr(approvals.RULES_THREAD, "run", run)
    broker = ApprovalBroker(bus)
    broker.attach("one")
    task = asyncio.ensure_future(broker.request(ctx()))
    await until(lambda: decided, what="the rules asked")
    await asyncio.sleep(0)  # the request is waiting for the rules' answer
    decided[0].set_result(approvals.Decision(None))
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=10)
    assert done, "the cancelled request went on waiting for a card"
    assert task.cancelled()
    assert not broker.pending


async def test_a_call_run_under_the_agents_kept_always_is_audited_and_only_in_that_session(
    bus, audit
):
    broker = ApprovalBroker(bus, audit=audit)
    console = broker.attach("c")
    task = asyncio.ensure_future(broker.request(ctx("s1", raw={"command": "make"})))
    await until(lambda: broker.pending)
    console.answer(next(iter(broker.pending)), "allow_always")
    granted = await task
    assert granted.outcome == "allow_always"
    broker.tool_outcome("c1", "s1", "t1", "completed")  # the asked call: its outcome only
    # later calls the agent runs without asking, in that session and in another one
    call = {"title": "make test", "kind": "execute", "rawInput": {"command": "make test"}}
    broker.tool_outcome("c1", "s1", "t2", "completed", call)
    broker.tool_outcome("c1", "s2", "t3", "completed", call)  # no kept answer there
    lines = audit_lines(audit)
    assert [line["type"] for line in lines] == [
        "decision",
        "tool_outcome",
        "decision",
        "tool_outcome",
    ]
    kept = lines[2]
    assert (kept["tool_call_id"], kept["outcome"], kept["resolver"]) == (
        "t2",
        "allow_always",
        "agent",
    )
    assert kept["decider"] == {"kind": "agent_kept", "rule": kept["rule"]}
    assert lines[0]["approval_id"] in kept["rule"]
    assert kept["args_sha256"] != lines[0]["args_sha256"]  # what ran, not what was granted
    assert lines[3]["approval_id"] == kept["approval_id"]
