"""`rules explain`: a decision with every command part's own verdict, in agreement with the verdict."""

from __future__ import annotations

from bridge.rules.commands import allow_walk
from bridge.rules.verdicts import MIGHT, Action, Decision, PartVerdict
from bridge.shell import Part

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from bridge.rules.request import Request
    from bridge.rules.rule import Rule
    from bridge.rules.ruleset import RuleSet


def explain(rules: RuleSet, req: Request) -> Decision:
    """Like `decide`, with every part's own verdict filled in (for `rules explain`), in
    agreement with the verdict: a part a deny or ask rule matches (or might match) says so,
    and when the verdict is a deny or an ask no part is shown as allowed unless one part says
    why it is not."""
    decision = rules.decide(req)
    parsed = req.parsed
    if parsed is None or decision.parts:
        return decision
    allow = rules._by_action["allow"]

    def find(part: Part, reach: int | None) -> tuple[int, Rule] | None:
        return allow.first_part(req, part, reach)

    verdicts, _, _ = allow_walk(parsed.parts, find, rules._writable(req))
    for k, part in enumerate(parsed.parts):
        against: tuple[Action, ...] = ("deny", "ask")
        for action in against:
            bucket = rules._by_action[action]
            cand = bucket.first_part(req, part)
            if cand is None and decision.action == "ask" and decision.rule is None:
                cand = next(
                    (c for c in bucket._candidates(part) if c[1].part_verdict(part) == MIGHT),
                    None,
                )
            if cand is not None:
                verdicts[k] = PartVerdict(part.text, action, cand[1].label(cand[0]), part.role)
                break
    final = decision.action
    if final in ("deny", "ask") and not any(v.action == final for v in verdicts):
        for v in verdicts:  # decided by the whole request, or what cannot be known
            if v.action == "allow" or (v.action is None and decision.rule is not None):
                v.action = final
                v.rule = decision.label or decision.why
    decision.parts = verdicts
    return decision
