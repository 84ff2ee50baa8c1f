"""The decision trail: an append-only, hash-chained JSONL log of every approval decision.

Each line is one JSON object. Besides what it records it carries `seq` (1, 2, 3, … in the file),
`prev` (the previous entry's `hash`; "" for the first) and `hash`: the SHA-256 of the entry's
canonical JSON (sorted keys, no spaces, without `hash` itself). So an edited entry no longer
matches its hash, and a removed or reordered entry breaks the `seq` count and the `prev` link of
the entry after it. `verify` reports the first of each; it prints the head (the last hash) too.

What the chain proves, and what it cannot: any process of the same user can rewrite the whole file
and compute every hash again, and a truncated file is a valid shorter chain, so the chain alone
only catches careless edits. A head kept *outside* the file is the anchor: `head()` (`symposium-tui
audit head`) reads it, every console that attaches records each host's heads in its own state
directory and warns when a later head does not extend the last one it saw, and `verify(…, heads=…)`
(`audit verify --head SEQ:HASH|HASH|FILE`) fails unless the chain still passes through every head
recorded: a rewrite, a removal or a truncation before a recorded head is caught, one after it
cannot be.

Two kinds of entry: `"type": "decision"` (the request, who or what decided, the hash of the exact
arguments approved) and `"type": "tool_outcome"` (the agent's report of how an approved call ended,
linked by `approval_id`). Appends take an exclusive `flock` on the file and read the last entry
under it, so several processes appending to one log keep one chain. Lines written before the chain
existed (no `hash`) are reported as unchained; the first chained entry links to the hash of the
last such line's bytes.
"""

from __future__ import annotations

import csv
import fcntl
import hashlib
import io
import json
import os
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bridge.audit_chain import args_hash as args_hash
from bridge.audit_chain import chained, entry_hash, last_line, link_of

CSV_COLUMNS = (
    "seq",
    "ts",
    "time",
    "type",
    "approval_id",
    "connection",
    "session_id",
    "agent",
    "tool_call_id",
    "title",
    "kind",
    "outcome",
    "decider",
    "person",
    "via",
    "rule",
    "reason",
    "args_sha256",
    "status",
    "hash",
)


class AuditLog:
    """Append-only, hash-chained JSONL of every approval decision: flushed at once (under an
    exclusive lock, so the chain holds across processes), fsynced off the hot path."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        from bridge.paths import open_private_fd

        # 0600 in a 0700 directory, whatever the umask
        self._fd = open_private_fd(self.path, readable=True)
        self._lock = threading.Lock()
        self._dirty = threading.Event()
        self._closed = False
        self._cache: tuple[int, int, str] | None = None  # (file size, seq, hash) after our write
        self._syncer = threading.Thread(target=self._sync_loop, name="audit-fsync", daemon=True)
        self._syncer.start()

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Chain and write one entry; returns it as written (with seq, prev and hash)."""
        with self._lock:
            if self._closed:
                raise ValueError("the audit log is closed")
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                size = os.fstat(self._fd).st_size
                if self._cache is not None and self._cache[0] == size:
                    seq, prev = self._cache[1], self._cache[2]
                else:  # first write, or another process appended meanwhile
                    seq, prev = link_of(last_line(self._fd)) if size else (0, "")
                entry, data_bytes = chained(record, seq, prev)
                os.write(self._fd, data_bytes)
                self._cache = (size + len(data_bytes), seq + 1, entry["hash"])
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._dirty.set()
        return entry

    def _sync_loop(self) -> None:
        while not self._closed:
            self._dirty.wait()
            self._dirty.clear()
            with self._lock:
                if self._closed:
                    return
                try:
                    os.fsync(self._fd)
                except OSError:
                    return

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            os.fsync(self._fd)
            self._closed = True
            os.close(self._fd)
        self._dirty.set()


# --- reading, verifying, exporting -------------------------------------------------------------------


@dataclass
class Problem:
    line: int  # 0: a problem of the whole log, at no line of it (a head recorded earlier)
    seq: Any
    what: str

    def __str__(self) -> str:
        if not self.line:
            return f"entry {self.seq}: {self.what}" if self.seq is not None else self.what
        seq = f" (entry {self.seq})" if self.seq is not None else ""
        return f"line {self.line}{seq}: {self.what}"


@dataclass(frozen=True)
class Head:
    """Where a chain ended when it was looked at: the last entry's `seq` and `hash` (`SEQ:HASH`).
    A seq of None (a bare hash) matches the entry with that hash wherever it is."""

    seq: int | None
    hash: str

    def __str__(self) -> str:
        return self.hash if self.seq is None else f"{self.seq}:{self.hash}"

    @classmethod
    def parse(cls, text: str) -> Head:
        seq, sep, digest = text.strip().rpartition(":")
        if not sep:
            return cls(None, digest)
        if not seq.isdigit() or not digest:
            raise ValueError(f"not a head: {text!r} (SEQ:HASH, or a HASH)")
        return cls(int(seq), digest)


