"""The links of one console, as the console sees them (`symposium-tui attach HOST …`).

Card ids are made unique across hosts (`<key>-<remote id>`), connections are prefixed with the
host, and what each link reports reaches the console as bus-like events.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from symposium_tui.wire.host_link import HostLink
from symposium_tui.wire.transport import Target


class LinkSet:
    """The links of one console, as the console sees them: card ids unique across hosts
    (`<key>-<remote id>`), connections prefixed with the host, events as bus-like objects."""

    def __init__(
        self, targets: list[Target], post: Callable[[Any], None], *, name: str | None = None
    ):
        self.post = post
        self.links = [
            HostLink(f"h{i}", target, self._on_link, name=name)
            for i, target in enumerate(targets, 1)
        ]
        self._by_key = {link.key: link for link in self.links}

    def start(self) -> None:
        for link in self.links:
            link.start()

    async def stop(self) -> None:
        """Stop every link; none of their tasks or processes is left when this returns."""
        await asyncio.gather(*(link.stop() for link in self.links))

    def labels(self) -> list[str]:
        return [link.label for link in self.links]

    def _on_link(self, kind: str, link: HostLink, payload: dict[str, Any]) -> None:
        if kind == "requested":
            self.post(
                SimpleNamespace(
                    type="approval_requested",
                    approval_id=f"{link.key}-{payload.get('approvalId')}",
                    connection=f"{link.label}:{payload.get('connection', '')}",
                    session_id=str(payload.get("sessionId", "")),
                    agent=str(payload.get("agent", "")),
                    tool_call=payload.get("toolCall") or {},
                    options=payload.get("options") or [],
                    ts=payload.get("created") or 0.0,
                    host=link.label,
                    bypass=payload.get("bypass") is True,
                    agent_version=_text_or_none(payload.get("agentVersion")),
                    ask_reason=_text_or_none(payload.get("askReason")),
                )
            )
        elif kind == "resolved":
            self.post(
                SimpleNamespace(
                    type="approval_resolved",
                    approval_id=f"{link.key}-{payload.get('approvalId')}",
                    outcome=payload.get("outcome") or "cancelled",
                    option_id=payload.get("optionId"),
                    resolver=payload.get("resolver") or "default",
                    by=payload.get("by"),
                    rule=payload.get("rule"),
                    reason=payload.get("reason"),
                    host=link.label,
                    ts=time.time(),
                )
            )
        elif kind == "audit":
            self.post(
                SimpleNamespace(
                    type="audit_head",
                    host=link.label,
                    log=payload.get("log"),
                    seq=payload.get("seq"),
                    head=payload.get("head"),
                    warning=payload.get("warning"),
                )
            )
        else:
            self.post(
                SimpleNamespace(
                    type="link_state",
                    host=link.label,
                    state=payload["state"],
                    detail=payload["detail"],
                )
            )

    def _split(self, approval_id: str) -> tuple[HostLink, str] | None:
        key, _, remote = approval_id.partition("-")
        link = self._by_key.get(key)
        return (link, remote) if link is not None and remote else None

    def owns(self, approval_id: str) -> bool:
        return self._split(approval_id) is not None

    def answer(self, approval_id: str, answer: str, reason: str | None = None) -> bool:
        found = self._split(approval_id)
        return found is not None and found[0].answer(found[1], answer, reason)

    def approve_all(self, connection: str, session_id: str) -> int:
        label, _, remote_connection = connection.partition(":")
        return sum(
            link.approve_session(remote_connection, session_id)
            for link in self.links
            if link.label == label
        )


def _text_or_none(value: Any) -> str | None:
    """A string a host sent for a card, or None for anything else (an older host sends none)."""
    return value if isinstance(value, str) and value else None
