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
from bridge.rpc import FdWriter
from bridge.vscodelm import serve_connection

log = logging.getLogger(__name__)


async def _stdio_streams(preread: bytes, eof: bool) -> tuple[asyncio.StreamReader, Any]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=line_limit())
    if preread:
        reader.feed_data(preread)
    if eof:
        reader.feed_eof()
    else:
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader),
            os.fdopen(0, "rb", buffering=0, closefd=False),
        )
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
    bus = ev.EventBus()
    log_sink = None
    if event_log:
        log_sink = ev.JsonlEventLog(event_log)
        bus.subscribe(log_sink)
    audit = _open_audit_log()
    from bridge.approvals import ApprovalBroker

    bridge = Bridge(
        BridgeConfig(cwd=cwd or "", **(bridge_options or {})),
        bus=bus,
        approvals=ApprovalBroker(bus, policy=_settings_policy(), audit=audit),
    )
    reader, writer = await _stdio_streams(rest, eof)
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
