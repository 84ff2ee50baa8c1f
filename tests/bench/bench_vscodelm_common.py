"""Shared by `bench_turn_overhead.py`, `bench_tool_hop.py` and `bench_relay.py`: a synchronous
stdio client of `symposium-tui vscodelm` that timestamps the lines it reads, and the small
statistics/`/proc` helpers they print with. Not a benchmark itself.
"""

from __future__ import annotations

import collections
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.support.processes import child_pids as child_pids  # the benchmarks' too

REPO = Path(__file__).resolve().parents[2]
ECHO_AGENT = str(REPO / "tests" / "agents" / "echo_agent.py")
SCRIPT = str(Path(sys.executable).parent / "symposium-tui")
ECHO = {"name": "echo", "command": sys.executable, "args": [ECHO_AGENT], "env": []}
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class Failed(Exception):
    pass


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "value": text}]}


def assistant(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(parts)}


def tool_result(call_id: str, text: str) -> dict[str, Any]:
    # What the extension sends: VS Code's result parts, JSON-serialized.
    return {
        "role": "user",
        "content": [
            {"type": "tool_result", "toolCallId": call_id, "result": [{"$mid": 21, "value": text}]}
        ],
    }


def text_of(parts: list[dict[str, Any]]) -> str:
    return "".join(p["value"] for p in parts if p["type"] == "text")


# --- statistics ---------------------------------------------------------------------------------


def p90(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.9))]


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.3f} ms, p90 {p90(values) * 1000:.3f} ms"


def load_average() -> str:
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "load average n/a"
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


# --- /proc ---------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process (Linux /proc; 0.0 where unavailable)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, IndexError, ValueError):
        return 0.0


# --- the stdio client ----------------------------------------------------------------------------


class Reply:
    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []
        self.part_times: list[float] = []  # perf_counter right after each part's line was read
        self.done_at = 0.0  # ... and after the JSON-RPC response's line


class LmStdio:
    """A minimal synchronous vscodelm client over the endpoint's pipes, as the extension is: one
    JSON object per line, every line `json.loads`-ed. Lines are timestamped as soon as `readline`
    returns them (before parsing)."""

    def __init__(
        self,
        argv: list[str] | None = None,
        *,
        cwd: str,
        env: dict[str, str] | None = None,
        compact: bool = False,
    ) -> None:
        # compact: write requests as the extension does (`JSON.stringify`: no spaces, UTF-8 as is).
        self.separators = (",", ":") if compact else None
        self.ensure_ascii = not compact
        self.proc = subprocess.Popen(
            argv or [SCRIPT, "vscodelm"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.next_id = 0

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_tail.append(line.decode(errors="replace").rstrip())

    def encode_chat(
        self,
        messages: list[dict[str, Any]],
        agent: Any = ECHO,
        tools: list[dict[str, Any]] | None = None,
    ) -> tuple[int, bytes]:
        """One chat request's line (with its newline) and its id."""
        self.next_id += 1
        params: dict[str, Any] = {"modelId": "m", "messages": messages, "agent": agent}
        if tools is not None:
            params["options"] = {"tools": tools, "toolMode": "auto"}
        message = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "lm/provideLanguageModelChatResponse",
            "params": params,
        }
        text = json.dumps(message, separators=self.separators, ensure_ascii=self.ensure_ascii)
        return self.next_id, (text + "\n").encode()

    def write(self, data: bytes) -> float:
        """Write an encoded line; returns the perf_counter right before the write."""
        assert self.proc.stdin is not None
        t0 = time.perf_counter()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return t0

    def send_chat(
        self,
        messages: list[dict[str, Any]],
        agent: Any = ECHO,
        tools: list[dict[str, Any]] | None = None,
    ) -> tuple[int, float]:
        """Write one chat request; returns its id and the perf_counter right before the write (the
        request is encoded first, off the clock)."""
        rid, data = self.encode_chat(messages, agent, tools)
        return rid, self.write(data)

    def read_reply(self, rid: int) -> Reply:
        """Read lines until the response to `rid`."""
        assert self.proc.stdout is not None
        readline = self.proc.stdout.readline
        clock = time.perf_counter
        loads = json.loads
        reply = Reply()
        while True:
            line = readline()
            now = clock()
            if not line:
                raise Failed("endpoint closed its output: " + " | ".join(self.stderr_tail))
            msg = loads(line)
            method = msg.get("method")
            if method == "lm/responsePart":
                if msg["params"]["requestId"] == rid:
                    reply.parts.append(msg["params"]["part"])
                    reply.part_times.append(now)
            elif method is None and msg.get("id") == rid:
                if "error" in msg:
                    raise Failed(f"request {rid} failed: {msg['error']}")
                reply.done_at = now
                return reply

    def chat(
        self,
        messages: list[dict[str, Any]],
        agent: Any = ECHO,
        tools: list[dict[str, Any]] | None = None,
    ) -> tuple[Reply, float]:
        """One request; returns its reply and the seconds from the write to the response line."""
        rid, t0 = self.send_chat(messages, agent, tools)
        reply = self.read_reply(rid)
        return reply, reply.done_at - t0

    def close(self) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
