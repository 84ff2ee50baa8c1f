"""What the rules say: the actions, how sure a match is, and a decision with each command part's
verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from bridge.rules.rule import Rule

Action = Literal["allow", "ask", "deny"]
ACTIONS: tuple[str, ...] = ("allow", "ask", "deny")

NO, MIGHT, YES = 0, 1, 2  # whether a deny or ask rule matches: MIGHT when it cannot be known


@dataclass
class PartVerdict:
    part: str
    action: Action | None
    rule: str | None
    role: str = "command"  # a wrapper part: "wrapper" or "privileged" (bridge.shell.Part.role)


@dataclass
class Decision:
    """What the rules say: `action` None means no rule has a say (a person is asked)."""

    action: Action | None
    rule: Rule | None = None
    label: str | None = None  # the deciding rule's label, with its number and line
    why: str = ""
    parts: list[PartVerdict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action or "ask",
            "decided_by": self.label,
            "why": self.why,
            "reason": self.rule.reason if self.rule is not None else None,
            "parts": [p.__dict__ for p in self.parts],
        }
