"""The approval broker: every `session/request_permission` becomes one decision, audited.

Order (architecture decision 11): policy (the bridge's own client tools, bypass for this session,
the agent's persisted bypass, per-tool and resource rules) → the consoles, when one is attached
(the first to answer wins; the others see the card withdrawn) → the VS Code
`symposium-agent-action` round trip, when the client offered that tool → deny. Fail closed: a
console that goes away denies what only it could answer, and whatever is in doubt is denied.

A broker that *holds* (`hold=True`: `symposium-tui serve`, a bridge that outlives its consoles)
keeps what no policy decided pending while no console is attached, so a console that attaches
later — locally or over `symposium-tui attach` — still gets to answer it. Every approval waiting
for a console is denied after `timeout` seconds without an answer (resolver "timeout", audited).

Answers map to the agent's options by *kind* (option ids are agent-specific): Approve →
`allow_once`, Deny → `reject_once`, Bypass → `allow_once` and the agent's bypass is persisted;
the agent's own `allow_always` / `reject_always` when it offered them. A missing option falls back
to `cancelled`.

The agent keeps its own "always" answer and stops asking for what it covers (Eliza: the rest of
the session). Those later tool calls are audited all the same: a tool call of such a session that
ends without having been asked about gets a decision line of its own (decider `agent_kept`, naming
the approval that granted it), then its outcome line, as an asked one does.
"""

from __future__ import annotations

import asyncio
import fnmatch
import gc
import itertools
import logging
import queue
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from bridge import events as ev
from bridge.audit import AuditLog, args_hash
from bridge.rules import Decision, Request, Rule, RuleSet, tool_call_targets

if TYPE_CHECKING:
    from bridge.settings import Settings
    from bridge.tasks import TaskSupervisor

log = logging.getLogger(__name__)
T = TypeVar("T")

Answer = Literal["approve", "deny", "bypass", "allow_always", "reject_always", "cancel"]
ANSWER_KIND: dict[str, str] = {
    "approve": "allow_once",
    "bypass": "allow_once",
    "deny": "reject_once",
    "allow_always": "allow_always",
    "reject_always": "reject_always",
}

# The most of a console's reason for its answer that is kept (characters): it is told to the agent,
# shown on every console and written to the audit log, and a console is text from elsewhere.
REASON_LIMIT = 2000


def capped_reason(reason: str | None) -> str | None:
    """A console's reason, at most `REASON_LIMIT` characters: a longer one is cut and says how
    much was cut."""
    if reason is None or len(reason) <= REASON_LIMIT:
        return reason
    return f"{reason[:REASON_LIMIT]}… ({len(reason) - REASON_LIMIT} more characters not kept)"


def local_peer() -> dict[str, Any]:
    """This process, as a socket would report it: a console running inside the bridge's process."""
    import os

    return {"uid": os.getuid(), "pid": os.getpid(), "host": host_name()}


@dataclass
class ApprovalContext:
    """What is being asked, and by whom."""

    connection: str
    session_id: str
    agent: str  # the agent's label: its settings id, or its name
    tool_call: dict[str, Any]  # the ACP ToolCallUpdate as JSON (camelCase)
    options: list[dict[str, Any]]  # ACP PermissionOption JSON: optionId, name, kind
    client_tool: bool = (
        False  # a call of the client's own tools (the bridge asks the client anyway)
    )
    cwd: str | None = None  # the session's working directory: relative paths resolve against it
    asked_by: str | None = None  # the ask rule that sent it to a person, if one did
    agent_version: str | None = None  # what the agent says its version is, for the card
    ask_reason: str | None = None  # why the rules left it to a person, when they say why

    @property
    def title(self) -> str:
        return self.tool_call.get("title") or ""

    @property
    def kind(self) -> str:
        return self.tool_call.get("kind") or ""

    def paths(self) -> list[str]:
        """Every file path the call names: its locations and the path values of its input (the
        same ones path rules look at)."""
        return list(tool_call_targets(self.tool_call).paths)


