"""Every command line ends cleanly when the reader of its output goes away
(`symposium-tui audit export | head`): no traceback, no "Exception ignored" at exit, and the exit
status of a write that failed with EPIPE (1). Real subprocesses, writing into a real pipe whose
reader has closed, and once behind a real `head`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.audit import AuditLog
from tests.support.cli import SCRIPT
from tests.support.lmclient import REPO

TOKEN_COUNT = (
    b'{"jsonrpc":"2.0","id":1,"method":"lm/provideTokenCount",'
    b'"params":{"modelId":"m","text":"hello"}}\n'
)


def command() -> list[str]:
    return [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "symposium_tui"]


def into_closed_reader(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """`symposium-tui ARGS…` with its standard output a pipe nobody reads any more."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*command(), *args],
            input=stdin,
            stdout=write_end,
            stderr=subprocess.PIPE,
            cwd=str(REPO),
            timeout=120,
        )
    finally:
        os.close(write_end)


def audit_log(path: Path, n: int) -> Path:
    log = AuditLog(path)
    for i in range(n):
        log.append({"type": "decision", "ts": 1000.0 + i, "title": f"call {i}"})
    log.close()
    return path


@pytest.fixture
def log_file(tmp_path: Path) -> Path:
    return audit_log(tmp_path / "audit.jsonl", 20)


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["config"],
        ["registry", "list"],
        [
            "registry",
            "resolve-agent",
            '{"id": "elizacp", "name": "ElizACP", "distribution": {"symposium": {"subcommand": "eliza"}}}',
        ],
        ["rules", "check"],
        ["rules", "explain", '{"tool": "Bash", "command": "ls"}'],
        ["audit", "export", "--format", "jsonl"],
        ["audit", "export", "--format", "csv"],
        ["audit", "verify"],
        ["vscodelm"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_command_whose_reader_has_gone_ends_quietly(args, log_file):
    if args[0] == "audit":
        args = [*args, "--file", str(log_file)]
    done = into_closed_reader(*args, stdin=TOKEN_COUNT if args == ["vscodelm"] else b"")
    stderr = done.stderr.decode(errors="replace")
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert done.returncode == 1, stderr


def test_audit_export_behind_head_ends_quietly(tmp_path):
    """Far more output than a pipe holds, so the export is still writing when `head` leaves."""
    path = audit_log(tmp_path / "audit.jsonl", 4000)
    script = " ".join(command()) + f" audit export --file {path} | head -n 1"
    done = subprocess.run(
        ["bash", "-c", script + "; echo ${PIPESTATUS[0]} >&2"],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=120,
    )
    assert done.stdout.count("\n") == 1 and "call 0" in done.stdout, done.stdout
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.stderr.strip() == "1"
