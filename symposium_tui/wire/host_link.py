"""The console protocol, console side: this console's link to one bridge it is attached to.

`symposium-tui attach HOST …` keeps one `HostLink` per host, carried by `ssh HOST symposium-tui
link` or, for `local`, by the same `link` run here (`symposium_tui.wire.transport`). Over either,
the link says `console/hello`, gets every approval pending there, then each new one and each
settlement, and sends answers.

Fail closed, per host: when a link drops, the cards of that host leave this console at once (an
answer can no longer reach it) and nothing else is touched; the host keeps them pending (until
another console answers or its timeout denies them). The link reconnects with backoff, and what
is still pending there comes back. An answer is applied by the host's broker, which settles each
approval once; an answer lost with the link is simply not applied, and the card comes back.

At every (re)connection the link asks for the head of the host's audit log and whether it still
extends the head this console recorded last (`symposium_tui.audit_heads`); a head that does not is
reported to the console as a warning.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
from collections.abc import Callable
from typing import Any

from bridge.jsonrpc import LINE_LIMIT
from bridge.lines import OverlongLine, read_line
from bridge.tasks import OwnerClosed, TaskSupervisor
from symposium_tui.wire.transport import Backoff, Target, console_name, end_process

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1


class LinkDown(Exception):
    pass


class HostLink:
    """One attached host. Calls `listener(kind, link, payload)` on the loop: kind is "requested"
    (a card dict), "resolved" (a settlement dict), "state" (a dict with `state` and `detail`) or
    "audit" (the host's audit head report, with the `warning` to show, if any)."""

    def __init__(
        self,
        key: str,
        target: Target,
        listener: Callable[[str, HostLink, dict[str, Any]], None],
        *,
        name: str | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.key = key
        self.target = target
        self.label = target.label
        self.listener = listener
        self.name = name or console_name()
        self.backoff = backoff or Backoff()
        self.state = "connecting"
        self.detail = ""
        self.remote_host: str | None = None
        self.pending: dict[str, dict[str, Any]] = {}  # remote approval id → card
        self.connects = 0
        self.proc: asyncio.subprocess.Process | None = None
        self._writer: Any = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        # The link's loop and the reader of its ssh's stderr: a failure is logged, and `stop()`
        # ends both (and the ssh) before it returns.
        self._tasks = TaskSupervisor(f"link to {self.label}")
        self._task: asyncio.Task[None] | None = None
        self._up = asyncio.Event()

    # --- running ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Run the link (connect, reconnect with backoff) until `stop()`; once only."""
        if self._task is None and not self._tasks.closed:
            self._task = self._tasks.start(self.run(), name="connection")

    async def wait_up(self) -> None:
        await self._up.wait()

    async def run(self) -> None:
        while True:
            try:
                await self._session()
                detail = "the link closed"
            except LinkDown as exc:
                detail = str(exc)
            except (OSError, ConnectionError, ValueError) as exc:
                detail = f"{type(exc).__name__}: {exc}"
            self._went_down(detail)
            await asyncio.sleep(self.backoff.next())

    async def _open(self) -> tuple[asyncio.StreamReader, Any]:
        if self.target.socket is not None:
            path = self.target.socket
            st = os.stat(path)  # OSError: no bridge running here
            if st.st_uid != os.getuid():
                raise LinkDown(f"{path} belongs to another user")
            return await asyncio.open_unix_connection(str(path), limit=LINE_LIMIT)
        assert self.target.argv is not None
        self.proc = await asyncio.create_subprocess_exec(
            *self.target.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # never the console's terminal: ssh must not prompt on it
            limit=LINE_LIMIT,
        )
        assert self.proc.stdout is not None
        return self.proc.stdout, self.proc.stdin

    async def _session(self) -> None:
        reader, writer = await self._open()
        proc = self.proc
        stderr_task = None
        if proc is not None and proc.stderr is not None:
            try:
                stderr_task = self._tasks.start(self._read_stderr(proc.stderr), name="ssh stderr")
            except OwnerClosed:  # stopped while the ssh started: it goes at once
                self.proc = None
                await end_process(proc, at_once=True)
                raise asyncio.CancelledError from None
        self._writer = writer
        stopping = False
        try:
            hello = self._request(
                "console/hello", {"protocol": PROTOCOL_VERSION, "console": self.name}
            )
            await self._read(reader, until=hello)
            result = hello.result()
            self.remote_host = result.get("host")
            self.state, self.detail = "up", ""
            self.connects += 1
            self.backoff.reset()
            self.listener("state", self, {"state": "up", "detail": ""})
            for card in result.get("pending") or ():
                self._requested(card)
            await self._check_audit(reader)
            self._up.set()
            await self._read(reader)
        except asyncio.CancelledError:
            stopping = True  # the link is stopping: its ssh gets no grace
            raise
        finally:
            self._writer = None
            with contextlib.suppress(Exception):
                writer.close()
            if proc is not None:
                await end_process(proc, at_once=stopping)
                self.proc = None
            if stderr_task is not None and not stopping:
                # Its last lines say why the link ended. A grandchild holding stderr open is not
                # waited for long (the reader is cancelled); a reader that failed was logged.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(stderr_task, 1)

    async def _check_audit(self, reader: asyncio.StreamReader) -> None:
        """Ask for the host's audit head; record it, or report that it does not extend the one
        recorded last. A host that does not answer this (an older one) is let be."""
        from symposium_tui import audit_heads

        host = self.remote_host or self.label
        try:
            seen = audit_heads.seen(host)
        except (OSError, ValueError) as exc:
            self.listener("audit", self, {"warning": f"audit heads not checked: {exc}"})
            return
        check = self._request("console/auditHead", {"seen": seen})
        try:
            await self._read(reader, until=check)
        except LinkDown:
            if not check.done():
                raise  # the link went down
            log.info("%s: no audit head: %s", self.label, check.exception())
            return
        report = check.result().get("audit")
        if not isinstance(report, dict):
            return  # the host keeps no audit log
        try:
            warning = audit_heads.observe(host, report)
        except (OSError, ValueError) as exc:
            warning = f"audit heads not recorded: {exc}"
        self.listener("audit", self, {**report, "warning": warning})

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        while True:
            line = await read_line(stream)
            if not line:
                return
            head = line.head + b"\xe2\x80\xa6" if isinstance(line, OverlongLine) else line
            text = head.decode(errors="replace").strip()
            if text:
                self.detail = text[:300]
                log.info("%s: %s", self.label, text)

    async def _read(self, reader: asyncio.StreamReader, until: asyncio.Future[Any] | None = None):
        while until is None or not until.done():
            line = await read_line(reader)
            if not line:
                raise LinkDown(self.detail or "the link closed")
            if isinstance(line, OverlongLine):  # skipped whole; what follows it is read as usual
                log.warning("%s: a line over %d bytes skipped", self.label, line.limit)
                continue
            try:
                msg = json.loads(line)
            except (ValueError, RecursionError):
                log.warning("%s: not JSON: %.200r", self.label, line)
                continue
            if not isinstance(msg, dict):
                continue
            method = msg.get("method")
            if method == "console/approvalRequested" and isinstance(msg.get("params"), dict):
                self._requested(msg["params"])
            elif method == "console/approvalResolved" and isinstance(msg.get("params"), dict):
                params = msg["params"]
                if self.pending.pop(str(params.get("approvalId")), None) is not None:
                    self.listener("resolved", self, params)
            elif method is None and "id" in msg:
                future = self._waiting.pop(msg["id"], None)
                if future is not None and not future.done():
                    if "error" in msg:
                        error = msg["error"] or {}
                        future.set_exception(LinkDown(str(error.get("message") or error)))
                    else:
                        future.set_result(msg.get("result") or {})
        if until is not None and until.exception() is not None:
            raise until.exception()  # type: ignore[misc]  # checked not None just above

    def _requested(self, card: dict[str, Any]) -> None:
        approval_id = card.get("approvalId")
        if not isinstance(approval_id, str) or approval_id in self.pending:
            return
        self.pending[approval_id] = card
        self.listener("requested", self, card)

    def _went_down(self, detail: str) -> None:
        announce = self.state != "down"  # a host that stays unreachable is announced once
        self.state, self.detail = "down", detail
        self._up.clear()
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(LinkDown(detail))
        self._waiting.clear()
        lost, self.pending = self.pending, {}
        for approval_id in lost:
            self.listener(
                "resolved",
                self,
                {
                    "approvalId": approval_id,
                    "outcome": "cancelled",
                    "resolver": "link",
                    "by": None,
                    "reason": f"to {self.label} ({detail}): it is still pending there and "
                    "comes back when the link does",
                },
            )
        if announce:
            self.listener("state", self, {"state": "down", "detail": detail})

    # --- sending --------------------------------------------------------------------------------------

    def _request(self, method: str, params: dict[str, Any]) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self._writer is None:
            future.set_exception(LinkDown("not connected"))
            return future
        rid = next(self._ids)
        self._waiting[rid] = future
        data = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        try:
            self._writer.write(data.encode() + b"\n")
        except (OSError, RuntimeError, ConnectionError) as exc:
            self._waiting.pop(rid, None)
            future.set_exception(LinkDown(str(exc)))
        return future

    def answer(self, approval_id: str, answer: str, reason: str | None = None) -> bool:
        """Send an answer; False when the link is down or the card is not pending here. Whether it
        won is told by the settlement that follows (the host settles each approval once)."""
        if self.state != "up" or approval_id not in self.pending:
            return False
        params: dict[str, Any] = {"approvalId": approval_id, "answer": answer}
        if reason:
            params["reason"] = reason
        future = self._request("console/answer", params)
        future.add_done_callback(_ignore_result)
        return not future.done() or future.exception() is None

    def approve_session(self, connection: str, session_id: str) -> int:
        if self.state != "up":
            return 0
        n = sum(
            1
            for card in self.pending.values()
            if card.get("connection") == connection and card.get("sessionId") == session_id
        )
        if n:
            future = self._request(
                "console/approveSession", {"connection": connection, "sessionId": session_id}
            )
            future.add_done_callback(_ignore_result)
        return n

    async def stop(self) -> None:
        """End the link: its loop and stderr reader are cancelled and waited for, its ssh killed;
        nothing of it runs when this returns."""
        await self._tasks.close()
        self._task = None
        proc, self.proc = self.proc, None
        if proc is not None:  # stopped before its session took charge of it
            await end_process(proc, at_once=True)


def _ignore_result(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.info("an answer did not reach its host: %s", future.exception())
