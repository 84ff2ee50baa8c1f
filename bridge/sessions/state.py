"""What an agent session knows and decides, as state: no I/O, no asyncio, no clock.

The session (`bridge.sessions.session`) applies these decisions; each can be driven and checked
without an agent (tests/bridge/test_session_state.py):

* `RoundTrips` — the round trips a turn waits on through the client (a permission for one of the
  agent's own tools, a call of one of the client's tools): which tool-call parts the client sees
  now and which wait for a later response (one call per response when parallel tool calls are
  off), and which answer each round trip gets from the request that carries results.
* `hand_off_now` — when a response waiting on the client is handed back to it: once every
  client-tool call the agent announced has arrived, or the batch limit has passed.
* `PromptLedger` — what the agent is prompted with: the turn's new messages, a replay of the whole
  conversation when the agent never received it, and what an earlier, cancelled request's prompt
  never delivered.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from bridge.acp_updates import ToolCallState
from bridge.history import Decision, DecisionKind
from bridge.protocol import Message, TextPart, ToolResultPart
from bridge.render import AGENT_ACTION_TOOL, replay_parts, turn_prompt
from bridge.tool_results import CLIENT_TOOL_SERVER, agent_action_approved, describe_received

#: new → starting → ready → dead (a stopped agent goes back to new; dead is final)
SessionState = Literal["new", "starting", "ready", "dead"]
#: a permission for one of the agent's own tools (the agent-action tool), or a client-tool call
RoundTripKind = Literal["permission", "tool"]
#: how a front-door request ended (`RequestFinished.outcome`)
RequestOutcome = Literal["complete", "cancelled", "error"]


@dataclass(eq=False)
class RoundTrip:
    """The agent waits on the client: `part` is the `tool_call` part that shows it to the client."""

    kind: RoundTripKind
    call_id: str
    part: dict[str, Any]
    tool_name: str = AGENT_ACTION_TOOL


@dataclass
class Delivery:
    """What a request carrying results does to the round trips waiting on the client."""

    answers: list[tuple[RoundTrip, Any]]  # each with its answer (None: no result, cancelled)
    show: list[RoundTrip]  # shown in this response: calls that waited for a later one


@dataclass
class ClientReply:
    """What a request brings back for a waiting turn: tool results by call id (the first of
    each), and the text of its user messages (the person's words beside an approval)."""

    results: dict[str, Any] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, messages: Iterable[Message]) -> ClientReply:
        reply = cls()
        for message in messages:
            for part in message.content:
                if isinstance(part, ToolResultPart):
                    reply.results.setdefault(part.toolCallId, part.result)
            if message.role == "user":
                text = "".join(p.value for p in message.content if isinstance(p, TextPart))
                if text:
                    reply.texts.append(text)
        return reply


def answer_for(rt: RoundTrip, reply: ClientReply) -> Any:
    """The answer a waiting round trip gets from a request carrying results: a permission is
    `(approved, evidence)` — only the extension's own approval text approves; Skip, an error,
    empty or other content is a denial, audited with what was received — and a tool call gets
    its result (None when the request carried none)."""
    if rt.call_id in reply.results:
        received = reply.results[rt.call_id]
        if rt.kind == "permission":
            return (agent_action_approved(received), f"received {describe_received(received)}")
        return received
    return (False, "the next request carried no result for it") if rt.kind == "permission" else None


class RoundTrips:
    """The round trips of the running turn, in the order the agent made them."""

    def __init__(self, one_call: bool = False) -> None:
        self.waiting: list[RoundTrip] = []
        self.deferred: list[RoundTrip] = []  # waiting, not shown to the client yet
        self.one_call = one_call  # at most one client-tool call per response
        self.shown = 0  # calls shown in the current response

    def start_turn(self, one_call: bool) -> None:
        self.one_call = one_call
        self.shown = 0
        self.deferred = []

    def ask(self, rt: RoundTrip) -> bool:
        """The agent waits on the client for `rt`: True when its part goes out in the current
        response, False when it waits for a later one (one call per response, one shown)."""
        self.waiting.append(rt)
        if self.one_call and self.shown >= 1:
            self.deferred.append(rt)
            return False
        self.shown += 1
        return True

    def arrived(self) -> int:
        """Client-tool calls that reached the tool server and wait on the client."""
        return sum(1 for rt in self.waiting if rt.kind == "tool")

    def carries(self, reply: ClientReply) -> bool:
        """Does this request answer any round trip the turn waits on?"""
        return any(rt.call_id in reply.results for rt in self.waiting)

    def deliver(self, reply: ClientReply, one_call: bool) -> Delivery:
        """A request carrying results continues the turn (its response starts empty, under its
        own `one_call`): every shown round trip gets its answer; those never shown wait on, and
        go out in this response as far as `one_call` allows."""
        unseen = set(map(id, self.deferred))
        waiting, self.waiting = self.waiting, []
        answers: list[tuple[RoundTrip, Any]] = []
        for rt in waiting:
            if id(rt) in unseen and rt.call_id not in reply.results:
                self.waiting.append(rt)  # not shown to the client yet: still waits its turn
            else:
                answers.append((rt, answer_for(rt, reply)))
        self.one_call = one_call
        self.shown = 0
        still = set(map(id, self.waiting))
        self.deferred = [rt for rt in self.deferred if id(rt) in still]
        show: list[RoundTrip] = []
        while self.deferred and (not self.one_call or self.shown == 0):
            rt = self.deferred.pop(0)
            self.waiting = [w for w in self.waiting if w is not rt]
            self.ask(rt)
            show.append(rt)
        return Delivery(answers, show)

    def forget(self, rt: RoundTrip) -> None:
        """`rt` no longer waits (its caller gave up)."""
        self.waiting = [w for w in self.waiting if w is not rt]
        self.deferred = [d for d in self.deferred if d is not rt]

    def drop(self) -> list[RoundTrip]:
        """The turn ended, was cancelled or abandoned: every round trip is answered None (ACP:
        a cancelled turn's pending permission requests answer `cancelled`)."""
        dropped, self.waiting, self.deferred = self.waiting, [], []
        return dropped


