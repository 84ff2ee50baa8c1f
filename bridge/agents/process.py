"""External ACP agents: a command run in its own process group, spoken to over its stdio.

Pitfalls handled here (see docs/real-agents.md): stderr is read continuously (a full pipe hangs the
agent), redacted (`bridge.redact.redact_free_text`: the agent's own secrets, and anything that
looks like one) before anything keeps, logs or passes on a line, and kept as a tail for error
messages; the agent gets its own process group, and the whole
group is killed on close (agents that re-launch themselves leave grandchildren holding the pipes);
the environment is the bridge's own with the agent's additions merged over it.

A descendant that left the group (`setsid()`) and was re-parented still holds the agent's pipes:
the leader's exit is watched on its own (a pidfd, not the end of the pipes), so a request is
answered as soon as the agent is gone, and every process that inherited this agent's marker
(`SYMPOSIUM_AGENT_MARK` in its environment) is killed with the group.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import secrets
import signal
from collections.abc import Callable, Mapping

from bridge import scheduling
from bridge.acp_lines import READ_LIMIT
from bridge.lines import LineFeed
from bridge.tasks import TaskSupervisor

log = logging.getLogger(__name__)

STDERR_LINE_LIMIT = 32 * 1024  # characters of one stderr line kept (and redacted)
MARK_ENV = "SYMPOSIUM_AGENT_MARK"


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
        secret_values: list[str] | None = None,
    ) -> None:
        self.command = command
        self.args = list(args)
        self.extra_env = dict(env or {})
        self.cwd = cwd
        self._on_stderr = on_stderr
        # What to hide from every stderr line: the values of its env, and of ours it inherits.
        from bridge.redact import environment_secrets

        self.secrets = [
            *(secret_values or ()),
            *environment_secrets(self.extra_env),
            *environment_secrets(),
        ]
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=stderr_tail)
        self.proc: asyncio.subprocess.Process | None = None
        self._stdout: asyncio.ReadTransport | None = None  # the agent's stdout, ours to close
        self._tasks = TaskSupervisor(f"agent process {command}")  # its stderr reader and watcher
        self._stderr_task: asyncio.Task[None] | None = None
        self._watch_task: asyncio.Task[None] | None = None  # sets `exited`, then kills leftovers
        self.exited = asyncio.Event()
        self._exit_callbacks: set[Callable[[], None]] = set()  # called as `exited` is set
        self._exit_code: int | None = None  # read when the leader exits, before asyncio reaps it
        self.mark = secrets.token_hex(12)  # inherited by every descendant, setsid() or not

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    async def start(self) -> tuple[asyncio.StreamWriter, asyncio.StreamReader]:
        env = dict(os.environ)
        env.update(self.extra_env)
        env[MARK_ENV] = self.mark
        # The agent's stdout is a pipe of our own, read by a plain pipe transport: asyncio's
        # subprocess transport hands each read to its protocol one turn of the loop later, a
        # turn every message from the agent would wait for.
        out_read, out_write = os.pipe()
        try:
            with scheduling.spawning():  # scheduled as without a relay before it
                self.proc = await asyncio.create_subprocess_exec(
                    self.command,
                    *self.args,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=out_write,
                    stderr=asyncio.subprocess.PIPE,
                    env=env,
                    cwd=self.cwd,
                    start_new_session=True,
                    limit=READ_LIMIT,  # a longer stderr line is cut
                )
        except OSError as exc:
            os.close(out_read)
            raise AgentStartError(
                f"could not start agent {self.command!r}: {exc.strerror or exc}"
            ) from exc
        finally:
            os.close(out_write)
        loop = asyncio.get_running_loop()
        # Read in blocks; the messages the session takes are handled as they are read.
        stdout = LineFeed(limit=READ_LIMIT, loop=loop)
        self._stdout, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stdout, loop=loop),
            os.fdopen(out_read, "rb", buffering=0),
        )
        pid = self.proc.pid
        self._stderr_task = self._tasks.start(self._read_stderr(), name=f"agent {pid} stderr")
        self._watch_task = self._tasks.start(self._watch(), name=f"agent {pid} exit watcher")
        assert self.proc.stdin is not None
        return self.proc.stdin, stdout

    async def _read_stderr(self) -> None:
        from bridge.redact import redact_free_text

        assert self.proc is not None and self.proc.stderr is not None
        stream = self.proc.stderr
        while True:
            try:
                line, skipped = await _stderr_line(stream)
            except Exception:
                return
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            if len(text) > STDERR_LINE_LIMIT or skipped:  # diagnostics, not data: bounded cost
                more = max(0, len(text) - STDERR_LINE_LIMIT)
                unread = f", then {skipped} bytes not read" if skipped else ""
                text = f"{text[:STDERR_LINE_LIMIT]} … ({more} more characters{unread})"
            text = redact_free_text(text, self.secrets)
            self.stderr_tail.append(text)
            log.debug("agent %s stderr: %s", self.command, text)
            if self._on_stderr is not None:
                try:
                    self._on_stderr(text)
                except Exception:
                    log.exception("stderr subscriber failed")

    async def _watch(self) -> None:
        assert self.proc is not None
        # Not `proc.wait()`: it also waits for the pipes to close, which a re-parented
        # descendant holding them may never do.
        await self._leader_exit()
        self._exit_code = _peek_exit_code(self.proc.pid)
        if self._exit_code is None:
            # asyncio's child watcher reaped it first (in its thread): the code reaches the
            # process object by a callback already on its way to this loop.
            for _ in range(100):
                if self.proc.returncode is not None:
                    break
                await asyncio.sleep(0.01)
        if self._stderr_task is not None:
            # Let the last words of a crashing agent reach the tail before anyone reports it.
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 0.5)
        self.exited.set()
        for callback in tuple(self._exit_callbacks):
            try:
                callback()
            except Exception:
                log.exception("an exit callback of agent %s failed", self.command)
        await self._kill_leftovers()

    def on_exit(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` when the agent's process is found to have exited (as `exited` is set);
        returns what takes it back. A callback added after that is never called: check `exited`."""
        self._exit_callbacks.add(callback)
        return lambda: self._exit_callbacks.discard(callback)

    async def _leader_exit(self) -> None:
        """Return once the agent's own process has exited (whoever still holds its pipes)."""
        proc = self.proc
        assert proc is not None
        loop = asyncio.get_running_loop()
        try:
            fd = os.pidfd_open(proc.pid)
        except ProcessLookupError:
            return  # gone (and reaped) already
        except (AttributeError, OSError):
            fd = None
        if fd is not None:
            gone = loop.create_future()

            def leader_gone() -> None:
                if not gone.done():
                    gone.set_result(None)

            loop.add_reader(fd, leader_gone)
            try:
                await gone
            finally:
                loop.remove_reader(fd)
                os.close(fd)
            return
        while proc.returncode is None:  # no pidfd here: the child watcher sets it at exit
            await asyncio.sleep(0.1)

    def kill_now(self) -> None:
        """SIGKILL the group and every marked descendant, synchronously (from any thread: the
        process is about to end and the event loop may not run again)."""
        self._signal_group(signal.SIGKILL)
        for pid in _marked_processes(self.mark):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    async def _kill_leftovers(self) -> None:
        """SIGKILL the agent's process group and every process carrying its mark (descendants
        that called setsid() and were re-parented, which a group signal does not reach)."""
        self._signal_group(signal.SIGKILL)
        for pid in await asyncio.to_thread(_marked_processes, self.mark):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    @property
    def returncode(self) -> int | None:
        """The agent's exit code: asyncio's once its child watcher has reaped the process, else
        the one read when its exit was seen (so a crash is reported with its code at once)."""
        if self.proc is None:
            return None
        return self.proc.returncode if self.proc.returncode is not None else self._exit_code

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
            try:  # the leader's exit, not the pipes' end (a descendant may hold them)
                await asyncio.wait_for(self.exited.wait(), grace)
            except TimeoutError:
                pass
        # Whatever the leader did, the group (and descendants that left it) may still hold
        # children and our pipes: make sure they go.
        await self._kill_leftovers()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), grace)
        watch = self._watch_task
        if watch is not None and not watch.done():
            # The leader is gone (or killed): the watcher sets `exited` and sweeps the leftovers.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(watch), grace)
        await self._tasks.close()  # the stderr reader, and a watcher that did not end in time
        if self._stdout is not None:
            self._stdout.close()  # at its end already, unless something else still holds it
        # asyncio's transport of the process, and the stdin and stderr pipes it holds: it closes
        # itself once both pipes have ended, which a process outside the agent's group holding
        # its stderr would put off for good (the pipe open here, then closed at exit on a loop
        # gone by then: "Event loop is closed").
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()

    def _signal_group(self, sig: int) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)


