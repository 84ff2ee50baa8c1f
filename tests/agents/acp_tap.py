"""Run an ACP agent with a tap on its stdio: every JSON-RPC line in either direction is relayed
unchanged and also appended to a log, so that a test can see what the agent was really sent
(``session/cancel``, the outcome of each ``session/request_permission``, ...).

    python tests/agents/acp_tap.py LOG -- COMMAND [ARGS...]

Each log line is JSON: ``{"dir": "to_agent" | "from_agent", "t": <monotonic>, "msg": <the message,
or the raw line when it is not JSON>}``. Standard library only. The agent inherits stderr, the
environment, the cwd and the process group (whoever kills our group kills it too); our exit code is
its exit code.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import IO


def _record(log: IO[str], lock: threading.Lock, direction: str, line: bytes) -> None:
    text = line.decode("utf-8", "replace").rstrip("\r\n")
    if not text.strip():
        return
    try:
        msg = json.loads(text)
    except ValueError:
        msg = text
    entry = json.dumps({"dir": direction, "t": time.monotonic(), "msg": msg}, ensure_ascii=False)
    with lock:
        log.write(entry + "\n")
        log.flush()


def _pump(
    src: IO[bytes], dst: IO[bytes], log: IO[str], lock: threading.Lock, direction: str
) -> None:
    try:
        for line in iter(src.readline, b""):
            _record(log, lock, direction, line)
            dst.write(line)
            dst.flush()
    except (BrokenPipeError, ValueError, OSError):
        pass
    finally:
        try:
            dst.close()
        except OSError:
            pass


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    log_path, command = argv[0], argv[2:]
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115  (open for the process's life)
    lock = threading.Lock()
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    to_agent = threading.Thread(
        target=_pump, args=(sys.stdin.buffer, child.stdin, log, lock, "to_agent"), daemon=True
    )
    from_agent = threading.Thread(
        target=_pump, args=(child.stdout, sys.stdout.buffer, log, lock, "from_agent"), daemon=True
    )
    to_agent.start()
    from_agent.start()
    code = child.wait()
    from_agent.join(2)
    log.close()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
