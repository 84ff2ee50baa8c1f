"""The audit of approval decisions: each decision's line in the audit log, who or what decided it,
and the outcome of each tool call that was decided.

The agent keeps its own "always" answer and stops asking for what it covers (Eliza: the rest of
the session). Those later tool calls are audited all the same: a tool call of such a session that
ends without having been asked about gets a decision line of its own (decider `agent_kept`, naming
the approval that granted it), then its outcome line, as an asked one does.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Any

from bridge.approvals.model import ApprovalContext, PendingApproval, Resolution
from bridge.audit import AuditLog, args_hash

log = logging.getLogger(__name__)

# How many tool calls (and sessions with a kept "always" answer) are remembered for their outcome.
REMEMBERED = 4096

CallKey = tuple[str, str, str]  # (connection, session, tool call id)


def _remember(table: dict[Any, Any], key: Any, value: Any) -> None:
    table[key] = value
    while len(table) > REMEMBERED:
        table.pop(next(iter(table)))


class DecisionLog:
    """Writes the decisions of one broker to its audit log (`audit`: None writes nothing) and follows
    the tool calls they decided, to record how each ended."""

    def __init__(self, audit: AuditLog | None, host: str) -> None:
        self.audit = audit
        self.host_name = host
        # approved calls waiting for their outcome: call → approval
        self._approved: dict[CallKey, str] = {}
        # every tool call a decision was made about (approved or not)
        self._decided: dict[CallKey, str] = {}
        # sessions whose agent keeps an "always" answer: (connection, session) → the approval
        # that granted it, its kind, and the agent
        self._kept: dict[tuple[str, str], tuple[str, str, str]] = {}
        self._kept_connections: set[str] = set()  # the connections of those sessions

    def note(self, approval: PendingApproval, resolution: Resolution) -> None:
        """Follow the tool call `approval` decided: its outcome is recorded next to it, and an
        "always" answer covers the rest of its session."""
        ctx = approval.ctx
        key = (ctx.connection, ctx.session_id, str(ctx.tool_call.get("toolCallId")))
        _remember(self._decided, key, approval.id)
        if resolution.outcome in ("allow_always", "reject_always"):
            kept = (approval.id, resolution.outcome, ctx.agent)
            _remember(self._kept, (ctx.connection, ctx.session_id), kept)
            self._kept_connections.add(ctx.connection)
        if resolution.outcome in ("allow_once", "allow_always"):
            _remember(self._approved, key, approval.id)

    def write(
        self, approval: PendingApproval, resolution: Resolution, *, received: Any = None
    ) -> None:
        """The decision's line in the audit log (what was asked, by whom, and who decided)."""
        if self.audit is None:
            return
        ctx = approval.ctx
        raw = ctx.tool_call.get("rawInput")
        extra = {} if received is None else {"received": received}
        try:
            self.audit.append(
                extra
                | {
                    "type": "decision",
                    "ts": time.time(),
                    "approval_id": approval.id,
                    "connection": ctx.connection,
                    "session_id": ctx.session_id,
                    "agent": ctx.agent,
                    "tool_call_id": ctx.tool_call.get("toolCallId"),
                    "title": ctx.title,
                    "kind": ctx.kind,
                    "request": {
                        k: ctx.tool_call[k]
                        for k in ("title", "kind", "rawInput", "locations")
                        if k in ctx.tool_call
                    },
                    "args_sha256": args_hash(raw),
                    "outcome": resolution.outcome,
                    "option_id": resolution.option_id,
                    "resolver": resolution.resolver,
                    "decider": decider(ctx, resolution),
                    "answer": resolution.answer,
                    "rule": resolution.rule,
                    "asked_by": ctx.asked_by,
                    "ask_reason": ctx.ask_reason,
                    "reason": resolution.reason,
                    "host": self.host_name,
                }
            )
        except Exception:
            log.exception("audit log write failed")

    def keeps_always(self, connection: str) -> bool:
        """Whether the agent of some session of `connection` keeps an "always" answer (so its
        tool calls are followed, to audit the ones it runs without asking)."""
        return connection in self._kept_connections

    def _write_kept(
        self, key: CallKey, kept: tuple[str, str, str], tool_call: dict[str, Any]
    ) -> str:
        """The decision line of a call the agent ran (or refused) without asking, under the
        "always" answer it keeps for this session."""
        granted_by, kind, agent = kept
        connection, session_id, tool_call_id = key
        approval = PendingApproval(
            id=uuid.uuid4().hex[:12],
            ctx=ApprovalContext(
                connection,
                session_id,
                agent,
                {"toolCallId": tool_call_id, **tool_call},
                [{"optionId": None, "kind": kind}],
            ),
            future=asyncio.get_running_loop().create_future(),
        )
        self._decided[key] = approval.id
        said = "allow" if kind == "allow_always" else "reject"
        resolution = Resolution(
            kind,
            None,
            "agent",
            rule=f"the agent's own always-{said} (approval {granted_by})",
            reason=f"not asked: the agent keeps the always-{said} answered in approval "
            f"{granted_by} for this session",
        )
        self.write(approval, resolution)
        return approval.id

    def tool_outcome(
        self,
        connection: str,
        session_id: str,
        tool_call_id: str,
        status: str,
        tool_call: dict[str, Any] | None = None,
    ) -> None:
        """The agent reported how a call ended: recorded next to its decision. A call nobody was
        asked about in a session whose agent keeps an "always" answer was decided by that answer:
        it gets its decision line first (`tool_call`: its title, kind and rawInput)."""
        key = (connection, session_id, str(tool_call_id))
        approval_id = self._approved.pop(key, None)
        if approval_id is None and key not in self._decided:
            kept = self._kept.get((connection, session_id))
            if kept is not None:
                approval_id = self._write_kept(key, kept, tool_call or {})
        if approval_id is None or self.audit is None:
            return
        try:
            self.audit.append(
                {
                    "type": "tool_outcome",
                    "ts": time.time(),
                    "approval_id": approval_id,
                    "connection": connection,
                    "session_id": session_id,
                    "tool_call_id": tool_call_id,
                    "status": status,
                }
            )
        except Exception:
            log.exception("audit log write failed")


