"""The audit heads this console has seen: the anchor of each host's audit chain, kept outside it.

A same-user process can rewrite a whole audit log and compute every hash again; the chain alone
cannot tell. So every console that attaches to a bridge — its own, `attach local`, or a host over
ssh — asks for the head of that host's log and records it here (in the console's state directory,
`bridge.paths.audit_heads_path`), per host and per log. The next time, the host is asked whether
its chain still passes through the head recorded last (`bridge.audit.head_report`); when it does
not, the console warns, and the record keeps the last head that did (a rewrite is reported again
at every attach, until someone looks). `symposium-tui audit verify --head FILE` checks a log
against this record.

Format (JSON): `{"version": 1, "hosts": {HOST: {LOG: {"seq": N, "head": HASH, "seen": TS}}}}`.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

VERSION = 1


def record_path() -> Path:
    from bridge.paths import audit_heads_path

    return audit_heads_path()


def load(path: Path | None = None) -> dict[str, Any]:
    """The record (empty when there is none yet). A record that cannot be read is an error, never
    silently replaced: it is the evidence."""
    path = path or record_path()
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {"version": VERSION, "hosts": {}}
    if not isinstance(data, dict) or not isinstance(data.get("hosts"), dict):
        raise ValueError(f"{path}: not a record of audit heads")
    return data


def seen(host: str, path: Path | None = None) -> list[dict[str, Any]]:
    """The last head seen of each log of `host`, as `{log, seq, head}` items."""
    logs = load(path)["hosts"].get(host) or {}
    return [
        {"log": log, "seq": entry.get("seq"), "head": entry.get("head")}
        for log, entry in logs.items()
        if isinstance(entry, dict)
    ]


def observe(host: str, report: dict[str, Any], path: Path | None = None) -> str | None:
    """Take a host's `head_report`: record its head when it extends the last one seen (or none
    was seen); otherwise keep the record as it is and return the warning to show."""
    path = path or record_path()
    log = str(report.get("log"))
    if report.get("extends") is False:
        last = next((s for s in seen(host, path) if s["log"] == log), None)
        problems = "; ".join(report.get("problems") or ()) or "no reason given"
        return (
            f"The audit log of {host} ({log}) no longer extends the head this console recorded "
            f"({last['seq'] if last else '?'}:{last['head'] if last else '?'}): it was rewritten, "
            f"cut or replaced. {problems}. The last good head stays in {path}."
        )
    if not report.get("head"):
        return None  # an empty log: nothing to anchor yet
    data = load(path)
    data["version"] = VERSION
    data["hosts"].setdefault(host, {})[log] = {
        "seq": report.get("seq"),
        "head": report.get("head"),
        "seen": time.time(),
    }
    _write(path, data)
    return None


def heads_for(record: dict[str, Any], host: str, log: str) -> list[Any]:
    """The heads a record holds for one host's log (for `audit verify --head FILE`)."""
    from bridge.audit import Head

    entry = (record.get("hosts", {}).get(host) or {}).get(log)
    if not isinstance(entry, dict) or not entry.get("head"):
        return []
    seq = entry.get("seq")
    return [Head(seq if isinstance(seq, int) else None, str(entry["head"]))]


def _write(path: Path, data: dict[str, Any]) -> None:
    from bridge.paths import make_private_dir

    make_private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
