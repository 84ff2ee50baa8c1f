"""External ACP agents: a command run in its own process group, spoken to over its stdio.

Pitfalls handled here (see docs/real-agents.md): stderr is read continuously (a full pipe hangs the
agent) and kept as a tail for error messages; the agent gets its own process group, and the whole
group is killed on close (agents that re-launch themselves leave grandchildren holding the pipes);
the environment is the bridge's own with the agent's additions merged over it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)

STREAM_LIMIT = 64 * 1024 * 1024


class AgentProcess:
    def __init__(
        self,
        command: str,
        args: list[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        on_stderr: Callable[[str], None] | None = None,
        stderr_tail: int = 40,
    ) -> None:
        self.command = command
        self.args = list(args)
        self.extra_env = dict(env or {})
        self.cwd = cwd
        self._on_stderr = on_stderr
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=stderr_tail)
        self.proc: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self.exited = asyncio.Event()

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    async def start(self) -> tuple[asyncio.StreamWriter, asyncio.StreamReader]:
        env = dict(os.environ)
        env.update(self.extra_env)
        try:
            self.proc = await asyncio.create_subprocess_exec(
                self.command,
                *self.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=self.cwd,
                start_new_session=True,
                limit=STREAM_LIMIT,
            )
        except OSError as exc:
            raise AgentStartError(
                f"could not start agent {self.command!r}: {exc.strerror or exc}"
            ) from exc
        self._stderr_task = asyncio.ensure_future(self._read_stderr())
        asyncio.ensure_future(self._watch())
        assert self.proc.stdin is not None and self.proc.stdout is not None
        return self.proc.stdin, self.proc.stdout

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        stream = self.proc.stderr
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # an over-long line: skip what the reader dropped
                continue
            except Exception:
                return
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            self.stderr_tail.append(text)
            log.debug("agent %s stderr: %s", self.command, text)
            if self._on_stderr is not None:
                try:
                    self._on_stderr(text)
                except Exception:
                    log.exception("stderr subscriber failed")

    async def _watch(self) -> None:
        assert self.proc is not None
        await self.proc.wait()
        if self._stderr_task is not None:
            # Let the last words of a crashing agent reach the tail before anyone reports it.
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 0.5)
        self.exited.set()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode if self.proc else None

    def describe_exit(self) -> str:
        code = self.returncode
        what = (
            f"agent process exited with code {code}"
            if code is not None
            else "agent process closed its output"
        )
        tail = "\n".join(self.stderr_tail)
        return f"{what}: {tail[-2000:]}" if tail else what

    async def close(self, grace: float = 2.0) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.returncode is None:
            with contextlib.suppress(Exception):
                if proc.stdin is not None:
                    proc.stdin.close()
            self._signal_group(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), grace)
            except asyncio.TimeoutError:
                pass
        # Whatever the leader did, the group may still hold children: make sure they go.
        self._signal_group(signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), grace)
        if self._stderr_task is not None:
            self._stderr_task.cancel()

    def _signal_group(self, sig: int) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)


class AgentStartError(Exception):
    pass