def head(path: str | os.PathLike[str]) -> Head:
    """The chain's head now, read from its last line (cheap: the file is not walked)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return Head(0, "")
    try:
        seq, digest = link_of(last_line(fd))
    finally:
        os.close(fd)
    return Head(seq, digest)


@dataclass
class Verification:
    entries: int = 0
    unchained: int = 0
    head: str = ""
    seq: int = 0  # the last entry's
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(
    path: str | os.PathLike[str],
    *,
    head: str | None = None,
    heads: Iterable[Head] = (),
) -> Verification:
    """Check the whole chain: every hash, every `seq`, every `prev` link; that it ends at `head`,
    when given; and that it passes through each of `heads` (recorded earlier, elsewhere)."""
    wanted = {h.hash: h for h in heads}
    found: dict[str, int] = {}
    result = Verification()
    expected_seq = 1
    prev = ""
    chained = False
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip(b"\n")
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                result.problems.append(Problem(lineno, None, "not a JSON entry (edited?)"))
                prev = hashlib.sha256(line).hexdigest()
                continue
            if not isinstance(record, dict) or "hash" not in record:
                if chained:
                    result.problems.append(
                        Problem(lineno, None, "an entry without a hash inside the chain")
                    )
                else:
                    result.unchained += 1
                prev = hashlib.sha256(line).hexdigest()
                continue
            chained = True
            result.entries += 1
            seq = record.get("seq")
            if record.get("hash") != entry_hash(record):
                result.problems.append(
                    Problem(lineno, seq, "its content does not match its hash (edited)")
                )
            if seq != expected_seq:
                what = f"expected entry {expected_seq} here: " + (
                    "entries removed before it"
                    if isinstance(seq, int) and seq > expected_seq
                    else "entries reordered or repeated"
                )
                result.problems.append(Problem(lineno, seq, what))
            if record.get("prev") != prev:
                result.problems.append(
                    Problem(
                        lineno,
                        seq,
                        "does not link to the entry before it (removed, reordered or edited)",
                    )
                )
            prev = record.get("hash", "")
            if prev in wanted and isinstance(seq, int):
                found[prev] = seq
            expected_seq = (seq if isinstance(seq, int) else expected_seq) + 1
    result.head = prev if chained else ""
    result.seq = expected_seq - 1 if chained else 0
    for recorded in wanted.values():
        at = found.get(recorded.hash)
        if at is None or (recorded.seq is not None and at != recorded.seq):
            result.problems.append(
                Problem(
                    0,
                    recorded.seq,
                    f"the chain does not pass through the head recorded earlier ({recorded}): "
                    "the log was rewritten, cut or replaced since",
                )
            )
    if head is not None and head != result.head:
        result.problems.append(
            Problem(0, None, f"the chain ends at {result.head or 'nothing'}, not at {head}")
        )
    return result


def head_report(
    path: str | os.PathLike[str], seen: Iterable[dict[str, Any]] = ()
) -> dict[str, Any]:
    """What a host tells a console about its audit log: where it is, its head now, and — when
    the console says which head it saw last for this log (`seen`: `{log, seq, head}` items) —
    whether the chain still passes through that one (`extends`; None: nothing seen before)."""
    log = os.path.abspath(path)
    last = next(
        (
            Head(s.get("seq") if isinstance(s.get("seq"), int) else None, str(s.get("head")))
            for s in seen
            if isinstance(s, dict) and s.get("log") == log and s.get("head")
        ),
        None,
    )
    if last is None:
        now = head(path)
        return {"log": log, "seq": now.seq, "head": now.hash, "extends": None, "problems": []}
    if not os.path.exists(path):
        return {
            "log": log,
            "seq": 0,
            "head": "",
            "extends": False,
            "problems": ["the audit log is gone"],
        }
    result = verify(path, heads=[last])
    return {
        "log": log,
        "seq": result.seq,
        "head": result.head,
        "extends": result.ok,
        "problems": [str(p) for p in result.problems[:5]],
    }


def read_entries(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(record, dict):
                yield record


def flat(record: dict[str, Any]) -> dict[str, Any]:
    """One entry as a row: the decider and the request flattened into columns."""
    import datetime as dt

    decider = record.get("decider") or {}
    request = record.get("request") or {}
    ts = record.get("ts")
    row = {
        "seq": record.get("seq"),
        "ts": ts,
        "time": dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="seconds")
        if isinstance(ts, (int, float))
        else None,
        "type": record.get("type", "decision"),
        "approval_id": record.get("approval_id"),
        "connection": record.get("connection"),
        "session_id": record.get("session_id"),
        "agent": record.get("agent"),
        "tool_call_id": record.get("tool_call_id"),
        "title": record.get("title", request.get("title")),
        "kind": record.get("kind", request.get("kind")),
        "outcome": record.get("outcome"),
        "decider": decider.get("kind") or record.get("resolver"),
        "person": decider.get("person"),
        "via": decider.get("via"),
        "rule": record.get("rule"),
        "reason": record.get("reason"),
        "args_sha256": record.get("args_sha256"),
        "status": record.get("status"),
        "hash": record.get("hash"),
    }
    return row


def export(
    entries: Iterable[dict[str, Any]], *, since: float | None = None, fmt: str = "jsonl"
) -> Iterator[str]:
    """The entries at or after `since` as JSON lines (as recorded) or CSV (flattened), as text."""
    if fmt not in ("jsonl", "csv"):
        raise ValueError(f"unknown format {fmt!r}: jsonl or csv")
    selected = (
        e
        for e in entries
        if since is None or (isinstance(e.get("ts"), (int, float)) and e["ts"] >= since)
    )
    if fmt == "jsonl":
        for entry in selected:
            yield json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
        return
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    yield buf.getvalue()
    for entry in selected:
        buf.seek(0)
        buf.truncate()
        writer.writerow(flat(entry))
        yield buf.getvalue()


def parse_since(text: str, *, now: float | None = None) -> float:
    """`2026-11-24`, `2026-11-24T10:00`, `2026-11-24T10:00:00+01:00` (UTC unless it says), or a
    span back from now: `90m`, `12h`, `7d`."""
    import datetime as dt
    import re
    import time

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", text)
    if m:
        seconds = float(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
        return (now if now is not None else time.time()) - seconds
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"not a time: {text!r} (use 2026-11-24, 2026-11-24T10:00 or a span like 12h or 7d)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()