def _peek_exit_code(pid: int) -> int | None:
    """The exit status of our exited child `pid`, read without reaping it (asyncio's child
    watcher still does): the code it exited with, or minus the signal that killed it."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except (ChildProcessError, OSError, AttributeError):
        return None  # already reaped (asyncio has the code) or not ours
    if info is None:
        return None
    if info.si_code == os.CLD_EXITED:
        return info.si_status
    return -info.si_status


class AgentStartError(Exception):
    pass


def _marked_processes(mark: str) -> list[int]:
    """Pids of our own processes whose environment carries `MARK_ENV=mark` (Linux /proc)."""
    needle = f"{MARK_ENV}={mark}".encode()
    me = os.getpid()
    out: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            out.append(int(entry))
    return out


async def _stderr_line(stream: asyncio.StreamReader) -> tuple[bytes, int]:
    """The next line of `stream` (b"" at its end) and how many of its bytes were not read: of a
    line longer than the reader's limit, the part the limit holds is kept, the rest dropped."""
    try:
        return await stream.readuntil(b"\n"), 0
    except asyncio.IncompleteReadError as exc:
        return exc.partial, 0
    except asyncio.LimitOverrunError as exc:
        head = await stream.readexactly(exc.consumed)
    skipped = 0
    while True:  # to the end of the over-long line
        try:
            skipped += len(await stream.readuntil(b"\n")) - 1  # not its newline
            return head, skipped
        except asyncio.IncompleteReadError as end:
            return head, skipped + len(end.partial)
        except asyncio.LimitOverrunError as more:
            skipped += len(await stream.readexactly(more.consumed))
