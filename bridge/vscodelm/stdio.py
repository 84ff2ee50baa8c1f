"""The headless vscodelm endpoint on this process's stdin/stdout."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import stat
import sys
from typing import Any

from bridge import events as ev
from bridge.config import BridgeConfig
from bridge.core import Bridge
from bridge.jsonrpc import line_limit
from bridge.lines import LineFeed
from bridge.rpc import FdWriter
from bridge.vscodelm.endpoint import serve_connection

log = logging.getLogger(__name__)


# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def keep_heap(mmap_threshold: int = 16 << 20, trim_threshold: int = 32 << 20) -> bool:
    """Keep freed memory in the process rather than handing it back to the kernel at once.

    By default glibc serves each allocation over 128 KiB with a fresh `mmap` (asyncio reads a pipe
    or socket into a new 256 KiB buffer every time) and returns the top of the heap to the kernel
    once 128 KiB of it is free. A long conversation's request line is hundreds of KiB, decoded
    and copied a few times, so every request page-faulted its whole size again (~120 faults and
    ~0.3 ms a request at 2,000 messages here; `tests/bench/bench_history_length.py`). Allocations
    up to `mmap_threshold` now come from the heap and up to `trim_threshold` of free heap is kept.
    Returns whether the allocator took the settings (glibc on Linux; elsewhere nothing changes)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # no C library symbols, or no mallopt (not glibc)
        return False
    return bool(
        mallopt(_M_MMAP_THRESHOLD, mmap_threshold) and mallopt(_M_TRIM_THRESHOLD, trim_threshold)
    )


READ_SIZE = 1 << 20  # what a widened pipe holds, and what the endpoint reads from it at a time


def widen_pipe(fd: int, size: int = READ_SIZE) -> bool:
    """Let a pipe on `fd` hold `size` bytes (Linux; 64 KiB by default): a client that writes a
    long conversation's request line then does it in one go, and the endpoint reads it in one or
    two reads instead of being woken for every 64 KiB. Returns whether it was widened (a socket,
    as Node gives its children, or a limit on pipe sizes leaves it as it is)."""
    import fcntl

    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setsize is None:
        return False
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        fcntl.fcntl(fd, setsize, size)
    except OSError:  # EPERM: over /proc/sys/fs/pipe-max-size or the user's pipe allowance
        return False
    return True


async def read_lines_from(reader: asyncio.StreamReader, pipe: Any) -> asyncio.BaseTransport:
    """Feed `reader` from `pipe` (a readable pipe's file), up to `READ_SIZE` bytes a read rather
    than asyncio's 256 KiB: a request line longer than that (VS Code's tools with a long history)
    then arrives in one read, and a `LineFeed` hands it on whole in that read's callback instead of
    buffering its pieces and copying them back out in a later pass of the loop."""
    transport, _ = await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), pipe
    )
    if isinstance(getattr(transport, "max_size", None), int):  # (the Unix pipe transport's)
        transport.max_size = max(transport.max_size, READ_SIZE)  # type: ignore[attr-defined]
    return transport


async def _stdio_streams(preread: bytes, eof: bool) -> tuple[asyncio.StreamReader, Any]:
    loop = asyncio.get_running_loop()
    widen_pipe(0)
    reader = LineFeed(limit=line_limit())  # a whole request is handled as it is read
    if preread:
        reader.feed_data(preread)
    if eof:
        reader.feed_eof()
    else:
        await read_lines_from(reader, os.fdopen(0, "rb", buffering=0, closefd=False))
    writer: Any
    mode = os.fstat(1).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode):
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(),
            os.fdopen(1, "wb", buffering=0, closefd=False),
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    else:
        writer = FdWriter(1)
    return reader, writer


async def serve_stdio(
    *,
    cwd: str | None = None,
    preread_lines: list[bytes] | None = None,
    rest: bytes = b"",
    eof: bool = False,
    trace: Any = None,
    event_log: str | None = None,
    bridge_options: dict[str, Any] | None = None,
    configure: Any = None,
) -> int:
    keep_heap()
    bus = ev.EventBus()
    log_sink = None
    if event_log:
        log_sink = ev.JsonlEventLog(event_log)
        bus.subscribe(log_sink)
    audit = _open_audit_log()
    from bridge.approvals import ApprovalBroker
    from bridge.approvals.follow import stamp_of
    from bridge.paths import settings_path
    from bridge.settings import Settings

    stamp = stamp_of(settings_path())  # before the read: a write after it is seen
    approvals = ApprovalBroker(bus, policy=_settings_policy(), audit=audit)
    # rules edited by hand apply from the next request
    approvals.follow_settings(settings_path(), stamp, lambda: Settings.load(settings_path()))
    bridge = Bridge(
        BridgeConfig(cwd=cwd or "", **(bridge_options or {})),
        bus=bus,
        approvals=approvals,
    )
    reader, writer = await _stdio_streams(rest, eof)
    log.debug(
        "serving: %d line(s) and %d byte(s) handed over by the start-up fast path",
        len(preread_lines or ()),
        len(rest),
    )
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            loop.add_signal_handler(sig, lambda: main and main.cancel())
        except (NotImplementedError, RuntimeError):
            pass
    try:
        await serve_connection(
            bridge,
            reader,
            writer,
            preread=preread_lines,
            on_recv=trace.recv if trace else None,
            on_send=trace.send if trace else None,
            configure=configure,
        )
    except asyncio.CancelledError:
        pass
    finally:
        await bridge.close()
        if log_sink is not None:
            log_sink.close()
        if audit is not None:
            audit.close()
    return 0


def _settings_policy() -> Any:
    """The person's rules (and persisted bypass) from the settings file: one rules file for every
    front door. A file that cannot be used leaves no rules (every request is asked: fail closed)."""
    from bridge.approvals import Policy
    from bridge.settings import Settings, SettingsError

    try:
        return Settings.load().policy()
    except SettingsError as exc:
        log.error("settings not loaded, no approval rules in force: %s", exc)
        return Policy()


def _open_audit_log() -> Any:
    """The audit log next to the settings (the same file the console appends to): the headless
    endpoint's decisions — VS Code's answers to `symposium-agent-action` included — are recorded
    too. A log that cannot be opened is reported, never fatal."""
    from bridge.audit import AuditLog
    from bridge.paths import config_dir

    try:
        return AuditLog(config_dir() / "audit.jsonl")
    except OSError as exc:
        log.warning("audit log not available: %s", exc)
        return None


def run(
    *,
    cwd: str | None,
    handover: Any,
    trace: Any,
    event_log: str | None,
    bridge_options: dict[str, Any] | None = None,
    configure: Any = None,
) -> int:
    try:
        return asyncio.run(
            serve_stdio(
                cwd=cwd,
                preread_lines=handover.lines,
                rest=handover.rest,
                eof=handover.eof,
                trace=trace,
                event_log=event_log,
                bridge_options=bridge_options,
                configure=configure,
            )
        )
    except KeyboardInterrupt:
        return 130
    finally:
        sys.stdout.flush()
