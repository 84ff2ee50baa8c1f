"""For the ACP front door's tests: a console (the real console host on its unix socket, in this
process) and the audit log's decisions."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from bridge import events as ev


def audit_entries() -> list[dict[str, Any]]:
    """Every line of the audit log: decisions and tool outcomes."""
    path = Path(os.environ["SYMPOSIUM_CONFIG_DIR"]) / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def audit_lines() -> list[dict[str, Any]]:
    """The audit log's decisions."""
    return [line for line in audit_entries() if line.get("type", "decision") == "decision"]


def tool_outcomes() -> list[dict[str, Any]]:
    return [line for line in audit_entries() if line.get("type") == "tool_outcome"]


class Console:
    """The real console host on its socket, with a console attached to its broker (what the app
    does), recording its bus and answering cards as told."""

    def __init__(self, tmp_path: Path, answer: str | None = "approve") -> None:
        from symposium_tui.hosting.console_socket import ConsoleHost
        from symposium_tui.hosting.hosted import build_hosted

        self.bridge = build_hosted(cwd=str(tmp_path)).bridge
        self.host = ConsoleHost(self.bridge)
        self.events: list[ev.Event] = []
        self.answer = answer
        self.handle = self.bridge.approvals.attach("test console")
        self.card = asyncio.Event()
        self.changed = asyncio.Event()
        self.bridge.bus.subscribe(self._on_event)

    def _on_event(self, event: ev.Event) -> None:
        self.events.append(event)
        self.changed.set()
        if isinstance(event, ev.ApprovalRequested):
            self.card.set()
            if self.answer is not None:
                asyncio.get_running_loop().call_soon(
                    self.handle.answer, event.approval_id, self.answer
                )

    def of(self, kind: type[ev.Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    async def until(self, predicate: Any, timeout: float = 60) -> None:
        async def wait() -> None:
            while not predicate():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(wait(), timeout)

    async def __aenter__(self) -> Console:
        await self.host.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def stop(self) -> None:
        if self.host.running:
            self.handle.detach()
            await self.host.stop()
            await self.bridge.close()
