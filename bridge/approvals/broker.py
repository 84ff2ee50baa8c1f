"""The approval broker: the approvals waiting for a person, the consoles that may answer them,
and their answers, withdrawals and timeouts.

A request goes to the policy first (`Policy.resolve`, the rules decided on the rules thread);
what it leaves to a person waits (`PendingApproval`) for the attached consoles — the first to
answer wins, the others see the card withdrawn — or goes to the client's own round trip, else is
denied. A broker that *holds* keeps it waiting while no console is attached; every approval
waiting for a console is denied after `timeout` seconds. Each decision is audited
(`DecisionLog`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from bridge import events as ev
from bridge.approvals.decisions import DecisionLog
from bridge.approvals.follow import SettingsFollower, Stamp
from bridge.approvals.model import (
    ANSWER_KIND,
    Answer,
    ApprovalContext,
    PendingApproval,
    Resolution,
    capped_reason,
    choose,
    client_resolution,
    denied,
    host_name,
    local_peer,
)
from bridge.approvals.policy import Policy
from bridge.approvals.rules_thread import DECISION_DEADLINE, rules_decision

if TYPE_CHECKING:
    from bridge.audit import AuditLog
    from bridge.settings import Settings
    from bridge.tasks import TaskSupervisor

log = logging.getLogger(__name__)


class ConsoleHandle:
    """One attached console: it sees pending approvals and may answer them. `name` is what it
    calls itself (shown); `peer` is its process as the operating system reports it (audited)."""

    def __init__(
        self, broker: ApprovalBroker, console_id: int, name: str, peer: dict[str, Any]
    ) -> None:
        self.broker = broker
        self.id = console_id
        self.name = name
        self.peer = peer

    def answer(self, approval_id: str, answer: Answer, reason: str | None = None) -> bool:
        return self.broker.answer(
            approval_id, answer, resolver="console", who=self.name, reason=reason, peer=self.peer
        )

    def detach(self, reason: str | None = None) -> None:
        """Stop answering; what only this console held is denied, with `reason` (else "console
        NAME went away") as what the agent and the client are told."""
        self.broker.detach(self, reason)


class ApprovalBroker:
    """Decides every permission request of a bridge: the policy first, then a person (the
    attached consoles, else the client's own round trip), else a denial. One broker per bridge;
    its `policy` follows the settings file (`apply_settings`)."""

    def __init__(
        self,
        bus: ev.EventBus,
        *,
        policy: Policy | None = None,
        audit: AuditLog | None = None,
        persist_bypass: Callable[[str], None] | None = None,
        hold: bool = False,
        timeout: float | None = None,
        hold_unasked: bool = False,
    ) -> None:
        self.bus = bus
        self.policy = policy or Policy()
        # the audit of its decisions; also which machine this broker runs on (audit, remote cards)
        self.decisions = DecisionLog(audit, host_name())
        self.persist_bypass = persist_bypass
        self.hold = hold  # keep approvals pending while no console is attached
        self.timeout = timeout  # seconds an approval waits for a console; None: no limit
        # Hold only what nobody else could be asked about (a headless endpoint whose client
        # offered no round trip), instead of denying it at once.
        self.hold_unasked = hold_unasked
        # seconds the rules may take to decide one request (then a person is asked)
        self.decision_deadline = DECISION_DEADLINE
        self.pending: dict[str, PendingApproval] = {}
        # the settings file, re-read before a decision when it changed (`follow_settings`)
        self.follower: SettingsFollower | None = None
        self.consoles: dict[int, ConsoleHandle] = {}
        self._console_ids = itertools.count(1)

    @property
    def audit(self) -> AuditLog | None:
        """The audit log the decisions are written to (None: not written)."""
        return self.decisions.audit

    @audit.setter
    def audit(self, audit: AuditLog | None) -> None:
        self.decisions.audit = audit

    @property
    def host_name(self) -> str:
        """Which machine this broker runs on (its audit lines, the cards of remote consoles)."""
        return self.decisions.host_name

    def apply_settings(self, settings: Settings) -> None:
        """The persisted part of the policy follows the settings file (agents with bypass, rules);
        bypass for a session, which is not persisted, stays as it is."""
        self.policy.bypass_agents.clear()
        self.policy.bypass_agents.update(settings.bypass_agents())
        self.policy.set_rules(list(settings.rules))

    def follow_settings(
        self,
        path: str | os.PathLike[str],
        stamp: Stamp,
        load: Callable[[], Settings],
        on_change: Callable[[Settings | None, str | None], None] | None = None,
    ) -> SettingsFollower:
        """Re-read the settings file at `path` (with `load`) before a decision whenever it
        changed since `stamp` (taken before the settings in force were read): see
        `bridge.approvals.follow`."""
        self.follower = SettingsFollower(
            path,
            lambda: self.policy,
            self.apply_settings,
            load,
            stamp=stamp,
            on_change=on_change,
        )
        return self.follower

    # consoles ---------------------------------------------------------------------------------------

    def attach(self, name: str = "console", peer: dict[str, Any] | None = None) -> ConsoleHandle:
        """A console attaches: `peer` is its process as its socket reports it (default: this
        process, for a console running inside it)."""
        handle = ConsoleHandle(self, next(self._console_ids), name, peer or local_peer())
        self.consoles[handle.id] = handle
        for approval in self.pending.values():
            approval.consoles.add(handle.id)
        return handle

    def detach(self, handle: ConsoleHandle, reason: str | None = None) -> None:
        if self.consoles.pop(handle.id, None) is None:
            return
        for approval in list(self.pending.values()):
            approval.consoles.discard(handle.id)
            if approval.held:
                continue  # held for the next console to attach (or the timeout)
            if not approval.consoles and not approval.future.done():
                # Nobody else can answer it now: fail closed.
                self._resolve(
                    approval,
                    denied(approval.ctx, "default", reason or f"console {handle.name} went away"),
                )

    # decisions --------------------------------------------------------------------------------------

    async def request(
        self,
        ctx: ApprovalContext,
        *,
        ask_client: Callable[[], Awaitable[Any]] | None = None,
        on_pending: Callable[[str], None] | None = None,
        tasks: TaskSupervisor | None = None,
        approval_id: str | None = None,
    ) -> Resolution:
        """Decide one permission request. `ask_client` asks the client: the VS Code round trip
        (True: approved, False: denied, None: abandoned/cancelled; or `(approved, what was
        received)` so the audit log says what the client sent), or an ACP client's own permission
        UI (a ClientChoice: the option it picked, audited as it is), run as a task of `tasks`
        (the asker's: it ends when the asker closes); `on_pending` learns the approval id so the
        session can withdraw it if its turn is cancelled. `approval_id` is the id another broker
        gave this same request (an ACP front door linked to this console): kept unless in use."""
        if ask_client is not None and tasks is None:
            raise TypeError("ask_client needs the TaskSupervisor that owns the round trip")
        if approval_id is None or approval_id in self.pending:
            approval_id = uuid.uuid4().hex[:12]
        approval = PendingApproval(
            id=approval_id, ctx=ctx, future=asyncio.get_running_loop().create_future()
        )
        try:
            resolution = await self.policy_resolution(ctx)
        except asyncio.CancelledError:  # cancelled while the rules decided: audited as such
            self._record(
                approval,
                Resolution("cancelled", None, "default", reason="the request was cancelled"),
            )
            raise
        except Exception as exc:  # fail closed: rules that cannot be applied approve nothing
            log.exception("the approval rules could not be applied")
            resolution = denied(ctx, "policy", f"the rules could not be applied: {exc}")
        if resolution is not None:
            self._record(approval, resolution)
            return resolution
        self.pending[approval.id] = approval
        if on_pending is not None:
            on_pending(approval.id)
        self.bus.publish(
            lambda: ev.ApprovalRequested(
                connection=ctx.connection,
                approval_id=approval.id,
                session_id=ctx.session_id,
                agent=ctx.agent,
                tool_call=ctx.tool_call,
                options=ctx.options,
                agent_version=ctx.agent_version,
                ask_reason=ctx.ask_reason,
            )
        )
        if self.consoles or self.hold:
            self._hold(approval, held=self.hold or self.hold_unasked)
        elif ask_client is not None:
            assert tasks is not None
            tasks.start(
                self._ask_client(approval, ask_client), name=f"ask the client {approval.id}"
            )
        elif self.hold_unasked:
            self._hold(approval, held=True)
        else:
            self._resolve(
                approval,
                denied(ctx, "default", "no console attached and the client offered no way to ask"),
            )
        try:
            return await asyncio.shield(approval.future)
        except asyncio.CancelledError:
            self.withdraw(approval.id, "the request was cancelled")
            raise

    async def policy_resolution(self, ctx: ApprovalContext) -> Resolution | None:
        """What the policy decides of `ctx` (None: a person is asked), decided as `request`
        decides it — off the loop, within the deadline — without recording anything."""
        if self.follower is not None:
            self.follower.check()
        decision = await rules_decision(self.policy, ctx, self.decision_deadline)
        return self.policy.resolve(ctx, decision)

    def _hold(self, approval: PendingApproval, *, held: bool) -> None:
        """It waits for the consoles (those attached, and any that attach): until one answers, or
        the timeout denies it."""
        approval.consoles = set(self.consoles)
        approval.held = held
        if self.timeout is not None:
            approval.timer = asyncio.get_running_loop().call_later(
                self.timeout, self._time_out, approval
            )

    async def _ask_client(
        self, approval: PendingApproval, ask_client: Callable[[], Awaitable[Any]]
    ) -> None:
        received: str | None = None
        try:
            approved = await ask_client()
            if isinstance(approved, tuple):  # (approved?, what the client sent, for the audit)
                approved, received = approved
        except asyncio.CancelledError:  # its owner closed before the client answered
            self.withdraw(approval.id, "the asker closed before the client answered")
            raise
        except Exception as exc:  # fail closed
            log.exception("the client round trip failed")
            self._resolve(approval, denied(approval.ctx, "vscode", f"round trip failed: {exc}"))
            return
        self._resolve(approval, client_resolution(approval.ctx, approved, received))

    def answer(
        self,
        approval_id: str,
        answer: Answer,
        *,
        resolver: str = "console",
        who: str | None = None,
        reason: str | None = None,
        peer: dict[str, Any] | None = None,
    ) -> bool:
        """A person's answer. False if the approval is gone (already answered or withdrawn)."""
        approval = self.pending.get(approval_id)
        if approval is None or approval.future.done():
            return False
        ctx = approval.ctx
        reason = capped_reason(reason)
        if peer is None and resolver == "console":
            peer = local_peer()  # a caller in this process (the console's own handle)
        if answer == "cancel":
            resolution = Resolution(
                "cancelled", None, resolver, answer=answer, reason=reason, who=who, peer=peer
            )
        else:
            outcome, option_id = choose(ctx.options, ANSWER_KIND[answer])
            resolution = Resolution(
                outcome,
                option_id,
                resolver,
                answer=answer,
                reason=reason,
                rule=f"answered by {who}" if who else None,
                who=who,
                peer=peer,
            )
        if answer == "bypass" and resolution.outcome != "cancelled":
            self.policy.bypass_agents.add(ctx.agent)
            if self.persist_bypass is not None:
                try:
                    self.persist_bypass(ctx.agent)
                except Exception:
                    log.exception("could not persist the bypass for %s", ctx.agent)
        self._resolve(approval, resolution)
        return True

    def settle(self, approval_id: str, resolution: Resolution, *, audit: bool = True) -> bool:
        """Resolve with a decision made elsewhere (a console this process relays to, which audited
        it already: `audit=False`). A person's Bypass there applies here too, for this process."""
        approval = self.pending.get(approval_id)
        if approval is None or approval.future.done():
            return False
        resolution.reason = capped_reason(resolution.reason)
        if resolution.answer == "bypass" and resolution.outcome != "cancelled":
            self.policy.bypass_agents.add(approval.ctx.agent)
        self._resolve(approval, resolution, audit=audit)
        return True

    def approve_all(
        self,
        connection: str,
        session_id: str,
        *,
        who: str = "console",
        peer: dict[str, Any] | None = None,
    ) -> int:
        """Approve every pending approval of one session."""
        n = 0
        for approval in list(self.pending.values()):
            if approval.ctx.connection == connection and approval.ctx.session_id == session_id:
                n += self.answer(
                    approval.id,
                    "approve",
                    who=who,
                    reason="approved with every pending card of this session",
                    peer=peer,
                )
        return n

    def withdraw(self, approval_id: str, reason: str) -> None:
        """The turn was cancelled: ACP requires the pending request be answered `cancelled`."""
        approval = self.pending.get(approval_id)
        if approval is not None and not approval.future.done():
            self._resolve(approval, Resolution("cancelled", None, "default", reason=reason))

    def withdraw_session(self, connection: str, session_id: str, reason: str) -> None:
        for approval in list(self.pending.values()):
            if approval.ctx.connection == connection and approval.ctx.session_id == session_id:
                self.withdraw(approval.id, reason)

    def _time_out(self, approval: PendingApproval) -> None:
        if approval.future.done():
            return
        seconds = f"{self.timeout:g}" if self.timeout is not None else "?"
        self._resolve(
            approval,
            denied(approval.ctx, "timeout", f"no console answered within {seconds} s"),
        )

    def _resolve(
        self, approval: PendingApproval, resolution: Resolution, *, audit: bool = True
    ) -> None:
        if approval.future.done():
            return
        self.pending.pop(approval.id, None)
        if approval.timer is not None:
            approval.timer.cancel()
            approval.timer = None
        approval.future.set_result(resolution)
        self._record(approval, resolution, audit=audit)

    def _record(
        self, approval: PendingApproval, resolution: Resolution, *, audit: bool = True
    ) -> None:
        ctx = approval.ctx
        self.bus.publish(
            lambda: ev.ApprovalResolved(
                connection=ctx.connection,
                approval_id=approval.id,
                session_id=ctx.session_id,
                agent=ctx.agent,
                outcome=resolution.outcome,
                option_id=resolution.option_id,
                resolver=resolution.resolver,
                rule=resolution.rule,
                reason=resolution.reason,
                by=resolution.who,
            )
        )
        if audit:
            self.decisions.write(approval, resolution)
        self.decisions.note(approval, resolution)

    def refuse(self, ctx: ApprovalContext, reason: str, received: Any = None) -> Resolution:
        """A request refused before anyone is asked (malformed, or for a session its client never
        opened): denied by default, audited with the reason and what was `received`."""
        resolution = denied(ctx, "default", reason)
        approval = PendingApproval(
            id=uuid.uuid4().hex[:12], ctx=ctx, future=asyncio.get_running_loop().create_future()
        )
        self._record(approval, resolution, audit=False)
        self.decisions.write(approval, resolution, received=received)
        return resolution

    def keeps_always(self, connection: str) -> bool:
        """Whether the agent of some session of `connection` keeps an "always" answer (so its
        tool calls are followed, to audit the ones it runs without asking)."""
        return self.decisions.keeps_always(connection)

    def audit_pending_as_denied(self, reason: str) -> None:
        """The event loop is stuck and the process is about to be killed (called from another
        thread): write every approval still pending to the audit log as denied by default,
        which it is, since nobody will ever approve it. Nothing else is touched."""
        for approval in list(self.pending.values()):
            if approval.future.done():
                continue
            self.decisions.write(approval, denied(approval.ctx, "default", reason))

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
        self.decisions.tool_outcome(connection, session_id, tool_call_id, status, tool_call)
