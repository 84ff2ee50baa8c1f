"""Approval fatigue, measured: per pattern, how often a person was asked, how often they approved,
how long they took, and how many approvals in a row — with a rule suggested (never applied) once a
pattern has been approved `threshold` times in a row.

A request's *pattern* is the rule "always for this pattern" would propose for it
(`bridge.rules.propose_rule`: `git status -s` → commands starting `git status` by that agent);
requests nothing can be proposed for are grouped by agent, kind and title. Only requests shown to a
person count (a rule or a bypass answering is not being asked); a denial ends the run.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

DEFAULT_THRESHOLD = 5
PERSON_RESOLVERS = ("console", "vscode")


@dataclass
class PatternStats:
    key: str
    rule: Any  # the proposed bridge.rules.Rule, or None
    asked: int = 0
    approved: int = 0
    denied: int = 0
    in_a_row: int = 0  # approvals since the last denial
    seconds: list[float] = field(default_factory=list)  # how long the person took, each time
    suggested: bool = False  # a suggestion was announced for the current run

    @property
    def median_seconds(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds else None


class FatigueStats:
    def __init__(self, threshold: int = DEFAULT_THRESHOLD) -> None:
        self.threshold = threshold
        self.patterns: dict[str, PatternStats] = {}
        self._pending: dict[str, tuple[str, float]] = {}  # approval id → (pattern, asked at)

    def requested(
        self,
        approval_id: str,
        agent: str,
        tool_call: dict[str, Any],
        ts: float,
        agent_name: str | None = None,
    ) -> None:
        """A card was shown. `agent` is the id the proposed rule keys on; `agent_name`, when
        given, is how the pattern names the agent to a person."""
        key, rule = pattern_of(agent, tool_call, agent_name)
        stats = self.patterns.get(key)
        if stats is None:
            stats = self.patterns[key] = PatternStats(key, rule)
        stats.asked += 1
        self._pending[approval_id] = (key, ts)

    def resolved(
        self, approval_id: str, outcome: str, resolver: str, ts: float
    ) -> PatternStats | None:
        """Count a person's answer. Returns the pattern when this answer makes it worth a rule
        (approved `threshold` times in a row, announced once per run)."""
        pending = self._pending.pop(approval_id, None)
        if pending is None or resolver not in PERSON_RESOLVERS:
            return None
        stats = self.patterns[pending[0]]
        stats.seconds.append(max(0.0, ts - pending[1]))
        if outcome.startswith("allow"):
            stats.approved += 1
            stats.in_a_row += 1
        elif outcome.startswith("reject"):
            stats.denied += 1
            stats.in_a_row = 0
            stats.suggested = False
        if stats.rule is not None and stats.in_a_row >= self.threshold and not stats.suggested:
            stats.suggested = True
            return stats
        return None

    def rows(self) -> list[PatternStats]:
        """Most asked first."""
        return sorted(self.patterns.values(), key=lambda s: (-s.asked, s.key))


def pattern_of(
    agent: str, tool_call: dict[str, Any], agent_name: str | None = None
) -> tuple[str, Any]:
    try:
        from bridge.rules import Request, propose_rule, scope_text

        rule = propose_rule(Request.from_tool_call(agent, tool_call))
    except Exception:
        rule = None
    if rule is not None:
        return scope_text(rule, agent_name).removeprefix("always allow "), rule
    kind = tool_call.get("kind") or "other"
    return f"{kind} “{tool_call.get('title') or ''}” by {agent_name or agent}", None
