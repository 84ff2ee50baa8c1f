"""What an approval is about and how it was decided: the request (`ApprovalContext`), the answer
(`Resolution`), the agent's options chosen by kind, and what the agent is told of a denial.

Answers map to the agent's options by *kind* (option ids are agent-specific): Approve →
`allow_once`, Deny → `reject_once`, Bypass → `allow_once` (and the agent's bypass is persisted);
the agent's own `allow_always` / `reject_always` when it offered them. A missing option falls back
to `cancelled`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from bridge.rules import tool_call_targets

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


def denied(ctx: ApprovalContext, resolver: str, reason: str) -> Resolution:
    """A denial by `resolver`: the agent's reject-once option (`cancelled` when it offered none)."""
    outcome, option_id = choose(ctx.options, "reject_once")
    return Resolution(outcome, option_id, resolver, reason=reason)


def client_resolution(ctx: ApprovalContext, approved: Any, received: str | None) -> Resolution:
    """What a client's answer decides: an ACP client's own choice, or the VS Code round trip's
    True (approved), False (denied, with what it sent) or anything else (abandoned)."""
    if isinstance(approved, ClientChoice):
        return _client_choice(ctx, approved)
    if approved is True:
        outcome, option_id = choose(ctx.options, "allow_once")
        return Resolution(outcome, option_id, "vscode", answer="approve", reason=received)
    if approved is False:
        reason = "the client did not approve" + (f": {received}" if received else "")
        return denied(ctx, "vscode", reason)
    return Resolution("cancelled", None, "vscode", reason="the client abandoned the request")


def _client_choice(ctx: ApprovalContext, choice: ClientChoice) -> Resolution:
    if choice.option_id is None:
        return Resolution(
            "cancelled", None, choice.resolver, answer="cancel", reason="the client cancelled"
        )
    kind = next((o.get("kind") for o in ctx.options if o.get("optionId") == choice.option_id), None)
    if kind is None:  # an option the agent never offered: fail closed
        return denied(
            ctx, choice.resolver, f"the client chose an unknown option {choice.option_id!r}"
        )
    return Resolution(str(kind), choice.option_id, choice.resolver, answer=str(kind))


def host_name() -> str:
    """The machine this process runs on, as the audit log and remote cards name it."""
    import os
    import socket

    return os.environ.get("SYMPOSIUM_HOST_NAME") or socket.gethostname()


@dataclass
class PendingApproval:
    id: str
    ctx: ApprovalContext
    future: asyncio.Future[Resolution]
    created: float = field(default_factory=time.time)
    consoles: set[int] = field(default_factory=set)  # consoles it was offered to
    timer: asyncio.TimerHandle | None = None  # the timeout that denies it
    held: bool = False  # waits for a console even while none is attached


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
