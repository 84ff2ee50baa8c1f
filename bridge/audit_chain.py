"""How an audit entry joins the chain — the one definition both writers use, standard library only.

The console's `bridge.audit.AuditLog` and a hook process's `bridge.hooks.audit_append` (a process
per tool call, which must not pay for `bridge.audit`'s imports) both write with this: an entry is
the record plus `seq` (one more than the last entry's) and `prev` (the last entry's hash), and its
`hash` is the SHA-256 of its canonical JSON (sorted keys, no spaces, without `hash` itself).
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
    from typing import Any
else:
    try:  # the built-in SHA-256 (no OpenSSL to load): the same digest as hashlib's
        from _sha256 import sha256
    except ImportError:  # an interpreter built without it
        from hashlib import sha256

__all__ = ["args_hash", "canonical", "chained", "entry_hash", "last_line", "link_of", "sha256"]


# A lone surrogate (`"\ud800"` in a tool call's JSON) has no UTF-8: it is written as the JSON
# escape it came as, which reads back as the same string (every other character is unchanged).
SURROGATES = "backslashreplace"


def canonical(record: dict[str, Any]) -> bytes:
    return json.dumps(
        record, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str
    ).encode("utf-8", SURROGATES)


def entry_hash(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    return sha256(canonical(body)).hexdigest()


def args_hash(raw_input: Any) -> str:
    """The hash of the exact arguments (the tool call's `rawInput`) a decision was about."""
    return sha256(canonical({"rawInput": raw_input})).hexdigest()


def last_line(fd: int) -> bytes:
    """The file's last non-empty line (read backwards in blocks)."""
    end = os.lseek(fd, 0, os.SEEK_END)
    buf = b""
    pos = end
    while pos > 0:
        step = min(4096, pos)
        pos -= step
        buf = os.pread(fd, step, pos) + buf
        stripped = buf.rstrip(b"\n")
        nl = stripped.rfind(b"\n")
        if nl >= 0:
            return stripped[nl + 1 :]
    return buf.rstrip(b"\n")


def link_of(line: bytes) -> tuple[int, str]:
    """(seq, hash) an entry after `line` continues from."""
    if not line.strip():
        return 0, ""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        record = None
    if isinstance(record, dict) and isinstance(record.get("hash"), str):
        seq = record.get("seq")
        return (seq if isinstance(seq, int) else 0), record["hash"]
    return 0, sha256(line).hexdigest()  # an unchained (older) line


def chained(record: dict[str, Any], seq: int, prev: str) -> tuple[dict[str, Any], bytes]:
    """`record` as the entry after (`seq`, `prev`), and the line that writes it."""
    entry = {**record, "seq": seq + 1, "prev": prev}
    entry["hash"] = entry_hash(entry)
    data = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)
    return entry, (data + "\n").encode("utf-8", SURROGATES)
