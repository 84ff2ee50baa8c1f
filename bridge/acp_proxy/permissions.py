"""The agent's `session/request_permission`s, as the ACP proxy answers them.

The approval broker decides — rules and policy first, then an attached console's cards, otherwise
the client's own permission UI, asked with the request unchanged. A request that cannot be answered
safely (for a session the client never opened, or with ambiguous options) is refused before anyone
is asked, and audited; a denial is told to the client at once and to the agent at its next prompt.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from acp.exceptions import RequestError

from bridge.acp_proxy.session import ProxySession
from bridge.approvals import ApprovalContext, ClientChoice, Resolution, denial_notice

if TYPE_CHECKING:
    from acp.connection import Connection

    from bridge.core import Bridge
    from bridge.tasks import TaskSupervisor

log = logging.getLogger("bridge.acp_proxy")

PERMISSION = "session/request_permission"

_ALLOW_WORDS = frozenset({"allow", "approve", "yes", "accept", "ok", "okay", "proceed", "grant"})
_REJECT_WORDS = frozenset(
    {"reject", "deny", "no", "don't", "dont", "decline", "never", "disallow", "refuse", "block"}
)
#: Who denied, for the notice the client and the agent get (the client's own answer needs none).
ACP_DENIERS = {
    "policy": "The user's rules",
    "console": "The user",
    "timeout": "Symposium",
    "default": "Symposium",
}


def _name_says(name: Any) -> str | None:
    """ "allow" or "reject" when an option's name says only one of them, else None."""
    words = set(re.findall(r"[a-z']+", str(name or "").lower()))
    allow, reject = bool(words & _ALLOW_WORDS), bool(words & _REJECT_WORDS)
    if allow == reject:
        return None
    return "allow" if allow else "reject"


def malformed_options(options: Any) -> str | None:
    """Why a permission request's options cannot be answered safely, or None: options the
    answer is chosen from by kind and sent back by id must each have one id, used once, and a
    name that does not say the opposite of its kind."""
    if not isinstance(options, list) or not options:
        return "it offers no options"
    seen: set[str] = set()
    for n, option in enumerate(options, 1):
        if not isinstance(option, dict):
            return f"option {n} is not an object"
        option_id = option.get("optionId")
        if not isinstance(option_id, str) or not option_id:
            return f"option {n} has no optionId"
        if option_id in seen:
            return f"optionId {option_id!r} is offered twice"
        seen.add(option_id)
        kind, says = str(option.get("kind") or ""), _name_says(option.get("name"))
        if (
            says is not None
            and kind.split("_")[0] in ("allow", "reject")
            and not kind.startswith(says)
        ):
            return f"option {option_id!r} is named {option.get('name')!r} but its kind is {kind!r}"
    return None


class PermissionRequests:
    """The proxy's answers to the agent's permission requests (`AcpProxy` is built on it)."""

    name: str
    bridge: Bridge
    agent_label: str
    agent_version: str | None
    client: Connection | None
    sessions: dict[str, ProxySession]
    _tasks: TaskSupervisor
    _awaited: set[tuple[str, str]]  # (session, call) approved, outcome awaited
    _tell_client: Callable[[str, str, Resolution], Awaitable[None]]

    async def _permission(self, params: Any) -> Any:
        """The broker decides; without a console the client's own UI is asked, unchanged. A
        request that cannot be answered safely — for a session the client never opened, or with
        options that are ambiguous — is refused before anyone is asked, and audited."""
        if not isinstance(params, dict):
            raise RequestError.invalid_params({"details": "expected an object"})
        raw_call = params.get("toolCall")
        tool_call: dict[str, Any] = raw_call if isinstance(raw_call, dict) else {}
        raw_options = params.get("options")
        options = (
            [o for o in raw_options if isinstance(o, dict)] if isinstance(raw_options, list) else []
        )
        session_id = str(params.get("sessionId"))
        session = self.sessions.get(session_id)
        ctx = ApprovalContext(
            connection=self.name,
            session_id=session_id,
            agent=self.agent_label,
            tool_call=tool_call,
            options=options,
            cwd=session.cwd if session is not None else None,
            agent_version=self.agent_version,
        )
        malformed = malformed_options(raw_options)
        if malformed is not None or session is None:
            return self._refuse(ctx, params, malformed)
        answered: dict[str, Any] = {}

        async def ask_client() -> ClientChoice:
            assert self.client is not None
            result = await self.client.send_request(PERMISSION, params)
            answered["result"] = result
            outcome = result.get("outcome") if isinstance(result, dict) else None
            if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
                option = outcome.get("optionId")
                return ClientChoice(option if isinstance(option, str) else "")
            return ClientChoice(None)

        try:
            resolution = await self.bridge.approvals.request(
                ctx, ask_client=ask_client, tasks=self._tasks
            )
        except Exception:  # noqa: BLE001 - fail closed: the agent learns it was denied
            log.exception("%s: the approval broker failed; denying", self.name)
            reject = next((o for o in options if o.get("kind") == "reject_once"), None)
            if reject is None:
                return {"outcome": {"outcome": "cancelled"}}
            return {"outcome": {"outcome": "selected", "optionId": reject.get("optionId")}}
        log.info(
            "%s/%s: permission for %r → %s (%s%s)",
            self.name,
            ctx.session_id,
            ctx.title,
            resolution.outcome,
            resolution.resolver,
            f", {resolution.rule}" if resolution.rule else "",
        )
        self._await_outcome(session, tool_call, resolution)
        if resolution.resolver == "client" and "result" in answered:
            return answered["result"]  # the client's own answer, _meta and all
        response: dict[str, Any] = (
            {"outcome": {"outcome": "cancelled"}}
            if resolution.option_id is None
            else {"outcome": {"outcome": "selected", "optionId": resolution.option_id}}
        )
        notice = denial_notice(ctx, resolution, ACP_DENIERS)
        if notice is not None:
            session.notices.append(notice)
            await self._tell_client(session_id, notice, resolution)
            response["_meta"] = {
                "symposium": {
                    "denied": True,
                    "reason": resolution.reason,
                    "decidedBy": resolution.rule or resolution.resolver,
                    "message": notice,
                }
            }
        return response

    def _refuse(self, ctx: ApprovalContext, params: dict[str, Any], malformed: str | None) -> Any:
        """Deny, audited with what was received: a malformed request with the protocol's
        invalid-params error (no option can be trusted to mean "reject"), one for a session the
        client never opened with its reject option."""
        if malformed is not None:
            reason = f"malformed permission request: {malformed}"
        else:
            reason = (
                f"permission asked for session {ctx.session_id!r}, which the client never opened"
            )
        received = {"sessionId": params.get("sessionId"), "options": params.get("options")}
        resolution = self.bridge.approvals.refuse(ctx, reason, received)
        log.warning("%s: %s: denied", self.name, reason)
        if malformed is not None:
            raise RequestError.invalid_params({"details": reason})
        if resolution.option_id is None:
            return {"outcome": {"outcome": "cancelled"}}
        return {"outcome": {"outcome": "selected", "optionId": resolution.option_id}}

    def _await_outcome(
        self, session: ProxySession, tool_call: dict[str, Any], resolution: Resolution
    ) -> None:
        """An approved call's end is read from the agent's updates (for its `tool_outcome`
        audit line), whether or not anyone watches the stream."""
        call_id = tool_call.get("toolCallId")
        if resolution.outcome not in ("allow_once", "allow_always") or not call_id:
            return
        if str(call_id) not in session.tools.calls:
            session.tools.start(tool_call)  # announced before anyone read the stream
        self._awaited.add((session.id, str(call_id)))
