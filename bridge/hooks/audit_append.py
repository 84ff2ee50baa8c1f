"""One entry appended to the audit log by a hook process, with the standard library alone.

The same entry, chained the same way (`bridge.audit_chain`), as `bridge.audit.AuditLog.append`
writes it, under an exclusive `flock` so the chain holds across processes, in a file created
0600 in a directory made 0700 when missing — without importing `bridge.audit`
(`csv`, `dataclasses`, `pathlib`, `hashlib`): a hook is a process per tool call, and it appends
one entry and exits. `tests/hooks/test_hook_startcache.py` checks the two write the same chain.
"""

from __future__ import annotations

import fcntl
import os

from bridge.audit_chain import args_hash, chained, last_line, link_of, sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["append", "args_hash", "digest", "private_dir"]


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
            seq, prev = link_of(last_line(fd)) if size else (0, "")
            entry, line = chained(record, seq, prev)
            os.write(fd, line)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.fsync(fd)
    finally:
        os.close(fd)
    return entry
