"""The committed/provisional history tracker: upstream's scenarios D1–D8 under decisions 6 and 9,
and its bugs B8 and B14 fixed (the ids: docs/upstream.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bridge import history
from bridge.history import Decision, DecisionKind, HistoryTracker, message_key, normalize_message
from bridge.protocol import Message, TextPart, ToolCallPart, ToolResultPart

AGENT = '{"deterministic":false,"kind":"eliza"}'
OTHER_AGENT = '{"kind":"claude_code"}'


def user(*texts: str) -> Message:
    return Message(role="user", content=[TextPart(value=t) for t in texts])


def assistant(*parts: str | ToolCallPart) -> Message:
    return Message(
        role="assistant", content=[TextPart(value=p) if isinstance(p, str) else p for p in parts]
    )


def call(params: Any, call_id: str = "call-1", name: str = "read_file") -> ToolCallPart:
    return ToolCallPart(toolCallId=call_id, toolName=name, parameters=params)


def result(value: Any, call_id: str = "call-1") -> Message:
    return Message(role="user", content=[ToolResultPart(toolCallId=call_id, result=value)])


def answer(tracker: HistoryTracker, decision: Decision, *parts: str | ToolCallPart) -> None:
    """The agent streams `parts` and finishes, as a session would."""
    for p in parts:
        tracker.record_part(decision.session_id, TextPart(value=p) if isinstance(p, str) else p)
    tracker.complete(decision.session_id)


def wire(m: Message) -> dict[str, Any]:
    return m.model_dump(mode="json")


@pytest.fixture
def tracker() -> HistoryTracker:
    return HistoryTracker()


# --- D1, D2: continuing a conversation ---------------------------------------------------------


def test_first_request_starts_a_session_holding_everything_as_provisional(
    tracker: HistoryTracker,
) -> None:
    d = tracker.route(AGENT, [user("hello")])
    assert (d.kind, d.session_id, d.seq, d.committed_len) == (DecisionKind.NEW_SESSION, "s1", 1, 0)
    assert d.new_messages == [user("hello")]
    assert d.prompt_start == 0 and d.candidates == 0
    view = tracker.session("s1")
    assert view is not None and view.committed == [] and view.provisional == [user("hello")]
    assert view.agent_key == AGENT and view.created_seq == 1


def test_d1_continuation_commits_the_answered_exchange_and_prompts_only_the_new_message(
    tracker: HistoryTracker,
) -> None:
    first = tracker.route(AGENT, [user("U1")])
    answer(tracker, first, "A1")
    d = tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2")])
    assert (d.kind, d.session_id, d.committed_len, d.candidates) == (
        DecisionKind.COMMIT,
        "s1",
        2,
        1,
    )
    assert d.new_messages == [user("U2")] and d.prompt_start == 0
    assert d.mismatch_index is None and d.expected is None and d.received is None
    assert "provisional exchange of s1 (2 messages); committed it" in d.reason
    view = tracker.session("s1")
    assert view is not None
    assert view.committed == [user("U1"), assistant("A1")] and view.provisional == [user("U2")]


def test_d2_reply_streamed_in_chunks_and_echoed_as_other_chunks_is_still_a_continuation(
    tracker: HistoryTracker,
) -> None:
    first = tracker.route(AGENT, [user("U1")])
    answer(tracker, first, "Hel", "lo, ", "world")
    d = tracker.route(AGENT, [user("U1"), assistant("Hello", ", world"), user("U2")])
    assert d.kind is DecisionKind.COMMIT and d.new_messages == [user("U2")]
    assert tracker.session("s1").committed[1] == assistant("Hello, world")  # type: ignore[union-attr]


def test_resending_exactly_the_answered_history_commits_it_with_nothing_new(
    tracker: HistoryTracker,
) -> None:
    first = tracker.route(AGENT, [user("U1")])
    answer(tracker, first, "A1")
    d = tracker.route(AGENT, [user("U1"), assistant("A1")])
    assert d.kind is DecisionKind.COMMIT and d.new_messages == [] and d.committed_len == 2


def test_request_after_a_commit_with_nothing_provisional_is_a_continue(
    tracker: HistoryTracker,
) -> None:
    answer(tracker, tracker.route(AGENT, [user("U1")]), "A1")
    tracker.route(AGENT, [user("U1"), assistant("A1")])  # commits; provisional now empty
    d = tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2")])
    assert (d.kind, d.session_id, d.committed_len) == (DecisionKind.CONTINUE, "s1", 2)
    assert d.new_messages == [user("U2")] and "nothing provisional" in d.reason


def test_tool_call_answered_by_a_tool_result_commits_the_call(tracker: HistoryTracker) -> None:
    first = tracker.route(AGENT, [user("read it")])
    answer(tracker, first, "Reading.", call({"path": "a.py"}))
    d = tracker.route(
        AGENT,
        [
            user("read it"),
            assistant("Reading.", call({"path": "a.py"})),
            result([{"$mid": 21, "value": "x = 1"}]),
        ],
    )
    assert d.kind is DecisionKind.COMMIT and d.committed_len == 2
    assert d.new_messages == [result([{"$mid": 21, "value": "x = 1"}])]


# --- D3, B8: the client abandoned the provisional exchange -------------------------------------


def test_d3_edited_reply_cancels_the_exchange_keeps_the_session_and_reports_both_versions(
    tracker: HistoryTracker,
) -> None:
    answer(tracker, tracker.route(AGENT, [user("U1")]), "A1")
    d = tracker.route(AGENT, [user("U1"), assistant("A1 edited"), user("U2")])
    assert (d.kind, d.session_id, d.committed_len) == (DecisionKind.CANCEL, "s1", 0)
    assert d.new_messages == [user("U1"), assistant("A1 edited"), user("U2")]
    assert d.mismatch_index == 1
    assert d.expected == wire(assistant("A1")) and d.received == wire(assistant("A1 edited"))
    # B8: the agent already received U1 in the abandoned exchange; it is not prompted again.
    assert d.prompt_start == 1 and d.to_prompt == [assistant("A1 edited"), user("U2")]
    assert tracker.session("s1").provisional == d.new_messages  # type: ignore[union-attr]


def test_edited_latest_user_message_cancels_back_to_the_committed_prefix(
    tracker: HistoryTracker,
) -> None:
    answer(tracker, tracker.route(AGENT, [user("U1")]), "A1")
    answer(tracker, tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2")]), "A2")
    d = tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2 but better")])
    assert (d.kind, d.committed_len, d.mismatch_index, d.prompt_start) == (
        DecisionKind.CANCEL,
        2,
        2,
        0,
    )
    assert d.expected == wire(user("U2")) and d.received == wire(user("U2 but better"))
    assert "message 2 differs from the provisional exchange of s1" in d.reason
    assert "kept 2 committed messages" in d.reason


def test_b8_message_sent_after_a_cancelled_reply_prompts_only_what_the_agent_has_not_seen(
    tracker: HistoryTracker,
) -> None:
    answer(tracker, tracker.route(AGENT, [user("U1")]), "A1")
    d = tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2")])
    tracker.record_part(
        d.session_id, TextPart(value="half an ans")
    )  # then lm/cancel: no complete()
    d = tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2"), user("U3")])
    assert d.kind is DecisionKind.CANCEL and d.committed_len == 2
    assert d.mismatch_index == 3
    assert d.expected == wire(assistant("half an ans")) and d.received == wire(user("U3"))
    assert d.new_messages == [user("U2"), user("U3")]
    assert d.prompt_start == 1 and d.to_prompt == [user("U3")]


def test_regenerate_cancels_the_reply_and_prompts_the_last_user_message_again(
    tracker: HistoryTracker,
) -> None:
    answer(tracker, tracker.route(AGENT, [user("U1")]), "A1")
    answer(tracker, tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2")]), "A2")
    d = tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2")])
    assert d.kind is DecisionKind.CANCEL and d.committed_len == 2
    assert d.mismatch_index == 3 and d.expected == wire(assistant("A2")) and d.received is None
    assert "ends at message 3" in d.reason
    assert d.new_messages == [user("U2")] and d.to_prompt == [user("U2")]


# --- D4, D5, D7: requests that start a new session ----------------------------------------------


def test_d4_history_that_contradicts_the_committed_prefix_starts_a_new_session(
    tracker: HistoryTracker,
) -> None:
    answer(tracker, tracker.route(AGENT, [user("U1")]), "A1")
    answer(tracker, tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2")]), "A2")
    d = tracker.route(AGENT, [user("U1"), assistant("A1 rewritten"), user("U2")])
    assert (d.kind, d.session_id, d.candidates) == (DecisionKind.NEW_SESSION, "s2", 0)
    assert d.new_messages == [user("U1"), assistant("A1 rewritten"), user("U2")]
    assert tracker.session("s1").committed == [user("U1"), assistant("A1")]  # type: ignore[union-attr]


def test_d4_history_shorter_than_the_committed_prefix_starts_a_new_session(
    tracker: HistoryTracker,
) -> None:
    answer(tracker, tracker.route(AGENT, [user("U1")]), "A1")
    tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2")])
    d = tracker.route(AGENT, [user("U1")])
    assert (d.kind, d.session_id) == (DecisionKind.NEW_SESSION, "s2")


def test_d5_same_history_for_another_agent_starts_a_new_session(tracker: HistoryTracker) -> None:
    answer(tracker, tracker.route(AGENT, [user("U1")]), "A1")
    d = tracker.route(OTHER_AGENT, [user("U1"), assistant("A1"), user("U2")])
    assert (d.kind, d.session_id, d.agent_key) == (DecisionKind.NEW_SESSION, "s2", OTHER_AGENT)
    assert tracker.session("s1").provisional == [user("U1"), assistant("A1")]  # type: ignore[union-attr]


def test_d7_unrelated_new_chat_is_not_hijacked_by_a_session_with_nothing_committed(
    tracker: HistoryTracker,
) -> None:
    answer(tracker, tracker.route(AGENT, [user("U1")]), "A1")
    d = tracker.route(AGENT, [user("something else entirely")])
    assert (d.kind, d.session_id, d.candidates) == (DecisionKind.NEW_SESSION, "s2", 0)
    assert "no session of this agent shares this conversation's history" in d.reason
    assert tracker.session("s1").provisional == [user("U1"), assistant("A1")]  # type: ignore[union-attr]
    # and each conversation keeps going in its own session
    answer(tracker, d, "B1")
    assert tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2")]).session_id == "s1"
    assert (
        tracker.route(
            AGENT, [user("something else entirely"), assistant("B1"), user("x")]
        ).session_id
        == "s2"
    )


def test_d8_empty_request_starts_a_session_with_nothing_to_prompt(tracker: HistoryTracker) -> None:
    d = tracker.route(AGENT, [])
    assert (d.kind, d.new_messages, d.to_prompt) == (DecisionKind.NEW_SESSION, [], [])
    assert "no messages" in d.reason
    assert tracker.route(AGENT, []).session_id == "s2"  # always a new one


def test_d8_new_messages_without_user_text_are_still_routed_for_the_caller_to_complete(
    tracker: HistoryTracker,
) -> None:
    answer(tracker, tracker.route(AGENT, [user("U1")]), "A1")
    d = tracker.route(AGENT, [user("U1"), assistant("A1"), assistant("a prefill")])
    assert d.kind is DecisionKind.COMMIT and d.new_messages == [assistant("a prefill")]


# --- D6: choosing among several matching sessions -----------------------------------------------


def test_d6_of_two_equally_good_matches_the_newest_session_wins(tracker: HistoryTracker) -> None:
    tracker.route(AGENT, [])
    tracker.route(AGENT, [])
    d = tracker.route(AGENT, [user("U1")])
    assert (d.kind, d.session_id, d.candidates) == (DecisionKind.CONTINUE, "s2", 2)


def test_the_longest_matched_history_beats_a_newer_session(tracker: HistoryTracker) -> None:
    answer(tracker, tracker.route(AGENT, [user("U1")]), "A1")
    tracker.route(AGENT, [])  # s2: newer, empty, matches anything with a prefix of 0
    d = tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2")])
    assert (d.kind, d.session_id, d.candidates) == (DecisionKind.COMMIT, "s1", 2)


def test_at_equal_matched_length_a_continuation_beats_a_newer_cancel(
    tracker: HistoryTracker,
) -> None:
    tracker.route(AGENT, [])  # s1, empty
    tracker.route(AGENT, [])  # s2, empty
    d = tracker.route(AGENT, [user("U1")])  # the newest empty one, s2, takes the conversation
    assert d.session_id == "s2"
    answer(tracker, d, "A1")
    # s2 cancel-matches with prefix 0, s1 continues with prefix 0: the continuation wins
    d = tracker.route(AGENT, [user("U1"), assistant("A1 edited"), user("U2")])
    assert (d.kind, d.session_id, d.candidates) == (DecisionKind.CONTINUE, "s1", 2)


def test_a_hash_chain_collision_is_caught_by_comparing_the_messages(
    tracker: HistoryTracker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history, "hash", lambda _value: 42, raising=False)  # every chain collides
    answer(tracker, tracker.route(AGENT, [user("A")]), "a")
    tracker.route(AGENT, [user("A"), assistant("a"), user("A2")])
    answer(tracker, tracker.route(AGENT, [user("B")]), "b")
    tracker.route(AGENT, [user("B"), assistant("b"), user("B2")])
    d = tracker.route(AGENT, [user("C"), assistant("c"), user("C2")])
    assert (d.kind, d.session_id) == (DecisionKind.NEW_SESSION, "s3")
    d = tracker.route(AGENT, [user("B"), assistant("b"), user("B2 edited")])
    assert (d.kind, d.session_id, d.candidates) == (DecisionKind.CANCEL, "s2", 1)


# --- normalization and equality (decision 9, B14) ------------------------------------------------


def test_normalization_merges_each_run_of_text_parts_and_nothing_else() -> None:
    c = call({"a": 1})
    m = Message(
        role="assistant",
        content=[
            TextPart(value="a"),
            TextPart(value=""),
            TextPart(value="b"),
            c,
            TextPart(value=" c "),
            TextPart(value="d"),
        ],
    )
    assert normalize_message(m) == Message(
        role="assistant", content=[TextPart(value="ab"), c, TextPart(value=" c d")]
    )
    single = user("only")
    assert normalize_message(single) is single
    empty = Message(role="user", content=[])
    assert normalize_message(empty) == empty
    assert message_key(empty) != message_key(user(""))


def test_incoming_messages_are_normalized_before_they_are_stored(tracker: HistoryTracker) -> None:
    d = tracker.route(AGENT, [user("a", "b")])
    assert d.new_messages == [user("ab")]
    assert tracker.session(d.session_id).provisional == [user("ab")]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("emitted", "echoed"),
    [
        ({"n": 2}, {"n": 2.0}),
        ({"a": 1, "b": {"x": [1, 2], "y": None}}, {"b": {"y": None, "x": [1.0, 2]}, "a": 1}),
        ({"id": 9007199254740993}, {"id": 9007199254740992}),  # what JavaScript's doubles echo back
        ([True, "1"], [True, "1"]),
    ],
    ids=["int-vs-float", "key-order", "js-double-precision", "same"],
)
def test_tool_call_echoed_with_equal_json_values_commits(
    tracker: HistoryTracker, emitted: Any, echoed: Any
) -> None:
    answer(tracker, tracker.route(AGENT, [user("go")]), call(emitted))
    d = tracker.route(AGENT, [user("go"), assistant(call(echoed)), result("ok")])
    assert d.kind is DecisionKind.COMMIT


@pytest.mark.parametrize(
    ("emitted", "echoed"),
    [
        ({"flag": True}, {"flag": 1}),
        ({"flag": False}, {"flag": 0}),
        ({"n": 1}, {"n": "1"}),
        ([1, 2], [2, 1]),
        ({"a": None}, {}),
    ],
    ids=[
        "true-is-not-1",
        "false-is-not-0",
        "number-is-not-string",
        "array-order",
        "null-is-not-missing",
    ],
)
def test_tool_call_echoed_with_different_json_values_cancels(
    tracker: HistoryTracker, emitted: Any, echoed: Any
) -> None:
    answer(tracker, tracker.route(AGENT, [user("go")]), call(emitted))
    d = tracker.route(AGENT, [user("go"), assistant(call(echoed)), result("ok")])
    assert d.kind is DecisionKind.CANCEL and d.mismatch_index == 1


def test_tool_call_ids_names_and_roles_take_part_in_equality() -> None:
    base = message_key(assistant(call({}, "c1", "read")))
    assert message_key(assistant(call({}, "c2", "read"))) != base
    assert message_key(assistant(call({}, "c1", "write"))) != base
    assert message_key(Message(role="user", content=[call({}, "c1", "read")])) != base
    assert message_key(result({}, "c1")) != message_key(
        Message(role="user", content=[call({}, "c1", "read")])
    )


# --- the agent's side: record_part, complete, remove --------------------------------------------


def test_streamed_parts_append_to_the_reply_and_complete_normalizes_it(
    tracker: HistoryTracker,
) -> None:
    d = tracker.route(AGENT, [user("U1")])
    tracker.record_part(d.session_id, TextPart(value="a"))
    tracker.record_part(d.session_id, TextPart(value="b"))
    tracker.record_part(d.session_id, call({"p": 1}))
    tracker.record_part(d.session_id, TextPart(value="c"))
    view = tracker.session(d.session_id)
    assert (
        view is not None and len(view.provisional[1].content) == 4
    )  # not normalized while streaming
    tracker.complete(d.session_id)
    assert tracker.session(d.session_id).provisional == [  # type: ignore[union-attr]
        user("U1"),
        Message(
            role="assistant", content=[TextPart(value="ab"), call({"p": 1}), TextPart(value="c")]
        ),
    ]


def test_the_reply_to_a_request_ending_in_an_assistant_message_is_a_message_of_its_own(
    tracker: HistoryTracker,
) -> None:
    prefill = assistant("Sure:")
    d = tracker.route(AGENT, [user("U1"), prefill])
    tracker.record_part(d.session_id, TextPart(value=" here"))
    tracker.record_part(d.session_id, TextPart(value=" it is"))
    tracker.complete(d.session_id)
    assert prefill == assistant("Sure:")  # the caller's message object is untouched
    assert tracker.session(d.session_id).provisional == [  # type: ignore[union-attr]
        user("U1"),
        assistant("Sure:"),
        assistant(" here it is"),
    ]
    # which is how the client echoes it
    d = tracker.route(AGENT, [user("U1"), assistant("Sure:"), assistant(" here it is"), user("U2")])
    assert d.kind is DecisionKind.COMMIT and d.new_messages == [user("U2")]


def test_parts_of_one_exchange_gather_in_one_reply_until_the_next_request(
    tracker: HistoryTracker,
) -> None:
    d = tracker.route(AGENT, [user("U1")])
    tracker.record_part(d.session_id, TextPart(value="Let me look."))
    tracker.record_part(d.session_id, call({"path": "a.py"}))
    tracker.complete(d.session_id)
    d = tracker.route(
        AGENT, [user("U1"), assistant("Let me look.", call({"path": "a.py"})), result("x = 1")]
    )
    assert d.kind is DecisionKind.COMMIT
    tracker.record_part(d.session_id, TextPart(value="It sets x."))
    assert tracker.session(d.session_id).provisional == [result("x = 1"), assistant("It sets x.")]  # type: ignore[union-attr]


def test_a_session_view_is_a_snapshot(tracker: HistoryTracker) -> None:
    d = tracker.route(AGENT, [user("U1")])
    tracker.record_part(d.session_id, TextPart(value="a"))
    view = tracker.session(d.session_id)
    tracker.record_part(d.session_id, TextPart(value="b"))
    tracker.route(AGENT, [user("U1"), assistant("ab"), user("U2")])
    assert (
        view is not None
        and view.provisional == [user("U1"), assistant("a")]
        and view.committed == []
    )


def test_a_reply_cancelled_mid_stream_still_matches_when_the_client_keeps_it(
    tracker: HistoryTracker,
) -> None:
    d = tracker.route(AGENT, [user("U1")])
    tracker.record_part(d.session_id, TextPart(value="partial "))
    tracker.record_part(d.session_id, TextPart(value="answer"))  # lm/cancel: no complete()
    d = tracker.route(AGENT, [user("U1"), assistant("partial answer"), user("U2")])
    assert d.kind is DecisionKind.COMMIT
    assert tracker.session("s1").committed == [user("U1"), assistant("partial answer")]  # type: ignore[union-attr]


def test_a_removed_sessions_conversation_starts_over_in_a_new_session(
    tracker: HistoryTracker,
) -> None:
    d = tracker.route(AGENT, [user("U1")])
    answer(tracker, d, "A1")
    tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2")])
    tracker.remove("s1")
    assert tracker.session("s1") is None and tracker.sessions() == []
    tracker.record_part("s1", TextPart(value="late"))  # late parts of a dead session are ignored
    tracker.complete("s1")
    tracker.remove("s1")
    d = tracker.route(AGENT, [user("U1"), assistant("A1"), user("U2")])
    assert (d.kind, d.session_id, d.committed_len) == (DecisionKind.NEW_SESSION, "s2", 0)
    assert d.new_messages == [user("U1"), assistant("A1"), user("U2")]


def test_sessions_are_listed_in_creation_order(tracker: HistoryTracker) -> None:
    tracker.route(AGENT, [user("a")])
    tracker.route(OTHER_AGENT, [user("b")])
    tracker.route(AGENT, [user("c")])
    assert [(v.session_id, v.created_seq) for v in tracker.sessions()] == [
        ("s1", 1),
        ("s2", 2),
        ("s3", 3),
    ]


def test_decision_to_json_is_plain_json_with_wire_messages(tracker: HistoryTracker) -> None:
    answer(tracker, tracker.route(AGENT, [user("U1")]), call({"n": 2}))
    d = tracker.route(AGENT, [user("U1"), assistant(call({"n": True})), result(None)])
    data = json.loads(json.dumps(d.to_json()))
    assert data["kind"] == "cancel" and data["session_id"] == "s1" and data["seq"] == 2
    assert data["mismatch_index"] == 1 and data["prompt_start"] == 1
    assert data["expected"]["content"][0]["parameters"] == {"n": 2}
    assert data["received"]["content"][0]["parameters"] == {"n": True}
    assert data["new_messages"][2] == {
        "role": "user",
        "content": [{"type": "tool_result", "toolCallId": "call-1", "result": None}],
    }
    assert set(data) == {
        "seq", "session_id", "kind", "agent_key", "committed_len", "new_messages", "prompt_start",
        "mismatch_index", "expected", "received", "candidates", "reason",
    }  # fmt: skip


# --- matching an assistant message by its tool calls; the EXTEND policy (the OpenAI door) ------


@pytest.mark.parametrize("policy", list(history.MatchPolicy))
def test_a_reply_echoed_with_only_its_tool_call_still_continues(policy) -> None:
    """VS Code echoes a reply of text + tool call as the call alone: matched by the call's id."""
    tracker = HistoryTracker(policy)
    d = tracker.route(AGENT, [user("run it")])
    answer(tracker, d, "I will run the tests.", call({"cmd": "pytest"}))
    again = tracker.route(AGENT, [user("run it"), assistant(call({"cmd": "pytest"})), result("ok")])
    assert again.kind is DecisionKind.COMMIT and again.session_id == d.session_id
    assert again.new_messages == [result("ok")]


