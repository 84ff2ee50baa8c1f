"""The least a Python process between an ACP client and its agent can do: copy bytes both ways,
64 KiB reads, one thread per direction, no parsing. `bench_acp_proxy.py` measures it beside the
proxy, in the same run, as the floor for a relaying Python process on this machine.

    python tests/bench/byte_relay.py AGENT [ARGS...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading


def copy(source: int, target: int) -> None:
    while data := os.read(source, 1 << 16):
        view = memoryview(data)
        while view:
            view = view[os.write(target, view) :]
    os.close(target)


def main() -> int:
    agent = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    threading.Thread(target=copy, args=(0, agent.stdin.fileno()), daemon=True).start()
    copy(agent.stdout.fileno(), 1)
    return agent.wait()


if __name__ == "__main__":
    sys.exit(main())