@dataclass
class Resolution:
    outcome: str  # the chosen option's kind, or "cancelled"
    option_id: str | None
    resolver: str  # "policy", "console", "vscode", "default", "timeout"
    rule: str | None = None
    reason: str | None = None
    answer: str | None = None  # the person's answer, when one answered
    who: str | None = None  # the console (or front door) whose person answered: its own name
    # The console's process as the operating system reports it (uid, pid, host; for a socket,
    # SO_PEERCRED): what the audit log records of who answered, never a name a console claimed.
    peer: dict[str, Any] | None = None


@dataclass
class ClientChoice:
    """What a client's own permission UI answered (the ACP front door forwards the request to
    it): the option it selected, or None when it cancelled."""

    option_id: str | None
    resolver: str = "client"


def choose(options: list[dict[str, Any]], kind: str) -> tuple[str, str | None]:
    for option in options:
        if option.get("kind") == kind:
            return kind, option.get("optionId")
    return "cancelled", None


# --- policy ---------------------------------------------------------------------------------------


@dataclass
class Policy:
    """Who decides without a person. Precedence (bridge.rules): the bridge's own client tools →
    deny rules → ask rules → bypass (this session's, then the agent's persisted one) → allow rules
    → nobody (a person is asked). A bypass is an allow that a deny or ask rule still beats."""

    bypass_agents: set[str] = field(default_factory=set)  # persisted in the settings
    session_bypass: set[tuple[str, str]] = field(
        default_factory=set
    )  # (connection, session): not persisted
    rules: list[Rule] = field(default_factory=list)
    _ruleset: RuleSet | None = field(default=None, repr=False, compare=False)
    _ruleset_key: tuple[int, ...] | None = field(default=None, repr=False, compare=False)

    def set_rules(self, rules: list[Rule]) -> None:
        self.rules = list(rules)
        self._ruleset = None

    def ruleset(self) -> RuleSet:
        rules = self.rules
        key = (id(rules), len(rules), id(rules[0]) if rules else 0, id(rules[-1]) if rules else 0)
        if self._ruleset is None or self._ruleset_key != key:
            self._ruleset = RuleSet(self.rules)
            self._ruleset_key = key
        return self._ruleset

    def request_of(self, ctx: ApprovalContext) -> Request:
        return Request.from_tool_call(ctx.agent, ctx.tool_call, cwd=ctx.cwd)

    def decide(self, ctx: ApprovalContext) -> Resolution | None:
        if ctx.client_tool:
            return self.resolve(ctx, Decision(None))
        return self.resolve(ctx, self.rules_decision(ctx))

    def rules_decision(self, ctx: ApprovalContext) -> Decision:
        """What the rules say about the request (the costly part: the command parsed, paths
        resolved, the rules consulted). Touches nothing but the rule set's caches, so the broker
        runs it off the event loop."""
        # The rules run even when there are none: what cannot be judged (an execute call without
        # one command, a control character in it) is asked whoever asks, bypass included.
        return self.ruleset().decide(self.request_of(ctx))

    def resolve(self, ctx: ApprovalContext, decision: Decision) -> Resolution | None:
        """The policy's answer given what the rules say: deny, ask (None, `asked_by` set), a
        bypass, an allow, or None (nobody decided: a person is asked)."""
        if ctx.client_tool:
            return self._allow(
                ctx, "client tool", "the client's own tool: the client is asked to run it anyway"
            )
        if decision.action == "deny":
            outcome, option_id = choose(ctx.options, "reject_once")
            reason = decision.rule.reason if decision.rule is not None else None
            return Resolution(
                outcome, option_id, "policy", rule=decision.label, reason=reason or decision.why
            )
        if decision.why.startswith("ask"):
            ctx.ask_reason = decision.why
        if decision.action == "ask":
            ctx.asked_by = decision.label or decision.why
            return None
        if (ctx.connection, ctx.session_id) in self.session_bypass:
            return self._allow(ctx, "session bypass", "bypass for this session")
        if ctx.agent in self.bypass_agents:
            return self._allow(ctx, "agent bypass", f"always allow {ctx.agent}")
        if decision.action == "allow":
            return self._allow(ctx, decision.label or "rule", decision.why)
        return None

    def shadowing_denies(self, agent: str) -> list[str]:
        """The deny (and ask) rules that can still stop an agent on bypass: for the settings
        screen's note that its bypass is shadowed."""
        out = []
        for index, rule in enumerate(self.rules, 1):
            if rule.action == "allow":
                continue
            if rule.agent is None or fnmatch.fnmatchcase(agent, rule.agent):
                out.append(rule.label(index))
        return out

    @staticmethod
    def _allow(ctx: ApprovalContext, rule: str, reason: str | None) -> Resolution:
        outcome, option_id = choose(ctx.options, "allow_once")
        return Resolution(outcome, option_id, "policy", rule=rule, reason=reason)


