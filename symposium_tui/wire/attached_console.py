"""The console protocol, host side: a console attached to this machine's bridge over a socket.

A connection to the console socket whose first line is a `console/hello` request speaks this
protocol instead of vscodelm (`docs/console-protocol.md` is the reference). It is how
`symposium-tui attach` reaches a bridge — directly on this machine, or through
`ssh HOST symposium-tui link`, which carries it between its stdio and this socket. The
connection attaches to the approval broker as one more console: it is sent every pending approval
and every new one, answers with `console/answer`, and the first answer from any console wins.
When it goes away it detaches; what it alone could answer is held (by `serve`, until another
console attaches or the timeout denies it) or denied (by a console process that is closing).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
from typing import Any

from bridge import events as ev
from bridge.approvals import ApprovalBroker, PendingApproval
from bridge.jsonrpc import INVALID_PARAMS, RpcError
from bridge.rpc import JsonRpcPeer

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
HELLO = "console/hello"
ANSWER = "console/answer"
APPROVE_SESSION = "console/approveSession"
AUDIT_HEAD = "console/auditHead"
REQUESTED = "console/approvalRequested"
RESOLVED = "console/approvalResolved"
ANSWERS = ("approve", "deny", "bypass", "allow_always", "reject_always")
_HELLO_MARK = b'"console/hello"'


def is_hello(line: bytes) -> bool:
    """Whether a connection's first line opens the console protocol (cheap: no JSON parse for
    the vscodelm traffic that is most connections)."""
    return _HELLO_MARK in line[:512]


def socket_peer(sock: socket.socket | None, host: str) -> dict[str, Any]:
    """The process at the other end of a unix socket as the kernel reports it (SO_PEERCRED): its
    uid and pid, and the host (this one: a unix socket is local). A console reached over ssh talks
    through `symposium-tui link`, started by sshd: the address sshd gave that process
    (`SSH_CONNECTION`, read from its environment, never from anything the console sent) is kept as
    `ssh_client`. Unknown fields are None."""
    peer: dict[str, Any] = {"uid": None, "pid": None, "host": host}
    if sock is None:
        return peer
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):  # not a unix socket, or not Linux
        return peer
    pid, uid, _gid = struct.unpack("3i", creds)
    peer.update(uid=uid, pid=pid)
    ssh = _ssh_connection(pid)
    if ssh is not None:
        peer["ssh_client"] = ssh
    return peer


def _ssh_connection(pid: int) -> str | None:
    """`client-address client-port` from the SSH_CONNECTION sshd set for process `pid`, if any."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read(1 << 20)
    except OSError:
        return None
    for entry in environ.split(b"\0"):
        if entry.startswith(b"SSH_CONNECTION="):
            fields = entry[len(b"SSH_CONNECTION=") :].decode(errors="replace").split()
            return " ".join(fields[:2]) or None
    return None


def card_of_pending(approval: PendingApproval, host: str, bypass: bool = False) -> dict[str, Any]:
    """`bypass`: the agent is on bypass on this host (the card was asked anyway, by a rule)."""
    ctx = approval.ctx
    return {
        "bypass": bypass,
        "approvalId": approval.id,
        "host": host,
        "connection": ctx.connection,
        "sessionId": ctx.session_id,
        "agent": ctx.agent,
        "toolCall": ctx.tool_call,
        "options": ctx.options,
        "created": approval.created,
        "agentVersion": ctx.agent_version,
        "askReason": ctx.ask_reason,
    }


def card_of_event(event: ev.ApprovalRequested, host: str, bypass: bool = False) -> dict[str, Any]:
    return {
        "bypass": bypass,
        "approvalId": event.approval_id,
        "host": host,
        "connection": event.connection,
        "sessionId": event.session_id,
        "agent": event.agent,
        "toolCall": event.tool_call,
        "options": event.options,
        "created": event.ts,
        "agentVersion": event.agent_version,
        "askReason": event.ask_reason,
    }


def resolved_of_event(event: ev.ApprovalResolved) -> dict[str, Any]:
    return {
        "approvalId": event.approval_id,
        "outcome": event.outcome,
        "optionId": event.option_id,
        "resolver": event.resolver,
        "by": event.by,
        "rule": event.rule,
        "reason": event.reason,
    }


