"""One entry appended to the audit log by a hook process, with the standard library alone.

The same entry, chained the same way, as `bridge.audit.AuditLog.append` writes (`seq`, `prev`,
`hash` over the canonical JSON, under an exclusive `flock` so the chain holds across processes),
in a file created 0600 in a directory made 0700 when missing — without importing `bridge.audit`
(`csv`, `dataclasses`, `pathlib`, `hashlib`): a hook is a process per tool call, and it appends
one entry and exits. `tests/hooks/test_hook_startcache.py` checks the two write the same chain.
"""

from __future__ import annotations

import fcntl
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


def canonical(record: dict[str, Any]) -> bytes:
    return json.dumps(
        record, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str
    ).encode("utf-8")


def args_hash(raw_input: Any) -> str:
    """The hash of the exact arguments (the tool call's `rawInput`) a decision was about."""
    return sha256(canonical({"rawInput": raw_input})).hexdigest()


def digest(text: str) -> str:
    return sha256(text.encode()).hexdigest()


def private_dir(path: str) -> None:
    """Create `path` and its missing parents 0700; an existing directory is left as it is."""
    missing = []
    probe = path
    while not os.path.exists(probe):
        missing.append(probe)
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            continue  # made meanwhile by someone else: not ours to change
        os.chmod(directory, 0o700)


def _last_line(fd: int) -> bytes:
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


def _link_of(line: bytes) -> tuple[int, str]:
    if not line.strip():
        return 0, ""
    try:
        record = json.loads(line)
    except ValueError:
        record = None
    if isinstance(record, dict) and isinstance(record.get("hash"), str):
        seq = record.get("seq")
        return (seq if isinstance(seq, int) else 0), record["hash"]
    return 0, sha256(line).hexdigest()  # an unchained (older) line


def append(path: str, record: dict[str, Any]) -> dict[str, Any]:
    """Chain `record` onto the log at `path`, write it and sync it; returns it as written."""
    private_dir(os.path.dirname(path))
    flags = os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_RDWR
    fd = os.open(path, flags, 0o600)
    try:
        if os.fstat(fd).st_uid == os.getuid():
            os.fchmod(fd, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            seq, prev = _link_of(_last_line(fd)) if size else (0, "")
            entry = {**record, "seq": seq + 1, "prev": prev}
            entry["hash"] = sha256(canonical(entry)).hexdigest()
            data = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)
            os.write(fd, (data + "\n").encode("utf-8"))
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.fsync(fd)
    finally:
        os.close(fd)
    return entry
