"""The ACP front door's view of a running console: its line into it, over the console socket.

`symposium-tui acp` always runs its agent itself: an ACP session is stateful end to end, so it
must not depend on a console staying up, and the agent keeps the environment and working
directory its client gave it. What the console needs — the sessions, turns, tool calls and the
approvals only a person can answer — goes over the console socket:

    proxy → console  {"method":"link/hello","params":{"kind":"acp","pid":…}}      first line
    proxy → console  {"method":"link/event","params":<event JSON>}               notifications
    proxy → console  {"id":n,"method":"link/approval","params":{"id","approvalId","ctx"}}
                     a request; the console's broker decides it (its rules, then its cards) and answers with
                     the resolution: {"outcome","optionId","resolver","rule","reason","answer"}
    proxy → console  {"method":"link/withdraw","params":{"id","reason","outcome","optionId",
                     "resolver"}}                   decided by the proxy (withdrawn, the client)

The proxy checks for a console (a `stat` of the socket) before each session opens and each prompt,
so a console started later picks the ACP client up from its next session or turn; one whose socket
is there but does not accept yet (still starting) is tried again every 0.1 s until it does.
Approvals keep one id and the connection one name (`<client>-<pid>`) on both ends; each decision
is audited once, where it was made: a console's answer, rules and timeout by the console, a
withdrawal or the client's own answer by the proxy (`link/withdraw` carries it to the console).
A console that goes away fails closed: what it was asked and had not answered is denied (audited
here, where the agent waits); later requests go to the client's own permission UI again.
The console's end is `symposium_tui.wire.acp_door`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge import events as ev
from bridge.approvals import ApprovalContext, Resolution
from bridge.jsonrpc import line_limit
from bridge.paths import runtime_dir
from bridge.rpc import OverlongLine, read_line
from bridge.tasks import TaskSupervisor

if TYPE_CHECKING:
    from bridge.core import Bridge

log = logging.getLogger(__name__)

HELLO = "link/hello"
CONSOLE_GONE = "the console went away before answering"
RETRIES, RETRY_EVERY = 300, 0.1  # a console that is starting: tried for up to 30 s


def _dumps(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), default=str).encode() + b"\n"


class ConsoleLink:
    """Attached to the proxy's bridge: forwards its events, hands its approvals to the console."""

    def __init__(self, bridge: Bridge, proxy: Any = None, path: Path | None = None) -> None:
        self.bridge = bridge
        self.proxy = proxy
        self.path = path or runtime_dir() / "console.sock"
        self._writer: asyncio.StreamWriter | None = None
        self._tasks = TaskSupervisor("console link")  # the reader of the console's answers
        self._handle: Any = None
        self._unsubscribe: Any = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, str] = {}  # link request id → the local approval id
        self._lock = asyncio.Lock()  # one attempt to attach at a time
        self._retry: asyncio.Task[None] | None = None  # retries while a console starts

    @property
    def attached(self) -> bool:
        return self._writer is not None

    async def check(self) -> None:
        """Attach to a console if one is running now (cheap when there is none). A socket that
        is there but does not accept yet is a console still starting: it is tried again every
        0.1 s for a while, and at every check after that, until it accepts."""
        if self._writer is not None or self._tasks.closed:
            return
        async with self._lock:
            refused = await self._try_attach()
        if refused and (self._retry is None or self._retry.done()) and not self._tasks.closed:
            self._retry = self._tasks.start(self._until_accepting(), name="wait for the console")

    async def _until_accepting(self) -> None:
        for _ in range(RETRIES):
            await asyncio.sleep(RETRY_EVERY)
            async with self._lock:
                if self._writer is not None or not await self._try_attach():
                    return  # attached, or the socket is gone

    async def _try_attach(self) -> bool:
        """Attach if a console accepts; True when its socket is there but refused."""
        if self._writer is not None or self._tasks.closed:
            return False
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        if st.st_uid != os.getuid():
            return False
        try:
            reader, writer = await asyncio.open_unix_connection(str(self.path), limit=line_limit())
        except OSError:
            return True
        if self._tasks.closed:  # closed while this connected
            writer.close()
            return False
        self._writer = writer
        writer.write(_dumps({"jsonrpc": "2.0", "method": HELLO, "params": self._hello()}))
        log.info("a console is running: its cards answer this ACP client's approvals")
        if self.proxy is not None:  # what the console missed: the sessions already open
            for session_id in list(self.proxy.sessions):
                self._send_event(
                    ev.SessionStarted(
                        connection=self.proxy.name,
                        session_id=session_id,
                        agent=self.proxy.agent_label,
                        acp_session_id=session_id,
                    )
                )
        self._handle = self.bridge.approvals.attach("console")
        self._unsubscribe = self.bridge.bus.subscribe(self._on_event)
        for approval in list(self.bridge.approvals.pending.values()):
            self._ask(approval.id, approval.ctx)
        self._tasks.start(self._read(reader), name="console reader")
        return False

    def _hello(self) -> dict[str, Any]:
        info = getattr(self.proxy, "client_info", None) or {}
        return {"kind": "acp", "version": 1, "pid": os.getpid(), "client": info.get("name")}

    def _write(self, message: dict[str, Any]) -> None:
        writer = self._writer
        if writer is None:
            return
        try:
            writer.write(_dumps(message))
        except (ConnectionError, OSError, RuntimeError):
            self._gone()

    def _send_event(self, event: ev.Event) -> None:
        self._write(
            {"jsonrpc": "2.0", "method": "link/event", "params": event.model_dump(mode="json")}
        )

    def _on_event(self, event: ev.Event) -> None:
        if isinstance(event, ev.ApprovalRequested):
            ctx = self.bridge.approvals.pending.get(event.approval_id)
            if ctx is not None:
                self._ask(event.approval_id, ctx.ctx)
            return
        if isinstance(event, ev.ApprovalResolved):
            if event.resolver == "policy":  # decided here: the console shows it in its log
                self._send_event(event)
            else:
                # Decided here (withdrawn, the client's own answer): the console's card goes,
                # and the console does not audit it again.
                for link_id, approval_id in list(self._waiting.items()):
                    if approval_id == event.approval_id:
                        del self._waiting[link_id]
                        self._write(
                            {
                                "jsonrpc": "2.0",
                                "method": "link/withdraw",
                                "params": {
                                    "id": link_id,
                                    "reason": event.reason or "withdrawn",
                                    "outcome": event.outcome,
                                    "optionId": event.option_id,
                                    "resolver": event.resolver,
                                },
                            }
                        )
            return
        self._send_event(event)

    def _ask(self, approval_id: str, ctx: ApprovalContext) -> None:
        if approval_id in self._waiting.values():
            return
        link_id = next(self._ids)
        self._waiting[link_id] = approval_id
        self._write(
            {
                "jsonrpc": "2.0",
                "id": link_id,
                "method": "link/approval",
                "params": {
                    "id": link_id,
                    "approvalId": approval_id,
                    "ctx": dataclasses.asdict(ctx),
                },
            }
        )

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                line = await read_line(reader)
                if isinstance(line, OverlongLine):
                    self._overlong(line)
                    continue
                if not line:
                    break
                try:
                    msg = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if isinstance(msg, dict) and "method" not in msg and "id" in msg:
                    self._answered(msg)
        except (ConnectionError, OSError):
            pass
        self._gone()

    def _overlong(self, line: OverlongLine) -> None:
        """A line from the console too long to read: skipped whole. When it answered an approval
        still waiting (its first bytes show the id), that approval is denied, once, here."""
        known, link_id = line.id()
        log.warning(
            "the console sent a message longer than %d bytes: dropped (id %s)",
            line.limit,
            repr(link_id) if known else "unknown",
        )
        if known and link_id in self._waiting:
            message = f"its answer was longer than {line.limit} bytes"
            self._answered({"id": link_id, "error": {"message": message}})

    def _answered(self, msg: dict[str, Any]) -> None:
        approval_id = self._waiting.pop(msg["id"], None) if isinstance(msg["id"], int) else None
        if approval_id is None:
            return
        result = msg.get("result")
        if not isinstance(result, dict):
            error = msg.get("error") or {}
            resolution = Resolution(
                "cancelled", None, "default", reason=f"the console failed: {error.get('message')}"
            )
            pending = self.bridge.approvals.pending.get(approval_id)
            if pending is not None:
                outcome, option_id = _reject(pending.ctx)
                resolution.outcome, resolution.option_id = outcome, option_id
            self.bridge.approvals.settle(approval_id, resolution)
            return
        resolution = Resolution(
            outcome=str(result.get("outcome") or "cancelled"),
            option_id=result.get("optionId"),
            resolver=str(result.get("resolver") or "console"),
            rule=result.get("rule"),
            reason=result.get("reason"),
            answer=result.get("answer"),
            who=result.get("who"),
        )
        # The console's broker audited it: one decision, one audit line.
        self.bridge.approvals.settle(approval_id, resolution, audit=False)

    def _gone(self) -> None:
        if self._writer is None:
            return
        log.warning("the console went away: its pending approvals are denied")
        with contextlib.suppress(Exception):
            self._writer.close()
        self._writer = None
        self._waiting.clear()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._handle is not None:
            self._handle.detach()  # fail closed: what only it could answer is denied
            self._handle = None

    async def close(self) -> None:
        """Detach from the console (what it alone was asked is denied); the reader of its answers
        has ended when this returns."""
        await self._tasks.close()
        self._gone()


def _reject(ctx: ApprovalContext) -> tuple[str, str | None]:
    from bridge.approvals import choose

    return choose(ctx.options, "reject_once")