# --- the rules thread -------------------------------------------------------------------------------

DECISION_DEADLINE = 2.0  # seconds one rule decision may take before a person is asked
SWITCH_INTERVAL = 0.001  # seconds between the interpreter's thread switches while one runs


class RulesThread:
    """One daemon thread that makes rule decisions, in order, off the event loop: parsing a command
    (bashlex, pure Python) lets the loop run between the interpreter's thread switches, and one
    thread keeps bashlex (not thread-safe) to itself. Daemon: a decision still running never
    keeps the process from exiting."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[
            tuple[Callable[[], Any], asyncio.AbstractEventLoop, asyncio.Future[Any]]
        ] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.paused_gc = False  # the garbage collector is paused for the decision running

    def resume_gc(self) -> None:
        """The collector runs again (a decision past its deadline does not keep it paused)."""
        if self.paused_gc:
            self.paused_gc = False
            gc.enable()

    def run(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        """`fn()`'s result, as a future of the running loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="rules", daemon=True)
                self._thread.start()
        self._queue.put((fn, loop, future))
        return future

    def _work(self) -> None:
        while True:
            fn, loop, future = self._queue.get()
            if future.cancelled():
                continue  # its deadline passed while it waited
            # No cyclic garbage collection while it decides: parsing a long command allocates
            # enough to set off a full collection, which holds every thread (the event loop
            # too) for tens of milliseconds. What it leaves is mostly freed by reference counts
            # when it returns; the collector runs again after.
            # And the interpreter hands the lock between threads every millisecond rather than
            # every 5: the event loop waits at most that long for its turn while a parse runs.
            self.paused_gc = gc.isenabled()
            if self.paused_gc:
                gc.disable()
            interval = sys.getswitchinterval()
            sys.setswitchinterval(min(interval, SWITCH_INTERVAL))
            try:
                result, error = fn(), None
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                result, error = None, exc
            finally:
                sys.setswitchinterval(interval)
                self.resume_gc()
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:
                pass  # its loop is closed


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


RULES_THREAD = RulesThread()


# --- audit ------------------------------------------------------------------------------------------


def host_name() -> str:
    import os
    import socket

    return os.environ.get("SYMPOSIUM_HOST_NAME") or socket.gethostname()


# --- the broker -------------------------------------------------------------------------------------


