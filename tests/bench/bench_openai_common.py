"""Shared by the `bench_openai_*.py` benchmarks: the OpenAI front door in a server process of its
own, the bare ACP SDK client baseline, and a raw keep-alive HTTP client (no SDK, no parsing on the
clock).

    python tests/bench/bench_openai_common.py serve CONFIG_DIR [--no-coalesce]

runs the bridge with its OpenAI server on 127.0.0.1 (ephemeral port, printed as `PORT <n>`),
with the settings in CONFIG_DIR (which `bench_settings()` writes: the test echo agent as model
`echo`).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ECHO_AGENT = str(REPO / "tests" / "agents" / "echo_agent.py")
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, IndexError, ValueError):
        return 0.0


def bench_settings() -> Path:
    config = Path(tempfile.mkdtemp(prefix="symposium-bench-"))
    (config / "settings.toml").write_text(
        f"[agents.echo]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(ECHO_AGENT)}]\n"
    )
    return config


class BridgeServer:
    """`serve` below, as a subprocess."""

    def __init__(self, config: Path, *extra: str) -> None:
        env = {
            **os.environ,
            "SYMPOSIUM_CONFIG_DIR": str(config),
            "SYMPOSIUM_RUNTIME_DIR": str(config / "run"),
        }
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "serve", str(config), *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=str(config),
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"bridge server did not start: {line!r}")
        self.port = int(line.split()[1])

    def agent_pids(self) -> list[int]:
        from tests.support.processes import child_pids  # the benchmark's process, not `serve`

        return child_pids(self.proc.pid)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class RawHttp:
    """One keep-alive HTTP/1.1 connection, written and read by hand."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.port = port
        self.buf = b""

    def send(self, path: str, body: dict[str, Any]) -> None:
        self.send_encoded(self.encode(path, body))

    def encode(self, path: str, body: dict[str, Any]) -> bytes:
        """A POST of `body` as JSON, ready to send (to encode it before a clock starts)."""
        data = json.dumps(body, separators=(",", ":")).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{self.port}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(data)}\r\n\r\n"
        ).encode()
        return head + data

    def send_encoded(self, request: bytes) -> None:
        self.sock.sendall(request)

    def _read_head(self) -> dict[str, str]:
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        headers[":status"] = str(status)
        return headers

    def _fill(self) -> None:
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("server closed the connection")
        self.buf += data

    def read_json(self) -> Any:
        headers = self._read_head()
        length = int(headers["content-length"])
        while len(self.buf) < length:
            self._fill()
        body, self.buf = self.buf[:length], self.buf[length:]
        if headers[":status"] != "200":
            raise RuntimeError(f"HTTP {headers[':status']}: {body[:300]!r}")
        return json.loads(body)

    def read_stream(self) -> bytes:
        """A chunked SSE body up to `data: [DONE]`, unparsed (only the chunk framing is undone)."""
        headers = self._read_head()
        if headers[":status"] != "200":
            raise RuntimeError(f"HTTP {headers[':status']}")
        out = []
        while True:
            while b"\r\n" not in self.buf:
                self._fill()
            size_line, rest = self.buf.split(b"\r\n", 1)
            size = int(size_line, 16)
            while len(rest) < size + 2:
                self._fill()
                rest = self.buf.split(b"\r\n", 1)[1]
            out.append(rest[:size])
            self.buf = rest[size + 2 :]
            if size == 0:
                return b"".join(out)

    def close(self) -> None:
        self.sock.close()


def sse_content(raw: bytes) -> str:
    """The concatenated `delta.content` of a chat completion stream (after the clock)."""
    text = []
    for event in raw.split(b"\n\n"):
        if event.startswith(b"data: {"):
            choices = json.loads(event[6:]).get("choices") or []
            if choices:
                text.append(choices[0]["delta"].get("content") or "")
    return "".join(text)


class CountingClient:
    """The bare ACP SDK client: counts `agent_message_chunk`s, notes when the last arrived."""

    def __init__(self) -> None:
        self.count = 0
        self.target = -1
        self.t_last: float | None = None
        self.texts: list[str] = []

    def on_connect(self, conn: Any) -> None:
        return None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", None) == "agent_message_chunk":
            self.count += 1
            if self.count == self.target:
                self.t_last = time.perf_counter()

    async def request_permission(self, **kwargs: Any) -> Any:
        raise NotImplementedError


def bare_session():  # noqa: ANN201
    import acp

    client = CountingClient()
    cwd = tempfile.mkdtemp(prefix="symposium-bench-bare-")
    cm = acp.spawn_agent_process(
        client,
        sys.executable,
        ECHO_AGENT,
        cwd=cwd,
        transport_kwargs={"stderr": subprocess.DEVNULL, "limit": 64 * 1024 * 1024},
    )
    return client, cwd, cm


# --- the server side --------------------------------------------------------------------------------


async def _serve(config: str, coalesce: bool) -> None:
    sys.path.insert(0, str(REPO))
    from bridge.config import BridgeConfig
    from bridge.core import Bridge
    from bridge.openai import OpenAIServer
    from bridge.openai.catalog import Catalog

    bridge = Bridge(BridgeConfig(cwd=config))
    server = OpenAIServer(
        bridge, "127.0.0.1:0", catalog=Catalog(Path(config) / "settings.toml"), coalesce=coalesce
    )
    await server.start()
    from bridge.core import settle_heap

    settle_heap()  # as `symposium-tui serve` does
    print(f"PORT {server.port}", flush=True)
    stop = asyncio.Event()
    import signal

    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop()
    await bridge.close()


if __name__ == "__main__" and len(sys.argv) >= 3 and sys.argv[1] == "serve":
    asyncio.run(_serve(sys.argv[2], "--no-coalesce" not in sys.argv))
