"""Helpers for the remote-approval tests and benchmark: a `symposium-tui serve` per fake host, and a
console without a UI (the `LinkSet` the attached console uses, recording what it is told)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from symposium_tui.wire.link_set import LinkSet
from symposium_tui.wire.transport import Target
from tests.support.lmclient import REPO, LmClient
from tests.support.sshd import FakeHost


class ServeProcess:
    """`symposium-tui serve` for one fake host (its own runtime and config dirs)."""

    def __init__(self, host: FakeHost, proc: asyncio.subprocess.Process) -> None:
        self.host = host
        self.proc = proc

    @classmethod
    async def start(cls, host: FakeHost, *extra: str) -> ServeProcess:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "symposium_tui",
            "serve",
            "--cwd",
            str(host.root),
            *extra,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=host.env(),
            cwd=str(REPO),
        )
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert b"serving on" in line, line
        return cls(host, proc)

    async def client(self) -> LmClient:
        """A VS Code-like client on this host: `symposium-tui vscodelm` relaying to this serve."""
        return await LmClient.start("--cwd", str(self.host.root), env=self.host.env())

    def audit(self) -> list[dict[str, Any]]:
        """The decisions in this host's audit log (not the tools' reported outcomes)."""
        path = self.host.config_dir / "audit.jsonl"
        if not path.exists():
            return []
        entries = [json.loads(line) for line in path.read_text().splitlines()]
        return [e for e in entries if e.get("type", "decision") == "decision"]

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.terminate()
            await asyncio.wait_for(self.proc.wait(), 20)


class HeadlessConsole:
    """A console's links without the UI: records every event, answers on request."""

    def __init__(self, targets: list[Target], name: str) -> None:
        self.events: list[Any] = []
        self._changed = asyncio.Event()
        self.links = LinkSet(targets, self._post, name=name)
        self.on_card: Any = None

    def _post(self, event: Any) -> None:
        self.events.append(event)
        self._changed.set()
        if event.type == "approval_requested" and self.on_card is not None:
            self.on_card(event)

    def start(self) -> HeadlessConsole:
        self.links.start()
        return self

    async def wait_for(self, predicate: Any, timeout: float = 30) -> Any:
        async with asyncio.timeout(timeout):
            while True:
                for event in self.events:
                    if predicate(event):
                        return event
                self._changed.clear()
                await self._changed.wait()

    def cards(self) -> list[Any]:
        return [e for e in self.events if e.type == "approval_requested"]

    def resolved(self, approval_id: str) -> list[Any]:
        return [
            e for e in self.events if e.type == "approval_resolved" and e.approval_id == approval_id
        ]

    async def stop(self) -> None:
        await self.links.stop()


def ssh_target(sshd: Any, host: str) -> Target:
    return Target.parse(host, ssh=sshd.ssh, remote_command=sshd.remote_command)


def runtime_socket(host: FakeHost) -> Path:
    return host.runtime_dir / "console.sock"