@dataclass
class PendingApproval:
    id: str
    ctx: ApprovalContext
    future: asyncio.Future[Resolution]
    created: float = field(default_factory=time.time)
    consoles: set[int] = field(default_factory=set)  # consoles it was offered to
    timer: asyncio.TimerHandle | None = None  # the timeout that denies it
    held: bool = False  # waits for a console even while none is attached


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
        self.audit = audit
        self.persist_bypass = persist_bypass
        self.host_name = host_name()  # which machine this broker runs on (audit, remote cards)
        self.hold = hold  # keep approvals pending while no console is attached
        self.timeout = timeout  # seconds an approval waits for a console; None: no limit
        # Hold only what nobody else could be asked about (a headless endpoint whose client
        # offered no round trip), instead of denying it at once.
        self.hold_unasked = hold_unasked
        # seconds the rules may take to decide one request (then a person is asked)
        self.decision_deadline = DECISION_DEADLINE
        self.pending: dict[str, PendingApproval] = {}
        self.consoles: dict[int, ConsoleHandle] = {}
        self._console_ids = itertools.count(1)
        # approved calls waiting for their outcome: (connection, session, tool call id) → approval
        self._approved: dict[tuple[str, str, str], str] = {}
        # every tool call a decision was made about (approved or not)
        self._decided: dict[tuple[str, str, str], str] = {}
        # sessions whose agent keeps an "always" answer: (connection, session) → the approval
        # that granted it, its kind, and the agent
        self._kept: dict[tuple[str, str], tuple[str, str, str]] = {}
        self._kept_connections: set[str] = set()  # the connections of those sessions

    def apply_settings(self, settings: Settings) -> None:
        """The persisted part of the policy follows the settings file (agents with bypass, rules);
        bypass for a session, which is not persisted, stays as it is."""
        self.policy.bypass_agents.clear()
        self.policy.bypass_agents.update(settings.bypass_agents())
        self.policy.set_rules(list(settings.rules))

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
                    self._denied(
                        approval.ctx, "default", reason or f"console {handle.name} went away"
                    ),
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
            resolution = self.policy.resolve(ctx, await self._rules_decision(ctx))
        except asyncio.CancelledError:  # cancelled while the rules decided: audited as such
            self._record(
                approval,
                Resolution("cancelled", None, "default", reason="the request was cancelled"),
            )
            raise
        except Exception as exc:  # fail closed: rules that cannot be applied approve nothing
            log.exception("the approval rules could not be applied")
            resolution = self._denied(ctx, "policy", f"the rules could not be applied: {exc}")
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
                self._denied(
                    ctx, "default", "no console attached and the client offered no way to ask"
                ),
            )
        try:
            return await asyncio.shield(approval.future)
        except asyncio.CancelledError:
            self.withdraw(approval.id, "the request was cancelled")
            raise

    async def policy_resolution(self, ctx: ApprovalContext) -> Resolution | None:
        """What the policy decides of `ctx` (None: a person is asked), decided as `request`
        decides it — off the loop, within the deadline — without recording anything."""
        return self.policy.resolve(ctx, await self._rules_decision(ctx))

    async def _rules_decision(self, ctx: ApprovalContext) -> Decision:
        """The rules' decision, made on the rules thread so that parsing a long command never holds
        the event loop (other sessions keep streaming); when it takes longer than
        `decision_deadline` seconds, a person is asked (a bypass does not apply)."""
        if ctx.client_tool:
            return Decision(None)
        policy = self.policy
        decided = RULES_THREAD.run(lambda: policy.rules_decision(ctx))
        try:
            # `asyncio.timeout`, not `wait_for`: on Python 3.11 `wait_for` swallows a cancel that
            # arrives as its future finishes, and the cancelled request would wait for a card.
            async with asyncio.timeout(self.decision_deadline):
                return await decided
        except TimeoutError:
            RULES_THREAD.resume_gc()
            log.warning("the rules did not decide %r in time: a person is asked", ctx.title[:80])
            return Decision(
                "ask",
                why=f"ask: the rules did not decide within {self.decision_deadline:g} s",
            )

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
            self._resolve(
                approval, self._denied(approval.ctx, "vscode", f"round trip failed: {exc}")
            )
            return
        if isinstance(approved, ClientChoice):
            self._resolve(approval, self._client_choice(approval.ctx, approved))
            return
        if approved is True:
            outcome, option_id = choose(approval.ctx.options, "allow_once")
            self._resolve(
                approval,
                Resolution(outcome, option_id, "vscode", answer="approve", reason=received),
            )
        elif approved is False:
            reason = "the client did not approve" + (f": {received}" if received else "")
            self._resolve(approval, self._denied(approval.ctx, "vscode", reason))
        else:
            self._resolve(
                approval,
                Resolution("cancelled", None, "vscode", reason="the client abandoned the request"),
            )

    @staticmethod
    def _client_choice(ctx: ApprovalContext, choice: ClientChoice) -> Resolution:
        if choice.option_id is None:
            return Resolution(
                "cancelled", None, choice.resolver, answer="cancel", reason="the client cancelled"
            )
        kind = next(
            (o.get("kind") for o in ctx.options if o.get("optionId") == choice.option_id), None
        )
        if kind is None:  # an option the agent never offered: fail closed
            return ApprovalBroker._denied(
                ctx, choice.resolver, f"the client chose an unknown option {choice.option_id!r}"
            )
        return Resolution(str(kind), choice.option_id, choice.resolver, answer=str(kind))

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
                    reason="approve all for this session",
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
            self._denied(approval.ctx, "timeout", f"no console answered within {seconds} s"),
        )

    @staticmethod
    def _denied(ctx: ApprovalContext, resolver: str, reason: str) -> Resolution:
        outcome, option_id = choose(ctx.options, "reject_once")
        return Resolution(outcome, option_id, resolver, reason=reason)

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
            self._audit_decision(approval, resolution)
        key = (ctx.connection, ctx.session_id, str(ctx.tool_call.get("toolCallId")))
        self._decided[key] = approval.id
        while len(self._decided) > 4096:
            self._decided.pop(next(iter(self._decided)))
        if resolution.outcome in ("allow_always", "reject_always"):
            self._kept[(ctx.connection, ctx.session_id)] = (
                approval.id,
                resolution.outcome,
                ctx.agent,
            )
            self._kept_connections.add(ctx.connection)
            while len(self._kept) > 4096:
                self._kept.pop(next(iter(self._kept)))
        if resolution.outcome in ("allow_once", "allow_always"):
            self._approved[key] = approval.id
            while len(self._approved) > 4096:
                self._approved.pop(next(iter(self._approved)))

    def refuse(self, ctx: ApprovalContext, reason: str, received: Any = None) -> Resolution:
        """A request refused before anyone is asked (malformed, or for a session its client never
        opened): denied by default, audited with the reason and what was `received`."""
        resolution = self._denied(ctx, "default", reason)
        approval = PendingApproval(
            id=uuid.uuid4().hex[:12], ctx=ctx, future=asyncio.get_running_loop().create_future()
        )
        self._record(approval, resolution, audit=False)
        self._audit_decision(approval, resolution, received=received)
        return resolution

    def _audit_decision(
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
                    "decider": self._decider(ctx, resolution),
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

    def _audit_kept(
        self, key: tuple[str, str, str], kept: tuple[str, str, str], tool_call: dict[str, Any]
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
        self._audit_decision(approval, resolution)
        return approval.id

    def audit_pending_as_denied(self, reason: str) -> None:
        """The event loop is stuck and the process is about to be killed (called from another
        thread): write every approval still pending to the audit log as denied by default,
        which it is, since nobody will ever approve it. Nothing else is touched."""
        for approval in list(self.pending.values()):
            if approval.future.done():
                continue
            self._audit_decision(approval, self._denied(approval.ctx, "default", reason))

    @staticmethod
    def _decider(ctx: ApprovalContext, resolution: Resolution) -> dict[str, Any]:
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
        kind = "timeout" if resolution.resolver == "timeout" else "default"
        return {"kind": kind, "reason": resolution.reason}

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
                approval_id = self._audit_kept(key, kept, tool_call or {})
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


DENIERS = {"policy": "The user's rules", "console": "The user"}


def denial_notice(
    ctx: ApprovalContext, resolution: Resolution, deniers: dict[str, str] = DENIERS
) -> str | None:
    """What the agent (and the client) are told of a denial with a reason, when one of
    `deniers` (resolver → who it is for a person) denied it: "The user's rules denied `Bash: rm
    -rf build`: <reason>". None for an approval, a withdrawal, or a denial without a reason."""
    denied = resolution.outcome in ("reject_once", "reject_always") or (
        resolution.option_id is None and resolution.resolver == "policy"
    )
    who = deniers.get(resolution.resolver)
    if not denied or not resolution.reason or who is None:
        return None
    what = ctx.title or ctx.kind or "the tool call"
    return f"{who} denied `{what}`: {resolution.reason}"


def _login(uid: Any) -> str | None:
    """The login name of a uid (None when it has none)."""
    import pwd

    if not isinstance(uid, int):
        return None
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None
