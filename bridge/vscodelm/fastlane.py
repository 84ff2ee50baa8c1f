"""The vscodelm door's fast lane: a turn that continues the conversation as expected is prompted
as its line is read, and routed once its client has the answer.

A request's way to the agent is long (decode what it adds, validate it, route the history, start
the turn): ~0.2 ms of Python that runs, each turn, after the client and the agent have had the
CPU and its caches. The agent waits for all of it before it sees the prompt, and the client for
all of it before its answer. Yet nearly every request of a chat says one thing the bridge can
tell in advance: the conversation so far, the reply the bridge just streamed, and one new user
text. After each request answered the ordinary way, the lane writes down what the next one looks
like if it says just that (`Expectation`): the previous line's bytes up to its `id` and from it
to the messages, the messages' bytes, the bytes after the array, and the reply's parts.

A line that is exactly that — the same bytes but for the id's digits and two more messages: the
reply as it was streamed, then a user message of one non-empty text — is answered by a
`FastTurn`: the text is prompted at once (the very prompt routing would plan, as
`bridge.sessions.ahead.adopt` checks), the agent's text chunks are written to the client as parts, and its
answer completes the request. Then (right after the first part when someone watches the events,
or as soon as anything else happens: any other message from the agent, a permission request, a client-tool call, another line from the client, a cancel, the
session or the connection ending) the request is read and routed the ordinary way, and its
session adopts the turn, recording the parts already written. Whatever the ordinary way would
have done it still does — the history, the console's events, the audit — only later.

Why the ordinary routing gives the same turn: the line's head (up to the messages) is the previous
line's byte for byte but for the id's digits, and so is its tail, which adds nothing to the
request itself (`PrefixCache.closes_params`): the same agent and options, and the array at the
same place is the request's `params.messages`. Its messages are the previous request's, which
routed to the one live session of the connection, then the reply that session recorded (the
parts the client was sent: equal messages, equal keys), then a user message: the session's
provisional exchange is extended, committed, and the user's text is all that is prompted.
Anything else, or any doubt about the session's state (`bridge.sessions.ahead.can_prompt_ahead`), leaves
the line to the ordinary way. Should the ordinary routing still differ, the request's session is
ended (its agent was told something else) and the lane is closed for the connection.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from typing import TYPE_CHECKING, Any

from bridge.acp_updates import content_block_text
from bridge.jsonrpc import SESSION_ERROR, error_response
from bridge.jsonrpc import skip_whitespace as _skip
from bridge.sessions.ahead import can_prompt_ahead
from bridge.vscodelm.fastpath import CHAT_RESPONSE
from bridge.vscodelm.prefix_cache import scan_array

if TYPE_CHECKING:
    from bridge.history import HistoryTracker
    from bridge.rpc import Answer
    from bridge.sessions import AgentSession
    from bridge.vscodelm.endpoint import PartWriter, VscodeLmEndpoint

log = logging.getLogger("bridge.vscodelm")

_WS = rb"[ \t\n\r]*"
# A request's head up to its id's digits: the top-level object's first members `jsonrpc` and
# `id` (an integer the lane can write back as it came).
_HEAD = re.compile(
    rb"\{" + _WS + rb'"jsonrpc"' + _WS + rb":" + _WS + rb'"2\.0"' + _WS + rb"," + _WS
    + rb'"id"' + _WS + rb":" + _WS + rb"(0|[1-9][0-9]{0,15})"
)  # fmt: skip
# What follows the id: `method` (a chat request), then `params`, whose members follow.
_AFTER_ID = re.compile(
    _WS + rb"," + _WS + rb'"method"' + _WS + rb":" + _WS
    + rb'"lm/provideLanguageModelChatResponse"' + _WS + rb"," + _WS + rb'"params"' + _WS + rb":"
    + _WS + rb"\{"
)  # fmt: skip


class Expectation:
    """What the next request of the connection says if it only continues the conversation."""

    __slots__ = ("after_id", "messages", "reply", "seq", "session", "tail", "tracker")

    def __init__(
        self,
        after_id: bytes,
        messages: bytes,
        tail: bytes,
        reply: dict[str, Any],
        session: AgentSession,
        tracker: HistoryTracker,
    ) -> None:
        self.after_id = after_id  # from just past the id's digits to the first message
        self.messages = messages  # the messages, from the first one's first byte to the last's end
        self.tail = tail  # from the `]` closing the messages to the end of the line
        self.reply = reply  # the reply as streamed, as the client echoes it
        self.session = session
        self.tracker = tracker
        self.seq = tracker.seq  # routing anything else since changes what a request matches


class FastTurn:
    """One request answered ahead of its routing (`bridge.sessions.ahead.PromptedAhead`)."""

    def __init__(
        self,
        lane: FastLane,
        line: bytes,
        request_id: int,
        session: AgentSession,
        prompt: str,
        answer: Answer,
        writer: PartWriter,
    ) -> None:
        self.lane = lane
        self.line = line
        self.request_id = request_id
        self.session = session
        self.prompt = prompt
        self.answer = answer
        self.writer = writer
        self.parts: list[str] = []
        self.sent: asyncio.Future[Any] = session.agent.send_prompt(
            [{"type": "text", "text": prompt}], self._answered
        )
        if not self.sent.done():
            # A prompt that fails without an answer (the connection to the agent ended): the
            # session adopts the turn and fails the request as it fails any.
            self.sent.add_done_callback(lambda _: self.catch_up())

    def on_text(self, update: dict[str, Any]) -> None:
        """A text chunk of the agent's, taken as it was read: a part for the client. When
        someone watches the bridge's events (a console, an event log), the turn is adopted right
        after its first part goes out, so that they see it stream as the client does."""
        text = content_block_text(update.get("content"))
        if text:
            self.parts.append(text)
            self.writer.text(text)
            if len(self.parts) == 1 and self.lane.core.bus.active:
                asyncio.get_running_loop().call_soon(self.catch_up)

    def _answered(self, sent: asyncio.Future[Any]) -> None:
        """The agent answered the prompt (in the step that read the answer): a turn that ended
        well completes the request at once; its routing follows, once the client, woken by the
        answer (often onto this very CPU), has had the CPU to read it."""
        if self.lane.running is not self:
            return
        if not sent.cancelled() and sent.exception() is None and not self.answer.sent:
            peer = self.lane.peer
            peer.notify("lm/responseComplete", {"requestId": self.request_id})
            self.answer.send({})
            _yield_cpu()
        self.lane.catch_up()

    def catch_up(self) -> None:
        if self.lane.running is self:
            self.lane.catch_up()


class FastLane:
    """One vscodelm connection's fast lane (see the module's docstring)."""

    def __init__(self, endpoint: VscodeLmEndpoint) -> None:
        self.endpoint = endpoint
        self.peer = endpoint.peer
        self.core = endpoint.core
        self.expect: Expectation | None = None
        self.running: FastTurn | None = None
        self.closed = False  # closed for good: the ordinary routing once differed
        self.taken = 0  # requests it answered (tests, benchmarks)

    # --- after a request answered the ordinary way -------------------------------------------

    def expect_next(
        self, request_id: Any, parsed: Any, session: AgentSession | None, reply: list[str] | None
    ) -> None:
        """Write down what the next request says if it continues the one just answered (its
        reply: the texts of the parts streamed, None when any was not text)."""
        self.expect = None
        if self.closed or not reply or type(request_id) is not int or session is None:
            return
        tracker = self.core.tracker
        if not tracker.only(session.id) or self.core.sessions.get(session.id) is not session:
            return
        read = self.endpoint.prefixes.line_of(parsed)
        if read is None:
            return
        line, start, end = read
        head = _HEAD.match(line)
        if head is None or int(head.group(1)) != request_id:
            return
        after = _AFTER_ID.match(line, head.end())
        if after is None or after.end() > start:
            return
        close = _skip(line, end)
        if line[close : close + 1] != b"]":
            return
        tail = line[close:]
        if not self.endpoint.prefixes.closes_params(tail):
            return
        parts = [{"type": "text", "value": text} for text in reply]
        self.expect = Expectation(
            line[head.end() : start],
            line[start:end],
            tail,
            {"role": "assistant", "content": parts},
            session,
            tracker,
        )

    # --- a line read ---------------------------------------------------------------------------

    def take(self, line: bytes) -> bool:
        """Answer `line` here if it continues the conversation as expected (see the module)."""
        if self.running is not None:
            self.catch_up()  # the line is read after the turn is the session's
            return False
        expect = self.expect
        if expect is None:
            return False
        head = _HEAD.match(line)
        if head is None:
            return False
        at = head.end()
        if not line.startswith(expect.after_id, at):
            return False
        start = at + len(expect.after_id)
        if not line.startswith(expect.messages, start):
            return False
        rest = start + len(expect.messages)
        close = len(line) - len(expect.tail)
        if close <= rest or not line.endswith(expect.tail):
            return False
        try:
            text = line[rest : close + 1].decode("utf-8")  # up to and with the array's `]`
        except UnicodeDecodeError:
            return False
        scanned = scan_array(text, True)
        if scanned is None or len(scanned[0]) != 2 or scanned[2] != len(text) - 1:
            return False
        reply, message = scanned[0]
        if reply != expect.reply:
            return False
        prompt = _user_text(message)
        if prompt is None or not self._ready(expect):
            return False
        request_id = int(head.group(1))
        self.expect = None
        endpoint = self.endpoint
        answer = self.peer.begin_answer(CHAT_RESPONSE, request_id)
        writer = endpoint.part_writer(request_id)
        session = expect.session
        turn = FastTurn(self, line, request_id, session, prompt, answer, writer)
        self.taken += 1
        if turn.sent.done():  # not even written (the agent's connection is gone)
            self.running = turn
            self.catch_up()
            return True
        self.running = turn
        session.fast = turn
        self.core.ahead = turn
        return True

    def _ready(self, expect: Expectation) -> bool:
        core = self.core
        session = expect.session
        return (
            not self.closed
            and not self.peer.busy
            and not self.peer.closed
            and not self.endpoint.cancelled_early
            and core.tracker is expect.tracker
            and expect.tracker.seq == expect.seq
            and expect.tracker.only(session.id)
            and core.sessions.get(session.id) is session
            and can_prompt_ahead(session)
        )

    # --- the request routed --------------------------------------------------------------------

    def catch_up(self) -> None:
        """The turn running ahead is routed and adopted by its session now."""
        turn = self.running
        if turn is None:
            return
        self.running = None
        if turn.session.fast is turn:
            turn.session.fast = None
        if self.core.ahead is turn:
            self.core.ahead = None
        try:
            adopted = self.endpoint.adopt(turn)
        except Exception:
            log.exception("%s: request %r, prompted ahead, could not be routed", self.core.name,
                          turn.request_id)  # fmt: skip
            adopted = False
        if not adopted:
            self._differs(turn)

    def _differs(self, turn: FastTurn) -> None:
        """The ordinary routing did not give the turn that was prompted: the agent was told
        something the history does not say. Its session ends (the conversation's next request
        starts a new one, replaying the history), the request fails unless it was answered, and
        the lane is closed for this connection."""
        log.error(
            "%s: request %r was prompted ahead but its routing differs; ending session %s and "
            "closing the fast lane of this connection",
            self.core.name,
            turn.request_id,
            turn.session.id,
        )
        self.closed = True
        self.expect = None
        if not turn.answer.sent:
            turn.answer._send_message(
                error_response(
                    turn.request_id, SESSION_ERROR, "agent session failed: routing differed"
                )
            )
            self.peer.flush()
        died = self.core.session_died(turn.session, "its routing differed from its prompt")
        self.peer.spawn(died)


def _yield_cpu() -> None:
    """Let whatever is ready to run on this CPU run first (POSIX `sched_yield`; nothing where
    there is none): the client a write just woke, rather than the routing that follows it."""
    sched_yield = getattr(os, "sched_yield", None)
    if sched_yield is not None:
        sched_yield()


def _user_text(message: Any) -> str | None:
    """The text of a user message of one non-empty text part and nothing else, else None."""
    if type(message) is not dict or len(message) != 2 or message.get("role") != "user":
        return None
    content = message.get("content")
    if type(content) is not list or len(content) != 1:
        return None
    part = content[0]
    if type(part) is not dict or len(part) != 2 or part.get("type") != "text":
        return None
    value = part.get("value")
    return value if type(value) is str and value else None
