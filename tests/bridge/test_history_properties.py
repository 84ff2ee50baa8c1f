"""Random interleavings of several conversations against the history tracker.

A simulated client keeps several chats (distinct first messages) and, step by step, continues one,
edits an earlier message, abandons a reply and resends, answers a tool call, or opens a new chat;
a simulated agent streams random parts between requests (and is sometimes cancelled mid-stream, or
dies). After every request the decision must agree with a brute-force reading of the matching rule (docs/upstream.md, "History")
under decision 6 over all sessions, and the invariants below must hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from bridge.history import Decision, DecisionKind, HistoryTracker, SessionView, message_key
from bridge.protocol import Message, TextPart, ToolCallPart, ToolResultPart

AGENTS = ('{"kind":"eliza"}', '{"kind":"claude_code"}')

texts = st.text(alphabet="ab \n", min_size=0, max_size=6)
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["x", ""]))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=6,
)


@dataclass
class Chat:
    cid: int
    agent: str
    messages: list[Message]  # the last request, as the client sent it
    session: str | None = None  # where that request was routed
    reply: list[Any] | None = None  # the parts of the agent's finished reply to it
    counter: int = 0
    edits: int = 0

    def fresh(self, what: str) -> str:
        self.counter += 1
        return f"chat {self.cid} {what} {self.counter}"


@dataclass
class Oracle:
    """The matching rule + decision 6 + the tie-breaks, evaluated naively over every session."""

    sessions: list[SessionView] = field(default_factory=list)

    def expect(self, agent: str, keys: list[Any]) -> tuple[DecisionKind, str | None]:
        if not keys:
            return DecisionKind.NEW_SESSION, None
        best: tuple[Any, ...] | None = None
        for s in self.sessions:
            if s.agent_key != agent:
                continue
            c = [message_key(m) for m in s.committed]
            p = [message_key(m) for m in s.provisional]
            if keys[: len(c)] != c or len(keys) < len(c):
                continue
            rest = keys[len(c) :]
            if rest[: len(p)] == p:
                cand = (len(c) + len(p), True, s.created_seq, s.session_id, bool(p))
            elif c or (p and rest and rest[0] == p[0]):
                cand = (len(c), False, s.created_seq, s.session_id, None)
            else:
                continue
            if best is None or cand[:3] > best[:3]:
                best = cand
        if best is None:
            return DecisionKind.NEW_SESSION, None
        if not best[1]:
            return DecisionKind.CANCEL, best[3]
        return (DecisionKind.COMMIT if best[4] else DecisionKind.CONTINUE), best[3]


class Conversations(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tracker = HistoryTracker()
        self.chats: list[Chat] = []
        self.served: dict[str, int] = {}  # session id -> the chat it serves
        self.calls = 0

    # --- the client ------------------------------------------------------------------------------

    def send(
        self, chat: Chat, messages: list[Message], data: st.DataObject, echoed_reply: bool = False
    ) -> Decision:
        keys = [message_key(m) for m in messages]
        expected_kind, expected_session = Oracle(self.tracker.sessions()).expect(chat.agent, keys)
        previous = chat.session if echoed_reply and chat.session in self.served else None

        d = self.tracker.route(chat.agent, messages)

        assert d.kind is expected_kind, (d.reason, expected_kind)
        if expected_session is not None:
            assert d.session_id == expected_session, d.reason
        view = self.tracker.session(d.session_id)
        assert view is not None
        committed = [message_key(m) for m in view.committed]
        provisional = [message_key(m) for m in view.provisional]
        assert keys[: len(committed)] == committed, "committed must prefix the request"
        assert committed + provisional == keys, "committed + provisional must be the request"
        assert d.committed_len == len(committed)
        assert [message_key(m) for m in d.new_messages] == keys[len(keys) - len(d.new_messages) :]
        assert 0 <= d.prompt_start <= len(d.new_messages)
        if d.kind is DecisionKind.CANCEL:
            i = d.mismatch_index
            assert i is not None and d.expected is not None
            assert keys[d.committed_len : i] == provisional[: i - d.committed_len]
            if i < len(keys):
                assert (
                    d.received is not None
                    and message_key(Message.model_validate(d.received)) == keys[i]
                )
                assert message_key(Message.model_validate(d.expected)) != keys[i]
            else:
                assert d.received is None
        event(f"{d.kind.value}{' (echo)' if previous else ''}")
        # A chat never lands in a session that served another chat (no hijack, B7 / decision 6).
        owner = self.served.setdefault(d.session_id, chat.cid)
        assert owner == chat.cid, (
            f"chat {chat.cid} routed to {d.session_id} of chat {owner}: {d.reason}"
        )
        # Continuing right after an answer, echoing it exactly, always continues that session.
        if previous is not None:
            assert d.kind in (DecisionKind.COMMIT, DecisionKind.CONTINUE), d.reason
            assert d.session_id == previous

        chat.messages = messages
        chat.session = d.session_id
        chat.reply = None
        self.agent_answers(chat, d, data)
        return d

    # --- the agent -------------------------------------------------------------------------------

    def agent_answers(self, chat: Chat, d: Decision, data: st.DataObject) -> None:
        how = data.draw(
            st.sampled_from(
                [
                    "answer",
                    "answer",
                    "answer",
                    "tool call",
                    "cancelled mid-stream",
                    "nothing",
                    "dies",
                ]
            )
        )
        if how == "dies":
            self.tracker.remove(d.session_id)
            del self.served[d.session_id]
            return
        if how == "nothing":
            self.tracker.complete(d.session_id)
            return
        parts: list[Any] = [
            TextPart(value=t) for t in data.draw(st.lists(texts, min_size=1, max_size=3))
        ]
        parts[0] = TextPart(value=chat.fresh("reply") + parts[0].value)  # replies are never alike
        if how == "tool call":
            self.calls += 1
            parts.append(
                ToolCallPart(
                    toolCallId=f"call-{self.calls}",
                    toolName="read",
                    parameters=data.draw(json_values),
                )
            )
            parts.extend(TextPart(value=t) for t in data.draw(st.lists(texts, max_size=2)))
        for part in parts:
            self.tracker.record_part(d.session_id, part)
        if how == "cancelled mid-stream":
            return  # lm/cancel: no complete(); the client drops the partial reply
        self.tracker.complete(d.session_id)
        chat.reply = parts

    # --- rules -----------------------------------------------------------------------------------

    @initialize(data=st.data())
    def first_chat(self, data: st.DataObject) -> None:
        self.new_chat(data)

    @rule(data=st.data())
    def new_chat(self, data: st.DataObject) -> None:
        cid = len(self.chats)
        chat = Chat(cid, data.draw(st.sampled_from(AGENTS)), [])
        self.chats.append(chat)
        self.send(chat, [Message(role="user", content=[TextPart(value=chat.fresh("hello"))])], data)

    @precondition(lambda self: self.chats)
    @rule(data=st.data(), follow=st.booleans().map(lambda b: b or None))
    def continue_chat(self, data: st.DataObject, follow: bool | None) -> None:
        """The user reads the reply (if any) and writes the next message, or a tool returns; or
        (follow=None) the client resends the answered history with nothing new, as a retry does."""
        chat = data.draw(st.sampled_from(self.chats))
        messages = list(chat.messages)
        follow_up = Message(role="user", content=[TextPart(value=chat.fresh("next"))])
        echoed = chat.reply is not None
        if chat.reply is not None:
            messages.append(self.echo(chat.reply, data))
            calls = [p for p in chat.reply if isinstance(p, ToolCallPart)]
            if calls:
                follow_up = Message(
                    role="user",
                    content=[
                        ToolResultPart(
                            toolCallId=calls[0].toolCallId,
                            result=[{"$mid": 21, "value": chat.fresh("out")}],
                        )
                    ],
                )
        if follow or not echoed:
            messages.append(follow_up)
        self.send(chat, messages, data, echoed_reply=echoed)

    @precondition(lambda self: self.chats)
    @rule(data=st.data())
    def edit_earlier_message(self, data: st.DataObject) -> None:
        """The user edits one of their earlier text messages; everything after it is dropped."""
        chat = data.draw(st.sampled_from(self.chats))
        editable = [
            i
            for i, m in enumerate(chat.messages)
            if m.role == "user" and all(isinstance(p, TextPart) for p in m.content)
        ]
        i = data.draw(st.sampled_from(editable))
        chat.edits += 1
        edited = Message(role="user", content=[TextPart(value=chat.fresh(f"edit {chat.edits}"))])
        self.send(chat, [*chat.messages[:i], edited], data)

    @precondition(lambda self: self.chats)
    @rule(data=st.data(), add=st.booleans())
    def abandon_reply_and_resend(self, data: st.DataObject, add: bool) -> None:
        """The user discards the reply: regenerates it, or writes another message instead."""
        chat = data.draw(st.sampled_from(self.chats))
        messages = list(chat.messages)
        if add:
            messages.append(Message(role="user", content=[TextPart(value=chat.fresh("instead"))]))
        self.send(chat, messages, data)

    @invariant()
    def sessions_are_well_formed(self) -> None:
        for view in self.tracker.sessions():
            assert view.session_id in self.served
            assert view.created_seq >= 1

    # --- helpers ---------------------------------------------------------------------------------

    @staticmethod
    def echo(parts: list[Any], data: st.DataObject) -> Message:
        """The reply as VS Code sends it back: text re-chunked, integers sometimes as floats."""
        content: list[Any] = []
        for part in parts:
            if isinstance(part, TextPart):
                cut = data.draw(st.integers(0, len(part.value)))
                content.extend([TextPart(value=part.value[:cut]), TextPart(value=part.value[cut:])])
            else:
                as_float = data.draw(st.booleans())
                content.append(
                    part.model_copy(
                        update={
                            "parameters": _floats(part.parameters) if as_float else part.parameters
                        }
                    )
                )
        return Message(role="assistant", content=content)


def _floats(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_floats(v) for v in value]
    if type(value) is int:
        return float(value)
    return value


Conversations.TestCase.settings = settings(
    max_examples=120,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestConversations = Conversations.TestCase
