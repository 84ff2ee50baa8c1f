"""Who decides without a person: the bridge's own client tools, the rules, and the bypasses."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from bridge.approvals.model import ApprovalContext, Resolution, choose
from bridge.rules import Decision, Request, Rule, RuleSet


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
