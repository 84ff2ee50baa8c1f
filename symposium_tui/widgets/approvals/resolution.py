"""How a settled request is told on its card, and which rules still stop an agent on bypass."""

from __future__ import annotations

from typing import Any


def describe_resolution(event: Any, *, mine: str | None, agent: str) -> str:
    """One line saying how a request was settled (for the card that leaves the queue)."""
    outcome = event.outcome
    reason = f": {event.reason}" if getattr(event, "reason", None) else ""
    if mine is not None:
        said = {
            "approve": "Approved once",
            "deny": "Denied",
            "bypass": f"Approved; bypass on: {agent} is always allowed from now on",
            "allow_always": f"Always allowed ({agent}'s own rule): every later request of this "
            "session runs without a card, each one audited",
            "reject_always": f"Always rejected ({agent}'s own rule): every later request of this "
            "session is refused without a card",
        }.get(mine, mine)
        if outcome == "cancelled":
            return f"✗ The agent did not offer that answer: cancelled{reason}"
        return f"✓ {said}{reason}" if outcome.startswith("allow") else f"✗ {said}{reason}"
    if event.resolver == "default" and outcome == "cancelled":
        return f"↶ Withdrawn{reason or ': the request was cancelled'}"
    if event.resolver == "default":
        return f"✗ Denied{reason}"
    if event.resolver == "vscode":
        return f"Answered in VS Code: {outcome}{reason}"
    if event.resolver == "console":
        who = getattr(event, "by", None) or "another console"
        return f"Answered by {who}: {outcome}{reason}"
    if event.resolver == "timeout":
        return f"✗ Denied: timed out{reason}"
    if event.resolver == "link":
        return f"⚠ Link lost{reason}"
    if event.resolver == "policy":
        rule = f" ({event.rule})" if getattr(event, "rule", None) else ""
        return f"Decided by policy{rule}: {outcome}{reason}"
    return f"{event.resolver}: {outcome}{reason}"


def still_asked_by(app: Any, agent: str) -> list[str]:
    """The deny and ask rules that still stop `agent` on bypass (the live policy's, else the
    settings file's)."""
    bridge = getattr(app, "bridge", None)
    if bridge is not None:
        return list(bridge.approvals.policy.shadowing_denies(agent))
    settings = getattr(app, "settings", None)
    if settings is None:
        return []
    from bridge.approvals import Policy

    return Policy(rules=list(settings.rules)).shadowing_denies(agent)
