"""`serve --openai` memory over many conversations: RSS after 10,000 against RSS after 1,000.

    .venv/bin/python tests/bench/bench_openai_memory.py [--conversations 10000] [--clients 4]

A real `symposium-tui serve --openai 127.0.0.1:PORT` (private config and runtime directories) and
the built-in Eliza. Each conversation is two requests, the second continuing the first (the first
reply echoed back, a new user message), with words of its own, and is one of five kinds in turn:

- a plain chat completion (the principal's one conversation space);
- a chat in a conversation space of its own (`x-conversation-id: conv-N`);
- a chat with a `user` of its own (`user: user-N`, a space per user);
- a chat sent with an `Idempotency-Key` per request;
- a Responses API exchange (`store` default: the second request names `previous_response_id`).

`--clients` keep-alive connections send them side by side. The server's resident set (VmRSS of
the server and its child processes, from `/proc`) is read after 1,000 conversations (the
baseline, same run) and after the last one, each time once the server has been idle for a
moment. Target: RSS(10,000) / RSS(1,000) <= 1.10. Exit code is always 0.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.report import row
from tests.support.processes import child_pids

TARGET = 1.10
PY = sys.executable
SCRIPT = str(Path(PY).parent / "symposium-tui")
MODEL = "elizacp"


def rss_kib(pid: int) -> int:
    """VmRSS of `pid` and of its descendants."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            continue
        todo.extend(child_pids(p))
    return total


class Client:
    """One keep-alive HTTP/1.1 connection (request line and headers written by hand)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.port = port
        self.buf = b""

    def post(self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        data = json.dumps(body).encode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.sock.sendall(
            (
                f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{self.port}\r\n"
                f"content-type: application/json\r\n{extra}content-length: {len(data)}\r\n\r\n"
            ).encode()
            + data
        )
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        status = head.split(b" ", 2)[1]
        length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))  # type: ignore[union-attr]
        while len(self.buf) < length:
            self._fill()
        payload, self.buf = self.buf[:length], self.buf[length:]
        if status != b"200":
            raise RuntimeError(f"HTTP {status.decode()}: {payload[:300]!r}")
        return json.loads(payload)

    def _fill(self) -> None:
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buf += data


def conversation(client: Client, n: int) -> None:
    words = f"conversation {n}: I feel {['tired', 'happy', 'curious', 'lost'][n % 4]} today"
    first = [{"role": "user", "content": words}]
    kind = n % 5
    chat = "/v1/chat/completions"
    if kind == 4:
        reply = client.post("/v1/responses", {"model": MODEL, "input": words})
        client.post(
            "/v1/responses",
            {"model": MODEL, "input": f"why {n}?", "previous_response_id": reply["id"]},
        )
        return
    body: dict[str, Any] = {"model": MODEL, "messages": first}
    headers: dict[str, str] = {}
    if kind == 1:
        headers["x-conversation-id"] = f"conv-{n}"
    elif kind == 2:
        body["user"] = f"user-{n}"
    elif kind == 3:
        headers["idempotency-key"] = f"key-{n}-1"
    answer = client.post(chat, body, headers)["choices"][0]["message"]["content"]
    body["messages"] = [
        *first,
        {"role": "assistant", "content": answer},
        {"role": "user", "content": f"why {n}?"},
    ]
    if kind == 3:
        headers["idempotency-key"] = f"key-{n}-2"
    client.post(chat, body, headers)


def run(port: int, numbers: range, clients: int) -> None:
    counter = itertools.count(numbers.start)
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker() -> None:
        client = Client(port)
        try:
            while True:
                with lock:
                    n = next(counter)
                if n >= numbers.stop:
                    return
                conversation(client, n)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            client.sock.close()

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def settled_rss(pid: int) -> int:
    """RSS once the server is idle (its CPU time stopped moving), after a collection had a chance."""

    def ticks() -> int:
        with open(f"/proc/{pid}/stat") as f:
            return sum(int(x) for x in f.read().rsplit(")", 1)[1].split()[11:13])

    previous = -1
    for _ in range(50):
        now = ticks()
        if now == previous:
            break
        previous = now
        time.sleep(0.2)
    return rss_kib(pid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--baseline", type=int, default=1_000)
    parser.add_argument("--clients", type=int, default=4)
    options = parser.parse_args()

    home = tempfile.mkdtemp(prefix="bench-openai-memory-")
    env = dict(
        os.environ, SYMPOSIUM_CONFIG_DIR=f"{home}/config", SYMPOSIUM_RUNTIME_DIR=f"{home}/run"
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [SCRIPT, "serve", "--log", "error", "--openai", f"127.0.0.1:{port}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=home,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.05)
        t0 = time.perf_counter()
        run(port, range(options.baseline), options.clients)
        base = settled_rss(server.pid)
        t1 = time.perf_counter()
        print(
            f"after {options.baseline:>6,} conversations: RSS {base / 1024:7.1f} MB  ({t1 - t0:.0f} s)"
        )
        marks = sorted({options.conversations // 2, options.conversations})
        done = options.baseline
        rss = base
        for mark in marks:
            if mark <= done:
                continue
            run(port, range(done, mark), options.clients)
            done = mark
            rss = settled_rss(server.pid)
            print(
                f"after {mark:>6,} conversations: RSS {rss / 1024:7.1f} MB  ({time.perf_counter() - t1:.0f} s)"
            )
        ratio = rss / base
        try:
            load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
        except OSError:
            load = "?"
        print(
            f"RSS({options.conversations:,}) / RSS({options.baseline:,}) = {ratio:.3f}  "
            f"target <= {TARGET:.2f}  {'met' if ratio <= TARGET else 'MISSED'}  (load {load})"
        )
        row(
            f"`serve --openai` RSS after {options.conversations:,} conversations",
            baseline=f"RSS after {options.baseline:,}",
            target=f"<= {TARGET:.2f}x",
            result=ratio,
            unit="x",
            met=ratio <= TARGET,
        )
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