def test_an_echo_with_another_call_id_is_not_the_same_reply() -> None:
    assert message_key(assistant("x", call({}, "c1"))) == message_key(assistant(call({}, "c1")))
    assert message_key(assistant("x", call({}, "c1"))) != message_key(
        assistant("x", call({}, "c2"))
    )


def extend_tracker() -> HistoryTracker:
    return HistoryTracker(history.MatchPolicy.EXTEND)


def test_extend_requests_sharing_only_a_first_message_are_separate_sessions() -> None:
    tracker = extend_tracker()
    a = tracker.route(AGENT, [user("system"), user("q1")])
    b = tracker.route(AGENT, [user("system"), user("q2")])
    assert b.kind is DecisionKind.NEW_SESSION and b.session_id != a.session_id
    view = tracker.session(a.session_id)
    assert view is not None and view.provisional == [user("system"), user("q1")]  # untouched


def test_extend_continues_only_a_complete_transcript() -> None:
    tracker = extend_tracker()
    a = tracker.route(AGENT, [user("q1")])
    answer(tracker, a, "r1")
    cont = tracker.route(AGENT, [user("q1"), assistant("r1"), user("q2")])
    assert (cont.kind, cont.session_id, cont.to_prompt) == (
        DecisionKind.COMMIT,
        a.session_id,
        [user("q2")],
    )
    answer(tracker, cont, "r2")
    # A request that stops short of (or contradicts) the transcript is a conversation of its own.
    for messages in (
        [user("q1"), assistant("r1"), user("other")],
        [user("q1"), assistant("edited"), user("q2")],
        [user("q1"), assistant("r1"), user("q2"), assistant("r2")],  # nothing new
    ):
        d = tracker.route(AGENT, messages)
        assert d.kind is DecisionKind.NEW_SESSION and d.new_messages == messages