class ConsoleConnection:
    """One attached console on the host: the broker handle and the bus subscription it holds."""

    def __init__(
        self, broker: ApprovalBroker, peer: JsonRpcPeer, process: dict[str, Any] | None = None
    ) -> None:
        self.broker = broker
        self.peer = peer
        self.process = process  # the console's process, as its socket reported it
        self.handle: Any = None
        self._unsubscribe: Any = None
        peer.on_request(HELLO, self.hello)
        peer.on_request(ANSWER, self.answer)
        peer.on_request(APPROVE_SESSION, self.approve_session)
        peer.on_request(AUDIT_HEAD, self.audit_head)

    async def hello(self, params: Any, request_id: Any) -> dict[str, Any]:
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: expected an object")
        version = params.get("protocol")
        if version != PROTOCOL_VERSION:
            raise RpcError(
                INVALID_PARAMS,
                f"console protocol {version!r} is not spoken here (this host speaks "
                f"{PROTOCOL_VERSION}); update symposium-tui on both machines",
                {"protocol": PROTOCOL_VERSION},
            )
        if self.handle is not None:
            raise RpcError(INVALID_PARAMS, "Invalid params: already attached")
        name = params.get("console")
        name = name if isinstance(name, str) and name else "remote console"
        host = self.broker.host_name
        # No await between subscribing and answering: every event after the snapshot is sent
        # after the answer, and none is missed or sent twice.
        self.handle = self.broker.attach(name[:200], self.process)
        self._unsubscribe = self.broker.bus.subscribe(self._on_event)
        log.info("console %s attached", self.handle.name)
        return {
            "protocol": PROTOCOL_VERSION,
            "host": host,
            "pending": [
                card_of_pending(p, host, p.ctx.agent in self.broker.policy.bypass_agents)
                for p in list(self.broker.pending.values())
            ],
        }

    def _on_event(self, event: Any) -> None:
        kind = getattr(event, "type", "")
        if kind == "approval_requested":
            bypass = event.agent in self.broker.policy.bypass_agents
            self.peer.notify(REQUESTED, card_of_event(event, self.broker.host_name, bypass))
        elif kind == "approval_resolved" and event.resolver != "policy":
            self.peer.notify(RESOLVED, resolved_of_event(event))

    async def answer(self, params: Any, request_id: Any) -> dict[str, Any]:
        if self.handle is None:
            raise RpcError(INVALID_PARAMS, "Invalid params: send console/hello first")
        if not isinstance(params, dict) or not isinstance(params.get("approvalId"), str):
            raise RpcError(INVALID_PARAMS, "Invalid params: approvalId (a string) is required")
        answer = params.get("answer")
        if answer not in ANSWERS:
            raise RpcError(
                INVALID_PARAMS, f"Invalid params: answer must be one of {', '.join(ANSWERS)}"
            )
        reason = params.get("reason")
        reason = reason if isinstance(reason, str) and reason else None
        accepted = self.handle.answer(params["approvalId"], answer, reason)
        return {"accepted": accepted}

    async def approve_session(self, params: Any, request_id: Any) -> dict[str, Any]:
        if self.handle is None:
            raise RpcError(INVALID_PARAMS, "Invalid params: send console/hello first")
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: expected an object")
        connection, session = params.get("connection"), params.get("sessionId")
        if not isinstance(connection, str) or not isinstance(session, str):
            raise RpcError(INVALID_PARAMS, "Invalid params: connection and sessionId are required")
        return {
            "approved": self.broker.approve_all(
                connection, session, who=self.handle.name, peer=self.handle.peer
            )
        }

    async def audit_head(self, params: Any, request_id: Any) -> dict[str, Any]:
        """The head of this host's audit log, and whether its chain still passes through the head
        the console saw last (`seen`: `{log, seq, head}` items; see `bridge.audit.head_report`)."""
        if self.handle is None:
            raise RpcError(INVALID_PARAMS, "Invalid params: send console/hello first")
        seen = params.get("seen") if isinstance(params, dict) else None
        audit = self.broker.audit
        if audit is None:
            return {"audit": None}
        from bridge.audit import head_report

        items = [s for s in seen if isinstance(s, dict)] if isinstance(seen, list) else []
        report = await asyncio.to_thread(head_report, audit.path, items)
        return {"audit": report, "host": self.broker.host_name}

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self.handle is not None:
            handle, self.handle = self.handle, None
            log.info("console %s detached", handle.name)
            handle.detach()


async def serve_console(
    broker: ApprovalBroker,
    reader: asyncio.StreamReader,
    writer: Any,
    first_line: bytes,
) -> None:
    """Serve one console-protocol connection (its hello already read) until it closes."""
    peer = JsonRpcPeer(reader, writer, name="console-link")
    process = socket_peer(writer.get_extra_info("socket"), broker.host_name)
    connection = ConsoleConnection(broker, peer, process)
    try:
        await peer.serve([first_line])
    finally:
        connection.close()
        await peer.shutdown()
