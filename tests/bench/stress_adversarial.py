"""The full adversarial pass: 100,000 fuzzed lines into `symposium-tui vscodelm` and 10,000
malformed HTTP requests into the OpenAI API (loopback only), class by class; zero process deaths
and a valid request served after each class (the suite runs the same code with smaller counts,
`tests/bridge/openai/test_adversarial.py`).

    .venv/bin/python tests/bench/stress_adversarial.py [LINES] [REQUESTS]

Prints, per class, the count and the time, and the ratio of a valid chat's latency after the
fuzzing to before it (same run): ~1 means the endpoint came out of it unharmed.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


async def _chat_latency(cwd: str) -> float:
    from tests.support.lmclient import LmClient, user

    lm = await LmClient.start("--cwd", cwd)
    try:
        await lm.chat([user("warm")])
        started = time.monotonic()
        for i in range(5):
            await lm.chat([user(f"latency {i}")])
        return (time.monotonic() - started) / 5
    finally:
        await lm.close()


def main() -> int:
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    requests = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    import logging

    # uvicorn warns once per malformed request ("Invalid HTTP request received."): 10,000 lines
    logging.getLogger("uvicorn.error").setLevel(logging.ERROR)
    home = Path(tempfile.mkdtemp(prefix="symposium-stress-"))
    os.environ.setdefault("SYMPOSIUM_CONFIG_DIR", str(home / "config"))
    os.environ.setdefault("SYMPOSIUM_RUNTIME_DIR", str(home / "run"))
    from tests.support.adversarial import fuzz_openai, fuzz_vscodelm
    from tests.support.openai_server import ServerThread

    before = asyncio.run(_chat_latency(str(home)))
    started = time.monotonic()
    stats = asyncio.run(fuzz_vscodelm(lines, cwd=str(home)))
    took = time.monotonic() - started
    print(f"vscodelm: {stats['lines']} fuzzed lines in {took:.1f} s, zero deaths")
    after = asyncio.run(_chat_latency(str(home)))
    print(f"valid chat latency after/before the line fuzzing: {after / before:.2f}")

    server = ServerThread(str(home)).start()
    try:
        started = time.monotonic()
        http = fuzz_openai(server, requests)
        took = time.monotonic() - started
    finally:
        server.stop()
    print(f"OpenAI API: {http['requests']} malformed requests in {took:.1f} s, zero deaths")
    return 0


if __name__ == "__main__":
    sys.exit(main())
