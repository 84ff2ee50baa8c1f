"""A turn prompted ahead of its request's routing: what a session must be for a front door to do
that (`can_prompt_ahead`), and how the session makes the turn its own once the request is routed
(`adopt`). The vscodelm door's fast lane (`bridge/vscodelm/fastlane.py`) is the one front door
that does; these are `AgentSession`'s own steps, kept in a room of their own."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from bridge.history import Decision, DecisionKind

if TYPE_CHECKING:
    from bridge.sessions.session import AgentSession
    from bridge.sessions.stream import ChatRequest, ResponseStream

__all__ = ["PromptedAhead", "adopt", "can_prompt_ahead"]


class PromptedAhead(Protocol):
    """A turn a front door prompted as its request was read, before routing it: the session sends
    its text chunks to it (`on_text`) until the request is routed and the session adopts it
    (`adopt`); anything else the agent sends has it adopted first (`catch_up`)."""

    prompt: str  # the text prompted: what the request's routing must plan
    parts: list[str]  # the text parts written to the client so far
    sent: asyncio.Future[Any]  # the prompt's answer (`AgentLink.send_prompt`)

    def on_text(self, update: dict[str, Any]) -> None: ...

    def catch_up(self) -> None: ...


def can_prompt_ahead(session: AgentSession) -> bool:
    """A front door may prompt `session`'s agent before the request is routed to it: the agent is
    up and knows the conversation, and the request would be prompted as it comes, in the step
    that routes it (`AgentSession._can_prompt_now`), with nothing added to it (no replay, no
    notices of denials, no prompt left undelivered)."""
    agent = session.agent
    process = agent.process
    prompts = session.prompts
    return (
        session.fast is None
        and session.is_idle
        and session._can_prompt_now_idle()
        and not session.deny_notices
        and prompts.prompted
        and not prompts.needs_replay
        and prompts.undelivered is None
        and agent.transport is not None
        and agent.conn is not None
        and agent.acp_session_id is not None
        and (process is None or not process.exited.is_set())
    )


def adopt(
    session: AgentSession,
    decision: Decision,
    request: ChatRequest,
    stream: ResponseStream,
    ahead: PromptedAhead,
) -> bool:
    """Answer `request` with the turn `ahead` prompted before its routing, as `answer` would have
    started it: True when `decision` and the prompt it plans are what was prompted (else nothing
    is changed but the prompt ledger, and the caller ends the session)."""
    if (
        decision.kind is not DecisionKind.COMMIT
        or decision.session_id != session.id
        or stream.done
        or not session._can_prompt_now_idle()
    ):
        return False
    context, prompt = session.prompts.plan(decision, request.messages, request.prompt_suffix)
    if context is not None or prompt != ahead.prompt:
        return False
    stream.session = session
    session._stream = stream
    session._take_request(request)
    turn = session._new_turn(stream, request)
    session.prompts.prompted = True
    for text in ahead.parts:
        session.output.record(stream, {"type": "text", "value": text})
    session._tasks.start(session._run_turn(turn, ahead.sent), name=f"turn {turn.id}")
    return True
