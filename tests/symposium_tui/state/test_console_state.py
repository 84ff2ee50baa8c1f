"""ConsoleState: what the console knows, folded from a real bridge's events (no Textual here)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bridge import events as ev
from bridge.events import JsonlEventLog
from symposium_tui.state import ConsoleState, ToolCallStore, ToolEntry, message_parts, message_text
from symposium_tui.state.replay import state_from_file
from tests.support.lmclient import ELIZA, LmClient, assistant, user
from tests.support.panes import Conversation, new_commit_cancel, text_message
from tests.support.waiting import until


def texts(messages):
    return [(message_parts(m)[0], message_text(m)) for m in messages]


async def test_a_conversation_becomes_a_session_with_a_timeline_of_decisions_and_outcomes(bridge):
    state = ConsoleState(bridge)
    state.attach()
    conv = Conversation(bridge)
    said = await new_commit_cancel(conv)

    (rec,) = state.sessions.values()
    assert rec.key == (conv.name, "s1") and rec.agent == "eliza" and rec.state == "idle"
    assert [(d.kind, d.outcome) for d in rec.decisions] == [
        ("new_session", "complete"),
        ("commit", "complete"),
        ("cancel", "complete"),
    ]
    assert [d.index for d in state.decisions] == [1, 2, 3]
    # What the console shows equals what the tracker holds.
    view = conv.core.tracker.session("s1")
    assert texts(rec.committed) == texts(view.committed)
    assert texts(rec.provisional) == texts(view.provisional)
    # The cancel carries its evidence: the streamed answer against the user's edit.
    cancel = rec.decisions[-1]
    assert cancel.decision["mismatch_index"] == 3
    assert message_text(cancel.decision["expected"]) == message_text(said["r2"])
    assert message_text(cancel.decision["received"]) == message_text(said["edited"])
    assert texts(state.previous_provisional(cancel)) == texts([said["u2"], said["r2"]])


async def test_the_history_at_each_decision_is_the_history_as_the_tracker_held_it_then(bridge):
    state = ConsoleState(bridge)
    state.attach()
    conv = Conversation(bridge)
    u1 = text_message("user", "hello")
    seen = []
    r1 = conv.reply(await conv.send([u1]))
    seen.append(conv.core.tracker.session("s1"))
    u2 = text_message("user", "I feel happy")
    r2 = conv.reply(await conv.send([u1, r1, u2]))
    seen.append(conv.core.tracker.session("s1"))
    edited = [u1, r1, u2, text_message("assistant", "edited"), text_message("user", "and now?")]
    r3 = conv.reply(await conv.send(edited))
    seen.append(conv.core.tracker.session("s1"))
    await conv.send([*edited, r3, text_message("user", "go on")])
    seen.append(conv.core.tracker.session("s1"))
    assert r2 != r3

    key = (conv.name, "s1")
    records = state.session_decisions(key)
    assert [r.kind for r in records] == ["new_session", "commit", "cancel", "commit"]
    for record, then in zip(records, seen):
        committed, provisional = state.history_at(key, record)
        assert texts(committed) == texts(then.committed), record.kind
        assert texts(provisional) == texts(then.provisional), record.kind


async def test_a_denied_permission_is_an_agent_tool_call_and_a_permission_outcome(bridge):
    state = ConsoleState(bridge)
    state.attach()
    conv = Conversation(bridge)
    await conv.send([text_message("user", "ask permission to run the tests")])

    agent, permission = list(state.tools)
    assert (agent.source, agent.title, agent.kind, agent.status) == (
        "agent",
        "run the tests",
        "execute",
        "failed",
    )
    assert agent.input == {"command": "run the tests"} and agent.duration is not None
    assert (permission.source, permission.status, permission.tool_call_id) == (
        "permission",
        "reject_once",
        agent.tool_call_id,
    )
    assert (
        permission.output.startswith("reject_once by default")
        and permission.detail["resolver"] == "default"
    )
    assert permission.duration is not None
    assert {"failed", "reject_once"} <= set(state.tool_statuses)


async def test_a_client_tool_round_trip_is_one_entry_with_its_input_and_output(bridge):
    state = ConsoleState(bridge)
    state.attach()
    bus = bridge.bus
    bus.publish(
        ev.ClientToolCall(
            connection="chat-1",
            session_id="s1",
            tool_call_id="t1",
            tool_name="vscode_readFile",
            arguments={"path": "a.py"},
            ts=100.0,
        )
    )
    bus.publish(
        ev.ClientToolCall(
            connection="chat-1",
            session_id="s1",
            tool_call_id="t1",
            tool_name="vscode_readFile",
            status="completed",
            result="print(1)",
            ts=100.25,
        )
    )
    (entry,) = list(state.tools)
    assert (entry.source, entry.name, entry.status, entry.input, entry.output) == (
        "client",
        "vscode_readFile",
        "completed",
        {"path": "a.py"},
        "print(1)",
    )
    assert entry.duration == pytest.approx(0.25) and entry.version == 1


async def test_a_permission_decided_by_policy_is_named_after_the_call_it_answered(bridge):
    state = ConsoleState(bridge)
    state.attach()
    bridge.bus.publish(
        ev.ToolCallSeen(
            connection="c",
            session_id="s1",
            tool_call_id="x",
            title="rm -rf build",
            kind="execute",
            status="pending",
        )
    )
    bridge.bus.publish(
        ev.ApprovalResolved(
            connection="c",
            approval_id="a1",
            session_id="s1",
            agent="eliza",
            outcome="allow_once",
            resolver="policy",
            rule="execute:rm*",
        )
    )
    permission = list(state.tools)[-1]
    assert (permission.title, permission.status, permission.tool_call_id) == (
        "rm -rf build",
        "allow_once",
        "x",
    )
    assert permission.output == "allow_once by execute:rm*"


def test_the_tool_log_keeps_the_newest_entries_up_to_its_capacity():
    store = ToolCallStore(capacity=1000, journal=500)
    cursor = store.change_no
    for i in range(2500):
        store.add(
            ("k", i),
            ToolEntry(float(i), "c", "s1", "agent", str(i), f"call {i}", "read", "completed"),
        )
    assert len(store) == 1000 and store.first_seq == 1500 and store.dropped == 1500
    assert [e.title for e in store][:2] == ["call 1500", "call 1501"]
    assert store.get(1499) is None and store.get(2499).title == "call 2499"
    assert store.find(("k", 10)) is None and store.find(("k", 2000)) is store.get(2000)
    assert store.changes_since(cursor) is None, "a reader that fell behind the journal must rebuild"
    recent = store.change_no
    store.changed(store.get(2000))
    assert store.changes_since(recent) == [2000]


def test_a_state_holds_at_most_its_capacity_of_tool_calls():
    state = ConsoleState(None, tool_capacity=100)
    for i in range(250):
        state.handle(
            ev.ToolCallSeen(
                connection="c",
                session_id="s1",
                tool_call_id=f"t{i}",
                title=f"t{i}",
                status="completed",
                ts=float(i),
            )
        )
    assert len(state.tools) == 100 and next(iter(state.tools)).title == "t150"


async def test_a_full_tool_log_holds_the_same_memory_however_many_calls_it_replaces(bridge):
    """Full means flat: once the log drops its oldest calls, replacing them (five times over here)
    grows neither what it counts nor its key index's table, which a dict under replacement
    doubles once its dead slots run out unless the store settled it when it filled."""
    state = ConsoleState(bridge, tool_capacity=1000)
    state.attach()

    def call(i: int) -> None:
        bridge.bus.publish(
            ev.ToolCallSeen(
                connection="vscodelm-1",
                session_id="s1",
                tool_call_id=f"call-{i:06d}",
                title="read a file",
                kind="read",
                status="completed",
                raw_input={"path": f"src/{i:06d}.py"},
                content="the file's text",
                ts=float(i),
            )
        )

    def held() -> tuple[int, int, int]:
        store = state.tools
        return (len(store), store.bytes, sys.getsizeof(store._by_key))

    for i in range(1001):  # full, and its first call dropped
        call(i)
    at_capacity = held()
    assert at_capacity[0] == 1000 and state.tools.dropped == 1
    for i in range(1001, 6001):
        call(i)
    assert state.tools.dropped == 5001 and held() == at_capacity


async def test_the_tool_log_offers_the_sessions_that_still_have_calls_in_it(bridge):
    """The log's session filter lists the sessions with calls in the store, in the order they
    first came: a session whose calls have all been dropped leaves the list, so a long run's list
    is never longer than the log holds calls."""
    state = ConsoleState(bridge, tool_capacity=3)
    state.attach()

    def call(session: str, n: int) -> None:
        bridge.bus.publish(
            ev.ToolCallSeen(
                connection="vscodelm-1",
                session_id=session,
                tool_call_id=f"{session}-{n}",
                title="read a file",
                kind="read",
                status="completed",
                ts=float(len(state.tools) + state.tools.dropped),
            )
        )

    def offered() -> list[str]:
        return [label.split("/")[-1] for label in state.tool_sessions]

    call("a", 1)
    call("a", 2)
    call("b", 1)
    assert offered() == ["a", "b"]
    call("c", 1)  # drops a-1: a still has a call
    assert offered() == ["a", "b", "c"]
    call("d", 1)  # drops a-2: a has none left
    assert offered() == ["b", "c", "d"]
    for n in range(100):  # a hundred sessions later the list holds what the log holds
        call(f"s{n}", 1)
    assert offered() == ["s97", "s98", "s99"]
    assert len(state.tools) == 3


async def test_listeners_hear_of_a_burst_once_per_topic_not_once_per_event(bridge):
    state = ConsoleState(bridge, coalesce=0.05)
    state.attach()
    heard = []
    state.add_listener(heard.append)
    for i in range(500):
        bridge.bus.publish(
            ev.ToolCallSeen(
                connection="c", session_id="s1", tool_call_id=f"t{i}", title="x", status="pending"
            )
        )
    assert heard == [], "nothing is announced synchronously, per event"
    await until(lambda: heard, what="the burst announced")
    assert heard == ["toolcalls"]


async def test_attach_is_idempotent_and_detach_stops_the_updates(bridge):
    state = ConsoleState(bridge)
    state.attach()
    state.attach()
    bridge.bus.publish(
        ev.ToolCallSeen(
            connection="c", session_id="s1", tool_call_id="t", title="x", status="pending"
        )
    )
    assert len(state.tools) == 1, "subscribed once"
    state.detach()
    assert not state.attached
    bridge.bus.publish(
        ev.ToolCallSeen(
            connection="c", session_id="s1", tool_call_id="u", title="y", status="pending"
        )
    )
    assert len(state.tools) == 1


async def test_attaching_late_takes_in_the_sessions_the_bridge_already_has(bridge):
    conv = Conversation(bridge)
    u1 = text_message("user", "hello")
    r1 = conv.reply(await conv.send([u1]))
    await conv.send([u1, r1, text_message("user", "more")])
    state = ConsoleState(bridge)
    state.attach()
    rec = state.sessions[(conv.name, "s1")]
    assert (
        rec.agent == "eliza"
        and rec.state == "idle"
        and len(rec.committed) == 2
        and len(rec.provisional) == 2
    )
    # The next decision continues from what was taken in.
    view = conv.core.tracker.session("s1")
    await conv.send([*view.committed, *view.provisional, text_message("user", "again")])
    assert texts(rec.committed) == texts(conv.core.tracker.session("s1").committed)


async def test_ended_sessions_are_kept_up_to_a_limit(bridge):
    state = ConsoleState(bridge, ended_session_capacity=2)
    for i in range(5):
        state.handle(ev.SessionStarted(connection="c", session_id=f"s{i}", agent="eliza"))
        state.handle(ev.SessionEnded(connection="c", session_id=f"s{i}", reason="idle"))
    state.handle(ev.SessionStarted(connection="c", session_id="live", agent="eliza"))
    assert sorted(k[1] for k in state.sessions) == ["live", "s3", "s4"]
    assert (
        state.sessions[("c", "s4")].state == "ended"
        and state.sessions[("c", "s4")].end_reason == "idle"
    )


async def test_a_session_waiting_for_approval_says_so(bridge):
    state = ConsoleState(bridge)
    state.handle(ev.SessionStarted(connection="c", session_id="s1", agent="eliza"))
    state.handle(
        ev.ApprovalRequested(
            connection="c",
            approval_id="a",
            session_id="s1",
            agent="eliza",
            tool_call={"toolCallId": "t", "title": "deploy"},
            options=[],
        )
    )
    assert state.sessions[("c", "s1")].state == "approval"
    state.handle(
        ev.ApprovalResolved(
            connection="c",
            approval_id="a",
            session_id="s1",
            agent="eliza",
            outcome="allow_once",
            resolver="console",
        )
    )
    assert state.sessions[("c", "s1")].state == "idle"
    assert [e.status for e in state.tools] == ["allow_once"]


# --- files -----------------------------------------------------------------------------------------


async def test_a_wire_trace_and_an_event_log_replay_into_the_history_the_live_bridge_had(tmp_path):
    """A real `symposium-tui vscodelm` process records both; each replays to the same decisions,
    and the committed history of the last one is what the client sent."""
    traces = tmp_path / "traces"
    log = tmp_path / "events.jsonl"
    client = await LmClient.start(
        "--cwd", str(tmp_path), "--trace-dir", str(traces), "--event-log", str(log)
    )
    try:
        first = await client.chat([user("hello")], agent=ELIZA)
        second = await client.chat(
            [user("hello"), first.as_assistant(), user("I am sad")], agent=ELIZA
        )
        third = await client.chat(
            [
                user("hello"),
                first.as_assistant(),
                user("I am sad"),
                assistant("edited"),
                user("why"),
            ],
            agent=ELIZA,
        )
        assert third.error is None and second.error is None
    finally:
        await client.close()
    (trace,) = traces.iterdir()
    for path in (trace, log):
        state = state_from_file(path)
        assert [(d.kind, d.outcome) for d in state.decisions] == [
            ("new_session", "complete"),
            ("commit", "complete"),
            ("cancel", "complete"),
        ], path
        (rec,) = state.sessions.values()
        assert texts(rec.committed) == [("user", "hello"), ("assistant", first.text)]
        assert texts(rec.provisional) == [
            ("user", "I am sad"),
            ("assistant", "edited"),
            ("user", "why"),
            ("assistant", third.text),
        ]
        _committed, provisional = state.history_at(rec.key, rec.decisions[1])
        assert texts(provisional) == [("user", "I am sad"), ("assistant", second.text)]
        assert state.name == str(path)


async def test_an_event_log_without_requests_shows_the_decisions_the_bridge_recorded(
    bridge, tmp_path
):
    path = tmp_path / "events.jsonl"
    log = JsonlEventLog(path)
    bridge.bus.subscribe(log)
    conv = Conversation(bridge)
    await new_commit_cancel(conv)
    log.close()
    state = state_from_file(path)
    assert [d.kind for d in state.decisions] == ["new_session", "commit", "cancel"]
    assert [e.source for e in state.tools] == ["agent", "permission"]
    assert state.sessions[(conv.name, "s1")].agent == "eliza"


def test_a_file_that_is_neither_a_trace_nor_an_event_log_is_refused(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\n")
    with pytest.raises(ValueError, match="neither"):
        state_from_file(path)
    with pytest.raises(OSError):
        state_from_file(tmp_path / "missing.log")


def test_a_request_the_trace_could_not_route_is_an_error_on_the_timeline(tmp_path):
    path = tmp_path / "t.log"
    bad = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "lm/provideLanguageModelChatResponse",
        "params": {"messages": "nope"},
    }
    path.write_text(f"[2023-11-14T22:13:20.000000Z] recv: {json.dumps(bad)}\n")
    state = state_from_file(path)
    (record,) = state.decisions
    assert record.kind == "error" and "bad params" in record.reason and record.request_id == 7


def test_the_state_module_does_not_import_textual():
    code = "import sys, symposium_tui.state; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_who_decided_is_told_in_words_that_tell_a_rule_from_a_person():
    from symposium_tui.state.formatting import decided_by

    assert decided_by("policy", "rule 2 (line 9): deny command=rm") == "by rule 2"
    assert decided_by("policy", "agent bypass") == "by agent bypass"
    assert decided_by("console", "answered by you@host", "you@host") == "by a person (you@host)"
    assert decided_by("vscode") == "in VS Code"


def _call(i: int, output: str = "") -> ToolEntry:
    return ToolEntry(
        float(i), "c", "s1", "agent", str(i), f"call {i}", "read", "completed", None, output
    )


def test_the_tool_log_drops_its_oldest_calls_beyond_its_byte_budget():
    """Bounded in bytes, not only in entries: big outputs push the oldest calls out first."""
    store = ToolCallStore(capacity=1000, max_bytes=100_000)
    for i in range(30):
        store.add(("k", i), _call(i, "x" * 10_000))
    assert store.bytes <= 100_000 < store.bytes + 10_500  # full: one more call would not fit
    held = [e.title for e in store]
    assert 5 <= len(held) < 10 and held[-1] == "call 29"
    assert held == [f"call {i}" for i in range(30 - len(held), 30)]  # the newest, in order
    assert store.dropped == 30 - len(held) and store.first_seq == 30 - len(held)
    assert store.find(("k", 0)) is None and store.get(0) is None
    # small calls: the budget now holds many more of them, still oldest out first
    for i in range(30, 1030):
        store.add(("k", i), _call(i))
    assert len(store) < 1000 and store.get(1029).title == "call 1029"
    assert store.bytes <= 100_000


def test_a_call_that_grows_is_weighed_again_and_the_newest_is_kept_whatever_its_size():
    store = ToolCallStore(capacity=1000, max_bytes=50_000)
    for i in range(10):
        store.add(("k", i), _call(i, "y" * 1_000))
    assert len(store) == 10
    last = store.get(9)
    last.output = "z" * 45_000  # its result arrives
    store.changed(last)
    assert store.bytes <= 50_000 and store.get(9) is last
    assert next(e.title for e in store) != "call 0"  # older calls made room
    huge = store.add(("k", 10), _call(10, "w" * 200_000))
    assert list(store) == [huge] and store.bytes > store.max_bytes
