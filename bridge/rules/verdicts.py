"""What the rules say: the actions, how sure a match is, and a decision with each command part's
verdict."""

from __future__ import annotations

from bridge.record import Record

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from typing import Any, Literal

    from bridge.rules.rule import Rule

    Action = Literal["allow", "ask", "deny"]
else:
    Action = str
ACTIONS: tuple[str, ...] = ("allow", "ask", "deny")

NO, MIGHT, YES = 0, 1, 2  # whether a deny or ask rule matches: MIGHT when it cannot be known


class PartVerdict(Record):
    """`role`: a wrapper part's, "wrapper" or "privileged" (bridge.shell.Part.role)."""

    _fields = ("part", "action", "rule", "role")  # (no slots: `Decision.to_dict` reads __dict__)

    def __init__(
        self, part: str, action: Action | None, rule: str | None, role: str = "command"
    ) -> None:
        self.part = part
        self.action = action
        self.rule = rule
        self.role = role


class Decision(Record):
    """What the rules say: `action` None means no rule has a say (a person is asked). `label`: the
    deciding rule's label, with its number and line."""

    __slots__ = _fields = ("action", "rule", "label", "why", "parts")

    def __init__(
        self,
        action: Action | None,
        rule: Rule | None = None,
        label: str | None = None,
        why: str = "",
        parts: list[PartVerdict] | None = None,
    ) -> None:
        self.action = action
        self.rule = rule
        self.label = label
        self.why = why
        self.parts: list[PartVerdict] = [] if parts is None else parts

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action or "ask",
            "decided_by": self.label,
            "why": self.why,
            "reason": self.rule.reason if self.rule is not None else None,
            "parts": [p.__dict__ for p in self.parts],
        }