def decider(ctx: ApprovalContext, resolution: Resolution) -> dict[str, Any]:
    """Who or what decided: a person (and through which console or front door), a rule (with
    its line), a bypass, or the fail-closed default (a timeout, a console that went away)."""
    if resolution.resolver == "console":
        # Who answered is the console's process as its socket reported it (the person is its
        # uid's login); the name the console gave itself is kept, as what it said.
        peer = resolution.peer
        if peer is None:  # decided by a console elsewhere (relayed): nothing seen here
            return {"kind": "person", "person": None, "via": "console", "said": resolution.who}
        return {
            "kind": "person",
            "person": _login(peer.get("uid")),
            "via": "console",
            "peer": peer,
            "said": resolution.who,
        }
    if resolution.resolver == "vscode":
        return {"kind": "person", "person": None, "via": f"front door {ctx.connection}"}
    if resolution.resolver == "timeout":
        return {"kind": "timeout", "reason": resolution.reason}
    if resolution.resolver == "agent":  # the agent's own kept "always" answer
        return {"kind": "agent_kept", "rule": resolution.rule}
    if resolution.resolver == "client":  # an ACP client's own permission UI
        return {"kind": "person", "person": None, "via": f"ACP client {ctx.connection}"}
    if resolution.resolver == "policy":
        rule = resolution.rule or ""
        kind = "rule" if rule.startswith("rule") else rule.replace(" ", "_") or "policy"
        return {"kind": kind, "rule": resolution.rule}
    return {"kind": "default", "reason": resolution.reason}


def _login(uid: Any) -> str | None:
    """The login name of a uid (None when it has none)."""
    import pwd

    if not isinstance(uid, int):
        return None
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None
