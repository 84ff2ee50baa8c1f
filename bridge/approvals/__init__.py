"""The approval broker: every `session/request_permission` becomes one decision, audited.

Order: the policy (the bridge's own client tools → deny rules → ask rules → bypass, this
session's then the agent's persisted one → allow rules) → the consoles, when one is attached (the
first to answer wins; the others see the card withdrawn) → the VS Code `symposium-agent-action`
round trip, when the client offered that tool → deny. Fail closed: a
console that goes away denies what only it could answer, and whatever is in doubt is denied.

A broker that *holds* (`hold=True`: `symposium-tui serve`, a bridge that outlives its consoles)
keeps what no policy decided pending while no console is attached, so a console that attaches
later — locally or over `symposium-tui attach` — still gets to answer it. Every approval waiting
for a console is denied after `timeout` seconds without an answer (resolver "timeout", audited).

One module per concern, every public name importable from `bridge.approvals`:

* `model` — what is asked (`ApprovalContext`), what was decided (`Resolution`), answers mapped
  to the agent's options by kind, what the agent is told of a denial (`denial_notice`);
* `policy` — `Policy`: client tools, deny > ask > bypass > allow;
* `rules_thread` — `RULES_THREAD` and `rules_decision`: the rules decided off the event loop,
  within `DECISION_DEADLINE`;
* `broker` — `ApprovalBroker` and `ConsoleHandle`: pending approvals, the consoles, answers,
  withdrawals, timeouts;
* `decisions` — `DecisionLog`: each decision's audit line, who decided, tool outcomes, and the
  calls an agent runs under its own kept "always" answer.
"""

from bridge.approvals.broker import ApprovalBroker, ConsoleHandle
from bridge.approvals.decisions import DecisionLog
from bridge.approvals.model import (
    ANSWER_KIND,
    DENIERS,
    REASON_LIMIT,
    Answer,
    ApprovalContext,
    ClientChoice,
    PendingApproval,
    Resolution,
    capped_reason,
    choose,
    denial_notice,
    host_name,
    local_peer,
)
from bridge.approvals.policy import Policy
from bridge.approvals.rules_thread import (
    DECISION_DEADLINE,
    RULES_THREAD,
    SWITCH_INTERVAL,
    RulesThread,
    rules_decision,
)
from bridge.audit import AuditLog, args_hash
from bridge.rules import Decision, Request, Rule, RuleSet, tool_call_targets

__all__ = [
    "ANSWER_KIND",
    "DECISION_DEADLINE",
    "DENIERS",
    "REASON_LIMIT",
    "RULES_THREAD",
    "SWITCH_INTERVAL",
    "Answer",
    "ApprovalBroker",
    "ApprovalContext",
    "AuditLog",
    "ClientChoice",
    "ConsoleHandle",
    "Decision",
    "DecisionLog",
    "PendingApproval",
    "Policy",
    "Request",
    "Resolution",
    "Rule",
    "RuleSet",
    "RulesThread",
    "args_hash",
    "capped_reason",
    "choose",
    "denial_notice",
    "host_name",
    "local_peer",
    "rules_decision",
    "tool_call_targets",
]
