"""The session's decisions as pure state (`bridge.sessions.state`), driven without an agent:
which tool-call parts a response shows, which answer each round trip gets, when a response is
handed back, and what the agent is prompted with."""

from __future__ import annotations

from typing import Any

from bridge.acp_updates import ToolCallState
from bridge.history import Decision, DecisionKind
from bridge.protocol import Message, TextPart, ToolResultPart
from bridge.sessions.state import (
    ClientReply,
    PromptLedger,
    RoundTrip,
    RoundTrips,
    announced_client_calls,
    hand_off_now,
    names_client_tool,
)

APPROVED = [{"$mid": 21, "value": "Approved"}]


def tool(call_id: str, name: str = "read_file") -> RoundTrip:
    part = {"type": "tool_call", "toolCallId": call_id, "toolName": name, "parameters": {}}
    return RoundTrip("tool", call_id, part, tool_name=name)


def permission(call_id: str) -> RoundTrip:
    part = {"type": "tool_call", "toolCallId": call_id, "toolName": "symposium-agent-action"}
    return RoundTrip("permission", call_id, part)


def reply(*results: tuple[str, Any], text: str = "") -> ClientReply:
    content: list[Any] = [ToolResultPart(toolCallId=c, result=r) for c, r in results]
    if text:
        content.append(TextPart(value=text))
    return ClientReply.read([Message(role="user", content=content)])


def user(text: str) -> Message:
    return Message(role="user", content=[TextPart(value=text)])


def decision(kind: DecisionKind, new: list[Message], prompt_start: int = 0) -> Decision:
    return Decision(
        seq=1,
        session_id="s1",
        kind=kind,
        agent_key="a",
        committed_len=0,
        new_messages=new,
        prompt_start=prompt_start,
    )


# --- round trips ---------------------------------------------------------------------------------


def test_parallel_calls_all_go_out_in_the_same_response():
    trips = RoundTrips(one_call=False)
    assert [trips.ask(tool("a")), trips.ask(tool("b"))] == [True, True]
    assert trips.shown == 2 and trips.deferred == []


def test_one_call_per_response_defers_the_second_call_to_the_next_response():
    trips = RoundTrips(one_call=True)
    first, second = tool("a"), tool("b")
    assert trips.ask(first) is True
    assert trips.ask(second) is False
    assert trips.waiting == [first, second] and trips.deferred == [second]

    delivery = trips.deliver(reply(("a", "contents of a")), one_call=True)

    assert delivery.answers == [(first, "contents of a")]
    assert delivery.show == [second]
    assert trips.waiting == [second] and trips.deferred == [] and trips.shown == 1


def test_a_deferred_call_the_request_answers_anyway_is_answered_and_not_shown():
    trips = RoundTrips(one_call=True)
    first, second = tool("a"), tool("b")
    trips.ask(first)
    trips.ask(second)
    delivery = trips.deliver(reply(("a", 1), ("b", 2)), one_call=True)
    assert delivery.answers == [(first, 1), (second, 2)]
    assert delivery.show == [] and trips.waiting == []


def test_a_shown_call_the_request_carries_no_result_for_is_answered_none():
    trips = RoundTrips()
    first, second = tool("a"), tool("b")
    trips.ask(first)
    trips.ask(second)
    delivery = trips.deliver(reply(("a", "x")), one_call=False)
    assert delivery.answers == [(first, "x"), (second, None)]
    assert trips.waiting == []


def test_only_the_extensions_approval_text_approves_a_permission():
    trips = RoundTrips()
    approved, skipped, missing = permission("p1"), permission("p2"), permission("p3")
    for rt in (approved, skipped, missing):
        trips.ask(rt)
    skip = [{"$mid": 21, "value": "The user chose to skip the tool call"}]
    answers = dict(trips.deliver(reply(("p1", APPROVED), ("p2", skip)), one_call=False).answers)
    assert answers[approved][0] is True and answers[approved][1].startswith("received ")
    assert answers[skipped][0] is False and "skip" in answers[skipped][1]
    assert answers[missing] == (False, "the next request carried no result for it")


def test_a_request_with_results_for_other_calls_does_not_carry_the_turn():
    trips = RoundTrips()
    trips.ask(tool("a"))
    assert not trips.carries(reply(("zzz", "x")))
    assert trips.carries(reply(("a", "x")))


def test_a_delivery_counts_the_new_response_from_zero_under_its_own_one_call():
    trips = RoundTrips(one_call=False)
    trips.ask(tool("a"))
    trips.deliver(reply(("a", "x")), one_call=True)
    assert trips.one_call is True and trips.shown == 0
    assert trips.ask(tool("b")) is True
    assert trips.ask(tool("c")) is False


def test_dropping_hands_back_every_waiting_round_trip_and_forgets_them():
    trips = RoundTrips(one_call=True)
    rts = [tool("a"), permission("p")]
    for rt in rts:
        trips.ask(rt)
    assert trips.drop() == rts
    assert trips.waiting == [] and trips.deferred == []


