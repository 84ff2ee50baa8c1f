"""The console's end of the hook door: a CLI's hook process asking this console (or `serve`).

`symposium-tui hook CLI` (bridge.hooks.decide) connects to the console socket once per hook call:

    hook → console  {"method":"hook/hello","params":{"cli","pid","version"}}       first line
    hook → console  {"id":1,"method":"hook/decide","params":{connection, session_id, agent,
                     tool_call, cwd, cli}}   before a tool: decided by this console's broker (its
                     rules, then its cards); the answer is the resolution {"outcome","optionId",
                     "resolver","rule","reason","who"}; {"outcome":"no_console"} when the rules
                     leave it to a person and no console is attached (`serve` with nobody
                     attached), {"outcome":"timeout"} when no card was answered within `wait`
                     seconds (and `hook_wait`), each with the `hook_no_console` "fallback"
    hook → console  {"method":"hook/event","params":{"event":"post"|"start"|"end", …}}  after a
                     tool (the tool-call log, the outcome's audit line), a session's start or end

A hook that closes its connection before its answer (the CLI's timeout is near) withdraws the card.
A session opened by `start` stays in the sessions pane until its `end`: hook processes come and go
within one CLI session.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from bridge import events as ev
from bridge.approvals import ApprovalContext
from bridge.rpc import JsonRpcPeer
from bridge.settings import Settings

if TYPE_CHECKING:
    from bridge.core import Bridge

log = logging.getLogger(__name__)

HELLO_PREFIX = b'{"jsonrpc":"2.0","method":"hook/hello"'
OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "deny", "name": "Deny", "kind": "reject_once"},
]
WITHDRAWN = "the CLI's hook stopped waiting (its timeout): it answered without this card"
# The hook's link closed before its card was answered: stopped, or gone, for a reason not told
GONE = "the CLI's hook stopped waiting (its link closed): it answered without this card, if at all"


def is_hello(line: bytes) -> bool:
    return line.startswith(HELLO_PREFIX)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


async def serve_hook(
    bridge: Bridge, reader: asyncio.StreamReader, writer: Any, hello: bytes
) -> None:
    """One hook process: its decision or its event, until it closes its end."""
    try:
        cli = (json.loads(hello).get("params") or {}).get("cli")
    except ValueError:
        cli = None
    peer = JsonRpcPeer(reader, writer, name=f"hook-{cli or 'cli'}")
    waiting: list[str] = []
    broker = bridge.approvals

    async def on_decide(data: Any, request_id: Any) -> dict[str, Any]:
        if not isinstance(data, dict) or not isinstance(data.get("tool_call"), dict):
            raise ValueError("hook/decide needs params with a tool_call object")
        ctx = ApprovalContext(
            connection=_text(data.get("connection")) or "hook",
            session_id=_text(data.get("session_id")) or "default",
            agent=_text(data.get("agent")) or "hook",
            tool_call=data["tool_call"],
            options=[dict(o) for o in OPTIONS],
            cwd=_text(data.get("cwd")),
        )
        prefs = Settings.load_quietly().prefs
        fallback = prefs.hook_no_console
        wait = data.get("wait")
        wait = float(wait) if isinstance(wait, int | float) and wait >= 0 else 0.0
        if prefs.hook_wait is not None:
            wait = min(wait, prefs.hook_wait)
        _tool_seen(bridge, ctx, "pending")
        if not broker.consoles:
            try:
                decided = await broker.policy_resolution(ctx)
            except Exception:
                decided = "error"  # the broker denies it, audited, below
            if decided is None:  # a person is asked, and nobody is here to ask
                return {"outcome": "no_console", "asked_by": ctx.asked_by, "fallback": fallback}
        request = asyncio.ensure_future(broker.request(ctx, on_pending=waiting.append))
        try:
            resolution = await asyncio.wait_for(asyncio.shield(request), wait)
        except TimeoutError:  # the hook must answer its CLI now: the card is withdrawn
            for approval_id in waiting:
                broker.withdraw(approval_id, WITHDRAWN)
            await request
            return {"outcome": "timeout", "asked_by": ctx.asked_by, "fallback": fallback}
        if resolution.outcome not in ("allow_once", "allow_always"):
            _tool_seen(bridge, ctx, "failed", resolution.reason or "denied")
        return {
            "outcome": resolution.outcome,
            "optionId": resolution.option_id,
            "resolver": resolution.resolver,
            "rule": resolution.rule,
            "reason": resolution.reason,
            "who": resolution.who,
        }

    def on_event(data: Any) -> None:
        if isinstance(data, dict):
            _event(bridge, data)

    peer.on_request("hook/decide", on_decide)
    peer.on_notification("hook/event", on_event)
    try:
        await peer.serve()
    finally:
        for approval_id in waiting:
            broker.withdraw(approval_id, GONE)
        await peer.shutdown()


def _tool_seen(
    bridge: Bridge, ctx: ApprovalContext, status: str, content: str | None = None
) -> None:
    call = ctx.tool_call
    bridge.bus.publish(
        lambda: ev.ToolCallSeen(
            connection=ctx.connection,
            session_id=ctx.session_id,
            tool_call_id=str(call.get("toolCallId") or ""),
            title=call.get("title"),
            kind=call.get("kind"),
            status=status,
            raw_input=call.get("rawInput"),
            content=content,
        )
    )


def _event(bridge: Bridge, data: dict[str, Any]) -> None:
    kind = data.get("event")
    connection = _text(data.get("connection")) or "hook"
    session_id = _text(data.get("session_id")) or "default"
    agent = _text(data.get("agent")) or "hook"
    if kind == "start":
        cwd = _text(data.get("cwd"))
        bridge.bus.publish(
            ev.SessionStarted(
                connection=connection,
                session_id=session_id,
                agent=f"{agent} in {cwd}" if cwd else agent,
                acp_session_id=session_id,
            )
        )
    elif kind == "end":
        bridge.bus.publish(
            ev.SessionEnded(
                connection=connection,
                session_id=session_id,
                reason=f"the CLI's session ended ({_text(data.get('reason')) or 'ended'})",
            )
        )
    elif kind == "post" and isinstance(data.get("tool_call"), dict):
        call = data["tool_call"]
        status = "failed" if data.get("status") == "failed" else "completed"
        tool_call_id = str(call.get("toolCallId") or "")
        bridge.bus.publish(
            lambda: ev.ToolCallSeen(
                connection=connection,
                session_id=session_id,
                tool_call_id=tool_call_id,
                title=call.get("title"),
                kind=call.get("kind"),
                status=status,
                raw_input=call.get("rawInput"),
                content=_text(data.get("content")),
            )
        )
        bridge.approvals.tool_outcome(connection, session_id, tool_call_id, status)
