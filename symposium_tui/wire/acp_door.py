"""The console's end of the ACP front door: a `symposium-tui acp` process linked into this console.

The proxy's end and the messages both ends exchange are in `symposium_tui.wire.acp_console`. Here
the proxy's events are republished on this console's bus under the proxy's own connection name
(`<client>-<pid>`, unique on the machine), and each approval it hands over is decided by this
console's broker (its rules, its cards, its timeout) under the proxy's approval id.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from typing import TYPE_CHECKING, Any

from bridge import events as ev
from bridge.approvals import ApprovalContext, Resolution
from bridge.rpc import JsonRpcPeer

if TYPE_CHECKING:
    from bridge.core import Bridge

log = logging.getLogger(__name__)

HELLO_PREFIX = b'{"jsonrpc":"2.0","method":"link/hello"'
_FIELDS = frozenset(f.name for f in dataclasses.fields(ApprovalContext))
_LINKED: set[str] = set()  # the connection names of the front doors linked to this console


def is_hello(line: bytes) -> bool:
    return line.startswith(HELLO_PREFIX)


class LinkedDoor:
    """One ACP front door linked into this console: the names its connections go by here, the
    sessions it opened and the approvals it is waiting for."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.names: dict[str, str] = {}  # the proxy's connection names → the names used here
        self.sessions: set[tuple[str, str]] = set()
        self.approvals: dict[Any, str] = {}  # link id → this broker's approval id

    def local(self, remote: str) -> str:
        """The proxy's own name (unique on the machine: `<client>-<pid>`), so the console, the
        proxy and the audit log say the same; renamed only if another link holds it here."""
        if remote not in self.names:
            name = remote or "acp"
            if name in _LINKED:
                name = self.bridge.connection_name(name)
                log.warning(
                    "an ACP front door named %r is linked already: shown as %r", remote, name
                )
            _LINKED.add(name)
            self.names[remote] = name
        return self.names[remote]

    def on_event(self, data: Any) -> None:
        if not isinstance(data, dict):
            return
        event = ev.parse_event(data)
        if event is None:
            return
        event.connection = self.local(event.connection)
        if isinstance(event, ev.SessionStarted):
            self.sessions.add((event.connection, event.session_id))
        elif isinstance(event, ev.SessionEnded):
            self.sessions.discard((event.connection, event.session_id))
        self.bridge.bus.publish(event)

    async def on_approval(self, data: Any, request_id: Any) -> dict[str, Any]:
        raw = dict(data.get("ctx") or {}) if isinstance(data, dict) else {}
        raw = {k: v for k, v in raw.items() if k in _FIELDS}
        raw["connection"] = self.local(str(raw.get("connection") or "acp"))
        ctx = ApprovalContext(**raw)
        link_id = data.get("id")

        def pending(approval_id: str) -> None:
            self.approvals[link_id] = approval_id

        proposed = data.get("approvalId") if isinstance(data, dict) else None
        try:
            resolution = await self.bridge.approvals.request(
                ctx,
                on_pending=pending,
                approval_id=proposed if isinstance(proposed, str) else None,
            )
        finally:
            self.approvals.pop(link_id, None)
        return {
            "outcome": resolution.outcome,
            "optionId": resolution.option_id,
            "resolver": resolution.resolver,
            "rule": resolution.rule,
            "reason": resolution.reason,
            "answer": resolution.answer,
            "who": resolution.who,
        }

    def on_withdraw(self, data: Any) -> None:
        """The front door decided it (a cancelled turn, its client's own answer): the card goes
        with that decision, which the front door audited."""
        if not isinstance(data, dict):
            return
        approval_id = self.approvals.get(data.get("id"))
        if approval_id is None:
            return
        option_id = data.get("optionId")
        decided = Resolution(
            outcome=str(data.get("outcome") or "cancelled"),
            option_id=option_id if isinstance(option_id, str) else None,
            resolver=str(data.get("resolver") or "default"),
            reason=str(data.get("reason") or "withdrawn"),
        )
        self.bridge.approvals.settle(approval_id, decided, audit=False)

    def drop_cards(self) -> None:
        """The front door went away. It audits what it still had pending when it ends (it
        withdraws them before it goes): a card still here is only removed."""
        gone = Resolution("cancelled", None, "default", reason="the ACP front door went away")
        for approval_id in list(self.approvals.values()):
            self.bridge.approvals.settle(approval_id, gone, audit=False)

    def end_sessions(self) -> None:
        """Its names are free again, and the sessions it opened end."""
        _LINKED.difference_update(self.names.values())
        for connection, session_id in self.sessions:
            self.bridge.bus.publish(
                ev.SessionEnded(
                    connection=connection,
                    session_id=session_id,
                    reason="the ACP client's proxy went away",
                )
            )


async def serve_link(
    bridge: Bridge, reader: asyncio.StreamReader, writer: Any, hello: bytes
) -> None:
    """One ACP front door linked into this console: republish its events, decide its approvals
    with this console's broker (its cards), until it goes away."""
    try:
        params = json.loads(hello).get("params") or {}
    except ValueError:
        params = {}
    peer = JsonRpcPeer(reader, writer, name=f"acp-link-{params.get('pid')}")
    door = LinkedDoor(bridge)
    peer.on_notification("link/event", door.on_event)
    peer.on_notification("link/withdraw", door.on_withdraw)
    peer.on_request("link/approval", door.on_approval)
    try:
        await peer.serve()
    finally:
        door.drop_cards()
        await peer.shutdown()
        door.end_sessions()