def test_a_forgotten_call_no_longer_waits_nor_is_shown_later():
    trips = RoundTrips(one_call=True)
    first, second = tool("a"), tool("b")
    trips.ask(first)
    trips.ask(second)
    trips.forget(second)
    assert trips.waiting == [first]
    assert trips.deliver(reply(("a", 1)), one_call=True).show == []


def test_arrived_counts_client_tool_calls_only():
    trips = RoundTrips()
    trips.ask(tool("a"))
    trips.ask(permission("p"))
    assert trips.arrived() == 1


def test_a_reply_reads_the_first_result_of_each_call_and_the_users_words():
    got = ClientReply.read(
        [
            Message(
                role="user",
                content=[
                    ToolResultPart(toolCallId="a", result=1),
                    ToolResultPart(toolCallId="a", result=2),
                    TextPart(value="and then "),
                    TextPart(value="go on"),
                ],
            ),
            Message(role="assistant", content=[TextPart(value="not the user's")]),
        ]
    )
    assert got.results == {"a": 1} and got.texts == ["and then go on"]


# --- handing a response back ---------------------------------------------------------------------


def test_a_response_waits_for_announced_calls_within_the_limit():
    assert hand_off_now(announced=2, arrived=2, waited=0.0, limit=1.0)
    assert not hand_off_now(announced=2, arrived=1, waited=0.5, limit=1.0)
    assert hand_off_now(announced=2, arrived=1, waited=1.0, limit=1.0)


def test_announced_calls_are_the_unfinished_ones_titled_with_a_client_tool():
    names = {"read_file"}
    calls = [
        ToolCallState(title="mcp__vscode_tools__read_file", status="pending"),
        ToolCallState(title="vscode_tools/read_file", status="completed"),
        ToolCallState(title="read_file (vscode_tools MCP Server)", status="in_progress"),
        ToolCallState(title="Bash", status="pending"),
    ]
    assert announced_client_calls(calls, names) == 2


def test_agents_titles_for_a_client_tool_are_recognised_and_others_are_not():
    names = {"read_file"}
    for title in (
        "mcp__vscode_tools__read_file",
        "vscode_tools/read_file",
        "vscode_tools.read_file",
        " read_file (vscode_tools MCP Server) ",
    ):
        assert names_client_tool(title, names), title
    for title in ("read_file", "mcp__other__read_file", "vscode_tools/write_file", None):
        assert not names_client_tool(title, names), title


# --- prompts -------------------------------------------------------------------------------------


def test_a_new_session_prompts_the_request_and_replays_what_came_before():
    ledger = PromptLedger()
    history = [user("one"), Message(role="assistant", content=[TextPart(value="1")]), user("two")]
    context, prompt = ledger.plan(decision(DecisionKind.NEW_SESSION, history), history)
    assert prompt == "two"
    assert context is not None and "User: one" in context and "Assistant: 1" in context


def test_a_prompt_cancelled_before_it_was_sent_goes_out_with_the_next_one():
    ledger = PromptLedger()
    ledger.prompted = True
    context, prompt = ledger.plan(decision(DecisionKind.CONTINUE, [user("first")]), [])
    ledger.not_delivered(prompt, context)
    assert not ledger.needs_replay
    _, prompt = ledger.plan(decision(DecisionKind.COMMIT, [user("second")]), [])
    assert prompt == "first\n\nsecond"
    assert ledger.undelivered is None


def test_a_session_whose_agent_never_got_a_prompt_replays_instead_of_remembering():
    ledger = PromptLedger()
    ledger.not_delivered("first", None)
    assert ledger.needs_replay and ledger.undelivered is None
    history = [user("first"), Message(role="assistant", content=[]), user("second")]
    context, _ = ledger.plan(decision(DecisionKind.COMMIT, [user("second")]), history)
    assert context is not None and "User: first" in context


def test_a_cancel_after_an_undelivered_prompt_prompts_all_the_new_messages():
    ledger = PromptLedger()
    ledger.prompted = True
    ledger.not_delivered("old words", None)
    new = [user("kept"), user("edited")]
    _, prompt = ledger.plan(decision(DecisionKind.CANCEL, new, prompt_start=1), new)
    assert "kept" in prompt and "edited" in prompt and "old words" not in prompt


def test_a_prompt_suffix_is_appended_to_this_prompt_only():
    ledger = PromptLedger()
    _, prompt = ledger.plan(decision(DecisionKind.CONTINUE, [user("hi")]), [], "call a tool")
    assert prompt == "hi\n\ncall a tool"
    _, prompt = ledger.plan(decision(DecisionKind.CONTINUE, [user("again")]), [])
    assert prompt == "again"


def test_a_stopped_agent_has_not_been_prompted():
    ledger = PromptLedger()
    ledger.prompted = True
    ledger.agent_stopped()
    ledger.not_delivered("lost", None)
    assert ledger.needs_replay