def test_extend_never_continues_a_busy_session() -> None:
    tracker = extend_tracker()
    a = tracker.route(AGENT, [user("q1")])
    d = tracker.route(AGENT, [user("q1"), user("q2")], busy=lambda sid: sid == a.session_id)
    assert d.kind is DecisionKind.NEW_SESSION and "still being answered" in d.reason
    e = tracker.route(AGENT, [user("q1"), user("q2")], busy=lambda sid: False)
    assert e.kind is DecisionKind.COMMIT and e.session_id == a.session_id


# --- memory: a removed session lets go of its requests ----------------------------------------


def test_removing_a_session_frees_its_requests_messages_at_once(tracker):
    """The tracker remembers recent requests to reuse their normalization; a removed session's
    requests are let go by `remove`, not kept until later requests of other conversations push
    them out (where freeing a long conversation cost another conversation's turn)."""
    import gc
    import weakref

    gone_messages = [user(f"ended {i}") for i in range(50)]
    gone = tracker.route(AGENT, gone_messages).session_id
    other_messages = [user("another conversation")]
    other = tracker.route(AGENT, other_messages).session_id
    tracker.record_part(other, TextPart(value="reply"))
    tracker.complete(other)
    refs = [weakref.ref(m) for m in gone_messages]
    del gone_messages
    tracker.remove(gone)
    gc.collect()
    assert [r for r in refs if r() is not None] == []
    # The other conversation's request is still remembered: its next turn reuses it.
    d = tracker.route(AGENT, [*other_messages, assistant("reply"), user("more")])
    assert d.session_id == other and tracker.reused == 1


def test_a_committed_prefix_is_compared_in_place_and_the_request_keys_are_left_as_they_were():
    from bridge.history.keys import starts_with

    shared = [("assistant", f"a{i}") for i in range(5)]
    keys = [*shared, "u1", ("assistant", "p"), "u2"]
    ids = [id(k) for k in keys]
    assert starts_with(keys, shared[:5]) and starts_with(keys, []) and starts_with(keys, keys[:])
    assert not starts_with(keys, [*shared[:4], ("assistant", "other")])
    assert not starts_with(keys, [*keys, "more"])  # longer than the request
    assert starts_with(keys, [*[("assistant", f"a{i}") for i in range(5)], "u1"])  # equal, not same
    assert [id(k) for k in keys] == ids and len(keys) == 8
