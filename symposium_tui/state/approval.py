"""One approval request as the console shows it: `ApprovalInfo`, read from a bridge event or a
broker's pending approval, with what a card needs from it (title, the answers the agent offered,
the rule a card proposes, the input and diffs for a person). Pure Python, no Textual.
"""

from __future__ import annotations

import difflib
import json
import time
from dataclasses import dataclass, field
from typing import Any

#: A person's answer → the option kind the broker picks for it.
ANSWER_KIND = {
    "approve": "allow_once",
    "deny": "reject_once",
    "bypass": "allow_once",
    "allow_always": "allow_always",
    "reject_always": "reject_always",
}


@dataclass
class ApprovalInfo:
    """What one card shows: an `ApprovalRequested` event, or a broker's `PendingApproval`."""

    approval_id: str
    connection: str
    session_id: str
    agent: str
    tool_call: dict[str, Any]
    options: list[dict[str, Any]]
    received: float = field(default_factory=time.time)
    host: str | None = None  # the machine that asks, for a card from an attached host
    agent_name: str = ""  # the agent's name for a person; `agent` stays the id rules match
    agent_version: str | None = None  # the agent's own word for its version, when it gave one
    host_bypass: bool = False  # a card from an attached host: its agent is on bypass there
    ask_reason: str | None = None  # why the rules left it to a person, when they say why

    @property
    def agent_display(self) -> str:
        """What a person reads: the agent's name ("Eliza (built in)"), never only its id."""
        if self.agent_name:
            return self.agent_name
        from bridge.settings import agent_display_name

        return agent_display_name(self.agent)

    @classmethod
    def from_event(cls, event: Any) -> ApprovalInfo:
        return cls(
            event.approval_id,
            event.connection,
            event.session_id,
            event.agent,
            dict(event.tool_call),
            list(event.options),
            event.ts,
            getattr(event, "host", None),
            agent_version=getattr(event, "agent_version", None),
            host_bypass=getattr(event, "bypass", False) is True,
            ask_reason=getattr(event, "ask_reason", None),
        )

    @classmethod
    def from_pending(cls, pending: Any) -> ApprovalInfo:
        ctx = pending.ctx
        return cls(
            pending.id,
            ctx.connection,
            ctx.session_id,
            ctx.agent,
            dict(ctx.tool_call),
            list(ctx.options),
            pending.created,
            agent_version=ctx.agent_version,
            ask_reason=ctx.ask_reason,
        )

    @property
    def title(self) -> str:
        return (
            self.tool_call.get("title")
            or self.tool_call.get("toolCallId")
            or "(untitled tool call)"
        )

    @property
    def kind(self) -> str:
        return self.tool_call.get("kind") or "other"

    def option(self, kind: str) -> dict[str, Any] | None:
        return next((o for o in self.options if o.get("kind") == kind), None)

    def offers(self, answer: str) -> bool:
        return self.option(ANSWER_KIND[answer]) is not None

    @property
    def guarded(self) -> bool:
        """Asked because it touches what governs the agents (`bridge.rules.guards`): no allow
        rule, nor bypass, answers such a call — only a person, each time."""
        from bridge.rules.guards import is_guarded

        return is_guarded(self.ask_reason)

    def proposal(self) -> Any:
        """The rule "always for this pattern" would add (bridge.rules.propose_rule), or None (and
        None for a guarded call: a rule would not stop its next card)."""
        if self.guarded:
            return None
        if not hasattr(self, "_proposal"):
            from bridge.rules import Request, propose_rule

            try:
                self._proposal = propose_rule(Request.from_tool_call(self.agent, self.tool_call))
            except Exception:  # a request nothing sensible can be built from: no key
                self._proposal = None
        return self._proposal

    def pattern_scope(self) -> str | None:
        rule = self.proposal()
        if rule is None:
            return None
        from bridge.rules import scope_text

        return scope_text(rule, self.agent_display)

    def why_asked(self) -> str | None:
        """Why the rules left this call to a person, when they say why: the ask rule that
        caught it ("asked by rule 3: ask command=deploy"), or what could not be known ("asked
        because rule 1: deny command=git push might match (…)")."""
        reason = self.ask_reason
        if not reason:
            return None
        if reason.startswith("ask by "):
            return "asked by " + reason.removeprefix("ask by ")
        return "asked because " + reason.removeprefix("ask: ")

    def input_text(self) -> str | None:
        raw = self.tool_call.get("rawInput")
        return None if raw is None else pretty_input(raw)

    def diffs(self) -> list[tuple[str, str]]:
        """(path, unified diff) for every file edit the call carries."""
        out = []
        for item in self.tool_call.get("content") or ():
            if isinstance(item, dict) and item.get("type") == "diff":
                path = item.get("path") or "(file)"
                old = item.get("oldText") or ""
                new = item.get("newText") or ""
                lines = difflib.unified_diff(
                    old.splitlines(keepends=True),
                    new.splitlines(keepends=True),
                    fromfile="/dev/null" if item.get("oldText") is None else f"a/{path}",
                    tofile=f"b/{path}",
                    n=3,
                )
                out.append(
                    (path, "".join(line if line.endswith("\n") else line + "\n" for line in lines))
                )
        return out

    def paths(self) -> list[str]:
        return [
            loc["path"]
            for loc in self.tool_call.get("locations") or ()
            if isinstance(loc, dict) and loc.get("path")
        ]


def pretty_input(raw: Any) -> str:
    """A tool's input for a person: `key: value` lines, multi-line strings as indented blocks
    (so code reads as code, not as one line of escaped newlines), anything nested as JSON."""
    if not isinstance(raw, dict):
        return (
            raw
            if isinstance(raw, str)
            else json.dumps(raw, indent=2, ensure_ascii=False, default=str)
        )
    lines: list[str] = []
    for key, value in raw.items():
        if isinstance(value, str) and "\n" in value.rstrip("\n"):
            lines.append(f"{key}: |")
            lines.extend("  " + line for line in value.rstrip("\n").split("\n"))
        elif isinstance(value, str):
            lines.append(f"{key}: {value}")
        else:
            dumped = json.dumps(value, indent=2, ensure_ascii=False, default=str).split("\n")
            lines.append(f"{key}: {dumped[0]}")
            lines.extend("  " + line for line in dumped[1:])
    return "\n".join(lines)
