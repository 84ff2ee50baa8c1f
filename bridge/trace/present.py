"""Replay steps as a person reads them ("why was my conversation cancelled?") or as JSON, and
`symposium-tui replay`."""

from __future__ import annotations

import json
import sys
from typing import IO, Any

from bridge.history import DecisionKind
from bridge.trace.files import AUDIT_NOT_REPLAYED, read_trace, sniff_file
from bridge.trace.replay import ReplayStep, replay_event_log, replay_trace

# --- presenting ----------------------------------------------------------------------------------

_KIND_WORDS = {
    DecisionKind.NEW_SESSION: "NEW SESSION",
    DecisionKind.CONTINUE: "CONTINUE",
    DecisionKind.COMMIT: "COMMIT",
    DecisionKind.CANCEL: "CANCEL",
}
_TEXT_WIDTH = 72


def _elide(text: str, width: int = _TEXT_WIDTH, around: int | None = None) -> str:
    """`text` shortened in the middle, or, given `around`, to a window around that index."""
    if len(text) <= width:
        return text
    if around is None:
        head = width * 2 // 3
        tail = width - head
        return f"{text[:head]}…[{len(text) - width} chars]…{text[-tail:]}"
    start = max(0, min(around - width // 3, len(text) - width))
    end = start + width
    return (
        (f"…[{start} chars]…" if start else "")
        + text[start:end]
        + (f"…[{len(text) - end} chars]…" if end < len(text) else "")
    )


_MAX_DEPTH = 32  # deeper JSON is shown as "…": a person reads these lines


def _first_difference(
    a: Any, b: Any, path: str = "", depth: int = 0
) -> tuple[str, int | None] | None:
    """Where two wire JSON values first differ: a path like `content[0].value` and, for two
    strings, the index of the first differing character."""
    if depth > _MAX_DEPTH:
        return None if a == b else (path, None)
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return (f"{path}.{k}" if path else k), None
            d = _first_difference(a[k], b[k], f"{path}.{k}" if path else k, depth + 1)
            if d is not None:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = _first_difference(x, y, f"{path}[{i}]", depth + 1)
            if d is not None:
                return d
        if len(a) != len(b):
            return f"{path}[{min(len(a), len(b))}]", None
        return None
    if isinstance(a, str) and isinstance(b, str):
        if a == b:
            return None
        i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return path, i
    if type(a) is bool or type(b) is bool:
        return None if (type(a) is type(b) and a == b) else (path, None)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return None if a == b else (path, None)
    return None if a == b else (path, None)


def _compact(
    value: Any, focus: tuple[str, int | None] | None, path: str = "", depth: int = 0
) -> Any:
    """`value` with long strings elided; the string at `focus` keeps a window around its diff."""
    if isinstance(value, (dict, list)) and depth > _MAX_DEPTH:
        return "…"
    if isinstance(value, dict):
        return {
            k: _compact(v, focus, f"{path}.{k}" if path else k, depth + 1) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_compact(v, focus, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, str):
        if focus is not None and focus[0] == path and focus[1] is not None:
            return _elide(value, around=focus[1])
        return _elide(value)
    return value


def _one_line(value: Any, focus: tuple[str, int | None] | None) -> str:
    return json.dumps(_compact(value, focus), ensure_ascii=False, separators=(",", ":"))


def format_step(step: ReplayStep) -> str:
    """A paragraph for a person asking "why was my conversation cancelled?"."""
    where = f" at {step.time}" if step.time else ""
    conn = f" [{step.connection}]" if step.connection else ""
    head = f"request {json.dumps(step.request_id)}{conn}{where}"
    d = step.decision
    if d is None:
        return f"{head}: ERROR {step.error or 'not routed'}"
    lines = [
        f"{head}: {_KIND_WORDS[d.kind]} {d.session_id} "
        f"(committed {d.committed_len}, {len(d.new_messages)} new, {d.candidates} matching)",
        f"  {d.reason}",
    ]
    if d.kind is DecisionKind.CANCEL:
        focus = _first_difference(d.expected, d.received) if d.received is not None else None
        detail = ""
        if focus is not None:
            detail = (
                f" ({focus[0] or 'whole message'}"
                + (f", character {focus[1]}" if focus[1] is not None else "")
                + ")"
            )
        lines.append(f"  first mismatch: message {d.mismatch_index}{detail}")
        lines.append(f"    expected: {_one_line(d.expected, focus)}")
        lines.append(
            f"    received: {_one_line(d.received, focus) if d.received is not None else '(the request ended here)'}"
        )
    if d.prompt_start:
        lines.append(
            f"  the agent already had the first {d.prompt_start} of the new messages; not prompted again"
        )
    if step.recorded is not None and step.recorded.get("kind") != d.kind.value:
        lines.append(
            f"  note: the live bridge decided {step.recorded.get('kind')} "
            f"({step.recorded.get('session_id')}) for this request"
        )
    return "\n".join(lines)


def step_to_json(step: ReplayStep) -> dict[str, Any]:
    return {
        "request_id": step.request_id,
        "time": step.time,
        "connection": step.connection,
        "decision": step.decision.to_json() if step.decision is not None else None,
        "error": step.error,
        "recorded": step.recorded,
        "run": step.run,
    }


def main_replay(path: str, as_json: bool, out: IO[str] = sys.stdout) -> int:
    """`symposium-tui replay TRACE [--json]`: replay a wire trace or an event log and explain it.

    Exit status 0 when the file was replayed (steps that failed to parse are part of the output),
    1 when it cannot be read or is neither a trace nor an event log.
    """
    try:
        kind = sniff_file(path)
    except OSError as exc:
        print(f"replay: {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if kind is None:
        print(f"replay: {path}: neither a vscodelm trace nor a JSONL event log", file=sys.stderr)
        return 1
    if kind == "audit":
        print(f"replay: {path}: {AUDIT_NOT_REPLAYED}", file=sys.stderr)
        return 1
    if kind == "trace":
        reader = read_trace(path)
        steps = replay_trace(path, reader)
        skipped = reader.skipped
    else:
        junk: list[int] = []
        steps = replay_event_log(path, junk)
        skipped = junk[0]
    if as_json:
        for step in steps:
            out.write(
                json.dumps(step_to_json(step), ensure_ascii=False, separators=(",", ":")) + "\n"
            )
        return 0
    for step in steps:
        out.write(format_step(step) + "\n\n")
    counts: dict[str, int] = {}
    for step in steps:
        name = step.decision.kind.value if step.decision is not None else "error"
        counts[name] = counts.get(name, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "no chat requests"
    runs = max((step.run for step in steps), default=0)
    if runs > 1:
        summary += f" in {runs} runs"
    extra = f"; {skipped} unreadable line{'s' if skipped != 1 else ''} skipped" if skipped else ""
    out.write(
        f"{len(steps)} request{'s' if len(steps) != 1 else ''} replayed from {path}: {summary}{extra}\n"
    )
    return 0
