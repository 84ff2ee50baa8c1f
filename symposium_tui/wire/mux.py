"""`symposium-tui link` when this machine has more than one bridge a console can attach to.

A host may run a console or `serve` (the console socket) and, beside it, headless `vscodelm`
endpoints that hold approvals of their own (`<runtime dir>/endpoints/<pid>.sock`: a VS Code window
that started before any console did). To the console on the other end of ssh, `link` is still one
host: it speaks the console protocol on stdio and fans it out to every socket, found at `hello`
and watched for afterwards.

Approval ids are made unique across sockets (`<socket>_<id>`); answers go back to the socket the
approval came from; `approveSession` goes to all. When a socket's bridge ends, the approvals it
held are reported settled (`default`, "the endpoint ended"): its agent is gone with it. Each bridge
still settles each of its approvals once — this only routes.

When the console's end goes (stdin closes), everything the mux started ends with it: the watcher,
each socket's reader, and requests still waiting for a bridge's answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

from bridge.jsonrpc import LINE_LIMIT
from bridge.lines import OverlongLine, read_line
from bridge.tasks import TaskSupervisor

SEP = "_"
WATCH_INTERVAL = 0.5  # how often new endpoint sockets are looked for


def sockets(runtime: Path) -> dict[str, Path]:
    """The bridges here a console can attach to: name → socket (only this user's)."""
    found: dict[str, Path] = {}
    uid = os.getuid()
    console = runtime / "console.sock"
    with contextlib.suppress(OSError):
        if console.stat().st_uid == uid:
            found["console"] = console
    endpoints = runtime / "endpoints"
    with contextlib.suppress(OSError):
        if endpoints.stat().st_uid == uid:
            for entry in sorted(endpoints.iterdir()):
                if entry.suffix == ".sock" and entry.stat().st_uid == uid:
                    found[f"e{entry.stem}"] = entry
    return found


class Upstream:
    def __init__(self, mux: Mux, name: str, reader: Any, writer: Any) -> None:
        self.mux, self.name, self.reader, self.writer = mux, name, reader, writer
        self.pending: set[str] = set()
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}

    def request(self, method: str, params: dict[str, Any]) -> asyncio.Future[dict[str, Any]]:
        rid = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[rid] = future
        line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        try:
            self.writer.write(line.encode() + b"\n")
        except (OSError, RuntimeError):
            self.waiting.pop(rid, None)
            future.set_result({"error": {"code": -32000, "message": "bridge gone"}})
        return future

    async def read(self) -> None:
        try:
            while line := await read_line(self.reader):
                if isinstance(line, OverlongLine):
                    self._overlong(line)
                    continue
                try:
                    msg = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(msg, dict):
                    continue
                if "method" not in msg and "id" in msg:
                    future = self.waiting.pop(msg["id"], None)
                    if future is not None and not future.done():
                        future.set_result(msg)
                    continue
                params = msg.get("params")
                if not isinstance(params, dict) or not isinstance(params.get("approvalId"), str):
                    continue
                local = params["approvalId"]
                if msg.get("method") == "console/approvalRequested":
                    self.pending.add(local)
                elif msg.get("method") == "console/approvalResolved":
                    if local not in self.pending:
                        continue
                    self.pending.discard(local)
                else:
                    continue
                self.mux.notify(msg["method"], {**params, "approvalId": self.global_id(local)})
        except (OSError, ValueError):
            pass
        finally:
            self.mux.gone(self)

    def _overlong(self, line: OverlongLine) -> None:
        """A line from the bridge over the limit is skipped; an answer the console waits for ends
        with an error saying so, rather than never."""
        found, rid = line.id()
        future = self.waiting.pop(rid, None) if found and isinstance(rid, int) else None
        if future is not None and not future.done():
            message = f"the bridge's answer is longer than {line.limit} bytes"
            future.set_result({"error": {"code": -32000, "message": message}})

    def global_id(self, local: str) -> str:
        return f"{self.name}{SEP}{local}"