def names_client_tool(title: str | None, tool_names: set[str]) -> bool:
    """Does an agent's title for a tool call name one of the client's tools?

    Agents title these differently (Claude: `mcp__vscode_tools__read_file`; fast-agent
    `vscode_tools/read_file`; Gemini `read_file (vscode_tools MCP Server)`).
    """
    title = (title or "").strip()
    for sep in ("__", "/", ".", "-", ":"):
        for prefix in (f"mcp__{CLIENT_TOOL_SERVER}{sep}", f"{CLIENT_TOOL_SERVER}{sep}"):
            if title.startswith(prefix) and title[len(prefix) :] in tool_names:
                return True
    suffix = f" ({CLIENT_TOOL_SERVER} MCP Server)"
    return title.endswith(suffix) and title[: -len(suffix)] in tool_names


def announced_client_calls(calls: Iterable[ToolCallState], tool_names: set[str]) -> int:
    """Client-tool calls the agent announced (ACP `tool_call` updates) that have not ended."""
    return sum(
        1
        for state in calls
        if state.status not in ("completed", "failed")
        and names_client_tool(state.title, tool_names)
    )


def hand_off_now(announced: int, arrived: int, waited: float, limit: float) -> bool:
    """Is a response waiting on the client handed back now? Tool calls the agent makes at the
    same moment land in the same response: while fewer client-tool calls have reached the tool
    server than the agent announced, the rest are on their way — wait for them, within `limit`
    seconds."""
    return arrived >= announced or waited >= limit


class PromptLedger:
    """What the agent has received of the conversation, and what its next prompt must carry."""

    def __init__(self) -> None:
        self.needs_replay = False  # the next prompt replays the whole conversation
        self.prompted = False  # the agent has been sent a prompt (it knows the conversation)
        self.undelivered: str | None = None  # a cancelled request's prompt it never got

    def plan(
        self, decision: Decision, messages: list[Message], suffix: str = ""
    ) -> tuple[str | None, str]:
        """The replayed context (None: the agent knows the conversation) and the prompt for a
        request routed by `decision`; what was undelivered is taken into it."""
        new = decision.new_messages
        context: str | None = None
        if decision.kind is DecisionKind.NEW_SESSION or self.needs_replay:
            context, prompt = replay_parts(messages if self.needs_replay else new)
        else:
            prompt = turn_prompt(new[decision.prompt_start :], messages)
        undelivered, self.undelivered = self.undelivered, None
        if undelivered is not None and context is None and not self.needs_replay:
            # The previous request was cancelled before its prompt reached the agent: what
            # the agent never received is prompted now (only what it received counts as sent).
            if decision.kind is DecisionKind.CANCEL:
                prompt = turn_prompt(new, messages)
            else:
                prompt = f"{undelivered}\n\n{prompt}"
        if suffix:
            prompt = f"{prompt}\n\n{suffix}"
        return context, prompt

    def not_delivered(self, prompt: str, context: str | None) -> None:
        """A request was cancelled before its prompt was sent: remember it for the next one. A
        session that never prompted its agent replays the whole conversation instead."""
        if context is not None or self.needs_replay or not self.prompted:
            self.needs_replay = True
            return
        self.undelivered = prompt if self.undelivered is None else f"{self.undelivered}\n\n{prompt}"

    def agent_stopped(self) -> None:
        """A new agent process knows nothing of the conversation."""
        self.prompted = False
