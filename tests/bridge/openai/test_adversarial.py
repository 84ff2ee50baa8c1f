"""The adversarial pass in the suite: fuzzed lines into `vscodelm` and malformed HTTP requests into
the OpenAI API (loopback only), class by class, with zero process deaths and a valid request served
after each class. The suite runs `$SYMPOSIUM_FUZZ_LINES` lines (default 16,000) and
`$SYMPOSIUM_FUZZ_HTTP` requests (default 3,000) to stay within its time budget on 2 cores;
`tests/bench/stress_adversarial.py` runs the full 100,000 lines and 10,000 requests."""

from __future__ import annotations

import os

from tests.support.adversarial import fuzz_openai, fuzz_vscodelm
from tests.support.openai_server import ServerThread

LINES = int(os.environ.get("SYMPOSIUM_FUZZ_LINES", "16000"))
REQUESTS = int(os.environ.get("SYMPOSIUM_FUZZ_HTTP", "3000"))


async def test_fuzzed_lines_never_kill_vscodelm(tmp_path):
    stats = await fuzz_vscodelm(LINES, cwd=str(tmp_path))
    assert stats["lines"] == LINES
    assert len(stats["classes"]) == 8


def test_malformed_http_never_kills_the_openai_server(settings, tmp_path):
    server = ServerThread(str(tmp_path)).start()
    try:
        stats = fuzz_openai(server, REQUESTS)
    finally:
        server.stop()
    assert stats["requests"] == REQUESTS
