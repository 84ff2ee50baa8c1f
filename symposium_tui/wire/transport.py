"""Where a console's link to a host goes, and what carries it.

A link to another machine runs the system's `ssh` (so `~/.ssh/config`, keys, agent forwarding and
jump hosts work as they always do): `ssh HOST symposium-tui link`, whose stdio is the remote
console socket (`symposium_tui.wire.mux`). A link to this machine (`local`) runs the same `link`
without ssh. A link that drops is tried again with backoff; its process is ended with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os
import random
import shlex
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_REMOTE_COMMAND = "symposium-tui link"
SSH_OPTIONS = (
    "-T",  # no terminal: the link's stdio is the protocol
    "-o",
    "BatchMode=yes",  # never prompt (the console owns the terminal): keys or an agent
    "-o",
    "ServerAliveInterval=10",
    "-o",
    "ServerAliveCountMax=3",
)


def console_name() -> str:
    """How this console is named to the hosts it attaches to (shown as who answered)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid
        user = str(os.getuid())
    return f"{user}@{os.environ.get('SYMPOSIUM_HOST_NAME') or socket.gethostname()}"


@dataclass
class Target:
    """Where a link goes: `argv` to spawn (ssh), or a console socket on this machine."""

    label: str
    argv: list[str] | None = None
    socket: Path | None = None

    @classmethod
    def parse(
        cls, spec: str, *, ssh: str = "ssh", remote_command: str = DEFAULT_REMOTE_COMMAND
    ) -> Target:
        if spec == "local":
            # The same `link` ssh would run, without ssh: every bridge on this machine.
            return cls("local", argv=[sys.executable, "-m", "symposium_tui", "link"])
        if not spec or spec.startswith("-") or any(c.isspace() for c in spec):
            raise ValueError(f"not a host: {spec!r} (expected [USER@]HOST or an ssh alias)")
        argv = [*shlex.split(ssh), *SSH_OPTIONS, spec, remote_command]
        return cls(spec.rsplit("@", 1)[-1], argv=argv)


@dataclass
class Backoff:
    first: float = 0.25
    limit: float = 15.0
    delay: float = field(init=False, default=0.0)

    def next(self) -> float:
        self.delay = self.first if self.delay == 0 else min(self.limit, self.delay * 2)
        return self.delay * random.uniform(0.8, 1.2)

    def reset(self) -> None:
        self.delay = 0.0


async def end_process(proc: asyncio.subprocess.Process, *, at_once: bool) -> None:
    """End a link's process: SIGTERM and up to 5 s to exit (ssh says goodbye), or at once a
    SIGKILL; either way it has exited (and been reaped) when this returns."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            if at_once:
                proc.kill()
            else:
                proc.terminate()
    try:
        await asyncio.wait_for(proc.wait(), 5)
    except TimeoutError:
        pass
    finally:
        if proc.returncode is None:  # deaf to SIGTERM, or the link stopped while it waited
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
