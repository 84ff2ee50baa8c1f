"""Wire traces on disk: recording them (`--trace-dir`), reading them back, and telling a trace
from an event log.

A trace is upstream's format, one wire line per record:

    [<RFC3339 UTC time>] <recv|send|stderr>: <line>

so traces written by upstream's Rust server read here too.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bridge.redact import redact_line

log = logging.getLogger(__package__)  # the package's one logger: `bridge.trace`

CHAT_METHOD = "lm/provideLanguageModelChatResponse"


# --- writing -------------------------------------------------------------------------------------


class TraceWriter:
    """Appends every wire line to `dir/vscodelm-YYYYMMDD-HHMMSS.log`, one flushed write per record.

    Called per wire line on the streaming path, so a record is one `os.write` of pre-encoded bytes
    and the timestamp's seconds part is formatted once per second. A trace must never break the
    bridge: after an I/O error it logs once and stops recording.
    """

    def __init__(self, dir: str | os.PathLike[str]) -> None:  # noqa: A002 - the CLI's word
        from bridge.paths import make_private_dir, open_private_fd

        directory = make_private_dir(dir)
        started = datetime.now(UTC)
        self.path = directory / f"vscodelm-{started:%Y%m%d-%H%M%S}.log"
        self._fd: int | None = open_private_fd(self.path)  # 0600: whole conversations
        self._second = -1
        self._prefix = ""

    def recv(self, line: str | bytes) -> None:
        self._write(b"recv", line)

    def send(self, line: str | bytes) -> None:
        self._write(b"send", line)

    def stderr(self, line: str | bytes) -> None:
        self._write(b"stderr", line)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stamp(self) -> bytes:
        now = time.time()
        second = int(now)
        if second != self._second:
            self._second = second
            self._prefix = time.strftime("[%Y-%m-%dT%H:%M:%S.", time.gmtime(second))
        return f"{self._prefix}{int((now - second) * 1_000_000):06d}Z] ".encode()

    def _write(self, direction: bytes, line: str | bytes) -> None:
        if self._fd is None:
            return
        data = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else bytes(line)
        if data.endswith(b"\n"):
            data = data[:-1]
        if direction != b"stderr":
            data = redact_line(data)  # an agent's env (API keys) travels in every request
        stamp = self._stamp()
        # A record is one line; a stray newline inside (free-form stderr) starts another record.
        records = data.split(b"\n") if b"\n" in data else (data,)
        out = b"".join(stamp + direction + b": " + r + b"\n" for r in records)
        try:
            os.write(self._fd, out)
        except OSError as exc:
            log.warning("trace %s: %s; no longer recording", self.path, exc)
            self.close()


# --- reading -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceRecord:
    time: str
    direction: str  # "recv", "send" or "stderr"
    line: str
    message: dict[str, Any] | None  # the parsed JSON-RPC message of a recv/send line


_RECORD = re.compile(r"\[([^\]]*)\] (recv|send|stderr): ?(.*)\Z", re.DOTALL)


class TraceReader:
    """Iterates a trace's records; lines that are not records are skipped and counted."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.skipped = 0  # junk lines seen so far

    def __iter__(self) -> Iterator[TraceRecord]:
        with open(self.path, "rb") as f:
            for raw in f:
                text = raw.decode("utf-8", "replace").rstrip("\r\n")
                if not text.strip():
                    continue
                m = _RECORD.match(text)
                if m is None:
                    self.skipped += 1
                    continue
                stamp, direction, line = m.groups()
                message = None
                if direction != "stderr":
                    try:
                        parsed = json.loads(line)
                    except (ValueError, RecursionError):
                        parsed = None
                    message = parsed if isinstance(parsed, dict) else None
                yield TraceRecord(stamp, direction, line, message)


def read_trace(path: str | os.PathLike[str]) -> TraceReader:
    """The records of a trace file: iterate the result; its `skipped` counts junk lines."""
    return TraceReader(path)


AUDIT_NOT_REPLAYED = (
    "an audit log, not a trace or an event log: `symposium-tui audit verify` checks it and "
    "`symposium-tui audit export` lists its decisions"
)


def sniff_file(path: str | os.PathLike[str]) -> str | None:
    """ "trace" for a vscodelm wire trace, "events" for a JSONL event log, "audit" for an audit
    log (its entries are chained: `prev`, `hash`; `symposium-tui audit` reads it), None for
    none of them."""
    with open(path, "rb") as f:
        for n, raw in enumerate(f):
            if n >= 200:
                break
            text = raw.decode("utf-8", "replace").strip()
            if not text:
                continue
            if _RECORD.match(text):
                return "trace"
            try:
                data = json.loads(text)
            except (ValueError, RecursionError):
                continue
            if isinstance(data, dict) and "prev" in data and "hash" in data and "seq" in data:
                return "audit"
            if isinstance(data, dict) and isinstance(data.get("type"), str):
                return "events"
    return None