class Mux:
    def __init__(self, runtime: Path, out: Any) -> None:
        self.runtime = runtime
        self.out = out
        self.upstreams: dict[str, Upstream] = {}
        self.hello: dict[str, Any] | None = None
        self.host = ""
        # Each socket's reader, the watcher for new sockets, and the console's requests in flight.
        self._tasks = TaskSupervisor("link")

    def send(self, message: dict[str, Any]) -> None:
        if self._tasks.closed:
            return  # the console is gone: nobody reads this
        self.out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def connect(self, name: str, path: Path) -> list[dict[str, Any]] | dict[str, Any]:
        """Attach to one bridge: its pending cards (ids made global), or its error."""
        assert self.hello is not None
        try:
            reader, writer = await asyncio.open_unix_connection(str(path), limit=LINE_LIMIT)
        except OSError as exc:
            return {"code": -32000, "message": f"{path}: {exc.strerror or exc}"}
        if self._tasks.closed:  # the console went while this connected
            writer.close()
            return {"code": -32000, "message": "the console is gone"}
        upstream = Upstream(self, name, reader, writer)
        self.upstreams[name] = upstream
        self._tasks.start(upstream.read(), name=f"reader of {name}")
        answer = await upstream.request("console/hello", self.hello)
        if "error" in answer:
            self.upstreams.pop(name, None)
            writer.close()
            return answer["error"]
        result = answer.get("result") or {}
        self.host = self.host or str(result.get("host") or "")
        cards = []
        for card in result.get("pending") or ():
            if isinstance(card, dict) and isinstance(card.get("approvalId"), str):
                upstream.pending.add(card["approvalId"])
                cards.append({**card, "approvalId": upstream.global_id(card["approvalId"])})
        return cards

    def gone(self, upstream: Upstream) -> None:
        with contextlib.suppress(Exception):
            upstream.writer.close()
        if self.upstreams.get(upstream.name) is not upstream:
            return
        del self.upstreams[upstream.name]
        for future in upstream.waiting.values():
            if not future.done():
                future.set_result({"error": {"code": -32000, "message": "bridge gone"}})
        for local in sorted(upstream.pending):
            self.notify(
                "console/approvalResolved",
                {
                    "approvalId": upstream.global_id(local),
                    "outcome": "cancelled",
                    "optionId": None,
                    "resolver": "default",
                    "by": None,
                    "rule": None,
                    "reason": "the endpoint ended",
                },
            )

    async def watch(self) -> None:
        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            for name, path in sockets(self.runtime).items():
                if name in self.upstreams:
                    continue
                cards = await self.connect(name, path)
                if isinstance(cards, list):
                    for card in cards:
                        self.notify("console/approvalRequested", card)

    async def on_hello(self, rid: Any, params: Any) -> bool:
        if not isinstance(params, dict):
            params = {}
        self.hello = params
        found = sockets(self.runtime)
        pending: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for name, path in found.items():
            cards = await self.connect(name, path)
            if isinstance(cards, list):
                pending += cards
            else:
                errors.append(cards)
        if not self.upstreams:
            if errors and errors[0].get("code") != -32000:
                self.send({"jsonrpc": "2.0", "id": rid, "error": errors[0]})  # e.g. the version
            return False
        result = {"protocol": params.get("protocol"), "host": self.host, "pending": pending}
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})
        self._tasks.start(self.watch(), name="watcher")
        return True

    def request(self, rid: Any, method: str, params: Any) -> None:
        """A request from the console, answered when its bridge (or every bridge) has."""
        self._tasks.start(self.on_request(rid, method, params), name=f"{method} {rid!r}")

    async def close(self) -> None:
        """The console is gone: the watcher, every socket's reader (each socket closed) and the
        requests in flight end before this returns."""
        await self._tasks.close()

    async def on_request(self, rid: Any, method: str, params: Any) -> None:
        if method == "console/answer" and isinstance(params, dict):
            name, _, local = str(params.get("approvalId", "")).partition(SEP)
            upstream = self.upstreams.get(name)
            if upstream is None or not local:
                self.send({"jsonrpc": "2.0", "id": rid, "result": {"accepted": False}})
                return
            answer = await upstream.request(method, {**params, "approvalId": local})
            self.send({"jsonrpc": "2.0", "id": rid, **_outcome(answer)})
        elif method == "console/approveSession" and isinstance(params, dict):
            answers = await asyncio.gather(
                *(u.request(method, params) for u in list(self.upstreams.values()))
            )
            n = sum(_approved(a.get("result")) for a in answers)
            self.send({"jsonrpc": "2.0", "id": rid, "result": {"approved": n}})
        else:
            self.send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {"code": -32601, "message": f"Method not found: {method}"},
                }
            )


def _approved(result: Any) -> int:
    approved = result.get("approved") if isinstance(result, dict) else None
    return approved if isinstance(approved, int) else 0


def _outcome(answer: dict[str, Any]) -> dict[str, Any]:
    return {"error": answer["error"]} if "error" in answer else {"result": answer.get("result")}


async def _stdio() -> tuple[asyncio.StreamReader, Any]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


async def run(runtime: Path) -> int:
    reader, writer = await _stdio()
    return await serve(runtime, reader, writer)


async def serve(runtime: Path, reader: asyncio.StreamReader, writer: Any) -> int:
    """The console protocol on `reader`/`writer`, fanned out to every socket here, until the
    console's end closes; 3 when no bridge here accepted its hello."""
    mux = Mux(runtime, writer)
    attached = False
    try:
        while line := await read_line(reader):
            if isinstance(line, OverlongLine):
                found, rid = line.id()
                if found and attached:
                    message = f"request line longer than {line.limit} bytes"
                    error = {"code": -32600, "message": message}
                    mux.send({"jsonrpc": "2.0", "id": rid, "error": error})
                continue
            try:
                msg = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if (
                not isinstance(msg, dict)
                or "id" not in msg
                or not isinstance(msg.get("method"), str)
            ):
                continue
            if msg["method"] == "console/hello" and not attached:
                attached = await mux.on_hello(msg["id"], msg.get("params"))
                if not attached:
                    await writer.drain()
                    return 3
            elif attached:
                mux.request(msg["id"], msg["method"], msg.get("params"))
        return 0
    finally:
        await mux.close()
